"""AppTest tests for every page: it renders without exception and its main widgets change what is shown."""
import json
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from tests.bad_inputs import load_bad_inputs
from ui.errors import GUARD_MESSAGE

APP = str(Path(__file__).resolve().parents[1] / "app.py")
TIMEOUT = 120
BAD_INPUTS = load_bad_inputs()


def open_page(page: str, **state) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    for key, value in state.items():
        at.session_state[key] = value
    at.run()
    if page != "home":
        at.switch_page(f"app_pages/{page}.py").run()
    assert_healthy(at)
    return at


def assert_healthy(at: AppTest) -> None:
    """No exception element, and the page guard (which turns errors into a message) did not fire."""
    assert not at.exception
    assert not [e.value for e in at.error if GUARD_MESSAGE in e.value]


def test_home_lists_shipped_models_with_metrics():
    at = open_page("home")
    assert at.title[0].value == "Attention Lab"
    frame = at.dataframe[0].value
    assert {"transformer_en-fr", "bahdanau_en-fr", "no-attention_en-fr", "transformer_reverse"} <= set(frame["model"])
    assert (frame["test exact match"].dropna() > 0).all()
    assert {s.label for s in at.sidebar.selectbox} == {"Model", "Example sentence", "Add a word", "Lesson"}


def test_attention_page_head_choice_changes_the_chart():
    at = open_page("attention", sentence="i am a student")
    assert any(m.value.endswith(" **je suis étudiant**") for m in at.markdown)  # one line, no code block
    # The head heatmap offers its token-labelled weights as CSV (show_chart's button, key csv_<chart key>).
    assert any(b.proto.id.endswith("-csv_head_heatmap") for b in at.get("download_button"))
    first = at.get("plotly_chart")[0].proto.spec
    at.selectbox(key="attn_head").select_index(2).run()
    assert not at.exception
    assert at.get("plotly_chart")[0].proto.spec != first
    at.selectbox(key="attn_kind").set_value("decoder_self").run()
    assert not at.exception and "causal mask" in " ".join(c.value for c in at.caption)


def test_attention_grid_focus_statistics_ablation_rescale():
    at = open_page("attention", sentence="the small cat eats the red apple")
    at.session_state["attn_view"] = "All heads"
    at.run()
    at.button(key="focus_1_3").click().run()
    assert at.session_state["attn_layer"] == 1 and at.session_state["attn_head"] == 3
    at.session_state["attn_view"] = "Statistics"
    at.run()
    table = at.dataframe[0].value
    assert {"entropy (nats)", "share on previous token", "share on <eos>"} <= set(table.columns)
    at.toggle(key="stats_average").set_value(True).run()
    assert "head" not in at.dataframe[0].value.columns
    at.session_state["attn_view"] = "Ablation"
    at.run()
    before = [m.value for m in at.metric]
    at.multiselect(key="ablate_heads").set_value([("cross", 0, 0), ("cross", 0, 1), ("cross", 1, 0),
                                                  ("cross", 1, 1), ("cross", 1, 2), ("cross", 1, 3)]).run()
    assert not at.exception
    assert [m.value for m in at.metric][:2] != before[:2]
    at.session_state["attn_view"] = "Rescale"
    at.run()
    at.select_slider(key="rescale_factor").set_value(8.0).run()
    assert not at.exception
    entropy_trained, entropy_scaled = (float(m.value) for m in at.metric[-3:-1])
    assert entropy_scaled < entropy_trained


def test_decoding_page_steps():
    at = open_page("decoding", sentence="i am a student")
    assert at.slider(key="decode_step").value == 1
    at.button[1].click().run()  # Next
    assert at.slider(key="decode_step").value == 2
    assert "→  suis" in at.code[0].value
    at.selectbox(key="dec_head").select_index(1).run()
    assert not at.exception


@pytest.mark.parametrize("model_id", ["bahdanau_en-fr", "no-attention_en-fr", "transformer_reverse"])
def test_pages_with_other_models(model_id):
    sentence = "1 2 3 4" if "reverse" in model_id else "i have a cat"
    for page in ("attention", "decoding"):
        at = open_page(page, model_id=model_id, sentence=sentence)
        assert not at.error


@pytest.mark.parametrize("text", BAD_INPUTS)
def test_bad_inputs_never_break_the_pages_that_read_the_sentence(text):
    for page in ("attention", "decoding", "compare"):
        at = open_page(page, sentence=text)
        shown = " ".join(str(m.value) for m in list(at.markdown) + list(at.warning) + list(at.info))
        assert "<script>" not in shown and "<img" not in shown


def test_softmax_scaling_page_moves_with_d_k_and_scale():
    at = open_page("softmax_scaling")
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["[2, 2] · [2, 2]"] == "8" and metrics["[2, 2, 2, 2, 2] · [2, 2, 2, 2, 2]"] == "20"
    assert float(metrics["var(q·k), measured"]) == pytest.approx(64, rel=0.1)
    at.select_slider(key="scaling_dk").set_value(256).run()
    assert float({m.label: m.value for m in at.metric}["var(q·k), measured"]) == pytest.approx(256, rel=0.1)
    entropy_before = float({m.label: m.value for m in at.metric}["entropy (nats)"])
    at.select_slider(key="scaling_scale").set_value(0.01).run()
    assert float({m.label: m.value for m in at.metric}["entropy (nats)"]) > entropy_before
    assert not at.exception


def test_attention_steps_page_mask_and_sizes():
    at = open_page("attention_steps")
    before = at.get("plotly_chart")[2].proto.spec
    at.selectbox(key="steps_mask").set_value("causal").run()
    assert not at.exception
    after = at.get("plotly_chart")[2].proto.spec
    # decoded values, not the serialiser's spelling (plotly 7 writes "\u2212\u221e")
    assert "−∞" in json.dumps(json.loads(after), ensure_ascii=False) and after != before
    at.slider(key="steps_tokens").set_value(6).run()
    at.select_slider(key="mh_heads").set_value(4).run()
    assert not at.exception
    assert any("Largest difference" in c.value for c in at.caption)


def test_an_unexpected_error_becomes_a_message_not_a_traceback(monkeypatch):
    import ui.state

    def broken(*args, **kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr(ui.state, "greedy_decode", broken)
    ui.state.analyse.clear()
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.session_state["sentence"] = "a sentence never analysed before"
    at.run()
    at.switch_page("app_pages/attention.py").run()
    assert not at.exception
    assert any(GUARD_MESSAGE in e.value and "RuntimeError" in e.value for e in at.error)
    assert "boom" not in " ".join(e.value for e in at.error)
    ui.state.analyse.clear()


def test_a_link_reproduces_the_view():
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.query_params.update({"model": "transformer_en-fr", "sentence": "she is a student", "kind": "cross",
                            "layer": "1", "head": "3", "view": "Head"})
    at.run()
    at.switch_page("app_pages/attention.py").run()
    assert_healthy(at)
    assert (at.session_state["attn_kind"], at.session_state["attn_layer"], at.session_state["attn_head"]) == \
        ("cross", 1, 3)
    assert any(m.value.endswith(" **elle est étudiante**") for m in at.markdown)
    assert any("layer 2 · head 4" in json.dumps(json.loads(chart.proto.spec), ensure_ascii=False)
               for chart in at.get("plotly_chart"))
    at.selectbox(key="attn_head").select_index(0).run()
    assert at.query_params["head"] == "1" and at.query_params["sentence"] == "she is a student"


def test_a_bad_link_falls_back_with_a_notice():
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.query_params.update({"model": "no-such-model", "layer": "99", "head": "x", "kind": "<script>",
                            "step": "-3", "view": "nonsense"})
    at.run()
    assert_healthy(at)
    notice = " ".join(i.value for i in at.info)
    assert "do not fit" in notice and all(name in notice for name in ("model", "layer", "head", "kind", "step"))
    assert at.session_state["model_id"] == "transformer_en-fr"
    at.switch_page("app_pages/attention.py").run()
    assert_healthy(at)


def test_a_link_without_model_uses_the_default_model_for_its_checks():
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.query_params.update({"layer": "1", "head": "2"})
    at.run()
    assert_healthy(at)
    assert (at.session_state["attn_layer"], at.session_state["attn_head"]) == (1, 2) and not at.info


ALL_PAGES = ["home", "positional", "softmax_scaling", "attention_steps", "normalization", "residual", "attention",
             "decoding", "compare", "train"]


@pytest.mark.parametrize("model_id", ["transformer_en-fr", "bahdanau_en-fr", "no-attention_en-fr",
                                      "transformer_reverse"])
def test_every_page_renders_with_every_shipped_model(model_id):
    sentence = "3 1 4 15 9" if "reverse" in model_id else "the small cat eats the red apple"
    for page in ALL_PAGES:
        at = open_page(page, model_id=model_id, sentence=sentence)
        assert at.title, page

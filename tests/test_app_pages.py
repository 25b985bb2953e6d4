"""AppTest tests for every page: it shows its own title and what the model has, and its main widgets change what
is shown."""
import json

import pytest

from i18n import translate
from tests.app_links import APP_PAGES, chart_titles, go_to, link_notices, open_page, query_param
from tests.bad_inputs import load_bad_inputs
from ui.errors import GUARD_MESSAGE

BAD_INPUTS = load_bad_inputs()


def test_home_lists_shipped_models_with_metrics():
    at = open_page("home")
    assert at.title[0].value == "Attention Lab"
    # a static markdown table (no data grid for a new tab to load): its cells, unescaped
    table = next(m.value for m in at.markdown if m.value.startswith("| model |"))
    header, rule, *lines = [[cell.strip().replace("\\", "") for cell in line.strip("|").split("|")]
                            for line in table.splitlines()]
    frame = [dict(zip(header, line)) for line in lines]
    assert {"transformer_en-fr", "bahdanau_en-fr", "no-attention_en-fr", "transformer_reverse"} <= {
        row["model"] for row in frame}
    assert all(float(row["test exact match"]) > 0 for row in frame if row["test exact match"] != "–")
    assert rule[3:] == ["---:"] * 5  # the numbers right-aligned
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
    at.button_group(key="focus_layer_1").set_value(3).run()
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
    import model.adapters.translator
    import ui.state

    def broken(*args, **kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr(model.adapters.translator, "greedy_decode", broken)  # what the translator's adapter decodes with
    ui.state.shared_analysis.clear()
    at = open_page("attention", healthy=False, sentence="a sentence never analysed before")
    assert not at.exception
    assert any(GUARD_MESSAGE in e.value and "RuntimeError" in e.value for e in at.error)
    assert "boom" not in " ".join(e.value for e in at.error)
    ui.state.shared_analysis.clear()


def test_a_link_reproduces_the_view():
    at = open_page("attention", {"model": "transformer_en-fr", "sentence": "she is a student", "kind": "cross",
                                 "layer": "1", "head": "3", "view": "Head"})
    assert (at.session_state["attn_kind"], at.session_state["attn_layer"], at.session_state["attn_head"]) == \
        ("cross", 1, 3)
    assert any(m.value.endswith(" **elle est étudiante**") for m in at.markdown)
    assert any("layer 2 · head 4" in json.dumps(json.loads(chart.proto.spec), ensure_ascii=False)
               for chart in at.get("plotly_chart"))
    at.selectbox(key="attn_head").select_index(0).run()
    assert query_param(at, "head") == "1" and query_param(at, "sentence") == "she is a student"


def test_a_bad_link_falls_back_with_a_notice():
    at = open_page("home", {"model": "no-such-model", "layer": "99", "head": "x", "kind": "<script>", "step": "-3",
                            "view": "nonsense"})
    notice = link_notices(at)
    assert "do not fit" in notice and all(name in notice for name in ("model", "layer", "head", "kind", "step"))
    assert at.session_state["model_id"] == "transformer_en-fr"
    go_to(at, "attention")


def test_a_link_without_model_uses_the_default_model_for_its_checks():
    at = open_page("home", {"layer": "1", "head": "2"})
    assert (at.session_state["attn_layer"], at.session_state["attn_head"]) == (1, 2) and not at.info


TITLE_KEYS = {"teacher": "class_teacher.title"}  # every other page's title is "<page>.title"


@pytest.mark.parametrize("model_id", ["transformer_en-fr", "bahdanau_en-fr", "no-attention_en-fr",
                                      "transformer_reverse"])
def test_every_page_shows_its_title_and_what_the_model_has(model_id):
    """Each of the app's pages under each shipped model: the page's own title, no error, and on the attention and
    decoding pages what this model has (heads, one Bahdanau alignment, or a sentence saying it has no attention)."""
    sentence = "3 1 4 15 9" if "reverse" in model_id else "the small cat eats the red apple"
    for page in APP_PAGES:
        at = open_page(page, model_id=model_id, sentence=sentence)
        assert at.title[0].value == translate("en", TITLE_KEYS.get(page, f"{page}.title")), page
        assert not at.error, (page, [e.value for e in at.error])
        infos, titles = link_notices(at), chart_titles(at)
        if page == "attention":
            if model_id == "bahdanau_en-fr":
                assert translate("en", "attention.rnn_bahdanau") in infos
                assert titles == [translate("en", "attention.alignment_title")]
            elif model_id == "no-attention_en-fr":
                assert translate("en", "attention.rnn_plain") in infos and not titles
            else:
                assert any("layer 1 · head" in title or "layer 2 · head" in title for title in titles), titles
        if page == "decoding":
            if model_id == "bahdanau_en-fr":
                assert any(title.startswith("Bahdanau alignment while writing") for title in titles), titles
            elif model_id == "no-attention_en-fr":
                assert translate("en", "decoding.no_attention") in infos

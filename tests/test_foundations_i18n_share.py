"""The three foundation pages (positional encoding, softmax scaling, attention step by step) in Korean, opened
from a shared link (good and garbage), and in presenter mode."""
import json
import re

import pytest
from streamlit.testing.v1 import AppTest

from i18n import translate
from tests.app_links import chart_figures, chart_specs, chart_titles, open_page, trace_array
from ui.text import escape_markdown
from viz.presentation import BASE_FONT
from viz.summary import plain

HANGUL = re.compile(r"[\uac00-\ud7a3]")
FOUNDATION_PAGES = ["positional", "softmax_scaling", "attention_steps"]


def texts(at: AppTest) -> str:
    return " ".join(str(e.value) for e in [*at.markdown, *at.caption, *at.info, *at.subheader])


def ko(key: str, **values) -> str:
    return translate("ko", key, **values)


@pytest.mark.parametrize("page_name", FOUNDATION_PAGES)
def test_page_in_korean(page_name):
    at = open_page(page_name, lang="ko")
    assert at.title[0].value == ko(f"{page_name}.title") and HANGUL.search(at.title[0].value)
    shown = texts(at)
    assert ko(f"{page_name}.intro") in shown
    assert translate("en", f"{page_name}.intro") not in shown
    labels = [w.label for w in [*at.slider, *at.select_slider, *at.selectbox, *at.number_input, *at.multiselect]]
    assert any(HANGUL.search(label) for label in labels), labels
    titles = chart_titles(at)
    assert titles and sum(bool(HANGUL.search(t)) for t in titles) >= len(titles) // 2, titles


def test_korean_chart_words_positional():
    at = open_page("positional", lang="ko", pe_d_model=16, pe_open_trained=True)
    matrix = chart_specs(at)[0]
    assert matrix["layout"]["title"]["text"] == ko("positional.matrix_chart", length=64, d_model=16)
    assert matrix["layout"]["xaxis"]["title"]["text"] == ko("positional.chart.dimension_axis")
    assert "위치 %{y}" in matrix["data"][0]["hovertemplate"]  # words translated, plotly's %{...} kept
    assert at.multiselect(key="pe_dims").options[9] == "차원 9 (cos, i=4)"
    assert "위치 표" in texts(at)  # the trained model's table section


def test_korean_mask_options_and_stage_titles():
    at = open_page("attention_steps", lang="ko", steps_mask="causal")
    assert at.selectbox(key="steps_mask").value == "causal"  # the option value stays an identifier
    assert at.selectbox(key="steps_mask").options[1].startswith("인과")
    assert ko("attention_steps.step_mask", mask=ko("attention_steps.short_causal")) in chart_titles(at)


def test_link_reproduces_the_positional_view():
    at = open_page("positional", {"pe_d": "16", "pe_len": "32", "pe_k": "3", "pe_pos": "10"},
                   pe_open_dials=True, pe_open_rotation=True)
    assert not at.info
    assert [at.slider(key=k).value for k in ("pe_d_model", "pe_length", "pe_k", "pe_position")] == [16, 32, 3, 10]
    assert trace_array(chart_specs(at)[0]["data"][0]["z"]).shape == (32, 16)  # the PE matrix
    assert any(t == "Position 10 as dials (continuous) and as bits (discrete)" for t in chart_titles(at))
    assert any(m.label.startswith("Largest |PE(p + 3) − M_3·PE(p)| over all 29 positions") for m in at.metric)
    at.slider(key="pe_d_model").set_value(32).run()
    assert at.query_params["pe_d"] == "32" and at.query_params["pe_len"] == "32"


def test_link_reproduces_the_softmax_scaling_view():
    at = open_page("softmax_scaling", {"dk": "256", "v1x": "100", "scale": "0.062", "scores_seed": "7"})
    assert not at.info
    assert at.select_slider(key="scaling_dk").value == 256
    assert at.select_slider(key="scaling_v1_factor").value == 100
    assert at.select_slider(key="scaling_scale").value == 0.062
    assert "0.062 = 1/√d_k" in at.select_slider(key="scaling_scale").options
    assert at.number_input(key="scaling_seed").value == 7
    metrics = {m.label: m.value for m in at.metric}
    assert float(metrics["var(q·k), measured"]) == pytest.approx(256, rel=0.1)
    saturated = next(s for s in chart_specs(at) if s["layout"]["title"]["text"] == "softmax(100 · v₁)")
    assert saturated["data"][0]["text"] == ["0.000", "1.000"]  # the notes' v1 scaled up is one-hot


def test_factor_one_and_d_k_one_draw_without_error():
    at = open_page("softmax_scaling", {"v1x": "1", "dk": "1"})
    assert not at.info and at.select_slider(key="scaling_v1_factor").value == 1
    assert at.select_slider(key="scaling_scale").options.count("1 = 1/√d_k") == 1  # 1/√1 is 1, offered once


def test_scale_follows_d_k_when_it_was_one_over_root_d_k():
    at = open_page("softmax_scaling", {"dk": "64", "scale": "0.125"})
    at.select_slider(key="scaling_dk").set_value(16).run()
    assert not at.exception
    assert at.select_slider(key="scaling_scale").value == 0.25 and at.query_params["scale"] == "0.25"


def test_link_reproduces_the_attention_steps_view():
    at = open_page("attention_steps", {"tokens": "5", "steps_dk": "2", "seed": "3", "mask": "padding",
                                       "padded": "2", "heads": "4", "d_model": "16", "mh_mask": "causal"})
    assert not at.info
    assert (at.slider(key="steps_tokens").value, at.slider(key="steps_dk").value,
            at.number_input(key="steps_seed").value) == (5, 2, 3)
    assert at.selectbox(key="steps_mask").value == "padding" and at.slider(key="steps_padded").value == 2
    assert (at.select_slider(key="mh_heads").value, at.select_slider(key="mh_dmodel").value) == (4, 16)
    charts = {chart.proto.id: json.loads(chart.proto.spec) for chart in at.get("plotly_chart")}
    titles = [spec["layout"]["title"]["text"] for spec in charts.values()]
    assert "3 · mask (padding)" in titles
    assert sum(t.startswith("head ") for t in titles) == 4
    weights = next(s for s in charts.values() if s["layout"]["title"]["text"] == "4 · softmax over each row")
    assert weights["data"][0]["y"] == [f"q t{i}" for i in range(1, 6)]
    assert at.data_editor[0].value.shape == (5, 2)


def test_garbage_link_falls_back_to_defaults_with_a_notice():
    garbage = {"pe_d": "abc", "pe_len": "9999", "pe_pos": "-1", "dk": "3", "scale": "nan", "v1x": "<script>",
               "tokens": "99", "mask": "<b>x</b>", "heads": "3"}
    for page in FOUNDATION_PAGES:
        at = open_page(page, garbage)
        notice = " ".join(i.value for i in at.info)
        assert translate("en", "share.bad_link", names="")[:30] in notice
        assert all(name in notice for name in garbage)
        assert "<script>" not in notice
    at = open_page("positional", garbage)
    assert (at.slider(key="pe_d_model").value, at.slider(key="pe_length").value) == (64, 64)
    at = open_page("softmax_scaling", garbage)
    assert (at.select_slider(key="scaling_dk").value, at.select_slider(key="scaling_scale").value) == (64, 1.0)
    assert at.select_slider(key="scaling_v1_factor").value == 10
    at = open_page("attention_steps", garbage)
    assert (at.slider(key="steps_tokens").value, at.selectbox(key="steps_mask").value) == (4, "none")
    assert at.select_slider(key="mh_heads").value == 2


def _fonts(at: AppTest) -> set:
    return {spec["layout"].get("font", {}).get("size") for spec in chart_specs(at)}


def test_presenter_mode_hides_secondary_controls_and_enlarges_charts():
    hidden = {"positional": ("multiselect", "pe_dims"), "softmax_scaling": ("number_input", "scaling_seed"),
              "attention_steps": ("number_input", "steps_seed")}
    for page, (kind, key) in hidden.items():
        normal = open_page(page)
        assert any(w.key == key for w in getattr(normal, kind))
        assert normal.get("download_button") and normal.main.caption
        assert _fonts(normal) == {None}
        at = open_page(page, presenter=True)
        assert not any(w.key == key for w in getattr(at, kind)), page
        # no caption but each chart's words (its title, then what it shows), which presenter mode keeps for screen
        # readers only (ui/sidebar.py)
        titles = [plain(fig.layout.title.text) for fig in chart_figures(at)]
        words = [c.value for c in at.main.caption if any(
            c.value == escape_markdown(title) or c.value.startswith(escape_markdown(title + ":")) for title in titles)]
        assert not at.get("download_button") and len(words) == len(titles) == len(at.main.caption), page
        assert len(at.get("plotly_chart")) == len(normal.get("plotly_chart"))
        assert _fonts(at) == {BASE_FONT}


def test_presenter_mode_keeps_the_seed_and_dimensions_chosen_before():
    at = open_page("attention_steps")
    at.number_input(key="steps_seed").set_value(5).run()
    q_before = at.data_editor[0].value.copy()
    at.session_state["presenter"] = True
    at.run()
    at.run()  # a second run: a hidden widget's value would be gone by now
    assert at.session_state["steps_seed"] == 5 and at.query_params["seed"] == "5"
    assert at.data_editor[0].value.equals(q_before)
    at = open_page("positional")
    at.multiselect(key="pe_dims").set_value([3, 4]).run()
    at.session_state["presenter"] = True
    at.run()
    at.run()
    curves = next(s for s in chart_specs(at) if s["layout"]["title"]["text"] == "Chosen dimensions over position")
    assert [trace["name"] for trace in curves["data"]] == ["dim 3 (cos, i=1)", "dim 4 (sin, i=2)"]

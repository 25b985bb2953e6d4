"""The attention and decoding pages in English and Korean, restored from a link, and in presenter mode; the attention
charts' words and CSV tables."""
import contextlib
import functools
import json
import re

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

import i18n
import ui.language  # its _session_language is the language provider each run installs (ui/run.run_app)
from i18n import translate
from tests.app_links import chart_specs, csv_chart_keys, fragment_ids, open_from_link, open_page, query_param
from ui.errors import GUARD_MESSAGE
from viz.attention import (attention_heatmap, attention_lines, attention_table, head_grid, head_statistics_table,
                           probability_bars)
from viz.chart_data import chart_data
from viz.export import chart_table
from viz.presentation import BASE_FONT
from ui.language import words_for

HANGUL = re.compile(r"[\uac00-\ud7a3]")


def _title(spec: dict) -> str:
    return spec["layout"]["title"]["text"]


# --- charts (pure functions) -------------------------------------------------------------------------------------

def test_chart_words_follow_the_language_and_hover_templates_stay_intact(monkeypatch):
    monkeypatch.setattr(i18n, "_language_provider", lambda: "ko")
    fig = attention_heatmap(np.tril(np.ones((3, 3))) / 3, ["<b>", "b", "c"], list("abc"),
                            masked=np.triu(np.ones((3, 3), bool), 1), words=words_for("attention"))
    assert fig.layout.xaxis.title.text == translate("ko", "attention.chart.keys_axis")
    assert fig.layout.yaxis.title.text == translate("ko", "attention.chart.queries_axis")
    hover = fig.data[0].hovertemplate
    assert "쿼리 %{customdata[0]}" in hover and "%{z:.4f}" in hover and "<extra></extra>" in hover
    assert "소프트맥스" in fig.data[1].hovertemplate  # the mask overlay explains itself in Korean
    assert fig.layout.yaxis.ticktext[0] == "&lt;b&gt;"  # token text still escaped
    bars = probability_bars(["je"], [1.0], words=words_for("attention"))
    assert bars.layout.xaxis.title.text == "확률"
    table = head_statistics_table({"entropy": np.ones((1, 2))}, words=words_for("attention"))
    assert list(table.columns) == ["층", "헤드", "엔트로피 (nats)"]
    assert list(head_statistics_table({"entropy": np.ones((1, 2))}, average_heads=True,
                                      words=words_for("attention")).columns) == \
        ["층", "엔트로피 (nats)"]
    assert attention_table(np.eye(2), list("ab"), list("ab"), words=words_for("attention")).index.name == "쿼리 \\ 키"


def test_head_grid_csv_names_layer_head_and_tokens():
    weights = np.random.default_rng(1).random((2, 2, 3, 3))
    table = chart_table(chart_data(head_grid(weights, ["i", "am", "<eos>"], ["je", "suis", "=x"],
                                             words=words_for("attention"))))
    row = table[(table["series"] == "L2 H1") & (table["y"] == "am") & (table["x"] == "'=x")]
    assert len(row) == 1 and row["z"].iloc[0] == pytest.approx(weights[1, 0, 1, 2])
    assert set(table["y"]) == {"i", "am", "<eos>"}  # tokens, not positions


@pytest.mark.parametrize("language", ["en", "ko"])
def test_cached_head_figures_are_the_built_ones(monkeypatch, language):
    from ui.attention.view import cached_figure

    monkeypatch.setattr(i18n, "_language_provider", lambda: language)
    weights = np.random.default_rng(2).dirichlet(np.ones(4), size=3)
    queries, keys, masked = ["<b>", "a", "b"], ["x", "y", "&", "z"], np.triu(np.ones((3, 4), bool), 1)
    built = {"heatmap": attention_heatmap(weights, queries, keys, "t", masked=masked, words=words_for("attention")),
             "lines": attention_lines(weights, queries, keys, "t", words=words_for("attention"))}
    for builder, fig in built.items():
        extra = {"masked": masked} if builder == "heatmap" else {}
        for _ in range(2):  # the first call fills the cache, the second reads it
            cached = cached_figure(builder, weights, queries, keys, "t", **extra)
            assert json.loads(cached.to_json()) == json.loads(fig.to_json())
    assert cached_figure("heatmap", weights, queries, keys, "t").layout.xaxis.title.text == \
        translate(language, "attention.chart.keys_axis")


# --- attention page -----------------------------------------------------------------------------------------------

def test_attention_page_in_korean(monkeypatch):
    # AppTest re-serialises selectboxes through format_func outside the script thread, where the session's
    # language is unknown; pin the provider each run installs to Korean so that the second run sees the same labels
    # as the first.
    monkeypatch.setattr(ui.language, "_session_language", lambda: "ko")
    at = open_page("attention", sentence="i am a student", lang="ko")
    assert at.title[0].value == translate("ko", "attention.title") != translate("en", "attention.title")
    intro = translate("ko", "attention.intro", shade=translate("ko", "lecture.shade_dark"))
    assert intro in [m.value for m in at.markdown]
    view = at.button_group(key="attn_view")
    assert view.value == "Head" and view.options[0] == translate("ko", "attention.views.head")
    heat = chart_specs(at)[0]
    layer, head = at.session_state["attn_layer"], at.session_state["attn_head"]  # the opening view: cross-attention
    assert _title(heat) == translate("ko", "attention.head_title", kind=translate("ko", "attention.kinds.cross"),
                                     layer=layer + 1, head=head + 1)
    assert heat["layout"]["xaxis"]["title"]["text"] == translate("ko", "attention.chart.keys_axis")
    at.session_state["attn_view"] = "Statistics"
    at.run()
    assert not at.exception and "엔트로피 (nats)" in at.dataframe[0].value.columns


def test_a_link_restores_the_compare_view_with_head_b():
    at = open_page("attention", {"sentence": "the small cat eats the red apple", "kind": "decoder_self", "layer": "1",
                             "head": "2", "view": "Compare", "cmp_kind": "decoder_self", "cmp_layer": "0",
                             "cmp_head": "3"})
    assert (at.selectbox(key="cmp_kind").value, at.selectbox(key="cmp_layer").value,
            at.selectbox(key="cmp_head").value) == ("decoder_self", 0, 3)
    titles = [_title(s) for s in chart_specs(at)]
    assert titles[0] == "A: Decoder masked self-attention · layer 2 · head 3"
    assert titles[1] == "B: Decoder masked self-attention · layer 1 · head 4"
    assert titles[2] == "Difference A − B"  # same kind: a cell-by-cell difference
    assert query_param(at, "cmp_head") == "4" and query_param(at, "view") == "Compare"
    at.selectbox(key="cmp_head").select_index(0).run()
    assert query_param(at, "cmp_head") == "1"  # links count from 1, as on screen


def test_a_link_restores_the_rescale_factor():
    at = open_page("attention", {"sentence": "i am a student", "view": "Rescale", "rescale": "8.0"})
    assert at.select_slider(key="rescale_factor").value == 8.0
    assert any("re-softmaxed at ×8" in _title(s) for s in chart_specs(at))
    trained, rescaled = (float(m.value) for m in at.metric[:2])
    assert rescaled < trained


def test_a_link_reproduces_the_heads_switched_off_in_the_ablation_view():
    at = open_page("attention", {"sentence": "the small cat eats the red apple", "view": "Ablation"})
    before = [m.value for m in at.metric][:2]
    off = [("cross", 0, 0), ("cross", 0, 1), ("cross", 1, 0), ("cross", 1, 1), ("cross", 1, 2), ("cross", 1, 3)]
    at.multiselect(key="ablate_heads").set_value(off).run()
    after = [m.value for m in at.metric][:2]
    assert after != before
    assert query_param(at, "heads_off") == "cross.1.1,cross.1.2,cross.2.1,cross.2.2,cross.2.3,cross.2.4"  # from 1
    shared = {name: query_param(at, name) for name in ("sentence", "view", "heads_off", "v")}
    again, notice = open_from_link("attention", shared)
    assert not notice and again.multiselect(key="ablate_heads").value == off
    assert [m.value for m in again.metric][:2] == after  # the same switched-off translation
    for bad in ("cross.9.1", "cross.1", "nonsense.1.1", "cross.1.1,cross.1.1", "cross.0.1", "cross.１.1"):
        at, notice = open_from_link("attention", {"sentence": "i am a student", "view": "Ablation",
                                                  "heads_off": bad, "v": "2"})
        assert "heads_off" in notice and at.multiselect(key="ablate_heads").value == [], bad


def test_garbage_link_values_fall_back_to_the_defaults():
    at, notice = open_from_link("attention", {"sentence": "i am a student", "view": "nonsense", "cmp_head": "99",
                                                 "cmp_kind": "x", "rescale": "0.33", "kind": "1e9"})
    assert translate("en", "share.bad_link", names="")[:30] in notice
    assert all(name in notice for name in ("view", "cmp_head", "cmp_kind", "rescale", "kind"))
    assert at.button_group(key="attn_view").value == "Head" and at.selectbox(key="attn_kind").value == "cross"
    at.session_state["attn_view"] = "Rescale"
    at.run()
    assert not at.exception and at.select_slider(key="rescale_factor").value == 1.0


def test_presenter_mode_on_the_attention_page():
    normal = open_page("attention", sentence="i am a student")
    assert "head_heatmap" in csv_chart_keys(normal)
    at = open_page("attention", {"presenter": "true"}, sentence="i am a student")
    assert not at.get("download_button")
    assert all(s["layout"]["font"]["size"] == BASE_FONT for s in chart_specs(at))
    for view, shown in (("Statistics", "stats_caption"), ("All heads", "grid_caption"), ("Rescale", "rescale_caption")):
        for state in (normal, at):
            state.session_state["attn_view"] = view
            state.run()
            assert not state.exception
        first = translate("en", f"attention.{shown}")[:25]
        assert any(c.value.startswith(first) for c in normal.caption), view
        assert not any(c.value.startswith(first) for c in at.caption), view
        assert chart_specs(at) or view == "Statistics"
    assert "stats" not in csv_chart_keys(at)


# --- decoding page ------------------------------------------------------------------------------------------------

def test_decoding_page_in_korean():
    at = open_page("decoding", sentence="i am a student", lang="ko")
    assert at.title[0].value == translate("ko", "decoding.title") and HANGUL.search(at.title[0].value)
    assert translate("ko", "decoding.intro") in [m.value for m in at.markdown]
    assert [b.label for b in at.button][:2] == [translate("ko", "decoding.previous"), translate("ko", "decoding.next")]
    assert at.slider(key="decode_step").label == "단계"
    cross, self_attention, top = chart_specs(at)
    assert _title(cross).startswith("“je”를 쓰는 동안의 크로스 어텐션")
    assert cross["data"][0]["y"] == list(range(4)) and cross["layout"]["yaxis"]["ticktext"][0] == "헤드 1"
    assert "헤드 평균" in _title(self_attention) and _title(top) == "단계 1의 다음 토큰 상위 5개"


def test_a_link_restores_the_decoding_step_layer_and_head():
    at = open_page("decoding", {"sentence": "i am a student", "step": "3", "dec_layer": "1", "dec_head": "2"})
    assert at.slider(key="decode_step").value == 3
    assert (at.selectbox(key="dec_layer").value, at.selectbox(key="dec_head").value) == (1, 2)
    assert at.code[0].value.endswith("→  étudiant")
    cross, self_attention, _ = chart_specs(at)
    assert "(layer 2)" in _title(cross) and cross["layout"]["yaxis"]["ticktext"] == ["head 3"]
    assert len(self_attention["data"][0]["z"]) == 3  # the causal mask has grown to three rows
    assert "mean" not in _title(self_attention)
    at.selectbox(key="dec_head").set_value("all").run()
    assert query_param(at, "dec_head") == "all" and query_param(at, "step") == "3"


def test_garbage_decoding_link_falls_back():
    at, notice = open_from_link("decoding", {"sentence": "i am a student", "step": "abc", "dec_layer": "7",
                                                "dec_head": "x"})
    assert all(name in notice for name in ("step", "dec_layer", "dec_head"))
    assert at.slider(key="decode_step").value == 1 and at.selectbox(key="dec_head").value == "all"


def test_presenter_mode_on_the_decoding_page():
    normal = open_page("decoding", sentence="i am a student")
    at = open_page("decoding", {"presenter": "true"}, sentence="i am a student")
    long_caption = translate("en", "decoding.cross_caption")
    assert long_caption in [c.value for c in normal.caption] and long_caption not in [c.value for c in at.caption]
    assert translate("en", "decoding.mask_caption") in [c.value for c in at.caption]  # needed to read the chart
    assert {"dec_cross", "dec_self", "dec_topk"} <= set(csv_chart_keys(normal)) and not at.get("download_button")
    assert [s["layout"]["font"]["size"] for s in chart_specs(at)] == [BASE_FONT] * 3


# --- the attention explorer is a fragment ---------------------------------------------------------------------------

@contextlib.contextmanager
def _fragment_reruns(at: AppTest):
    """at.run() reruns only the page's fragment, as the browser does when a widget inside it changes (AppTest's own
    reruns are always full). Counts the full runs meanwhile (app.py draws the sidebar in each)."""
    import streamlit.testing.v1.local_script_runner as runner

    import ui.sidebar

    fragments = fragment_ids(at)
    assert len(fragments) == 1, fragments
    full_runs = []
    draw_sidebar = ui.sidebar.render_sidebar
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(runner, "RerunData", functools.partial(runner.RerunData, fragment_id_queue=fragments))
        patch.setattr(ui.sidebar, "render_sidebar", lambda: (full_runs.append(1), draw_sidebar())[1])
        yield full_runs


def test_a_head_switch_reruns_only_the_fragment_and_the_url_follows():
    at = open_page("attention", {"sentence": "she is a student", "kind": "cross"})
    assert query_param(at, "head") == "1" and "layer 1 · head 1" in _title(chart_specs(at)[0])
    with _fragment_reruns(at) as full_runs:
        at.selectbox(key="attn_head").select_index(2).run()
        assert not at.exception and not [e for e in at.error if GUARD_MESSAGE in e.value]
        assert _title(chart_specs(at)[0]) == "Encoder–decoder (cross) attention · layer 1 · head 3"
        assert query_param(at, "head") == "3" and query_param(at, "kind") == "cross"
        assert query_param(at, "sentence") == "she is a student"  # the rest of the address is kept
        at.selectbox(key="attn_layer").select_index(1).run()
        assert "layer 2 · head 3" in _title(chart_specs(at)[0]) and query_param(at, "layer") == "2"
        # The All-heads head pills set layer and head from a callback inside the fragment.
        at.session_state["attn_view"] = "All heads"
        at.run()
        at.button_group(key="focus_layer_0").set_value(1).run()
        assert (at.session_state["attn_layer"], at.session_state["attn_head"]) == (0, 1)
        # ... and open it in the Head view
        assert (query_param(at, "layer"), query_param(at, "head"), query_param(at, "view")) == ("1", "2", "Head")
        assert not full_runs  # the sidebar and the translation were not drawn again
    at.run()  # a full run afterwards shows the same head
    assert not at.exception and query_param(at, "head") == "2" and "je" not in query_param(at, "sentence")
    assert any(m.value.endswith(" **elle est étudiante**") for m in at.markdown)


def test_an_error_in_a_fragment_rerun_is_the_guard_message(monkeypatch):
    at = open_page("attention", sentence="i am a student")
    with _fragment_reruns(at):
        def broken(*args, **kwargs):
            raise RuntimeError("boom")

        monkeypatch.setattr("ui.attention.view.show_head", broken)
        at.selectbox(key="attn_head").select_index(1).run()
        assert not at.exception
        assert any(GUARD_MESSAGE in e.value and "RuntimeError" in e.value for e in at.error)
        assert "boom" not in " ".join(e.value for e in at.error)
        assert query_param(at, "head") == "2"  # the address still follows the head

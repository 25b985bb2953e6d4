"""SmolLM2-135M-Instruct in the attention explorer (issue 26): picked in the sidebar like any model, every page opens
under it, every view the adapter offers draws, and its 30 layers × 9 heads grid is paged six layers at a time with
the model's own layer numbers (viz.attention.head_grid's first_layer)."""
import numpy as np
import pytest

from i18n import translate
from model.gguf_weights import SMOLLM2_NAME
from model.llama import MAX_TOKENS
from tests.app_links import chart_specs, chart_titles, open_from_link, open_page, query_param, trace_array
from ui.attention.grid import GRID_MAX_CELLS, GRID_PAGE, GRID_PAGE_LAYERS, pooled_maps
from ui.language import words_for
from ui.screen import PAGE_WIDTH
from viz.attention import grid_head, head_grid
from viz.encoder import LABEL_FONT, label_pitch, label_rooms
from viz.chart_data import chart_data

SENTENCE = "The cat sat on the mat. The cat sat on the"
PAGES = ["home", "positional", "softmax_scaling", "attention_steps", "normalization", "residual", "attention",
         "decoding", "compare", "llm", "llm_heads", "llm_answer", "train", "teacher"]
TITLE_KEYS = {"teacher": "class_teacher.title"}


def test_a_page_of_the_grid_names_the_models_own_layers():
    weights = np.random.default_rng(0).dirichlet(np.ones(4), size=(2, 3, 4))  # (2 layers, 3 heads, 4, 4)
    fig = head_grid(weights, list("abcd"), list("abcd"), "grid", selected=(1, 2), first_layer=12,
                    words=words_for("attention"))
    maps = chart_data(fig).maps  # what its CSV and words name
    assert [one.name for one in maps] == [f"L{l} H{h}" for l in (13, 14) for h in (1, 2, 3)]
    for one in maps:
        layer, head = int(one.name.split()[0][1:]) - 13, int(one.name.split()[1][1:]) - 1
        np.testing.assert_allclose(one.values, weights[layer, head])
    assert list(fig.layout.yaxis.ticktext) == [translate("en", "attention.chart.layer_tick", layer=l) for l in (13, 14)]
    targets = next(trace for trace in fig.data if trace.type == "scatter")
    heads = {grid_head({"customdata": list(point)}) for point in targets.customdata}
    assert heads == {(l, h) for l in (12, 13) for h in range(3)}  # a click opens the model's layer, 0-based
    titles = [a.text for a in fig.layout.annotations]
    assert "L13 H1" in titles and "L14 H3" in titles and "L1 H1" not in titles


@pytest.mark.slow
def test_every_page_opens_with_the_llm_picked():
    for page in PAGES:
        at = open_page(page, model_id=SMOLLM2_NAME, sentence=SENTENCE)
        assert at.title[0].value == translate("en", TITLE_KEYS.get(page, f"{page}.title")), page
        assert not at.error, (page, [e.value for e in at.error])


@pytest.mark.slow
def test_every_view_of_the_llm_draws_and_its_grid_is_paged_by_layer():
    at = open_page("attention", model_id=SMOLLM2_NAME, sentence=SENTENCE)
    views = at.button_group(key="attn_view").options
    assert {"Head", "All heads", "Compare", "Statistics", "Ablation", "Rescale", "Explain", "Find heads",
            "Two texts"} == set(views)
    assert translate("en", "bert.ablation_hidden") not in [c.value for c in at.caption]
    assert at.selectbox(key="attn_layer").options[-1] == "30" and len(at.selectbox(key="attn_head").options) == 9
    for view in views:
        at.session_state["attn_view"] = view
        at.run()
        assert not at.exception and not at.error, view
    at.session_state["attn_view"] = "All heads"
    at.run()
    page = at.get("segmented_control")
    pages = next(control for control in page if control.key == GRID_PAGE.key)
    assert pages.options == [f"{first}–{first + GRID_PAGE_LAYERS - 1}" for first in (1, 7, 13, 19, 25)]
    grid = next(spec for spec in chart_specs(at) if spec["data"][0]["type"] == "heatmap")
    layer_ticks = grid["layout"]["yaxis"]["ticktext"]  # a row of thumbnails a layer
    assert len(layer_ticks) == GRID_PAGE_LAYERS and layer_ticks[0] == translate("en", "attention.chart.layer_tick",
                                                                                  layer=1)
    pages.set_value(24).run()  # layers 25-30: the tiles carry the model's own layer numbers
    grid = next(spec for spec in chart_specs(at) if spec["data"][0]["type"] == "heatmap")
    assert grid["layout"]["yaxis"]["ticktext"][0] == translate("en", "attention.chart.layer_tick", layer=25)
    at.button_group(key="focus_layer_29").set_value(8).run()  # L30 H9 in layer 30's row of heads (0-based): opens it
    assert not at.exception
    assert any("layer 30 · head 9" in title for title in chart_titles(at)), chart_titles(at)


def _next_tokens(at) -> dict[str, float]:
    """The ablation table's "heads off" columns: token -> probability."""
    table = at.dataframe[0].value
    return dict(zip(table[translate("en", "llm_explain.token_off")],
                    table[translate("en", "llm_explain.probability_off")]))


@pytest.mark.slow
def test_the_llm_ablation_shows_the_next_token_with_and_without_the_heads_in_the_link():
    at, _ = open_from_link("attention", {"view": "Ablation"}, model_id=SMOLLM2_NAME, sentence=SENTENCE)
    before = _next_tokens(at)
    assert list(before)[0] == repr(" mat")  # copied from the context, all heads on
    kl = translate("en", "llm_explain.kl")
    assert next(m.value for m in at.metric if m.label == kl) == "0.0000"
    at.multiselect(key="ablate_heads").select(("decoder_self", 18, 6)).run()  # L19 H7, the top induction head
    assert not at.exception and not at.error
    after = _next_tokens(at)
    assert after != before and abs(after[repr(" mat")] - before[repr(" mat")]) > 0.05
    assert float(next(m.value for m in at.metric if m.label == kl)) > 0.01
    titles = chart_titles(at)
    assert translate("en", "llm_explain.title_off", count=1) in titles, titles
    assert query_param(at, "heads_off") == "decoder_self.19.7"  # the shared link keeps the switched-off head
    again, _ = open_from_link("attention", {"view": "Ablation", "heads_off": "decoder_self.19.7"},
                              model_id=SMOLLM2_NAME, sentence=SENTENCE)
    assert _next_tokens(again) == after


@pytest.mark.slow
def test_the_llm_explain_view_names_the_first_token_and_shows_importance_and_labels():
    at, _ = open_from_link("attention", {"view": "Explain", "explain_mode": "norms"}, model_id=SMOLLM2_NAME,
                           sentence=SENTENCE)
    first = translate("en", "llm_explain.first_token", token=repr("The"))
    assert any(first in title for title in chart_titles(at)), chart_titles(at)
    assert not any("<bos>" in title for title in chart_titles(at))
    at.session_state["explain_part"] = "importance"
    at.run()
    assert at.button(key="explain_importance_run")  # a minute of CPU: asked for first
    at.button(key="explain_importance_run").click().run()
    assert not at.exception and not at.error
    titles = chart_titles(at)
    assert translate("en", "llm_explain.importance_title", texts=8) in titles, titles
    assert at.dataframe[0].value.shape[0] == 270
    at.session_state["explain_part"] = "patterns"
    at.session_state["explain_pattern"] = "induction"
    at.run()
    assert not at.exception and not at.error
    matches = " ".join(m.value for m in at.markdown)
    assert "L19 H7" in matches and "L19 H9" not in matches
    at.session_state["explain_pattern"] = "first"
    at.run()
    assert "L25 H1" in " ".join(m.value for m in at.markdown)


@pytest.mark.slow
def test_the_warm_up_opens_the_llm_labels_from_a_clean_link():
    """serving/warmup.py opens this link on every replica before it takes students: it must draw the labels."""
    from urllib.parse import parse_qsl

    from serving.warmup import WARM_LINKS

    stop = next(s for s in WARM_LINKS if SMOLLM2_NAME in s)
    path, query = stop.split("?")
    at, notices = open_from_link(path, dict(parse_qsl(query)))
    assert not notices and not at.exception and not at.error
    assert translate("en", "explain_encoder.patterns_title", sentences=8) in chart_titles(at)


def words(count: int) -> str:
    return " ".join(["word"] * count)  # one SmolLM2 token each


def token_axes_fit(spec: dict, width: int) -> bool:
    """No two token labels of a drawn map overlap: each has a label's pitch of the room viz.encoder measures."""
    import plotly.graph_objects as go

    fig = go.Figure(go.Heatmap(), layout=spec["layout"])
    rooms = label_rooms(fig, width)
    return all(len(spec["layout"][axis].get("tickvals") or []) * label_pitch(LABEL_FONT) <= room
               for axis, room in rooms.items())


def test_a_long_texts_thumbnails_average_blocks_of_tokens_named_first_to_last():
    weights = np.arange(2 * 5 * 4, dtype=float).reshape(1, 2, 5, 4)  # (1 layer, 2 heads, 5 queries, 4 keys)
    pooled, queries, keys = pooled_maps(weights, list("abcde"), list("wxyz"), cells=2)
    assert pooled.shape == (1, 2, 2, 2) and queries == ["a…c", "d…e"] and keys == ["w…x", "y…z"]
    assert pooled[0, 1, 1, 0] == weights[0, 1, 3:5, 0:2].mean()  # head 2: the block of queries d, e and keys w, x


@pytest.mark.slow
def test_a_500_token_text_is_analysed_whole_in_every_view_with_thinned_labels():
    """Issue 26: texts up to MAX_TOKENS stay usable; the head map labels every k-th token, the grid pools."""
    at = open_page("attention", model_id=SMOLLM2_NAME, sentence=words(500))
    assert not at.warning, [w.value for w in at.warning]  # nothing cut
    for view in at.button_group(key="attn_view").options:
        at.session_state["attn_view"] = view
        at.run()
        assert not at.exception and not at.error, view
        maps = [spec for spec in chart_specs(at) if spec["data"] and spec["data"][0]["type"] == "heatmap"]
        # a table; the next token's bars; the finder's bars of heads (no token axes)
        assert maps or view in ("Statistics", "Ablation", "Find heads"), view
        for spec in maps:
            assert token_axes_fit(spec, PAGE_WIDTH), (view, spec["layout"]["title"]["text"])
        if view == "Head":
            head = trace_array(maps[0]["data"][0]["z"])
            assert head.shape == (500, 500) and 2 <= len(maps[0]["layout"]["xaxis"]["tickvals"]) < 500
        if view == "All heads":
            assert translate("en", "bert.grid_pooled", tokens=500, cells=GRID_MAX_CELLS) in [c.value for c in at.caption]


@pytest.mark.slow
def test_a_600_token_text_is_cut_to_its_first_512_with_a_message():
    at = open_page("attention", model_id=SMOLLM2_NAME, sentence=words(600))
    assert [w.value for w in at.warning] == [translate("en", "bert.truncated_first", tokens=600, limit=MAX_TOKENS)]
    head = next(spec for spec in chart_specs(at) if spec["data"][0]["type"] == "heatmap")
    assert trace_array(head["data"][0]["z"]).shape == (MAX_TOKENS, MAX_TOKENS)

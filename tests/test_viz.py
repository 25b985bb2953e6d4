"""Chart builders as pure functions: shapes, labels, values, escaping."""
import numpy as np
import pytest

from model.metrics import head_statistics
from viz.attention import (attention_heatmap, attention_lines, difference_heatmap, head_grid, head_statistics_table,
                           html_escaped, probability_bars)
from ui.language import words_for

TOKENS = ["i", "am", "a", "a", "<eos>"]


def _weights(n=5):
    rng = np.random.default_rng(0)
    w = rng.random((n, n))
    return w / w.sum(-1, keepdims=True)


def test_heatmap_axes_values_and_repeated_tokens():
    w = _weights()
    fig = attention_heatmap(w, TOKENS, TOKENS, "title", words=words_for("attention"))
    heat = fig.data[0]
    np.testing.assert_allclose(np.asarray(heat.z, dtype=float), w)
    assert list(fig.layout.xaxis.ticktext) == ["i", "am", "a", "a", "&lt;eos&gt;"]  # both "a" kept apart
    assert fig.layout.yaxis.title.text.startswith("queries") and fig.layout.xaxis.title.text.startswith("keys")
    assert "%{z:.4f}" in heat.hovertemplate


def test_masked_cells_are_blank_and_drawn_grey():
    w = np.tril(_weights())
    masked = np.triu(np.ones((5, 5), bool), 1)
    fig = attention_heatmap(w, TOKENS, TOKENS, masked=masked, words=words_for("attention"))
    z = np.asarray(fig.data[0].z, dtype=float)
    assert np.isnan(z[masked]).all() and not np.isnan(z[~masked]).any()
    assert len(fig.data) == 2 and "masked" in fig.data[1].hovertemplate


def test_difference_grid_lines_bars_and_table():
    a, b = _weights(), _weights()[::-1]
    diff = difference_heatmap(a, b, TOKENS, TOKENS, words=words_for("attention"))
    np.testing.assert_allclose(np.asarray(diff.data[0].z, dtype=float), a - b)
    grid = head_grid(np.stack([np.stack([a, b])] * 2), TOKENS, TOKENS, selected=(1, 0), words=words_for("attention"))
    assert len([t for t in grid.data if t.type == "heatmap"]) == 1 and len(grid.layout.shapes) == 1  # tiled maps
    lines = attention_lines(np.eye(5), TOKENS, TOKENS, threshold=0.5, words=words_for("attention"))
    segments = [seg for t in lines.data if t.mode == "lines" for seg in zip(t.x[0::3], t.y[0::3], t.y[1::3])]
    assert sorted(segments) == [(0, i, i) for i in range(5)]  # one line per query, to its own key
    spread = attention_lines(_weights(), TOKENS, TOKENS, threshold=0.0, words=words_for("attention"))
    assert sum(len(t.x) // 3 for t in spread.data if t.mode == "lines") == 25 and len(spread.data) <= 8 + 2
    bars = probability_bars(["je", "tu"], [0.9, 0.1], words=words_for("attention"))
    assert list(bars.data[0].x) == [0.9, 0.1]
    stats = head_statistics(np.stack([np.stack([np.eye(5), np.eye(5, k=-1)])]), key_tokens=TOKENS)
    table = head_statistics_table(stats, words=words_for("attention"))
    assert list(table["share on same position"]) == [1.0, 0.0]
    assert table["share on previous token"].iloc[1] == 0.8  # row 0 has no previous token
    assert len(head_statistics_table(stats, average_heads=True, words=words_for("attention"))) == 1


def test_user_text_is_escaped_for_plotly():
    assert html_escaped("<img src=x onerror=alert(1)>") == "&lt;img src=x onerror=alert(1)&gt;"
    fig = attention_heatmap(_weights(2), ["<b>x</b>", "y"], ["a", "<br>"], words=words_for("attention"))
    assert "<b>" not in "".join(fig.layout.yaxis.ticktext)


def test_training_curves_show_train_and_validation():
    from viz.training import training_curves

    history = [{"step": s, "loss": 5 / s, "token_accuracy": s / 30, "lr": 1e-3, "elapsed_s": s} for s in range(1, 31)]
    history[-1].update(val_exact_match=0.5, val_token_accuracy=0.9)
    fig = training_curves(history, words=words_for("train", "compare"))
    names = [t.name for t in fig.data]
    assert "training loss (cross-entropy)" in names and "validation exact match" in names
    assert "training token accuracy, 20-step mean" in names
    assert fig.layout.yaxis.title.text.startswith("loss") and fig.layout.xaxis.title.text == "step"


def test_attention_table_keeps_repeats_apart_and_defuses_formulas():
    from viz.attention import attention_table

    table = attention_table(np.eye(3), ["a", "a", "=cmd"], ["@x", "b", "-1"], words=words_for("attention"))
    assert list(table.index) == ["0: a", "1: a", "2: =cmd"]
    assert list(table.columns) == ["0: @x", "1: b", "2: -1"]
    from viz.attention import csv_safe
    assert csv_safe("=HYPERLINK()") == "'=HYPERLINK()" and csv_safe("je") == "je"
    assert table.to_csv().splitlines()[0] == "query \\ key,0: @x,1: b,2: -1"


@pytest.mark.parametrize("size", [256, 512])
def test_a_long_map_labels_every_kth_token_so_that_no_two_labels_overlap(size):
    """Issues 22 and 26: a 256- or 512-token heatmap's axes carry evenly spaced labels, each a label's pitch of the
    room its axis has once the other axis' measured labels are off it; as many as fit; the CSV still names every
    token, and a short sentence keeps every label."""
    from viz.attention import attention_heatmap
    from viz.encoder import LABEL_FONT, PROJECTED_LABEL_FONT, label_pitch, label_rooms, thin_tick_labels
    from viz.chart_data import chart_data
    from viz.export import chart_table

    tokens = [f"w{i}" for i in range(size)]
    fig = attention_heatmap(np.full((size, size), 1 / size), tokens, tokens, "long", words=words_for("attention"))
    for font, width in ((LABEL_FONT, 1100), (PROJECTED_LABEL_FONT, 1100), (LABEL_FONT, 660), (LABEL_FONT, 540)):
        thinned = thin_tick_labels(fig, width, font)
        rooms = label_rooms(fig, width, font)
        for name in ("xaxis", "yaxis"):
            shown = list(thinned.layout[name].tickvals)
            assert 2 <= len(shown) and shown[0] == 0
            assert len({b - a for a, b in zip(shown, shown[1:])}) == 1  # evenly spaced
            assert len(shown) * label_pitch(font) <= rooms[name], (font, width, name, len(shown))
            assert 2 * len(shown) * label_pitch(font) > rooms[name]  # not thinned further than it must be
            assert list(thinned.layout[name].ticktext) == [tokens[i] for i in shown]
    assert list(chart_table(chart_data(fig)).columns) == tokens  # the CSV names them all: it reads the chart's data
    short = attention_heatmap(np.eye(6), tokens[:6], tokens[:6], "short", words=words_for("attention"))
    assert thin_tick_labels(short, 660) is short


def test_labels_are_thinned_only_where_their_measured_widths_overlap():
    """Issue 38 item 8: "The animal didn't cross the street because it was too tired." keeps all 16 labels of its
    head view beside the lines view, on a screen and projected; the room an axis has is what the other axis'
    measured labels leave: long words on the rows take more of the width than short ones, and Hangul is wider."""
    from viz.attention import attention_heatmap
    from viz.encoder import LABEL_FONT, PROJECTED_LABEL_FONT, label_rooms, thin_tick_labels
    from viz.presentation import for_projection
    from viz.text_width import text_width

    tokens = "[CLS] the animal didn ' t cross the street because it was too tired . [SEP]".split()
    assert len(tokens) == 16
    fig = attention_heatmap(np.full((16, 16), 1 / 16), tokens, tokens, "L1 H1", words=words_for("attention"))
    for shown, font, width in ((fig, LABEL_FONT, 820 * 3 // 5), (for_projection(fig), PROJECTED_LABEL_FONT,
                                                                    1120 * 3 // 5)):
        assert thin_tick_labels(shown, width, font) is shown  # all 16, both axes
    # measured: the rows' labels come off the width; longer words leave less of it
    long_rows = attention_heatmap(np.full((16, 16), 1 / 16), ["interdisciplinary"] * 16, tokens, "L1 H1",
                                  words=words_for("attention"))
    assert label_rooms(long_rows, 492)["xaxis"] < label_rooms(fig, 492)["xaxis"] - 40
    assert text_width("because", 12) > text_width("it", 12) * 3 and text_width("한국어", 12) > text_width("abc", 12)
    # where they really overlap (a narrow chart) they are thinned, to every other one
    narrow = thin_tick_labels(fig, 320, LABEL_FONT)
    assert list(narrow.layout.xaxis.tickvals) == list(range(0, 16, 2)) and len(narrow.layout.yaxis.tickvals) == 16


def test_a_long_texts_heatmap_names_its_cells_by_position_and_stays_small():
    """A 512-token map's per-cell token pairs were 7.7 of its 10.5 MB of JSON and ~2 s of the page slot (issue 36)."""
    from viz.attention import TOKEN_HOVER_CELLS, attention_heatmap

    tokens = [f"{i}:w{i % 7}" for i in range(512)]
    weights = np.full((512, 512), 1 / 512)
    fig = attention_heatmap(weights, tokens, tokens, "long", words=words_for("attention"))
    assert fig.data[0].customdata is None and "%{y}" in fig.data[0].hovertemplate
    assert list(fig.layout.xaxis.ticktext[:2]) == tokens[:2]  # the axes still name the tokens
    assert len(fig.to_json()) < 2_500_000
    short = attention_heatmap(weights[:4, :4], tokens[:4], tokens[:4], words=words_for("attention"))
    assert 4 * 4 <= TOKEN_HOVER_CELLS and short.data[0].customdata[1][2].tolist() == [tokens[1], tokens[2]]


def test_a_projected_legend_keeps_clear_of_the_title_and_of_the_axis_titles():
    """Projected, a legend along the plot's top lifts the title by its own height, and a legend under the plot moves
    down as far again as the tick labels and axis titles above it grew (tests/test_browser_pages_walk.py measures the
    boxes in the browser)."""
    import plotly.graph_objects as go

    from viz.presentation import BASE_FONT, for_projection

    def lines(legend: dict) -> go.Figure:
        fig = go.Figure([go.Scatter(x=[1, 2], y=[1, 2], name="a"), go.Scatter(x=[1, 2], y=[2, 1], name="b")])
        return fig.update_layout(title="t", legend=legend)

    plain = for_projection(lines(dict(orientation="v")))
    on_top = for_projection(lines(dict(orientation="h", yanchor="bottom", y=1.0, x=0)))
    assert on_top.layout.title.pad.b >= plain.layout.title.pad.b + BASE_FONT
    below = for_projection(lines(dict(orientation="h", y=-0.2)))
    assert below.layout.legend.y == pytest.approx(-0.3)
    single = go.Figure(go.Scatter(x=[1], y=[1])).update_layout(title="t", legend=dict(orientation="h", y=1.0,
                                                                                       yanchor="bottom"))
    assert for_projection(single).layout.title.pad.b == plain.layout.title.pad.b  # one trace: no legend drawn


def test_a_legend_along_the_top_of_a_narrow_chart_takes_rows_and_the_title_rises_over_them():
    """A phone's chart (340 px): the accuracy chart's three long model names take three rows of its legend, and its
    wrapped title rises over all three; across a page they take one."""
    import plotly.graph_objects as go

    from viz.presentation import _legend_rows, fit_title

    names = ["GRU seq2seq, no attention", "GRU seq2seq + Bahdanau attention", "Transformer"]
    fig = go.Figure([go.Scatter(x=[1, 2], y=[1, 2], name=name) for name in names]).update_layout(
        title="exact match against sentence length (test + long-sentence splits)",
        legend=dict(orientation="h", yanchor="bottom", y=1.0, xanchor="left", x=0))
    assert _legend_rows(fig, 820, 12) == 1 and _legend_rows(fig, 340, 12) >= 2 and _legend_rows(fig, None, 12) == 1
    narrow, wide = fit_title(fig, 44, chart_px=340), fit_title(fig, 44, chart_px=820)
    assert narrow.layout.title.pad.b > wide.layout.title.pad.b


def test_a_pick_marked_on_a_copy_of_the_map_to_tap_is_that_map_drawn_with_the_pick():
    """A class's picks are copies of one map to tap (viz.cells.with_pick), each the figure cell_picker draws for it."""
    import json

    import plotly.io as pio

    from ui.charts import copy_of_own_figure
    from viz.cells import cell_picker, with_pick

    rows, columns = ["<bos>", "le", "chat"], ["the", "cat", "<eos>"]
    words = words_for("attention")
    unpicked = cell_picker(rows, columns, 1, None, "Tap", words=words)
    for row, chosen in ((1, (1, 2)), (None, (2, 0))):
        base = unpicked if row == 1 else cell_picker(rows, columns, None, None, "Tap", words=words)
        drawn = json.loads(pio.to_json(cell_picker(rows, columns, row, chosen, "Tap", words=words)))
        assert json.loads(pio.to_json(with_pick(base, chosen, copy=copy_of_own_figure))) == drawn
    assert json.loads(pio.to_json(unpicked)) != drawn  # the pick is on the copy, never on the map it copies

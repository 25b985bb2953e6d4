"""viz/llm_answer.py's charts: the logit-lens map, a token's rank and probability by layer, and the patching maps, on
hand-made arrays (no model)."""
import numpy as np
import pytest

import i18n
from i18n import translate
from ui.language import words_for
from viz.attention import CLICK_TARGETS
from viz.llm_answer import (CELL_TEXT_CHARACTERS, COMPACT_ROW_PX, LENS_TEXT_COLUMNS, ROW_PX, attribution_bars,
                            attribution_parts, cell_text, heads_map, lens_cell_of, lens_map, patching_columns,
                            patching_map, rank_by_layer, sink_heads_table)

WORDS = words_for("llm_answer")


def lens_arrays(rows: int = 4, length: int = 3, k: int = 2):
    rng = np.random.default_rng(0)
    probs = np.sort(rng.dirichlet(np.ones(6), size=(rows, length))[..., :k], axis=-1)[..., ::-1]  # most likely first
    tokens = np.array([[[f"r{r}p{p}k{i}" for i in range(k)] for p in range(length)] for r in range(rows)],
                      dtype=object)
    return tokens, probs


def test_the_lens_map_colours_each_cell_by_its_top_token_and_writes_it():
    tokens, probs = lens_arrays()
    tokens[2, 1, 0] = "<b>bold</b>"  # token text is escaped, never markup
    fig = lens_map(tokens, probs, ["The", " cat", "\n"], np.array([3, 0, 2]), "lens", words=WORDS)
    heatmap, marks, targets = fig.data
    np.testing.assert_allclose(heatmap.z, probs[..., 0])
    assert targets.meta == CLICK_TARGETS and len(targets.x) == 4 * 3  # one click target a cell, with its hover
    assert lens_cell_of({"customdata": list(targets.customdata[2 * 3 + 1])}) == (2, 1)
    hover = np.asarray(targets.hovertext, dtype=object).reshape(4, 3)  # the cells' hover, (rows, positions)
    assert heatmap.hoverinfo == "skip"  # the targets', so that a click reaches them
    assert lens_cell_of({"customdata": "L3"}) is None and lens_cell_of({"x": 1}) is None  # a frame's point opens nothing
    assert (heatmap.zmin, heatmap.zmax) == (0, 1)
    assert heatmap.text[1][0] == "r1p0k0" and heatmap.text[2][1] == "&lt;b&gt;bold…"
    assert len(heatmap.text[2][1].replace("&lt;", "<").replace("&gt;", ">")) == CELL_TEXT_CHARACTERS
    assert "1. 'r3p2k0'" in hover[3][2] and "2. 'r3p2k1'" in hover[3][2]
    assert "&lt;b&gt;" in hover[2][1] and "<b>bold" not in hover[2][1]
    assert list(fig.layout.yaxis.ticktext) == [translate("en", "llm_answer.chart.embeddings_row"), "L1", "L2", "L3"]
    assert list(fig.layout.xaxis.ticktext) == ["0: 'The'", "1: ' cat'", "2: '\\n'"]
    assert list(marks.x) == [0, 1, 2] and list(marks.y) == [3, 0, 2]  # each position's commitment row
    frames = [(shape.x0, shape.y0) for shape in fig.layout.shapes]  # a frame around each commitment cell
    assert frames == [(-0.5, 2.5), (0.5, -0.5), (1.5, 1.5)]
    assert list(marks.customdata) == ["L3", "emb", "L2"]


def test_the_lens_in_words_names_each_positions_commitment_row():
    """Not "commitment: 30.00 at 0, 30.00 at 4, highest 30.00 at 0" (issue 51): a row and a position a student reads."""
    from viz.chart_data import chart_data
    from viz.summary import chart_summary

    tokens, probs = lens_arrays()
    fig = lens_map(tokens, probs, ["The", " cat", "\n"], np.array([3, 0, 2]), "lens", words=WORDS)
    summary = chart_summary(chart_data(fig), words=words_for("llm_answer", "display"))
    assert "The row from which the top token stays the answer: L3 at 0: 'The'; emb at 1: ' cat'; L2 at" in summary
    assert "highest" not in summary and "3.00" not in summary


def test_a_quote_shows_as_a_quote_in_the_lens_and_markup_stays_text():
    """Plotly decodes only a few named entities: an escaped quote showed as &quot; in a cell (issue 51)."""
    tokens, probs = lens_arrays()
    tokens[1, 0, 0], tokens[1, 1, 0] = '"', " don't"
    fig = lens_map(tokens, probs, ['"', " it's", "<i>"], np.array([0, 0, 0]), 'the "lens"', words=WORDS)
    heatmap = fig.data[0]
    assert heatmap.text[1][0] == '"' and heatmap.text[1][1] == " don't"
    assert list(fig.layout.xaxis.ticktext) == ["0: '\"'", '1: " it\'s"', "2: '&lt;i&gt;'"]
    assert not any("&quot;" in str(text) or "&#x27;" in str(text) for text in fig.data[-1].hovertext)


def test_a_long_lens_writes_no_text_in_its_cells():
    tokens, probs = lens_arrays(length=LENS_TEXT_COLUMNS + 1)
    fig = lens_map(tokens, probs, [f"t{i}" for i in range(LENS_TEXT_COLUMNS + 1)], np.zeros(LENS_TEXT_COLUMNS + 1),
                   "lens", words=WORDS)
    assert fig.data[0].text is None and len(fig.data[-1].hovertext) == 4 * (LENS_TEXT_COLUMNS + 1)  # hover: every cell
    assert cell_text("a\nb") == "a\\nb"
    assert cell_text(" ") == "\u2423" and cell_text("  ") == "\u2423\u2423"  # a space token is no empty cell
    assert cell_text(" the") == " the"


def test_the_rank_chart_puts_rank_1_on_top_on_a_log_axis_beside_the_probability():
    ranks, probs = np.array([4000, 300, 12, 1]), np.array([0.0, 0.001, 0.05, 0.8])
    fig = rank_by_layer(ranks, probs, " Paris", "rank", words=WORDS)
    rank, probability = fig.data
    assert list(rank.y) == [4000, 300, 12, 1] and list(probability.y) == pytest.approx([0.0, 0.001, 0.05, 0.8])
    assert list(rank.x) == ["emb", "L1", "L2", "L3"]
    assert fig.layout.yaxis.type == "log" and fig.layout.yaxis.autorange == "reversed"
    assert probability.yaxis == "y2" and tuple(fig.layout.yaxis2.range) == (0, 1)
    assert "' Paris'" in rank.name


def test_the_patching_maps_name_the_changed_positions_and_centre_the_difference_on_zero():
    values = np.array([[0.1, 0.9, 0.0], [0.2, 0.5, 0.7]])
    clean, corrupt = ["When", " Mary", " to"], ["When", " John", " to"]
    assert patching_columns(clean, corrupt) == ["0: 'When'", "1: ' Mary' → ' John'",
                                                "2: ' to'"]
    fig = patching_map(values, clean, corrupt, "p", "p(answer)", words=WORDS)
    np.testing.assert_allclose(fig.data[0].z, values)
    assert (fig.data[0].zmin, fig.data[0].zmax, fig.data[0].zmid) == (0, 1, None)
    assert list(fig.layout.yaxis.ticktext) == ["L1", "L2"]
    assert "patched L2, 1: ' Mary' → ' John'" in fig.data[0].hovertext[1][1]
    diffs = np.array([[-2.0, 6.0, 0.5], [1.0, -3.0, 0.0]])
    fig = patching_map(diffs, clean, corrupt, "d", "logit difference", difference=True, words=WORDS)
    assert (fig.data[0].zmin, fig.data[0].zmid, fig.data[0].zmax) == (-6.0, 0, 6.0)
    projected = patching_map(diffs, clean, corrupt, "d", "logit difference", difference=True, compact=True, words=WORDS)
    np.testing.assert_allclose(projected.data[0].z, diffs)  # the same cells and labels, lower rows
    assert list(projected.layout.yaxis.ticktext) == ["L1", "L2"]
    assert projected.layout.height == fig.layout.height - 2 * (ROW_PX - COMPACT_ROW_PX)


def test_the_charts_speak_korean():
    with i18n.using_language("ko"):
        korean = words_for("llm_answer")
    tokens, probs = lens_arrays()
    fig = lens_map(tokens, probs, ["a", "b", "c"], np.zeros(3), "lens", words=korean)
    assert fig.layout.yaxis.title.text == translate("ko", "llm_answer.chart.row_axis")
    assert fig.data[1].name == translate("ko", "llm_answer.chart.commitment")


def test_the_heads_map_names_the_heads_furthest_from_the_median():
    values = np.full((4, 3), 0.01)
    values[2, 1], values[3, 0] = 0.8, 0.3
    fig = heads_map(values, "heads", "p", labelled=2, words=WORDS)
    np.testing.assert_allclose(fig.data[0].z, values)
    assert [a.text for a in fig.layout.annotations] == ["<b>L3 H2</b> 80%", "<b>L4 H1</b> 30%"]
    assert list(fig.data[0].y) == ["L1", "L2", "L3", "L4"] and list(fig.data[0].x) == ["H1", "H2", "H3"]
    values[0, 0] = 0.0  # a head that reads 0%: further from the median than any other, but no label (issue 51)
    assert [a.text for a in heads_map(values, "heads", "p", labelled=3, words=WORDS).layout.annotations] == [
        "<b>L3 H2</b> 80%", "<b>L4 H1</b> 30%"]
    diffs = heads_map(values - 0.5, "d", "diff", difference=True, words=WORDS)
    assert diffs.data[0].zmid == 0 and diffs.data[0].zmin == -diffs.data[0].zmax


def test_the_attribution_bars_are_the_largest_parts_sorted_and_the_sink_table_pairs_weight_and_contribution():
    heads = np.array([[0.1, -3.0], [2.5, 0.0]])  # (L, H)
    mlps, embedding = np.array([1.0, -0.2]), 0.4
    parts = attribution_parts(heads, mlps, embedding, words=WORDS)
    assert list(parts["part"]) == ["L2 H1", "MLP 1", "embeddings", "L1 H1", "L2 H2", "MLP 2", "L1 H2"]
    assert parts["contribution"].sum() == pytest.approx(heads.sum() + mlps.sum() + embedding)
    fig = attribution_bars(heads, mlps, embedding, "bars", count=3, words=WORDS)
    assert list(fig.data[0].y) == ["L2 H1", "MLP 1", "L1 H2"]  # the 3 largest in size, by contribution
    assert list(fig.data[0].x) == [2.5, 1.0, -3.0] and fig.data[0].marker.color[-1] != fig.data[0].marker.color[0]
    assert "MLP" in fig.layout.yaxis.title.text  # the axis names every kind of bar on it, MLPs too (issue 51)
    weights = np.array([[0.99, 0.1], [0.2, 0.95]])
    table = sink_heads_table(heads, weights, count=2, words=WORDS)
    assert list(table.columns) == ["head", "weight on the first token", "direct contribution (logit)"]
    assert table.values.tolist() == [["L1 H1", 0.99, 0.1], ["L2 H2", 0.95, 0.0]]

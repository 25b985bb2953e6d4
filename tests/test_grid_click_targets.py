"""The all-heads grid: one heatmap of tiled maps, its data one map per head (what its CSV and words read), and its
click targets (one per cell on small grids, bounded on big ones, never in the CSV), each lying on the map of the head
it opens."""
import numpy as np

from viz.attention import CLICK_TARGETS, CLICK_TARGETS_MAX, grid_head, head_grid, tile_origin
from viz.chart_data import chart_data
from viz.export import chart_table
from ui.language import words_for


def _targets(fig):
    return [trace for trace in fig.data if trace.meta == CLICK_TARGETS]


def test_each_cell_of_a_small_grid_is_a_click_target_that_names_its_head_and_tokens():
    weights = np.random.default_rng(0).random((2, 4, 3, 5))
    fig = head_grid(weights, ["i", "am", "<eos>"], list("abcde"), words=words_for("attention"))
    (targets,) = _targets(fig)
    assert len(targets.x) == 8 * 15
    point = {"customdata": list(targets.customdata[6 * 15 + 7])}  # layer 2, head 3; row 1 ("am"), column 2 ("c")
    assert grid_head(point) == (1, 2)
    assert point["customdata"][:2] == ["am", "c"] and point["customdata"][2] == weights[1, 2, 1, 2]
    assert grid_head({"x": 1, "y": 2}) is None  # a point of any other chart opens nothing
    table = chart_table(chart_data(fig))
    assert set(table["series"]) == {f"L{l} H{h}" for l in (1, 2) for h in (1, 2, 3, 4)}
    assert len(table) == 8 * 15  # the heatmaps' cells only


def test_the_grid_is_one_heatmap_whose_tiles_are_the_heads_maps_and_each_target_lies_on_its_heads_map(monkeypatch):
    monkeypatch.setattr("viz.attention.CLICK_TARGETS_MAX", 600)  # a budget of 6 × 6 a map: a target per cell
    weights = np.random.default_rng(3).random((3, 5, 4, 6))
    masked = np.triu(np.ones((4, 6), bool), 1)
    fig = head_grid(weights, list("abcd"), list("uvwxyz"), selected=(2, 1), masked=masked, words=words_for("attention"))
    heatmaps = [trace for trace in fig.data if trace.type == "heatmap"]
    assert len(heatmaps) == 1  # one trace, not a subplot per head (Chromium drew 72 subplots in seconds)
    z = np.asarray(heatmaps[0].z, dtype=float)
    data = chart_data(fig)
    assert data.grid and [one.name for one in data.maps] == [f"L{l} H{h}" for l in (1, 2, 3) for h in (1, 2, 3, 4, 5)]
    for index, one in enumerate(data.maps):
        expected = np.where(masked, np.nan, weights[index // 5, index % 5])
        np.testing.assert_array_equal(one.values, expected)
        top, left = tile_origin(index // 5, index % 5, 4, 6)
        np.testing.assert_array_equal(z[top:top + 4, left:left + 6], expected)  # the data is the tile drawn
        assert one.rows == tuple("abcd") and one.columns == tuple("uvwxyz")
    assert np.isnan(z).sum() == z.size - 15 * 24 + masked.sum() * 15  # the rest is gaps (and masked cells)
    (targets,) = _targets(fig)
    for x, y, data in zip(targets.x, targets.y, targets.customdata):
        top, left = tile_origin(int(data[3]), int(data[4]), 4, 6)
        assert top <= y <= top + 3 and left <= x <= left + 5  # a click on a map opens that map's head
    # the hover is the targets' (the heatmap sends no per-cell text: most of a big grid's JSON): head, query and key
    assert heatmaps[0].customdata is None and heatmaps[0].hoverinfo == "skip"
    top, left = tile_origin(1, 3, 4, 6)
    (cell,) = [i for i, (x, y) in enumerate(zip(targets.x, targets.y)) if (x, y) == (left + 1, top + 2)]
    assert targets.text[cell] == "layer 2 head 4" and list(targets.customdata[cell][:2]) == ["c", "v"]
    assert targets.customdata[cell][2] == weights[1, 3, 2, 1] and "%{text}" in targets.hovertemplate
    (frame,) = fig.layout.shapes  # the open head is framed
    top, left = tile_origin(2, 1, 4, 6)
    assert (frame.x0, frame.x1, frame.y0, frame.y1) == (left - 0.5, left + 5.5, top - 0.5, top + 3.5)
    assert list(fig.layout.xaxis.ticktext) == [f"head {h}" for h in range(1, 6)]
    assert list(fig.layout.yaxis.ticktext) == [f"layer {l}" for l in (1, 2, 3)]
    assert [a.text for a in fig.layout.annotations][6] == "L2 H2"  # each map's title


def test_a_big_grid_gets_block_targets_within_the_budget():
    weights = np.random.default_rng(0).random((6, 12, 48, 48))
    tokens = [f"t{i}" for i in range(48)]
    (targets,) = _targets(head_grid(weights, tokens, tokens, words=words_for("attention")))
    heads = {(int(d[3]), int(d[4])) for d in targets.customdata}
    assert len(heads) == 72 and len(targets.x) <= CLICK_TARGETS_MAX
    first = targets.customdata[0]
    assert first[0].startswith("t0…") and first[1].startswith("t0…")  # a block names its first and last token


def test_the_real_encoders_grid_sends_its_maps_without_per_cell_text():
    """72 heads of a 16-token sentence (intro stop 17): the figure the browser parses is the maps and the targets,
    not three strings per cell (1.15 MB before, of which 0.75 MB per-cell hover)."""
    weights = np.random.default_rng(1).dirichlet(np.ones(16), size=(6, 12, 16))
    tokens = [f"token{i}" for i in range(16)]
    fig = head_grid(weights, tokens, tokens, "All heads", selected=(1, 3), words=words_for("attention"))
    assert len(fig.to_json()) < 600_000
    assert len(chart_data(fig).maps) == 72

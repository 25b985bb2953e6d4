"""The all-heads grid's click targets: one per cell on small grids, bounded on big ones, never in the CSV."""
import numpy as np

from viz.attention import CLICK_TARGETS, CLICK_TARGETS_MAX, grid_head, head_grid
from viz.export import figure_table


def _targets(fig):
    return [trace for trace in fig.data if trace.meta == CLICK_TARGETS]


def test_each_cell_of_a_small_grid_is_a_click_target_that_names_its_head_and_tokens():
    weights = np.random.default_rng(0).random((2, 4, 3, 5))
    fig = head_grid(weights, ["i", "am", "<eos>"], list("abcde"))
    targets = _targets(fig)
    assert len(targets) == 8 and all(len(t.x) == 15 for t in targets)
    point = {"customdata": list(targets[6].customdata[7])}  # layer 2, head 3; row 1 ("am"), column 2 ("c")
    assert grid_head(point) == (1, 2)
    assert point["customdata"][:2] == ["am", "c"] and point["customdata"][2] == weights[1, 2, 1, 2]
    assert grid_head({"x": 1, "y": 2}) is None  # a point of any other chart opens nothing
    assert set(figure_table(fig)["series"]) == {f"L{l} H{h}" for l in (1, 2) for h in (1, 2, 3, 4)}
    assert len(figure_table(fig)) == 8 * 15  # the heatmaps' cells only


def test_a_big_grid_gets_block_targets_within_the_budget():
    weights = np.random.default_rng(0).random((6, 12, 48, 48))
    tokens = [f"t{i}" for i in range(48)]
    targets = _targets(head_grid(weights, tokens, tokens))
    assert len(targets) == 72 and sum(len(t.x) for t in targets) <= CLICK_TARGETS_MAX
    first = targets[0].customdata[0]
    assert first[0].startswith("t0…") and first[1].startswith("t0…")  # a block names its first and last token

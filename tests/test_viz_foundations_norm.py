"""Normalization and residual charts as pure functions: titles, axis labels with units, values, highlights."""
import numpy as np
import pytest

from model.foundations.normalization import NORM_KINDS, normalization_demo, pooled_cells
from model.foundations.residual import gradient_profile
from viz.normalization import before_after_chart, comparison_table, statistics_chart, tensor_grid
from viz.residual import gradient_norm_chart
from ui.language import words_for


@pytest.fixture
def demo():
    return normalization_demo(3, 4, 5, "batch", seed=0)


def _rectangles(fig):
    return [(s.xref, s.x0, s.x1, s.y0, s.y1) for s in fig.layout.shapes]


def test_tensor_grid_values_padding_and_titles(demo):
    fig = tensor_grid(demo.x, demo.mask, None, "input tensor", words=words_for("normalization"))
    assert fig.layout.title.text == "input tensor"
    values = [t for t in fig.data if t.coloraxis == "coloraxis"]
    assert len(values) == 3
    for b, trace in enumerate(values):
        z = np.asarray(trace.z, dtype=float)
        np.testing.assert_allclose(z[demo.mask[b]], demo.x[b][demo.mask[b]])
        assert np.isnan(z[~demo.mask[b]]).all()
    padded_sequences = int((~demo.mask).any(1).sum())
    greys = [t for t in fig.data if t.coloraxis is None]
    assert len(greys) == padded_sequences > 0 and all("padding" in t.hovertemplate for t in greys)
    assert fig.layout.xaxis.title.text == "feature" or any(
        getattr(fig.layout, f"xaxis{i}").title.text == "feature" for i in (2, 3))
    assert fig.layout.yaxis.title.text == "position (token)"
    assert fig.layout.coloraxis.colorbar.title.text == "activation"
    assert [a.text for a in fig.layout.annotations][:3] == [f"sequence {b + 1} (length {int(n)})"
                                                          for b, n in enumerate(demo.lengths)]


def test_tensor_grid_outlines_the_pooled_cells(demo):
    d = demo.x.shape[-1]
    layer = tensor_grid(demo.x, demo.mask, pooled_cells(demo.mask, d, "layer", (1, 0, 0)),
                        words=words_for("normalization"))
    assert _rectangles(layer) == [("x2", 0.5, d + 0.5, 0.5, 1.5)]  # one token row in sequence 2, every feature
    batch = tensor_grid(demo.x, demo.mask, pooled_cells(demo.mask, d, "batch", (0, 0, 2)),
                        words=words_for("normalization"))
    # feature 3 in every sequence, down to that sequence's last real token
    assert _rectangles(batch) == [("x" if b == 0 else f"x{b + 1}", 2.5, 3.5, 0.5, n + 0.5)
                                  for b, n in enumerate(demo.lengths)]


def test_statistics_chart_bars_for_batch_heatmaps_for_layer(demo):
    fig = statistics_chart(demo.mean, demo.var, demo.count, "batch", "BatchNorm statistics",
                           words=words_for("normalization"))
    assert fig.layout.title.text == "BatchNorm statistics"
    np.testing.assert_allclose(fig.data[0].y, demo.mean)
    np.testing.assert_allclose(fig.data[1].y, demo.var)
    assert fig.layout.yaxis.title.text == "mean (activation)"
    assert fig.layout.yaxis2.title.text == "variance (activation²)"
    assert fig.layout.xaxis.title.text == "feature"
    layer = normalization_demo(3, 4, 5, "layer", seed=0)
    heat = statistics_chart(layer.mean, layer.var, layer.count, "layer", words=words_for("normalization"))
    z = np.asarray(heat.data[0].z, dtype=float)
    np.testing.assert_allclose(z[layer.mask], layer.mean[layer.mask], rtol=1e-6)
    assert np.isnan(z[~layer.mask]).all()
    assert heat.layout.xaxis.title.text == "position" and heat.layout.yaxis.title.text == "sequence"


def test_statistics_chart_marks_zero_variance():
    collapsed = normalization_demo(1, 1, 4, "batch", seed=0)
    fig = statistics_chart(collapsed.mean, collapsed.var, collapsed.count, "batch", words=words_for("normalization"))
    assert list(fig.data[1].y) == [0.0] * 4 and set(fig.data[1].marker.color) == {"#d62728"}
    per_step = normalization_demo(1, 4, 3, "batch_per_step", seed=4)  # one sentence: one value per statistic
    fig = statistics_chart(per_step.mean, per_step.var, per_step.count, "batch_per_step",
                           words=words_for("normalization"))
    marks = [t for t in fig.data if t.type == "scatter"]
    assert len(marks) == 1 and len(marks[0].x) == 12 and set(marks[0].text) == {"0"}


def test_before_after_shows_every_real_token(demo):
    fig = before_after_chart(demo.x, demo.output, demo.mask, "before and after", words=words_for("normalization"))
    n_real = int(demo.mask.sum())
    np.testing.assert_allclose(np.asarray(fig.data[0].z, dtype=float), demo.x[demo.mask])
    np.testing.assert_allclose(np.asarray(fig.data[1].z, dtype=float), demo.output[demo.mask])
    assert len(fig.layout.yaxis.ticktext) == n_real and fig.layout.yaxis.ticktext[0] == "s1·t1"
    assert fig.layout.xaxis.title.text == "feature" and fig.layout.xaxis2.title.text == "feature"
    assert "std. devs" in fig.layout.coloraxis2.colorbar.title.text


def test_comparison_table_at_batch_size_one():
    demos = {kind: normalization_demo(1, 1, 4, kind, seed=0) for kind in NORM_KINDS}
    table = comparison_table(demos, words=words_for("normalization")).set_index("normalise over")
    assert table.loc["LayerNorm", "zero-variance statistics"] == 0
    assert table.loc["LayerNorm", "torch.nn"].startswith("agrees")
    assert table.loc["BatchNorm", "outputs forced to 0"] == "100%"
    assert table.loc["BatchNorm", "torch.nn"].startswith("refuses: Expected more than 1 value per channel")


def test_gradient_chart_log_axis_both_curves_and_units():
    profile = gradient_profile(12, "tanh", seed=0)
    fig = gradient_norm_chart({"plain": profile.plain, "residual": profile.residual}, "gradients",
                              words=words_for("residual"))
    assert fig.layout.title.text == "gradients" and fig.layout.yaxis.type == "log"
    assert "dimensionless" in fig.layout.yaxis.title.text and "‖∂L/∂x" in fig.layout.yaxis.title.text
    assert fig.layout.xaxis.title.text.startswith("layer index")
    assert [t.name for t in fig.data] == ["without skip: f(x)", "with skip: x + f(x)"]
    np.testing.assert_allclose(fig.data[0].y, profile.plain)
    np.testing.assert_allclose(fig.data[1].y, profile.residual)
    assert list(fig.data[0].x) == list(range(1, 13))
    assert fig.layout.shapes[0].y0 == 1.0  # reference line at 1


def test_gradient_chart_leaves_a_gap_for_zero():
    fig = gradient_norm_chart({"plain": np.array([0.0, 1e-3, 0.5])}, words=words_for("residual"))
    y = np.asarray(fig.data[0].y, dtype=float)
    assert np.isnan(y[0]) and y[1] == 1e-3


def test_csv_tables_hold_the_numbers_of_the_charts(demo):
    from viz.normalization import cells_table, statistics_table
    from viz.residual import gradient_table
    d = demo.x.shape[-1]
    cells = pooled_cells(demo.mask, d, "batch", (0, 0, 2))
    table = cells_table(demo.x, demo.output, demo.mask, cells, words=words_for("normalization"))
    assert len(table) == int(demo.mask.sum()) * d  # every real value, no padding
    assert int(table["in the outlined statistic"].sum()) == int(cells.sum()) == int(demo.lengths.sum())
    np.testing.assert_allclose(table["input (activation)"], demo.x[demo.mask].ravel())
    stats = statistics_table(demo.mean, demo.var, demo.count, "batch", words=words_for("normalization"))
    assert list(stats["feature"]) == list(range(1, d + 1))
    np.testing.assert_allclose(stats["variance"], demo.var)
    layer = normalization_demo(3, 4, 5, "layer", seed=0)
    per_token = statistics_table(layer.mean, layer.var, layer.count, "layer", words=words_for("normalization"))
    assert len(per_token) == int(layer.mask.sum()) and set(per_token["real values pooled"]) == {5}
    profile = gradient_profile(5, "tanh", seed=0)
    grads = gradient_table({"plain": profile.plain, "residual": profile.residual}, words=words_for("residual"))
    assert list(grads.columns) == ["without skip: f(x)", "with skip: x + f(x)"] and list(grads.index) == [1, 2, 3, 4, 5]
    np.testing.assert_allclose(grads["with skip: x + f(x)"], profile.residual)

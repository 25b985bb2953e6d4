"""The softmax-scaling page's histogram, binned on the server: the bars are numpy's counts of the same samples, as
densities, in round-width bins that hold every sample; the figure sends bars, not the samples."""
import numpy as np
import pytest

from model.foundations.scaling import dot_product_samples
from ui.language import words_for
from viz.scaling import HISTOGRAM_BINS, density_bins, dot_product_histogram


@pytest.mark.parametrize("d_k", [1, 64, 512])
def test_histogram_bars_are_numpy_counts_of_the_samples(d_k):
    raw, scaled = dot_product_samples(d_k, samples=2000, seed=3)
    fig = dot_product_histogram(raw, scaled, d_k, words=words_for("softmax_scaling"))
    assert [trace.type for trace in fig.data] == ["bar", "bar"]
    assert fig.layout.barmode == "overlay"
    for trace, values in zip(fig.data, (raw, scaled)):
        x, y, width = np.asarray(trace.x), np.asarray(trace.y), float(trace.width)
        assert len(x) <= HISTOGRAM_BINS  # bars, not the 2,000 samples
        edges = np.append(x - width / 2, x[-1] + width / 2)
        counts, _ = np.histogram(values, edges)
        np.testing.assert_allclose(y * len(values) * width, counts, atol=1e-6)
        assert counts.sum() == len(values)  # every sample in a bar
        np.testing.assert_allclose((y * width).sum(), 1.0)  # a density: its area is 1
    assert "2,000" in fig.layout.title.text and str(d_k) in fig.layout.title.text


@pytest.mark.parametrize("values, width", [(np.array([0.0, 7.9]), 0.1), (np.array([-3.0, 3.0]), 0.1),
                                           (np.array([10.0, 410.0]), 5.0), (np.array([2.5, 2.5]), 0.05)])
def test_bins_have_a_round_width_and_hold_every_value(values, width):
    edges, counts = density_bins(values)
    np.testing.assert_allclose(np.diff(edges), width, rtol=1e-9)
    assert len(counts) <= HISTOGRAM_BINS + 1 and counts.sum() == len(values)
    assert edges[0] <= values.min() and edges[-1] > values.max()

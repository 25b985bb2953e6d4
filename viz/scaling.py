"""Charts for the softmax-scaling explorer."""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from viz.chart_data import ChartData, Map, Series, with_data
from viz.words import Words

MARGIN = dict(l=10, r=10, t=50, b=10)


HISTOGRAM_BINS = 80  # at most this many bars per histogram, as plotly's nbinsx: the bin width is a round number


def density_bins(values: np.ndarray, max_bins: int = HISTOGRAM_BINS) -> tuple[np.ndarray, np.ndarray]:
    """values (N,) -> (edges (B + 1,), counts (B,)), B ≤ max_bins: bins of one round width (2, 5 or 10 × 10^k, the
    width plotly.js's autobin picks for nbinsx = max_bins) starting at a multiple of it, every value in one bin."""
    values = np.asarray(values, dtype=float)
    low, high = float(values.min()), float(values.max())
    rough = ((high - low) or max(abs(low), 1.0)) / max_bins  # all values equal: bins around them
    base = 10.0 ** np.floor(np.log10(rough))
    width = base * next(step for step in (2, 5, 10) if step * base >= rough)
    start = np.floor(low / width) * width
    bins = max(1, int(np.floor((high - start) / width)) + 1)  # the last edge lies past the largest value
    edges = start + width * np.arange(bins + 1)
    counts, _ = np.histogram(values, edges)
    return edges, counts


def _density_bars(values: np.ndarray, name: str) -> tuple[go.Bar, Series]:
    """The histogram of values as probability density bars, binned here (numpy): the browser gets B bars, not N
    samples to bin (2 × 20,000 of them made the page slow to draw). -> the bars and their data (by bin centre)."""
    edges, counts = density_bins(values)
    width = float(edges[1] - edges[0])
    centres, densities = (edges[:-1] + edges[1:]) / 2, counts / (len(values) * width)
    return go.Bar(x=centres, y=densities, width=width, name=name,
                  opacity=0.6, marker_line_width=0, customdata=np.stack([edges[:-1], edges[1:]], axis=1),
                  hovertemplate="%{customdata[0]:.4g} – %{customdata[1]:.4g}: %{y:.4f}"), \
        Series("bar", centres, densities, name)


def dot_product_histogram(raw: np.ndarray, scaled: np.ndarray, d_k: int, *, words: Words) -> go.Figure:
    """raw (N,) q·k and scaled (N,) q·k/√d_k of random pairs, overlaid as densities (each binned on its own, as
    plotly overlays two histograms)."""
    fig = go.Figure()
    densities = (_density_bars(raw, words("softmax_scaling.chart.raw", variance=f"{raw.var():.2f}", d_k=d_k)),
                 _density_bars(scaled, words("softmax_scaling.chart.scaled", variance=f"{scaled.var():.2f}")))
    for bars, _ in densities:
        fig.add_trace(bars)
    title = words("softmax_scaling.chart.histogram_title", d_k=d_k, pairs=f"{len(raw):,}")
    fig.update_layout(title=title, barmode="overlay", xaxis_title=words("softmax_scaling.chart.score_axis"),
                      yaxis_title=words("softmax_scaling.chart.density"), height=380,
                      legend=dict(orientation="h", y=-0.25), margin=MARGIN)
    return with_data(fig, ChartData(title, series=tuple(data for _, data in densities)))


def softmax_bars(probabilities: np.ndarray, labels: list[str], title: str, *, words: Words) -> go.Figure:
    """One bar per key: the softmax weight it receives (labels are plain text such as 'k1' or '0.3')."""
    fig = go.Figure(go.Bar(x=labels, y=probabilities, text=[f"{p:.3f}" for p in probabilities], textposition="auto",
                           hovertemplate="%{x}: %{y:.4f}<extra></extra>"))
    fig.update_layout(title=title, xaxis_title=words("softmax_scaling.chart.key_axis"),
                      yaxis_title=words("softmax_scaling.chart.weight_axis"), yaxis_range=[0, 1], height=320,
                      margin=MARGIN)
    return with_data(fig, ChartData(title or "", series=(Series("bar", labels, probabilities),)))


def jacobian_heatmap(jacobian: np.ndarray, labels: list[str], title: str, *, words: Words) -> go.Figure:
    """jacobian (n, n): ∂y_i/∂z_j, rows are outputs y_i, columns are inputs z_j."""
    bound = max(float(np.abs(jacobian).max()), 1e-9)
    fig = go.Figure(go.Heatmap(z=jacobian, x=labels, y=labels, colorscale="RdBu_r", zmin=-bound, zmax=bound, zmid=0,
                               text=np.round(jacobian, 3), texttemplate="%{text}",
                               hovertemplate="∂y_%{y} / ∂z_%{x} = %{z:.4f}<extra></extra>",
                               colorbar=dict(title="∂y_i/∂z_j")))
    fig.update_layout(title=title, xaxis_title=words("softmax_scaling.chart.input_axis"),
                      yaxis_title=words("softmax_scaling.chart.output_axis"), height=360, yaxis_autorange="reversed",
                      margin=MARGIN)
    return with_data(fig, ChartData(title or "", maps=(Map(jacobian, tuple(map(str, labels)), tuple(map(str, labels)),
                                                          row_title=words("softmax_scaling.chart.output_axis"),
                                                          column_title=words("softmax_scaling.chart.input_axis")),)))


def saturation_chart(curve: dict[str, np.ndarray], current: float, *, words: Words) -> go.Figure:
    """Entropy, max weight and Jacobian norm of softmax(s · scores) against the scale s; a line at `current`."""
    fig = make_subplots(specs=[[{"secondary_y": True}]])
    fig.add_trace(go.Scatter(x=curve["scale"], y=curve["entropy"], name=words("softmax_scaling.entropy")),
                  secondary_y=False)
    fig.add_trace(go.Scatter(x=curve["scale"], y=curve["max_weight"], name=words("softmax_scaling.max_weight")),
                  secondary_y=False)
    fig.add_trace(go.Scatter(x=curve["scale"], y=curve["jacobian_norm"], name=words("softmax_scaling.chart.gradient"),
                             line=dict(dash="dash")), secondary_y=True)
    lines = tuple(Series("line", curve["scale"], curve[measure], name) for measure, name in (
        ("entropy", words("softmax_scaling.entropy")), ("max_weight", words("softmax_scaling.max_weight")),
        ("jacobian_norm", words("softmax_scaling.chart.gradient"))))
    fig.add_vline(x=current, line=dict(color="#d62728"), annotation_text=words("softmax_scaling.chart.current"))
    fig.update_xaxes(title_text=words("softmax_scaling.chart.scale_axis"), type="log")
    fig.update_yaxes(title_text=words("softmax_scaling.chart.left_axis"), secondary_y=False)
    fig.update_yaxes(title_text=words("softmax_scaling.chart.right_axis"), secondary_y=True)
    fig.update_layout(title=words("softmax_scaling.chart.saturation_title"), height=380,
                      legend=dict(orientation="h", y=-0.3), margin=MARGIN)
    return with_data(fig, ChartData(words("softmax_scaling.chart.saturation_title"), series=lines))

"""Charts of the LLM heads page: a layers × heads map (attention sinks, induction scores) with chosen heads labelled,
per-layer means of the sink's share in weights and in value-weighted norms, the sliding-window losses, and the
next-token probabilities as a table.

Rows of a layers × heads map are "L1" … "L30" and columns "H1" … "H9" (1-based, as on every page). Words come from
i18n/<lang>/llm_heads.toml (table [chart]).
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from model.explain.kinds import head_label
from viz.chart_data import ChartData, Map, Series, with_data
from viz.words import Words
from viz.attention import SEQUENTIAL, html_escaped

MARGIN = dict(l=10, r=10, t=60, b=10)


def layers_by_heads_map(values: np.ndarray, title: str, value_name: str,
                        labelled: list[tuple[int, int, float]] = (), zmax: float = 1.0, *, words: Words) -> go.Figure:
    """values (L, h) in 0 … zmax: one cell per head, layer 1 at the top; `labelled` heads (0-based layer, head, value)
    get their name and value written on their cell."""
    values = np.asarray(values, dtype=float)
    layers, heads = values.shape
    rows, columns = [f"L{layer + 1}" for layer in range(layers)], [f"H{head + 1}" for head in range(heads)]
    fig = go.Figure(go.Heatmap(
        z=values, x=columns, y=rows, colorscale=SEQUENTIAL, zmin=0, zmax=zmax, colorbar=dict(title=value_name),
        hovertemplate=f"%{{y}} %{{x}}<br>{value_name} %{{z:.3f}}<extra></extra>"))
    for layer, head, value in labelled:
        fig.add_annotation(x=columns[head], y=rows[layer], text=f"<b>{head_label(layer, head)}</b> {value:.2f}",
                           showarrow=True, arrowhead=0, ax=0, ay=-22, bgcolor="#ffffff", bordercolor="#333333",
                           font=dict(color="#111111", size=12))
    fig.update_layout(title=title, height=160 + 18 * layers, margin=MARGIN,
                      xaxis=dict(title=words("llm_heads.chart.head_axis"), type="category"),
                      yaxis=dict(title=words("llm_heads.chart.layer_axis"), type="category", autorange="reversed"))
    return with_data(fig, ChartData(title or "", maps=(Map(values, tuple(rows), tuple(columns),
                                                          row_title=words("llm_heads.chart.layer_axis"),
                                                          column_title=words("llm_heads.chart.head_axis")),)))


def layer_means(series: dict[str, np.ndarray], title: str, reference: float | None = None,
                *, words: Words) -> go.Figure:
    """series: name -> (L, h) shares; one line per series of the mean over each layer's heads (layer 1 left).
    reference: a share to draw as a dotted line (what a head spreading its weight evenly would give)."""
    fig = go.Figure()
    layer = words("llm_heads.chart.layer_axis")
    lines = []
    for name, values in series.items():
        means = np.asarray(values, dtype=float).mean(axis=1)  # (L,)
        lines.append(Series("line", np.arange(1, len(means) + 1), means, name))
        fig.add_trace(go.Scatter(x=lines[-1].x, y=means, mode="lines+markers", name=name,
                                 hovertemplate=f"{html_escaped(name)}<br>{layer} %{{x}}: %{{y:.3f}}<extra></extra>"))
    if reference is not None:
        fig.add_hline(y=reference, line=dict(color="#7f7f7f", dash="dot"),
                      annotation_text=words("llm_heads.chart.uniform", value=f"{reference:.3f}"),
                      annotation_position="top right")
    fig.update_layout(title=title, height=380, margin=MARGIN, legend=dict(orientation="h", y=-0.25),
                      xaxis=dict(title=layer, dtick=2), yaxis=dict(title=words("llm_heads.chart.share_axis"),
                                                                 range=[0, 1], tickformat=".0%"))
    return with_data(fig, ChartData(title or "", series=tuple(lines)))


def window_loss_bars(full: float, window_only: float, window_with_sink: float, window: int, title: str,
                     compact: bool = False, *, words: Words) -> go.Figure:
    """Mean next-token loss (nats) under full attention, a sliding window of `window` keys, and the window plus the
    first token (StreamingLLM's attention sink). compact: lying bars, each value at its bar's end, 250 px high (a
    projected stop's first screen holds all three; standing bars took 380 px and left two values under the fold)."""
    names = [words("llm_heads.chart.full"), words("llm_heads.chart.window_only", window=window),
             words("llm_heads.chart.window_with_sink", window=window)]
    values = [full, window_only, window_with_sink]
    loss = dict(title=words("llm_heads.chart.loss_axis"), rangemode="tozero", range=[0, max(values) * 1.2 or 1.0])
    bars = dict(marker_color=["#7f7f7f", "#d62728", "#1f77b4"], text=[f"{v:.2f}" for v in values],
                textposition="outside")
    if compact:
        fig = go.Figure(go.Bar(x=values, y=names, orientation="h", hovertemplate="%{y}: %{x:.3f}<extra></extra>",
                               **bars))
        fig.update_layout(title=title, height=250, margin=MARGIN, showlegend=False, xaxis=loss,
                          yaxis=dict(autorange="reversed", type="category"))
        return with_data(fig, ChartData(title or "", series=(Series("bar", values, names, horizontal=True),)))
    fig = go.Figure(go.Bar(x=names, y=values, hovertemplate="%{x}: %{y:.3f}<extra></extra>", **bars))
    fig.update_layout(title=title, height=380, margin=MARGIN, showlegend=False, yaxis=loss)
    return with_data(fig, ChartData(title or "", series=(Series("bar", names, values),)))


def ranked_next_tokens(columns: dict[str, tuple[list[str], list[float]]], *, words: Words) -> pd.DataFrame:
    """columns: heading -> (top tokens, their probabilities), most likely first; one row per rank, each cell
    "token (p)". Token text stays text (a DataFrame cell is never rendered as markdown or HTML)."""
    rank = words("llm_heads.chart.rank")
    frame = pd.DataFrame({heading: [f"{token!r} ({p:.1%})" for token, p in zip(tokens, probs)]
                          for heading, (tokens, probs) in columns.items()})
    frame.index = pd.RangeIndex(1, len(frame) + 1, name=rank)
    return frame


def attention_row_bars(tokens: list[str], weights: np.ndarray, title: str, largest_first: bool = False,
                       *, words: Words) -> go.Figure:
    """One query's attention weights (T,) over the keys `tokens`, as horizontal bars in text order (top = first), or
    `largest_first`: the key it reads most on top (a projected stop's point on its first screen; the labels keep
    their positions, "5: mat")."""
    weights = np.asarray(weights, dtype=float)
    if largest_first:
        order = np.argsort(-weights, kind="stable")
        tokens, weights = [tokens[i] for i in order], weights[order]
    weight = words("llm_heads.chart.weight")
    labels = [html_escaped(t) for t in tokens]
    fig = go.Figure(go.Bar(x=weights, y=labels, orientation="h",
                           text=[f"{w:.2f}" for w in weights], textposition="auto",
                           hovertemplate=f"%{{y}}: {weight} %{{x:.4f}}<extra></extra>"))
    fig.update_layout(title=title, height=140 + 26 * len(tokens), margin=MARGIN,
                      xaxis=dict(title=weight, range=[0, 1]),
                      yaxis=dict(title=words("llm_heads.chart.key_axis"), autorange="reversed", type="category"))
    return with_data(fig, ChartData(title or "", series=(Series("bar", weights, labels, horizontal=True),)))

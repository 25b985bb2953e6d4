"""Charts of the head finder and of a head across many texts (model/explain/head_finder.py, qk_embedding.py).

- ranking_bars: the top heads by one measure (weight, or value-weighted norm after Kobayashi et al. 2020), the largest
  on top, each bar clickable (customdata (layer, head), 0-based; ranked_head reads a click back);
- ranking_table: every head with its rank, weight and norm;
- qk_scatter: one head's queries and keys over many texts in 2-D (AttentionViz, Yeh et al. 2023), coloured by the
  token's position or by its kind (query / key), the token in its context on hover;
- rotary_share_bars: each RoPE frequency pair's mean share of the head's q·k (Su et al. 2021).
Words come from i18n/<lang>/head_finder.toml (table [chart]).
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from model.explain.kinds import head_label
from viz.attention import SEQUENTIAL, html_escaped
from viz.chart_data import ChartData, Series, with_data
from viz.words import Words

MARGIN = dict(l=10, r=10, t=60, b=10)
QUERY_COLOUR, KEY_COLOUR = "#1f77b4", "#d62728"  # AttentionViz's convention: queries blue, keys red


def ranking_bars(values: np.ndarray, order: list[tuple[int, int]], title: str, value_name: str, top: int = 15,
                 selected: tuple[int, int] | None = None, *, words: Words) -> go.Figure:
    """values (L, h); order: every (layer, head) by rank (HeadRanking.by_weight / by_norm). The first `top` heads as
    horizontal bars, the first ranked on top; `selected` (the open head) drawn darker."""
    shown = order[:top]
    heights = [float(values[layer, head]) for layer, head in shown]
    labels = [head_label(layer, head) for layer, head in shown]
    colours = ["#08306b" if head == selected else "#6baed6" for head in shown]
    fig = go.Figure(go.Bar(
        x=heights, y=labels, orientation="h", customdata=[list(head) for head in shown], marker_color=colours,
        text=[f"{v:.2f}" for v in heights], textposition="auto",
        hovertemplate=f"%{{y}}<br>{html_escaped(value_name)} %{{x:.4f}}<extra></extra>"))
    fig.update_layout(title=title, height=120 + 24 * len(shown), margin=MARGIN, showlegend=False,
                      clickmode="event+select",
                      xaxis=dict(title=value_name, rangemode="tozero"),
                      yaxis=dict(title=words("head_finder.chart.head_axis"), autorange="reversed", type="category"))
    return with_data(fig, ChartData(title or "", series=(Series("bar", heights, labels, horizontal=True),)))


def ranked_head(point: dict) -> tuple[int, int] | None:
    """A clicked bar of ranking_bars -> its (layer, head), 0-based; None for anything else."""
    data = point.get("customdata")
    if isinstance(data, list | tuple) and len(data) == 2 and all(isinstance(v, int | float) for v in data):
        return int(data[0]), int(data[1])
    return None


def ranking_table(weight: np.ndarray, norm: np.ndarray | None, order: list[tuple[int, int]],
                  *, words: Words) -> pd.DataFrame:
    """Every head in `order`: its rank (1 = first), name, weight and, where given, its value-weighted norm."""
    frame = pd.DataFrame({words("head_finder.chart.head_axis"): [head_label(l, h) for l, h in order],
                          words("head_finder.chart.weight"): [float(weight[l, h]) for l, h in order]})
    if norm is not None:
        frame[words("head_finder.chart.norm")] = [float(norm[l, h]) for l, h in order]
    frame.index = pd.RangeIndex(1, len(frame) + 1, name=words("head_finder.chart.rank"))
    return frame


def qk_scatter(points: np.ndarray, is_query: np.ndarray, position: np.ndarray, context: list[str], title: str,
               colour_by: str = "position", explained: np.ndarray | None = None, *, words: Words) -> go.Figure:
    """points (2N, 2): a head's N queries then N keys in the PCA plane (QKEmbedding); colour_by "position" (the
    token's position in its text, one scale, queries as circles and keys as crosses) or "kind" (queries blue, keys
    red); hover: the token in its context (user text, escaped)."""
    points = np.asarray(points, dtype=float)
    fig = go.Figure()
    series = []
    for is_q, name, symbol, colour in ((True, words("head_finder.chart.queries"), "circle", QUERY_COLOUR),
                                       (False, words("head_finder.chart.keys"), "x", KEY_COLOUR)):
        chosen = np.flatnonzero(np.asarray(is_query) == is_q)
        marker = dict(symbol=symbol, size=7, opacity=0.75)
        if colour_by == "position":
            marker.update(color=np.asarray(position)[chosen], colorscale=SEQUENTIAL, cmin=0,
                          cmax=float(np.max(position)), showscale=is_q,
                          colorbar=dict(title=words("head_finder.chart.position")))
        else:
            marker.update(color=colour)
        series.append(Series("line", points[chosen, 0], points[chosen, 1], name))
        fig.add_trace(go.Scatter(
            x=points[chosen, 0], y=points[chosen, 1], mode="markers", name=name, marker=marker,
            customdata=np.stack([[html_escaped(context[i]) for i in chosen], np.asarray(position)[chosen]], -1),
            hovertemplate=f"{name} %{{customdata[1]}}<br>%{{customdata[0]}}<extra></extra>"))
    share = ["", ""] if explained is None else [f" ({float(e):.0%})" for e in explained]
    fig.update_layout(title=title, height=520, margin=MARGIN, legend=dict(orientation="h", y=-0.12),
                      xaxis=dict(title=words("head_finder.chart.pc", n=1) + share[0], zeroline=False),
                      yaxis=dict(title=words("head_finder.chart.pc", n=2) + share[1], zeroline=False,
                                 scaleanchor="x"))
    return with_data(fig, ChartData(title or "", series=tuple(series)))


def rotary_share_bars(mean_shares: np.ndarray, frequencies: np.ndarray, title: str, *, words: Words) -> go.Figure:
    """mean_shares (P,): each RoPE pair's mean share of |q·k| (pair 0 turns fastest); frequencies (P,) θ_p in
    radians per position, on hover with the wavelength 2π/θ_p in tokens."""
    shares = np.asarray(mean_shares, dtype=float)
    theta = np.asarray(frequencies, dtype=float)
    wavelength = 2 * np.pi / np.maximum(theta, 1e-12)
    fig = go.Figure(go.Bar(
        x=np.arange(len(shares)), y=shares, marker_color="#6a51a3", customdata=np.stack([theta, wavelength], -1),
        hovertemplate=f"{words('head_finder.chart.pair')} %{{x}}<br>{words('head_finder.chart.share')} %{{y:.1%}}"
                      f"<br>θ = %{{customdata[0]:.4f}} rad/token, 2π/θ = %{{customdata[1]:.0f}}<extra></extra>"))
    fig.update_layout(title=title, height=360, margin=MARGIN, showlegend=False,
                      xaxis=dict(title=words("head_finder.chart.pair_axis")),
                      yaxis=dict(title=words("head_finder.chart.share"), tickformat=".0%", rangemode="tozero"))
    return with_data(fig, ChartData(title or "", series=(Series("bar", np.arange(len(shares)), shares),)))


def highlight_row(fig: go.Figure, row: int | None) -> go.Figure:
    """fig (an attention_heatmap) with query row `row` framed across every key; unchanged for None."""
    if row is not None:
        keys = len(fig.data[0].x)
        fig.add_shape(type="rect", x0=-0.5, x1=keys - 0.5, y0=row - 0.5, y1=row + 0.5,
                      line=dict(color="#111111", width=3), fillcolor="rgba(0,0,0,0)")
    return fig

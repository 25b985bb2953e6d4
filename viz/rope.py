"""Rotary position embedding charts (model/foundations/rope.py): one 2-D pair of a query turned by position, the
scores of a query and a key at every pair of positions, and the score at one distance for every query position.

Words come from i18n/<lang>/rope.toml (table [chart]), through the caller's `words` (viz/words.py).
"""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from viz.chart_data import ChartData, Map, Series, numbered_labels, with_data
from viz.words import Words
from viz.attention import DIVERGING

MARGIN = dict(l=10, r=10, t=60, b=10)
PAIR_COLOURS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd")


def rotation_of_pairs(query_pairs: np.ndarray, pairs: tuple[int, ...], angles: np.ndarray, head_dim: int,
                      title: str, *, words: Words) -> go.Figure:
    """query_pairs (n_pairs, P, 2): (x_i, x_{i+d/2}) of R_p·q for p = 0 … P − 1; each pair walks around its circle,
    θ_i radians per position; position 0 (the unrotated q) drawn larger."""
    fig = go.Figure()
    position = words("rope.chart.position")
    half = head_dim // 2
    lines = []
    for n, (pair, angle) in enumerate(zip(pairs, angles)):
        points = np.asarray(query_pairs[n], dtype=float)  # (P, 2)
        name = words("rope.chart.pair_name", i=pair, j=pair + half, angle=f"{angle:.3g}")
        colour = PAIR_COLOURS[n % len(PAIR_COLOURS)]
        sizes = np.full(len(points), 6.0)
        sizes[0] = 14.0
        lines.append(Series("line", points[:, 0], points[:, 1], name))
        fig.add_trace(go.Scatter(
            x=points[:, 0], y=points[:, 1], mode="lines+markers", name=name, line=dict(color=colour, width=1),
            marker=dict(color=colour, size=sizes), customdata=np.arange(len(points)),
            hovertemplate=f"{name}<br>{position} %{{customdata}}: (%{{x:.3f}}, %{{y:.3f}})<extra></extra>"))
    bound = float(np.abs(query_pairs).max()) * 1.1 if np.size(query_pairs) else 1.0
    fig.update_layout(title=title, height=460, margin=MARGIN, legend=dict(orientation="h", y=-0.15),
                      xaxis=dict(title=words("rope.chart.first_axis"), range=[-bound, bound], zeroline=True),
                      yaxis=dict(title=words("rope.chart.second_axis"), range=[-bound, bound], zeroline=True,
                                 scaleanchor="x", scaleratio=1))
    return with_data(fig, ChartData(title or "", series=tuple(lines)))


def scores_by_position(scores: np.ndarray, title: str, *, words: Words) -> go.Figure:
    """scores (P, P): [m, n] = (R_m q)·(R_n k); rows are the query's position m, columns the key's n."""
    scores = np.asarray(scores, dtype=float)
    bound = float(np.abs(scores).max()) or 1.0
    query, key = words("rope.chart.query_position"), words("rope.chart.key_position")
    fig = go.Figure(go.Heatmap(
        z=scores, colorscale=DIVERGING, zmin=-bound, zmax=bound, colorbar=dict(title="q·k"),
        hovertemplate=f"{query} m = %{{y}}<br>{key} n = %{{x}}<br>q·k = %{{z:.5f}}<extra></extra>"))
    fig.update_layout(title=title, height=460, margin=MARGIN,
                      xaxis=dict(title=key), yaxis=dict(title=query, autorange="reversed"))
    return with_data(fig, ChartData(title or "", maps=(Map(scores, numbered_labels(scores.shape[0]),
                                                          numbered_labels(scores.shape[1]), row_title=query,
                                                          column_title=key),)))


def score_at_distance(at_distance: np.ndarray, k: int, unrotated: float, title: str, *, words: Words) -> go.Figure:
    """at_distance (P − k,): the score with the query at m = k … P − 1 and the key k positions before it, as a line
    over m (flat: it depends on k only), beside the score of the same vectors with no rotation."""
    values = np.asarray(at_distance, dtype=float)
    positions = np.arange(k, k + len(values))
    query = words("rope.chart.query_position")
    fig = go.Figure(go.Scatter(x=positions, y=values, mode="lines+markers", name=words("rope.chart.at_distance", k=k),
                               hovertemplate=f"{query} m = %{{x}}, n = m − {k}: q·k = %{{y:.6f}}<extra></extra>"))
    fig.add_hline(y=unrotated, line=dict(color="#7f7f7f", dash="dot"),
                  annotation_text=words("rope.chart.unrotated", value=f"{unrotated:.3f}"),
                  annotation_position="bottom right")
    spread = max(float(np.abs(values).max()), abs(unrotated)) * 1.2 or 1.0
    fig.update_layout(title=title, height=360, margin=MARGIN, showlegend=False,
                      xaxis=dict(title=words("rope.chart.query_position")),
                      yaxis=dict(title="q·k", range=[-spread, spread]))
    return with_data(fig, ChartData(title or "", series=(Series("line", positions, values,
                                                                words("rope.chart.at_distance", k=k)),)))

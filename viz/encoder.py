"""Charts of what a sentence encoder computes (pure plotly; no Streamlit)."""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from viz.attention import html_escaped


def token_movement_bars(tokens: list[str], movement: np.ndarray, title: str = "", axis_title: str = "") -> go.Figure:
    """One bar per token (in text order, top to bottom): how far its final vector moved, 1 − cosine (T,)."""
    movement = np.asarray(movement, dtype=float)
    rows = [f"{i}: {html_escaped(t)}" for i, t in enumerate(tokens)]  # positions keep repeated tokens apart
    fig = go.Figure(go.Bar(x=movement, y=rows, orientation="h", marker_color="#d95f02",
                           hovertemplate="%{y}: %{x:.4f}<extra></extra>"))
    fig.update_layout(title=title, height=min(1400, 120 + 20 * len(tokens)), margin=dict(l=10, r=10, t=50, b=10),
                      xaxis=dict(title=axis_title, rangemode="tozero"), yaxis=dict(autorange="reversed"))
    return fig


def thin_tick_labels(fig: go.Figure, max_labels: int = 64) -> go.Figure:
    """A copy of a one-heatmap figure whose axes label at most max_labels evenly spaced tokens (hover still names
    every cell): 256 labels on one axis overlap into an unreadable block."""
    thinned = go.Figure(fig)
    for axis in (thinned.layout.xaxis, thinned.layout.yaxis):
        if axis.tickvals is None or len(axis.tickvals) <= max_labels:
            continue
        step = -(-len(axis.tickvals) // max_labels)  # ceil
        axis.tickvals, axis.ticktext = axis.tickvals[::step], axis.ticktext[::step]
    return thinned

"""Charts of what a sentence encoder computes (pure plotly; no Streamlit)."""
from __future__ import annotations

from collections.abc import Callable

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


LABEL_ROOM, PROJECTED_LABEL_ROOM = 16, 22  # px along an axis that one token label needs (12-14 px text; 18 px)
AXIS_MARGIN = 160  # px of a heatmap's height or width that is not its axis (title, the other axis's labels, bar)


def thin_tick_labels(fig: go.Figure, width: int, label_room: int = LABEL_ROOM,
                     copy: Callable[[go.Figure], go.Figure] = go.Figure) -> go.Figure:
    """fig, or a copy of a one-heatmap figure whose axes label every k-th token only, so that no two labels
    overlap: each label gets `label_room` px of its axis (the figure's height, or `width`, the px the page gives
    the chart, less AXIS_MARGIN). Hover and CSV still name every cell (the figure given is not changed unless
    `copy` returns it: a caller that already holds its own copy passes lambda f: f)."""
    rooms = {"xaxis": width - AXIS_MARGIN, "yaxis": (fig.layout.height or 450) - AXIS_MARGIN}
    steps = {}
    for name, room in rooms.items():
        axis = fig.layout[name]
        most = max(2, room // label_room)
        if axis.tickvals is not None and len(axis.tickvals) > most:
            steps[name] = -(-len(axis.tickvals) // most)  # ceil
    if not steps:
        return fig
    thinned = copy(fig)
    for name, step in steps.items():
        axis = thinned.layout[name]
        axis.tickvals, axis.ticktext = axis.tickvals[::step], axis.ticktext[::step]
    return thinned

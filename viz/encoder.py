"""Charts of what a sentence encoder computes (pure plotly; no Streamlit)."""
from __future__ import annotations

import html
from collections.abc import Callable

import numpy as np
import plotly.graph_objects as go

from viz.attention import html_escaped
from viz.chart_data import ChartData, Series, with_data
from viz.text_width import text_width


def token_movement_bars(tokens: list[str], movement: np.ndarray, title: str = "", axis_title: str = "") -> go.Figure:
    """One bar per token (in text order, top to bottom): how far its final vector moved, 1 − cosine (T,)."""
    movement = np.asarray(movement, dtype=float)
    rows = [f"{i}: {html_escaped(t)}" for i, t in enumerate(tokens)]  # positions keep repeated tokens apart
    fig = go.Figure(go.Bar(x=movement, y=rows, orientation="h", marker_color="#d95f02",
                           hovertemplate="%{y}: %{x:.4f}<extra></extra>"))
    fig.update_layout(title=title, height=min(1400, 120 + 20 * len(tokens)), margin=dict(l=10, r=10, t=50, b=10),
                      xaxis=dict(title=axis_title, rangemode="tozero"), yaxis=dict(autorange="reversed"))
    return with_data(fig, ChartData(title or "", series=(Series("bar", movement, rows, horizontal=True),)))


LABEL_FONT, PROJECTED_LABEL_FONT = 12, 18  # px: plotly's tick labels on a screen; projected (presentation.BASE_FONT)
LABEL_GAP = 2  # px between two neighbouring labels
COLORBAR_BAR = 50  # px of a colour bar besides its tick labels: the bar (30) and its pads


def label_pitch(font_px: float) -> float:
    """px along an axis that one label needs across its text: y labels stack their lines, and x labels too once
    plotly has turned them upright (it does when they do not fit side by side)."""
    return font_px + LABEL_GAP


def _axis_texts(axis) -> list[str]:
    return [html.unescape(str(text)) for text in axis.ticktext or ()]


def _margins(fig: go.Figure) -> tuple[float, float, float, float]:
    """(left, right, top, bottom) px the figure keeps outside its axes (plotly's defaults where it sets none)."""
    margin = fig.layout.margin
    return tuple(80 if value is None else value for value in (margin.l, margin.r, margin.t, margin.b)) \
        if margin is not None else (80, 80, 100, 80)


def label_rooms(fig: go.Figure, width: int, font_px: float = LABEL_FONT) -> dict[str, float]:
    """px each axis of a one-heatmap figure has for its tick labels: the chart's width, or its height, less its
    margins, the axis titles, the colour bar and the other axis' labels, those measured (viz/text_width.py): the
    y labels' widest text comes off the x axis, and the x labels' (upright once they do not fit side by side) off
    the y axis."""
    left, right, top, bottom = _margins(fig)
    title = 1.4 * font_px  # an axis title's line
    x_texts, y_texts = _axis_texts(fig.layout.xaxis), _axis_texts(fig.layout.yaxis)
    widest_y = max((text_width(text, font_px) for text in y_texts), default=0.0)
    bar = any(trace.type == "heatmap" and trace.showscale is not False for trace in fig.data)
    colour_bar = COLORBAR_BAR + text_width("0.75", font_px) if bar else 0.0
    x_room = width - left - right - widest_y - (title if fig.layout.yaxis.title.text else 0) - colour_bar
    widest_x = max((text_width(text, font_px) for text in x_texts), default=0.0)
    side_by_side = bool(x_texts) and len(x_texts) * (widest_x + LABEL_GAP) <= x_room
    x_extent = label_pitch(font_px) if side_by_side or not x_texts else widest_x
    y_room = (fig.layout.height or 450) - top - bottom - (title if fig.layout.xaxis.title.text else 0) - x_extent
    return {"xaxis": x_room, "yaxis": y_room}


def thin_tick_labels(fig: go.Figure, width: int, font_px: float = LABEL_FONT,
                     copy: Callable[[go.Figure], go.Figure] = go.Figure) -> go.Figure:
    """fig, or a copy of a one-heatmap figure whose axes label every k-th token only, where its labels would
    overlap: an axis keeps every label while each has label_pitch(font_px) px of it (label_rooms: the room left by
    the other axis' measured labels, the titles and the colour bar, in a chart `width` px wide). Hover and CSV
    still name every cell (the figure given is not changed unless `copy` returns it: a caller that already holds
    its own copy passes lambda f: f)."""
    steps = {}
    for name, room in label_rooms(fig, width, font_px).items():
        axis = fig.layout[name]
        most = max(2, int(room // label_pitch(font_px)))
        if axis.tickvals is not None and len(axis.tickvals) > most:
            steps[name] = -(-len(axis.tickvals) // most)  # ceil
    if not steps:
        return fig
    thinned = copy(fig)
    for name, step in steps.items():
        axis = thinned.layout[name]
        axis.tickvals, axis.ticktext = axis.tickvals[::step], axis.ticktext[::step]
    return thinned

"""Projection style: large text and colour scales that stay readable on a projector and for colour-blind viewers.

Cividis (sequential) and RdBu (diverging, ColorBrewer's colour-blind-safe set) replace the default scales;
lines and bars take the Okabe-Ito palette. Applied to a copy, so a cached figure is never changed.
"""
from __future__ import annotations

import unicodedata

import plotly.graph_objects as go

SEQUENTIAL_SAFE = "Cividis"
DIVERGING_SAFE = "RdBu_r"
OKABE_ITO = ["#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442", "#000000"]
BASE_FONT = 18
TITLE_WIDTH = 34  # display columns per title line at projection size (a Hangul syllable takes two); fits half a page


def _width(text: str) -> int:
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def wrap_title(title: str, width: int = TITLE_WIDTH) -> str:
    """Break a long title at spaces into <br>-separated lines (plotly never wraps, and large text got clipped)."""
    lines: list[str] = []
    for word in title.split(" "):
        if lines and _width(lines[-1]) + 1 + _width(word) <= width:
            lines[-1] += " " + word
        else:
            lines.append(word)
    return "<br>".join(lines)


def _is_diverging(trace) -> bool:
    return getattr(trace, "zmid", None) is not None


def for_projection(fig: go.Figure) -> go.Figure:
    """A copy of fig with larger fonts, taller rows and colour-blind-safe, high-contrast colour scales."""
    fig = go.Figure(fig)
    fig.update_layout(font=dict(size=BASE_FONT), title_font=dict(size=BASE_FONT + 4), colorway=OKABE_ITO,
                      hoverlabel=dict(font_size=BASE_FONT))
    fig.update_xaxes(tickfont=dict(size=BASE_FONT), title_font=dict(size=BASE_FONT))
    fig.update_yaxes(tickfont=dict(size=BASE_FONT), title_font=dict(size=BASE_FONT))
    fig.update_annotations(font_size=BASE_FONT)  # subplot titles
    for trace in fig.data:
        if trace.type == "heatmap" and trace.showscale is not False:
            trace.colorscale = DIVERGING_SAFE if _is_diverging(trace) else SEQUENTIAL_SAFE
            trace.textfont = dict(size=BASE_FONT)
        elif trace.type in ("scatter", "bar") and getattr(trace, "mode", None) == "text":
            trace.textfont = dict(size=BASE_FONT + 2)  # token labels in the lines view
    if fig.layout.coloraxis.colorscale is not None:
        fig.update_layout(coloraxis_colorscale=SEQUENTIAL_SAFE)
    title = fig.layout.title.text
    if title and "<br>" not in title:
        wrapped = wrap_title(title)
        # automargin with yref="paper": plotly pushes the plot area down until the title's lines fit above it.
        fig.update_layout(title=dict(text=wrapped, automargin=True, yref="paper"))
    if fig.layout.height:
        fig.update_layout(height=int(fig.layout.height * 1.25))
    return fig

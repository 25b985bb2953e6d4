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
MIN_HEIGHT = 320  # px, a projected chart's least height
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


COLUMN_TITLE_WIDTH = 44  # display columns of a title in half of the page at 1280 px (normal text size)


def fit_title(fig: go.Figure, width: int = COLUMN_TITLE_WIDTH) -> go.Figure:
    """fig, or a copy whose long title is wrapped to `width` (plotly cuts a title off at the figure's edge)."""
    title = fig.layout.title.text
    if not title or "<br>" in title or _width(title) <= width:
        return fig
    fig = go.Figure(fig)
    _place_title(fig, wrap_title(title, width), font_size=14)
    return fig


def _place_title(fig: go.Figure, text: str, font_size: int) -> None:
    """The title above the plot area (automargin with yref="paper": plotly pushes the plot area down until its lines
    fit), anchored at its bottom and lifted clear of what sits just above the plot area: the top tick label (half
    of it sticks out), or the subplot titles (annotations at the top of the first row) when there are any."""
    subplot_titles = any(a.yref == "paper" and (a.y or 0) >= 0.98 for a in fig.layout.annotations)
    lift = int(font_size * 1.9) if subplot_titles else font_size
    fig.update_layout(title=dict(text=text, automargin=True, yref="paper", y=1, yanchor="bottom", pad=dict(b=lift)))


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
    # Colour-bar titles along the bar's right side: above it, the large top tick label ran into them.
    for trace in fig.data:
        if trace.type == "heatmap":
            trace.update(colorbar_title_side="right")
    for name in [key for key in fig.layout.to_plotly_json() if key.startswith("coloraxis")]:
        if fig.layout[name].colorbar.title.text:
            fig.layout[name].colorbar.title.side = "right"
    title = fig.layout.title.text
    if title:
        _place_title(fig, title if "<br>" in title else wrap_title(title), BASE_FONT)
    # Tick labels a little off their axes, so the first x label and the lowest y label do not touch in the corner.
    fig.update_xaxes(ticklabelstandoff=4)
    fig.update_yaxes(ticklabelstandoff=4)
    if fig.layout.height:
        # at least MIN_HEIGHT: a one-row map (decoding step 1) had no room for its vertical axis title at this size
        fig.update_layout(height=max(int(fig.layout.height * 1.25), MIN_HEIGHT))
    return fig

"""Projection style: large text and colour scales that stay readable on a projector and for colour-blind viewers.

Cividis (sequential) and RdBu (diverging, ColorBrewer's colour-blind-safe set) replace the default scales;
lines and bars take the Okabe-Ito palette. Applied to a copy, so a cached figure is never changed.
"""
from __future__ import annotations

import unicodedata

from collections.abc import Callable

import plotly.graph_objects as go

from viz.text_width import text_width

SEQUENTIAL_SAFE = "Cividis"
DIVERGING_SAFE = "RdBu_r"
OKABE_ITO = ["#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442", "#000000"]
BASE_FONT = 18
MIN_PROJECTED_TEXT = 14  # px: the least size of projected text that carries meaning (read from the back row)
MIN_HEIGHT = 320  # px, a projected chart's least height
TITLE_FONT, PROJECTED_TITLE_FONT = 17, BASE_FONT + 4  # px, a chart title on a screen (fit_title) and projected

# Display columns of a title line (a Hangul syllable takes two) before it is wrapped: in a column of the page (a head's
# title, "Encoder–decoder (cross) attention · layer 2 · head 4", 52, stays on one line in the attention page's wide
# column), and in the whole width of the page.
COLUMN_TITLE_WIDTH = 52
PAGE_TITLE_WIDTH = 90
# The same widths at projection size: the larger font fits fewer columns. (A full-width chart, such as the attention
# page's grid, passes PAGE_TITLE_WIDTH: a column's width would wrap its title at half its width.)
TITLE_WIDTH = COLUMN_TITLE_WIDTH * TITLE_FONT // PROJECTED_TITLE_FONT  # 40
PROJECTED_PAGE_TITLE_WIDTH = PAGE_TITLE_WIDTH * TITLE_FONT // PROJECTED_TITLE_FONT  # 69


def _width(text: str) -> int:
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def wrap_title(title: str, width: int = TITLE_WIDTH) -> str:
    """Break a long title at spaces into <br>-separated lines (plotly never wraps: a long one is clipped)."""
    lines: list[str] = []
    for word in title.split(" "):
        if lines and _width(lines[-1]) + 1 + _width(word) <= width:
            lines[-1] += " " + word
        else:
            lines.append(word)
    return "<br>".join(lines)




def _subplot_titles(fig: go.Figure) -> list:
    """The annotations make_subplots puts just above the first row of subplots."""
    return [a for a in fig.layout.annotations if a.yref == "paper" and (a.y or 0) >= 0.98]


def balanced_wrap(title: str, width: int) -> str:
    """wrap_title with lines of about equal length (not one full line and a last word): as few lines as `width`
    allows."""
    if "<br>" in title or _width(title) <= width:
        return title
    lines = -(-_width(title) // width)
    for share in range(-(-_width(title) // lines), width + 1):  # the narrowest that still gives that many lines
        wrapped = wrap_title(title, share)
        if wrapped.count("<br>") + 1 <= lines:
            return wrapped
    return wrap_title(title, width)


# Copies a figure for fit_title, which never changes the figure it is given. go.Figure(fig) validates every property
# again (as costly as building it); a caller that knows its figure came from plotly already validated
# may pass a cheaper copy (ui/charts.py passes serving/internals.py's). Only a title changes on that copy, so skipping
# validation changes nothing drawn (tests/test_display_share.py compares the two).
FigureCopy = Callable[[go.Figure], go.Figure]


def fit_title(fig: go.Figure, width: int = COLUMN_TITLE_WIDTH, copy: FigureCopy = go.Figure,
              chart_px: int | None = None) -> go.Figure:
    """fig, or a copy with its title wrapped to `width` display columns (plotly clips a title wider than its chart)
    and, when it has subplot titles side by side, those wrapped to their share of `width` and the title lifted clear
    of them (they sat on each other in half-page columns); chart_px: the chart's width, which says how many rows a
    legend along its top takes (a phone's three). copy: how to copy fig (see FigureCopy)."""
    title = fig.layout.title.text
    below = _subplot_titles(fig)
    wrapped = balanced_wrap(title, width) if title else title
    if not title or (len(below) < 2 and wrapped == title):
        return fig
    fig = copy(fig)
    for annotation in _subplot_titles(fig) if len(below) >= 2 else ():  # side by side: each its share of the width
        if annotation.text and "<br>" not in annotation.text:
            annotation.text = wrap_title(annotation.text, width // len(below) + 4)
    _place_title(fig, wrapped, font_size=TITLE_FONT, chart_px=chart_px)
    return fig


def _place_title(fig: go.Figure, text: str, font_size: int, chart_px: int | None = None) -> None:
    """The title above the plot area (automargin with yref="paper": plotly pushes the plot area down until its lines
    fit), anchored at its bottom and lifted clear of what sits just above the plot area: the top tick label (half
    of it sticks out), or the subplot titles (annotations at the top of the first row) when there are any."""
    lines = max(str(a.text).count("<br>") + 1 for a in _subplot_titles(fig)) if _subplot_titles(fig) else 0
    lift = int(font_size * (0.6 + 1.3 * lines)) if lines else int(font_size * 1.6)
    # and clear of a legend laid along the plot area's top (the residual page's lines), each of its rows
    legend_font = fig.layout.legend.font.size or fig.layout.font.size or 12
    lift += _legend_rows(fig, chart_px, legend_font) * int(legend_font * 1.6 + 6)
    fig.update_layout(title=dict(text=text, automargin=True, yref="paper", y=1, yanchor="bottom", pad=dict(b=lift)))


LEGEND_ENTRY_PX = 40  # an entry of a horizontal legend besides its text: its symbol and the gaps around it


def _legend_rows(fig: go.Figure, chart_px: int | None, font_px: float) -> int:
    """Rows of the legend laid along the top of fig's plot area (horizontal, its bottom at the plot's top): 0 when
    there is none, 1 when the chart's width is not known, else its entries packed into chart_px as plotly packs
    them (by their measured widths)."""
    legend = fig.layout.legend
    names = [str(trace.name or "") for trace in fig.data if trace.showlegend is not False]
    if (fig.layout.showlegend is False or len(names) < 2 or legend.orientation != "h" or legend.yanchor != "bottom"
            or (legend.y or 0) < 1):
        return 0
    if chart_px is None:
        return 1
    rows, used = 1, 0.0
    for name in names:
        entry = LEGEND_ENTRY_PX + text_width(name, font_px)
        if used and used + entry > chart_px - 20:
            rows, used = rows + 1, 0.0
        used += entry
    return rows


def _is_diverging(trace) -> bool:
    return getattr(trace, "zmid", None) is not None


def for_projection(fig: go.Figure, title_width: int = TITLE_WIDTH) -> go.Figure:
    """A copy of fig with larger fonts, taller rows and colour-blind-safe, high-contrast colour scales; its title
    wrapped to `title_width` display columns (TITLE_WIDTH in a column, PROJECTED_PAGE_TITLE_WIDTH across the page).

    A validated copy (go.Figure): the named colour scales set below are expanded by plotly's validators, as in
    every other figure (one teacher's screen: its cost does not matter)."""
    fig = go.Figure(fig)
    fig.update_layout(font=dict(size=BASE_FONT), title_font=dict(size=PROJECTED_TITLE_FONT), colorway=OKABE_ITO,
                      hoverlabel=dict(font_size=BASE_FONT))
    fig.update_xaxes(tickfont=dict(size=BASE_FONT), title_font=dict(size=BASE_FONT))
    fig.update_yaxes(tickfont=dict(size=BASE_FONT), title_font=dict(size=BASE_FONT))
    # Subplot titles (make_subplots draws them at 16 px), except those the chart made smaller for their room (the real
    # encoder's 12 thumbnails a row, at 11 px: at 18 px their titles ran into each other).
    fig.update_annotations(font_size=BASE_FONT, selector=lambda annotation: (annotation.font.size or 16) >= 16)
    # Those smaller titles at 14 px (nothing that carries meaning is projected smaller), their pattern label on a
    # second line so that twelve a row still fit their thumbnails ("L1 H3<br>prev").
    for annotation in fig.layout.annotations:
        if (annotation.font.size or 16) < MIN_PROJECTED_TEXT:
            annotation.font.size = MIN_PROJECTED_TEXT
            annotation.text = str(annotation.text).replace(" · ", "<br>")
    fig.update_layout(legend_font_size=BASE_FONT)
    legend = fig.layout.legend
    if legend.orientation == "h" and legend.y is not None and legend.y < 0:
        # A legend under the plot area moves down as far again as the tick labels and axis titles above it grew
        # (12 -> 18 px): at its screen place it ran into the projected axis titles (the positional page's check).
        fig.update_layout(legend_y=legend.y * BASE_FONT / 12)
    for trace in fig.data:
        if trace.type == "heatmap" and trace.showscale is not False:
            trace.colorscale = DIVERGING_SAFE if _is_diverging(trace) else SEQUENTIAL_SAFE
            trace.textfont = dict(size=BASE_FONT)
        elif trace.type in ("scatter", "bar") and getattr(trace, "mode", None) == "text":
            trace.textfont = dict(size=BASE_FONT + 2)  # token labels in the lines view
    if fig.layout.coloraxis.colorscale is not None:
        fig.update_layout(coloraxis_colorscale=SEQUENTIAL_SAFE)
    # Colour-bar titles along the bar's right side: above it, the large top tick label ran into them. Their tick
    # labels at the projected size too (plotly draws them at 12 px whatever the layout's font).
    for trace in fig.data:
        if trace.type == "heatmap":
            trace.update(colorbar_title_side="right", colorbar_tickfont_size=BASE_FONT)
        elif trace.type == "scatter" and trace.marker.colorbar.title.text:  # markers coloured on a bar (a graph's)
            trace.update(marker_colorbar_title_side="right", marker_colorbar_tickfont_size=BASE_FONT)
    for name in [key for key in fig.layout.to_plotly_json() if key.startswith("coloraxis")]:
        fig.layout[name].colorbar.tickfont.size = BASE_FONT
        if fig.layout[name].colorbar.title.text:
            fig.layout[name].colorbar.title.side = "right"
    title = fig.layout.title.text
    if title:
        _place_title(fig, balanced_wrap(title, title_width), BASE_FONT)  # a title with <br> is kept as it is
    # Tick labels a little off their axes, so the first x label and the lowest y label do not touch in the corner.
    fig.update_xaxes(ticklabelstandoff=4)
    fig.update_yaxes(ticklabelstandoff=4)
    if fig.layout.height:
        # at least MIN_HEIGHT: a one-row map (decoding step 1) has no room for its vertical axis title at this size
        fig.update_layout(height=max(int(fig.layout.height * 1.25), MIN_HEIGHT))
    return fig

"""A chart in words (WCAG 1.1.1, a text alternative): a few sentences a screen reader reads, and that a student who
cannot tell the colours apart can use, computed from the very arrays the figure draws (its traces), so the words
never disagree with the picture.

One heatmap: each row's largest column and the mean of the row maxima (how sharply the rows attend); a grid of
heatmaps: the sharpest and the broadest map by that mean; bars: every bar's value (the largest first when there are
many); lines: where each series starts, ends and peaks; a histogram: how many values, their mean and spread.
"""
from __future__ import annotations

import html
import re

import numpy as np
import plotly.graph_objects as go

from viz.words import Words
from viz.attention import CLICK_TARGETS
from viz.chart_data import ChartData, Map, Series
from viz.export import unescaped, axis_labels, grid_maps, is_data_heatmap, trace_values

MAX_ROWS = 8  # rows of a heatmap, bars, series named one by one; the rest are counted
_TAG = re.compile(r"<[^>]+>")


def plain(text: object) -> str:
    """Plotly's label text (a small HTML subset, escaped tokens) as the words it shows."""
    return " ".join(html.unescape(_TAG.sub(" ", str(text or ""))).split())


def number(value: float) -> str:
    return f"{value:.2f}" if 0.01 <= abs(value) < 1000 else f"{value:.3g}"


def _more(shown: list[str], total: int, *, words: Words) -> str:
    text = "; ".join(shown)
    return text + (" " + words("display.summary.more", count=total - len(shown)) if total > len(shown) else "")


def _axis_title(fig: go.Figure, trace, axis: str) -> str:
    name = (getattr(trace, f"{axis}axis", None) or axis).replace(axis, f"{axis}axis", 1)
    layout_axis = fig.layout[name] if name in fig.layout else None
    return plain(layout_axis.title.text) if layout_axis is not None and layout_axis.title is not None else ""


def row_maxima(z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """z (rows, columns), NaN where masked -> (the rows that have a value, each one's largest column index)."""
    rows = np.flatnonzero(~np.all(np.isnan(z), axis=1))
    return rows, np.nanargmax(z[rows], axis=1)


def _heatmap(fig: go.Figure, trace, *, words: Words) -> str:
    z = np.asarray(trace_values(trace.z), dtype=float)
    row_names = axis_labels(fig, trace, "y", trace.y if trace.y is not None else range(z.shape[0]))
    column_names = axis_labels(fig, trace, "x", trace.x if trace.x is not None else range(z.shape[1]))
    rows, best = row_maxima(z)
    if rows.size == 0:
        return ""
    maxima = z[rows, best]
    pairs = [f"{row_names[r]} → {column_names[c]} {number(z[r, c])}" for r, c in zip(rows[:MAX_ROWS], best)]
    return words("display.summary.heatmap", rows=z.shape[0], row_title=_axis_title(fig, trace, "y") or "—",
                 columns=z.shape[1], column_title=_axis_title(fig, trace, "x") or "—",
                 pairs=_more(pairs, rows.size, words=words),
                 mean=number(float(maxima.mean())), low=number(float(np.nanmin(z))), high=number(float(np.nanmax(z))))


def _maps(maps: list[tuple[str, np.ndarray]], *, words: Words) -> str:
    """A grid of maps (e.g. every head), (name, z) each: the sharpest and the broadest by the mean of their row
    maxima."""
    means = []
    for index, (name, z) in enumerate(maps):
        rows, best = row_maxima(z)
        if rows.size:
            means.append((float(z[rows, best].mean()), plain(name) or f"#{index + 1}"))
    if not means:
        return ""
    high, low = max(means), min(means)
    return words("display.summary.maps", count=len(maps), high=number(high[0]), highest=high[1], low=number(low[0]),
                 lowest=low[1])


def _named(trace, text: str) -> str:
    """A series' words, after its name where it has one (the legend's entry)."""
    name = plain(trace.name)
    return f"{name}: {text}" if name else text


def _bars(trace, *, words: Words) -> str:
    horizontal = trace.orientation == "h"
    labels = trace_values(trace.y if horizontal else trace.x)
    values = trace_values(trace.x if horizontal else trace.y)
    pairs = [(float(v), plain(k)) for k, v in zip(labels, values) if v is not None and not np.isnan(float(v))]
    if len(pairs) > MAX_ROWS:  # many bars: the largest first
        pairs = sorted(pairs, key=lambda pair: -pair[0])
    shown = [f"{label} {number(value)}" for value, label in pairs[:MAX_ROWS]]
    return _named(trace, words("display.summary.bars", values=_more(shown, len(pairs), words=words)))


def _marks(fig: go.Figure, trace, *, words: Words) -> str:
    """Marks that name a row for each column (the lens's commitment: customdata holds the row's name): each column
    with its row, a sentence, where a line's first, last and highest value would be numbers without meaning."""
    ticks = list(fig.layout.xaxis.ticktext or [])
    def column(x) -> str:  # the x axis's own label where it has one ("4: ' Mary'")
        return plain(ticks[int(x)]) if float(x).is_integer() and 0 <= int(x) < len(ticks) else plain(x)
    shown = [words("display.summary.mark", row=plain(row), column=column(x))
             for x, row in zip(trace_values(trace.x), trace_values(trace.customdata))]
    return words("display.summary.marks", name=plain(trace.name), marks=_more(shown[:MAX_ROWS], len(shown),
                                                                                words=words))


def _line(trace, *, words: Words) -> str:
    points = [(x, float(y)) for x, y in zip(trace_values(trace.x) if trace.x is not None else
                                            range(len(trace_values(trace.y))), trace_values(trace.y))
              if y is not None and x is not None and not np.isnan(float(y))]
    if not points:
        return ""
    (first_x, first), (last_x, last) = points[0], points[-1]
    high_x, high = max(points, key=lambda point: point[1])
    def show(x) -> str:  # an x value: a label, a whole number (a position, a step) or a measure
        return plain(x) if isinstance(x, str) else str(int(x)) if float(x).is_integer() else number(float(x))
    return _named(trace, words("display.summary.line", first=number(first), first_x=show(first_x), last=number(last),
                               last_x=show(last_x), high=number(high), high_x=show(high_x)))


def _histogram(trace, *, words: Words) -> str:
    values = np.asarray(trace_values(trace.x if trace.x is not None else trace.y), dtype=float)
    return _named(trace, words("display.summary.histogram", count=values.size, mean=number(float(values.mean())),
                               spread=number(float(values.std()))))


def _names_rows(trace) -> bool:
    """A scatter of marks whose customdata names each mark's row (text, not a number to summarise)."""
    data = trace_values(trace.customdata) if trace.type == "scatter" and trace.mode == "markers" else None
    return data is not None and len(data) > 0 and all(isinstance(value, str) for value in data)


def figure_summary(fig: go.Figure, title: str | None = None, *, words: Words) -> str:
    """The figure in words: its title (or `title`), then what its traces show (see the module's docstring)."""
    heatmaps = [t for t in fig.data if is_data_heatmap(t)]
    others = [t for t in fig.data if t.type != "heatmap" and getattr(t, "mode", None) != "text"
              and t.meta != CLICK_TARGETS and t.visible not in (False, "legendonly")]
    parts = []
    grid = grid_maps(heatmaps[0]) if len(heatmaps) == 1 else None
    if grid is not None:  # the all-heads grid: one heatmap of tiled maps
        parts.append(_maps([(name, z) for name, z, _, _ in grid], words=words))
    elif len(heatmaps) == 1:
        parts.append(_heatmap(fig, heatmaps[0], words=words))
    elif heatmaps:
        parts.append(_maps([(trace.name, np.asarray(trace_values(trace.z), dtype=float)) for trace in heatmaps],
                           words=words))
    described = {"bar": _bars, "scatter": _line, "histogram": _histogram}
    series = [t for t in others if t.type in described]
    parts += [_marks(fig, t, words=words) if _names_rows(t) else described[t.type](t, words=words)
              for t in series[:MAX_ROWS]]
    if len(series) > MAX_ROWS:
        parts.append(words("display.summary.more_series", count=len(series) - MAX_ROWS))
    if title is None:
        title = plain(fig.layout.title.text) if fig.layout.title is not None else ""
    body = " ".join(part for part in parts if part)
    return f"{title}: {body}" if title and body else title or body


def _map_words(one: Map, *, words: Words) -> str:
    z = np.asarray(one.values, dtype=float)
    row_names, column_names = unescaped(one.rows), unescaped(one.columns)
    rows, best = row_maxima(z)
    if rows.size == 0:
        return ""
    maxima = z[rows, best]
    pairs = [f"{row_names[r]} → {column_names[c]} {number(z[r, c])}" for r, c in zip(rows[:MAX_ROWS], best)]
    return words("display.summary.heatmap", rows=z.shape[0], row_title=plain(one.row_title) or "—",
                 columns=z.shape[1], column_title=plain(one.column_title) or "—",
                 pairs=_more(pairs, rows.size, words=words),
                 mean=number(float(maxima.mean())), low=number(float(np.nanmin(z))), high=number(float(np.nanmax(z))))


def _series_named(series: Series, text: str) -> str:
    """A series' words, after its name where it has one (the legend's entry)."""
    name = plain(series.name)
    return f"{name}: {text}" if name else text


def _bar_words(series: Series, *, words: Words) -> str:
    labels, values = (series.y, series.x) if series.horizontal else (series.x, series.y)
    pairs = [(float(v), plain(k)) for k, v in zip(labels, values) if v is not None and not np.isnan(float(v))]
    if len(pairs) > MAX_ROWS:  # many bars: the largest first
        pairs = sorted(pairs, key=lambda pair: -pair[0])
    shown = [f"{label} {number(value)}" for value, label in pairs[:MAX_ROWS]]
    return _series_named(series, words("display.summary.bars", values=_more(shown, len(pairs), words=words)))


def _mark_words(series: Series, *, words: Words) -> str:
    """Marks that name a row for each column (the lens's commitment): each column with its row, a sentence, where a
    line's first, last and highest value would be numbers without meaning."""
    def column(x) -> str:  # the x axis's own label where it has one ("4: ' Mary'")
        return plain(series.columns[int(x)]) if float(x).is_integer() and 0 <= int(x) < len(series.columns) \
            else plain(x)
    shown = [words("display.summary.mark", row=plain(row), column=column(x)) for x, row in zip(series.x, series.rows)]
    return words("display.summary.marks", name=plain(series.name),
                 marks=_more(shown[:MAX_ROWS], len(shown), words=words))


def _line_words(series: Series, *, words: Words) -> str:
    points = [(x, float(y)) for x, y in zip(series.x, series.y)
              if y is not None and x is not None and not np.isnan(float(y))]
    if not points:
        return ""
    (first_x, first), (last_x, last) = points[0], points[-1]
    high_x, high = max(points, key=lambda point: point[1])
    def show(x) -> str:  # an x value: a label, a whole number (a position, a step) or a measure
        return plain(x) if isinstance(x, str) else str(int(x)) if float(x).is_integer() else number(float(x))
    return _series_named(series, words("display.summary.line", first=number(first), first_x=show(first_x),
                                       last=number(last), last_x=show(last_x), high=number(high),
                                       high_x=show(high_x)))


def chart_summary(data: ChartData, title: str | None = None, *, words: Words) -> str:
    """The chart in words: its title (or `title`), then what its maps and series show (see the module's docstring)."""
    parts = []
    if len(data.maps) == 1 and not data.grid:
        parts.append(_map_words(data.maps[0], words=words))
    elif data.maps:
        parts.append(_maps([(one.name, np.asarray(one.values, dtype=float)) for one in data.maps], words=words))
    described = {"bar": _bar_words, "line": _line_words, "marks": _mark_words}
    parts += [described[one.kind](one, words=words) for one in data.series[:MAX_ROWS]]
    if len(data.series) > MAX_ROWS:
        parts.append(words("display.summary.more_series", count=len(data.series) - MAX_ROWS))
    title = plain(data.title) if title is None else title
    body = " ".join(part for part in parts if part)
    return f"{title}: {body}" if title and body else title or body

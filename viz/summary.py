"""A chart in words (WCAG 1.1.1, a text alternative): a few sentences a screen reader reads, and that a student who
cannot tell the colours apart can use, computed from the very arrays the chart draws (the data its builder attached,
viz/chart_data.py), so the words never disagree with the picture.

One map: each row's largest column and the mean of the row maxima (how sharply the rows attend); a grid of maps or
several maps: the sharpest and the broadest map by that mean; bars: every bar's value (the largest first when there
are many); lines: where each series starts, ends and peaks; marks: the row each column's mark names.
"""
from __future__ import annotations

import html
import re

import numpy as np

from viz.chart_data import ChartData, Map, Series
from viz.export import unescaped
from viz.words import Words

MAX_ROWS = 8  # rows of a map, bars, series named one by one; the rest are counted
_TAG = re.compile(r"<[^>]+>")


def plain(text: object) -> str:
    """Plotly's label text (a small HTML subset, escaped tokens) as the words it shows."""
    return " ".join(html.unescape(_TAG.sub(" ", str(text or ""))).split())


def number(value: float) -> str:
    return f"{value:.2f}" if 0.01 <= abs(value) < 1000 else f"{value:.3g}"


def _more(shown: list[str], total: int, *, words: Words) -> str:
    text = "; ".join(shown)
    return text + (" " + words("display.summary.more", count=total - len(shown)) if total > len(shown) else "")


def row_maxima(z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """z (rows, columns), NaN where masked -> (the rows that have a value, each one's largest column index)."""
    rows = np.flatnonzero(~np.all(np.isnan(z), axis=1))
    return rows, np.nanargmax(z[rows], axis=1)


def _named_cells(one: Map, *, words: Words) -> str:
    """A map whose cells are named (a head's pattern): each name, in the order first met, with the cells that have it."""
    rows, columns, cells = unescaped(one.rows), unescaped(one.columns), {}
    for (r, c), name in np.ndenumerate(np.asarray(one.cell_names, dtype=object)):
        cells.setdefault(plain(name), []).append(f"{rows[r]} {columns[c]}")
    return " ".join(f"{name}: {_more(where[:MAX_ROWS], len(where), words=words)}." for name, where in cells.items())


def _map(one: Map, *, words: Words) -> str:
    if one.cell_names is not None:
        return _named_cells(one, words=words)
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


def _maps(maps: tuple[Map, ...], *, words: Words) -> str:
    """A grid of maps (e.g. every head): the sharpest and the broadest by the mean of their row maxima."""
    means = []
    for index, one in enumerate(maps):
        z = np.asarray(one.values, dtype=float)
        rows, best = row_maxima(z)
        if rows.size:
            means.append((float(z[rows, best].mean()), plain(one.name) or f"#{index + 1}"))
    if not means:
        return ""
    high, low = max(means), min(means)
    return words("display.summary.maps", count=len(maps), high=number(high[0]), highest=high[1], low=number(low[0]),
                 lowest=low[1])


def _named(series: Series, text: str) -> str:
    """A series' words, after its name where it has one (the legend's entry)."""
    name = plain(series.name)
    return f"{name}: {text}" if name else text


def _bars(series: Series, *, words: Words) -> str:
    labels, values = (series.y, series.x) if series.horizontal else (series.x, series.y)
    pairs = [(float(v), plain(k)) for k, v in zip(labels, values) if v is not None and not np.isnan(float(v))]
    if len(pairs) > MAX_ROWS:  # many bars: the largest first
        pairs = sorted(pairs, key=lambda pair: -pair[0])
    shown = [f"{label} {number(value)}" for value, label in pairs[:MAX_ROWS]]
    return _named(series, words("display.summary.bars", values=_more(shown, len(pairs), words=words)))


def _marks(series: Series, *, words: Words) -> str:
    """Marks that name a row for each column (the lens's commitment): each column with its row, a sentence, where a
    line's first, last and highest value would be numbers without meaning."""
    def column(x) -> str:  # the x axis's own label where it has one ("4: ' Mary'")
        whole = float(x).is_integer() and 0 <= int(x) < len(series.columns)
        return plain(series.columns[int(x)]) if whole else plain(x)
    shown = [words("display.summary.mark", row=plain(row), column=column(x)) for x, row in zip(series.x, series.rows)]
    return words("display.summary.marks", name=plain(series.name),
                 marks=_more(shown[:MAX_ROWS], len(shown), words=words))


def _line(series: Series, *, words: Words) -> str:
    points = [(x, float(y)) for x, y in zip(series.x, series.y)
              if y is not None and x is not None and not np.isnan(float(y))]
    if not points:
        return ""
    (first_x, first), (last_x, last) = points[0], points[-1]
    high_x, high = max(points, key=lambda point: point[1])
    def show(x) -> str:  # an x value: a label, a whole number (a position, a step) or a measure
        return plain(x) if isinstance(x, str) else str(int(x)) if float(x).is_integer() else number(float(x))
    return _named(series, words("display.summary.line", first=number(first), first_x=show(first_x),
                                last=number(last), last_x=show(last_x), high=number(high), high_x=show(high_x)))


_SERIES_WORDS = {"bar": _bars, "line": _line, "marks": _marks}


def chart_summary(data: ChartData, title: str | None = None, *, words: Words) -> str:
    """The chart in words: its title (or `title`), then what its maps and series show (see the module's docstring)."""
    parts = []
    if len(data.maps) == 1 and not data.grid:
        parts.append(_map(data.maps[0], words=words))
    elif data.maps:
        parts.append(_maps(data.maps, words=words))
    parts += [_SERIES_WORDS[series.kind](series, words=words) for series in data.series[:MAX_ROWS]]
    if len(data.series) > MAX_ROWS:
        parts.append(words("display.summary.more_series", count=len(data.series) - MAX_ROWS))
    title = plain(data.title) if title is None else title
    body = " ".join(part for part in parts if part)
    return f"{title}: {body}" if title and body else title or body

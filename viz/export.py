"""A chart's numbers as a table, for CSV download: the data its builder drew (viz/chart_data.py), with its labels,
and nothing else.

One map becomes a matrix (rows and columns labelled as on the axes); several maps, a grid of heads (a series per
head), bars and lines become a long table (series, x, y[, z]). Labels are unescaped from plotly's HTML-safe form and
made formula-safe.
"""
from __future__ import annotations

import html

import numpy as np
import pandas as pd

from viz.attention import csv_safe
from viz.chart_data import ChartData, Series


def unescaped(labels) -> list[str]:
    """Labels as the chart writes them (plotly's HTML subset) as the reader reads them: escaped characters back."""
    return [html.unescape(str(label)) for label in labels]


def _positioned(labels: list[str]) -> list[str]:
    """Keep repeated labels apart (a sentence may repeat a word) by numbering them when needed."""
    if len(set(labels)) != len(labels):
        labels = [f"{i}: {label}" for i, label in enumerate(labels)]
    return [csv_safe(label) for label in labels]


def _trace_type(series: Series) -> str:
    """What a series without a name of its own is called ("bar 2"): plotly's name for such a trace."""
    return "bar" if series.kind == "bar" else "scatter"


def chart_table(data: ChartData) -> pd.DataFrame:
    """The numbers of a chart: a labelled matrix for one map, else a long (series, x, y[, z]) table."""
    if len(data.maps) == 1 and not data.series and not data.grid:
        (one,) = data.maps
        cells = np.asarray(one.values, dtype=float) if one.cell_names is None else \
            [[csv_safe(name) for name in unescaped(row)] for row in one.cell_names]  # a map of named cells: the names
        return pd.DataFrame(cells, index=_positioned(unescaped(one.rows)),
                            columns=_positioned(unescaped(one.columns))).rename_axis("row \\ column")
    records = []
    for number, one in enumerate(data.maps):  # a grid's maps are its thumbnails, each a series named by its head
        z = np.asarray(one.values, dtype=float)
        series = csv_safe(html.unescape(one.name or f"heatmap {number + 1}"))
        ys, xs = unescaped(one.rows), unescaped(one.columns)
        records += [{"series": series, "x": csv_safe(xs[j]), "y": csv_safe(ys[i]), "z": z[i, j]}
                    for i in range(z.shape[0]) for j in range(z.shape[1])]
    before = 1 if data.grid else len(data.maps)  # a grid is drawn as one heatmap: the series are numbered after it
    for number, one in enumerate(data.series, start=before):
        series = csv_safe(html.unescape(one.name or f"{_trace_type(one)} {number + 1}"))
        for x, y in zip(one.x, one.y):
            if x is None or y is None:  # gaps between line segments
                continue
            records.append({"series": series, "x": csv_safe(html.unescape(str(x))) if isinstance(x, str) else x,
                            "y": csv_safe(html.unescape(str(y))) if isinstance(y, str) else y})
    return pd.DataFrame(records)


def chart_csv(data: ChartData) -> bytes:
    """chart_table as UTF-8 CSV with a byte-order mark, so spreadsheets read Korean and token text correctly."""
    table = chart_table(data)
    keep_index = table.index.name is not None
    return table.to_csv(index=keep_index).encode("utf-8-sig")

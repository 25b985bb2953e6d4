"""A chart's numbers as a table, for CSV download: what a figure shows, with its labels, and nothing else.

One heatmap becomes a matrix (rows and columns labelled as on the axes); several heatmaps, the all-heads grid (one
heatmap of tiled maps, a series per head), lines and bars become a long table (series, x, y). Labels are unescaped
from plotly's HTML-safe form and made formula-safe.
"""
from __future__ import annotations

import base64
import html

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from viz.attention import CLICK_TARGETS, GRID, csv_safe, tile_origin
from viz.chart_data import ChartData, Series


def trace_values(data) -> np.ndarray | list:
    """Trace data as numbers: plotly's typed-array form ({'dtype', 'bdata', 'shape'}, as in a figure rebuilt
    from its own dict) decoded, lists and arrays as they are.

    That form is plotly.js's documented wire format for typed arrays (base64 of the raw little-endian values), not
    a Python internal; plotly.py has no public decoder for it (go.Figure(dict) and plotly.io.from_json both keep the
    dict, checked with plotly 7.1), so the one decoder the project needs lives here and the tests use it too.
    """
    if isinstance(data, dict) and "bdata" in data:
        array = np.frombuffer(base64.b64decode(data["bdata"]), dtype=np.dtype(data["dtype"]))
        shape = data.get("shape")
        if shape:
            array = array.reshape([int(n) for n in str(shape).split(",")])
        return array
    return data


def grid_maps(trace) -> list[tuple[str, np.ndarray, list[str], list[str]]] | None:
    """A viz.attention.head_grid heatmap cut back into its maps: [(name "L1 H2", z (T_q, T_k), query labels, key
    labels)], the labels unescaped; None for any other trace."""
    grid = trace.meta.get(GRID) if isinstance(trace.meta, dict) else None
    if grid is None:
        return None
    z = np.asarray(trace_values(trace.z), dtype=float)
    queries, keys = [html.unescape(q) for q in grid["queries"]], [html.unescape(k) for k in grid["keys"]]
    rows, cols = len(queries), len(keys)
    maps = []
    first = int(grid.get("first_layer", 0))  # a page of a deep model's layers starts there
    for layer in range(int(grid["layers"])):
        for head in range(int(grid["heads"])):
            y, x = tile_origin(layer, head, rows, cols)
            maps.append((f"L{first + layer + 1} H{head + 1}", z[y:y + rows, x:x + cols], queries, keys))
    return maps


def axis_labels(fig: go.Figure, trace, axis: str, positions) -> list[str]:
    """The text the reader sees for each value: the axis' ticktext where positions stand for tokens."""
    positions = list(trace_values(positions)) if positions is not None else []
    name = (getattr(trace, f"{axis}axis", None) or axis).replace(axis, f"{axis}axis", 1)
    layout_axis = fig.layout[name] if name in fig.layout else None
    ticks = {}
    if layout_axis is not None and layout_axis.tickvals is not None and layout_axis.ticktext is not None:
        ticks = dict(zip(trace_values(layout_axis.tickvals), trace_values(layout_axis.ticktext)))
    return [html.unescape(str(ticks.get(v, v))) for v in positions]


def is_data_heatmap(trace) -> bool:
    # Mask overlays (grey cells) are heatmaps without a scale; they carry no numbers of their own.
    return trace.type == "heatmap" and not (trace.showscale is False and trace.coloraxis is None)


def _positioned(labels: list[str]) -> list[str]:
    """Keep repeated labels apart (a sentence may repeat a word) by numbering them when needed."""
    if len(set(labels)) != len(labels):
        labels = [f"{i}: {label}" for i, label in enumerate(labels)]
    return [csv_safe(label) for label in labels]


def figure_table(fig: go.Figure) -> pd.DataFrame:
    """The numbers behind a figure: a labelled matrix for one heatmap, else a long (series, x, y[, z]) table."""
    heatmaps = [t for t in fig.data if is_data_heatmap(t)]
    others = [t for t in fig.data if t.type != "heatmap" and getattr(t, "mode", None) != "text"
              and t.meta != CLICK_TARGETS]  # the grid's click targets are controls, not numbers
    if len(heatmaps) == 1 and not others and grid_maps(heatmaps[0]) is None:
        trace = heatmaps[0]
        z = np.asarray(trace_values(trace.z), dtype=float)
        rows = trace.y if trace.y is not None else range(z.shape[0])
        cols = trace.x if trace.x is not None else range(z.shape[1])
        return pd.DataFrame(z, index=_positioned(axis_labels(fig, trace, "y", rows)),
                            columns=_positioned(axis_labels(fig, trace, "x", cols))).rename_axis("row \\ column")
    records = []
    for number, trace in enumerate(heatmaps + others):
        series = csv_safe(html.unescape(trace.name or f"{trace.type} {number + 1}"))
        maps = grid_maps(trace) if trace.type == "heatmap" else None
        if maps is not None:  # the all-heads grid: a series per head, its cells named by their tokens
            records += [{"series": name, "x": csv_safe(xs[j]), "y": csv_safe(ys[i]), "z": z[i, j]}
                        for name, z, ys, xs in maps for i in range(z.shape[0]) for j in range(z.shape[1])]
            continue
        if trace.type == "heatmap":
            z = np.asarray(trace_values(trace.z), dtype=float)
            ys = axis_labels(fig, trace, "y", trace.y if trace.y is not None else range(z.shape[0]))
            xs = axis_labels(fig, trace, "x", trace.x if trace.x is not None else range(z.shape[1]))
            records += [{"series": series, "x": csv_safe(xs[j]), "y": csv_safe(ys[i]), "z": z[i, j]}
                        for i in range(z.shape[0]) for j in range(z.shape[1])]
            continue
        xs, ys = (list(trace_values(axis)) if axis is not None else [] for axis in (trace.x, trace.y))
        for x, y in zip(xs, ys):
            if x is None or y is None:  # gaps between line segments
                continue
            records.append({"series": series, "x": csv_safe(html.unescape(str(x))) if isinstance(x, str) else x,
                            "y": csv_safe(html.unescape(str(y))) if isinstance(y, str) else y})
    return pd.DataFrame(records)


def figure_csv(fig: go.Figure) -> bytes:
    """figure_table as UTF-8 CSV with a byte-order mark, so spreadsheets read Korean and token text correctly."""
    table = figure_table(fig)
    keep_index = table.index.name is not None
    return table.to_csv(index=keep_index).encode("utf-8-sig")


def unescaped(labels) -> list[str]:
    """Labels as the chart writes them (plotly's HTML subset) as the reader reads them: escaped characters back."""
    return [html.unescape(str(label)) for label in labels]


def _trace_type(series: Series) -> str:
    """The name plotly gives such a trace ("bar 2"), for a series without a name of its own."""
    return "bar" if series.kind == "bar" else "scatter"


def chart_table(data: ChartData) -> pd.DataFrame:
    """The numbers of a chart: a labelled matrix for one map, else a long (series, x, y[, z]) table."""
    if len(data.maps) == 1 and not data.series and not data.grid:
        (one,) = data.maps
        return pd.DataFrame(np.asarray(one.values, dtype=float), index=_positioned(unescaped(one.rows)),
                            columns=_positioned(unescaped(one.columns))).rename_axis("row \\ column")
    records = []
    for number, one in enumerate(data.maps):  # a grid's maps are its thumbnails, each a series named by its head
        z = np.asarray(one.values, dtype=float)
        series = csv_safe(html.unescape(one.name or f"heatmap {number + 1}"))
        ys, xs = unescaped(one.rows), unescaped(one.columns)
        records += [{"series": series, "x": csv_safe(xs[j]), "y": csv_safe(ys[i]), "z": z[i, j]}
                    for i in range(z.shape[0]) for j in range(z.shape[1])]
    before = 1 if data.grid else len(data.maps)  # a grid is one heatmap trace
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

"""What a chart shows, as data: the arrays a builder drew and the labels it gave them, for its CSV (viz/export.py) and
its words (viz/summary.py), which start from these and never read the figure back.

Every builder of a teaching chart returns its figure with its ChartData attached (`with_data`); `chart_data(fig)` reads
it. Text is kept as the chart writes it (plotly's small HTML subset, user text escaped by `html_escaped`): the CSV
unescapes it, the words read it as plain text, each as the reader sees it on screen.

Only what carries numbers is data: the grid's click targets, the grey of masked or padded cells, the tokens written
beside the lines view, a legend's empty traces are drawing aids and are left out.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import plotly.graph_objects as go

DATA = "_attention_lab_data"  # the attribute of a figure that holds its ChartData


@dataclass(frozen=True, eq=False)
class Map:
    """One matrix: values (rows, columns), NaN where a cell holds no number (masked, padding, a gap); the label of each
    row and column as its axis writes it, and the axes' titles. `name` tells one map of several apart (a head "L1 H2",
    a subplot's "mean"). `cell_names` (rows, columns): the words written in the cells where they, not the values, are
    what the map says (a head's pattern, whose value only picks its colour): the CSV and the words name them."""
    values: np.ndarray
    rows: tuple[str, ...]
    columns: tuple[str, ...]
    name: str | None = None
    row_title: str = ""
    column_title: str = ""
    cell_names: np.ndarray | None = None


@dataclass(frozen=True, eq=False)
class Series:
    """One series of points (x[i], y[i]) drawn as bars, a line (or dots), or marks.

    bars: `horizontal` ones have their labels on y and their values on x. marks: one per column x (labelled by
    `columns`, the x axis's labels by position), each naming a row (`rows`, what a reader names it by: the lens's
    commitment row), whose position on the y axis is y. A line's None points are its gaps."""
    kind: Literal["bar", "line", "marks"]
    x: Sequence | np.ndarray
    y: Sequence | np.ndarray
    name: str | None = None
    horizontal: bool = False
    rows: tuple[str, ...] = ()
    columns: tuple[str, ...] = ()


@dataclass(frozen=True, eq=False)
class ChartData:
    """A chart's title, its maps and its series, in the order it draws them. `grid`: the maps are one grid's thumbnails
    (every head of a model), each named, even when there is only one."""
    title: str = ""
    maps: tuple[Map, ...] = ()
    series: tuple[Series, ...] = ()
    grid: bool = False


def with_data(fig: go.Figure, data: ChartData) -> go.Figure:
    """fig, holding data (what chart_data returns)."""
    setattr(fig, DATA, data)
    return fig


def chart_data(fig: go.Figure) -> ChartData:
    """The data a viz/ builder attached to fig; a figure built anywhere else has none, which is a programming error."""
    data = getattr(fig, DATA, None)
    if data is None:
        raise TypeError("this figure carries no ChartData: build it with a viz/ chart builder "
                        "(viz.chart_data.with_data)")
    return data


def carry_data(source: go.Figure, copy: go.Figure) -> go.Figure:
    """copy, holding source's data (a figure rebuilt from another's dict loses its attributes)."""
    data = getattr(source, DATA, None)
    return copy if data is None else with_data(copy, data)


def numbered_labels(count: int, start: int = 0) -> tuple[str, ...]:
    """The labels of an axis whose positions are its own labels (no tick text): "0", "1", …"""
    return tuple(str(position) for position in range(start, start + count))

"""A cell question's charts (issue 55): the map a student taps, its weights hidden (tokens on both axes, the named
query row tinted, her pick marked, a click target on every cell), and, after the teacher's Reveal, the real map with
the right cells framed: on a student's screen alone (answer_map), on the teacher's under the class's taps as a density
(tap_density).

Streamlit reports no heatmap cell as selected (streamlit issue #8760): as the all-heads grid does
(viz.attention._add_click_targets), an invisible scatter trace lies over the cells; each point's customdata is its
(row, column), 0-based. With a named row a tap anywhere in a column picks that column's key on the row: a column is a
tall target even where a long sentence's columns are narrow on a phone (the token list beside it is the equivalent
control, keyboard-usable). Tokens go through html_escaped: nothing a user typed is read as plotly's HTML subset.
"""
from __future__ import annotations

from collections.abc import Callable, Collection, Mapping

import numpy as np
import plotly.graph_objects as go

from viz.attention import SEQUENTIAL, html_escaped, token_map
from viz.chart_data import ChartData, with_data
from viz.words import Words

CELL_TARGETS = "cell_targets"  # the `meta` of the invisible scatter trace: controls, not data
TAP_ROW_PX = 30  # a row's height: at least the 24 px a pointer target needs (WCAG 2.5.8), more on a phone's finger
PICKER_COLOURS = [[0, "#f2f2f2"], [0.5, "#c6dbef"], [1, "#0072B2"]]  # a cell, the named row, the pick (Okabe-Ito blue)


def _axes(rows: list[str], columns: list[str], words: Words) -> dict:
    return dict(
        xaxis=dict(title=words("attention.chart.keys_axis"), tickmode="array", tickvals=list(range(len(columns))),
                   ticktext=[html_escaped(t) for t in columns], showgrid=False, zeroline=False, fixedrange=True),
        yaxis=dict(title=words("attention.chart.queries_axis"), tickmode="array", tickvals=list(range(len(rows))),
                   ticktext=[html_escaped(t) for t in rows], autorange="reversed", showgrid=False, zeroline=False,
                   fixedrange=True))


def cell_picker(rows: list[str], columns: list[str], row: int | None, chosen: tuple[int, int] | None, title: str,
                *, words: Words) -> go.Figure:
    """The map to tap, no weight on it: (len(rows), len(columns)) grey cells, the named row tinted, the chosen cell
    dark; a click target on each cell (customdata: row, column). Its data holds no number (nothing to give away)."""
    shade = np.zeros((len(rows), len(columns)))
    if row is not None:
        shade[row] = 1
    if chosen is not None:
        shade[chosen] = 2
    fig = go.Figure(go.Heatmap(z=shade, x=list(range(len(columns))), y=list(range(len(rows))), zmin=0, zmax=2,
                               colorscale=PICKER_COLOURS, showscale=False, xgap=2, ygap=2, hoverinfo="skip"))
    ys, xs = np.meshgrid(np.arange(len(rows)), np.arange(len(columns)), indexing="ij")
    picked = [(row if row is not None else int(y), int(x)) for y, x in zip(ys.ravel(), xs.ravel())]
    hover = [f"{html_escaped(rows[q])} → {html_escaped(columns[k])}" for q, k in picked]
    height = 150 + TAP_ROW_PX * len(rows)
    fig.add_trace(go.Scatter(
        # customdata as lists (object dtype): a typed array's rows reach the selection as {"0": q, "1": k}, no list
        x=xs.ravel(), y=ys.ravel(), mode="markers", customdata=np.array(picked, dtype=object), text=hover,
        meta=CELL_TARGETS,
        showlegend=False, name="", hovertemplate="%{text}<extra></extra>",
        marker=dict(symbol="square", size=TAP_ROW_PX, color="rgba(0,0,0,0)"),
        selected=dict(marker=dict(opacity=0)), unselected=dict(marker=dict(opacity=0))))
    if row is not None:  # framed as well as tinted: not told by colour alone
        fig.add_shape(type="rect", x0=-0.5, x1=len(columns) - 0.5, y0=row - 0.5, y1=row + 0.5,
                      line=dict(color="#d55e00", width=3), fillcolor="rgba(0,0,0,0)")
    fig.update_layout(title=title, height=height, margin=dict(l=10, r=10, t=50, b=10), clickmode="event+select",
                      dragmode=False, **_axes(rows, columns, words))
    fig.update_xaxes(tickangle=-60)
    return with_data(fig, ChartData(title))


def with_pick(fig: go.Figure, chosen: tuple[int, int], *, copy: Callable[[go.Figure], go.Figure]) -> go.Figure:
    """cell_picker's figure drawn without a pick, now with `chosen` marked, as cell_picker(..., chosen) draws it: a
    copy (`copy`: the caller's way of copying a figure plotly validated, viz/presentation.py's rule) whose shade
    differs in that one cell. A class's picks then cost a copy each, not a new figure."""
    picked = copy(fig)
    shade = np.array(fig.data[0].z, dtype=float)  # the copy holds it as plotly serialised it
    shade[chosen] = 2
    picked.data[0].z = shade
    return picked


def tapped_cell(point: Mapping) -> tuple[int, int] | None:
    """(row, column), 0-based, of a point Streamlit reports selected in cell_picker's figure; None for anything else."""
    data = point.get("customdata")
    if not isinstance(data, (list, tuple)) or len(data) != 2:
        return None
    try:
        return int(data[0]), int(data[1])
    except (TypeError, ValueError):
        return None


def answer_map(weights: np.ndarray, rows: list[str], columns: list[str], right: Collection[tuple[int, int]], title: str,
               *, words: Words) -> go.Figure:
    """The real map (weights (T_q, T_k)) with its right cells framed and marked ✓: what a cell question asked about,
    once it is revealed. Data: the map."""
    weights = np.asarray(weights, dtype=float)
    fig = _real_map(weights, rows, columns, right, title, words)
    return with_data(fig, ChartData(title, maps=(_weight_map(weights, rows, columns, words),)))


def _real_map(weights: np.ndarray, rows: list[str], columns: list[str], right: Collection[tuple[int, int]], title: str,
              words: Words) -> go.Figure:
    weight = words("attention.chart.weight")
    pairs = np.array([[[html_escaped(q), html_escaped(k)] for k in columns] for q in rows], dtype=object)
    fig = go.Figure(go.Heatmap(z=weights, x=list(range(len(columns))), y=list(range(len(rows))), zmin=0,
                               zmax=max(1e-9, float(np.nanmax(weights))), colorscale=SEQUENTIAL, customdata=pairs,
                               colorbar=dict(title=weight),
                               hovertemplate=f"%{{customdata[0]}} → %{{customdata[1]}}<br>{weight} %{{z:.2f}}"
                                             "<extra></extra>"))
    for q, k in right:
        fig.add_shape(type="rect", x0=k - 0.5, x1=k + 0.5, y0=q - 0.5, y1=q + 0.5, line=dict(color="#009E73", width=4),
                      fillcolor="rgba(0,0,0,0)")
        fig.add_annotation(x=k, y=q - 0.5, text="✓", showarrow=False, yanchor="bottom", font=dict(size=16))
    fig.update_layout(title=title, height=150 + TAP_ROW_PX * len(rows), margin=dict(l=10, r=10, t=60, b=10),
                      **_axes(rows, columns, words))
    fig.update_xaxes(tickangle=-60)
    return fig


def _weight_map(weights: np.ndarray, rows: list[str], columns: list[str], words: Words):
    return token_map(weights, rows, columns, words("attention.chart.queries_axis"), words("attention.chart.keys_axis"),
                     name=words("attention.chart.weight"))


def tap_density(weights: np.ndarray, rows: list[str], columns: list[str], taps: Mapping[tuple[int, int], int],
                right: Collection[tuple[int, int]], title: str, *, words: Words) -> go.Figure:
    """The real map (weights (T_q, T_k)) under the class's taps: a circle on each tapped cell, its area the share of
    the taps, its count written in it; the right cells framed and marked ✓. Data: the map and the taps' shares."""
    weights = np.asarray(weights, dtype=float)
    total = max(1, sum(taps.values()))
    share = np.zeros(weights.shape)
    for (q, k), count in taps.items():
        share[q, k] = count / total
    fig = _real_map(weights, rows, columns, right, title, words)
    tapped = sorted(taps)
    if tapped:
        fig.add_trace(go.Scatter(
            x=[k for _, k in tapped], y=[q for q, _ in tapped], mode="markers+text", showlegend=False,
            text=[str(taps[cell]) for cell in tapped], textfont=dict(color="#111111", size=14), name="",
            marker=dict(size=[12 + 36 * np.sqrt(taps[cell] / total) for cell in tapped], color="rgba(230,159,0,0.75)",
                        line=dict(color="#111111", width=1)),
            hovertemplate="%{text}<extra></extra>"))
    rows_title, columns_title = words("attention.chart.queries_axis"), words("attention.chart.keys_axis")
    return with_data(fig, ChartData(title, maps=(
        _weight_map(weights, rows, columns, words),
        token_map(share, rows, columns, rows_title, columns_title, name=words("attention.chart.taps")))))

"""A labelled numeric matrix with its values written in the cells; −∞ cells drawn grey as masked."""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from viz.chart_data import ChartData, Map, with_data
from viz.words import Words


def matrix_figure(values: np.ndarray, row_labels: list[str], col_labels: list[str], title: str,
                  row_title: str | None = None, col_title: str | None = None, colorscale: str = "RdBu_r",
                  hidden: np.ndarray | None = None, decimals: int = 2, zmid: float | None = 0.0,
                  *, words: Words) -> go.Figure:
    """values (R, C); hidden (R, C) True for masked cells, which are shown as '−∞' on grey."""
    values = np.asarray(values, dtype=float)
    hidden = np.zeros(values.shape, dtype=bool) if hidden is None else (np.asarray(hidden, bool) | np.isneginf(values))
    shown = np.where(hidden | ~np.isfinite(values), np.nan, values)
    numbers = np.vectorize(lambda v: f"{v:.{decimals}f}")(np.nan_to_num(values, neginf=0.0))
    text = np.where(hidden, "−∞", numbers)  # what hover says of each cell
    # Each cell's label is written by one trace only: plotly writes a trace's text on its empty (NaN) cells too, so
    # the grey trace on top would write every number a second time, in the dark colour it picks for grey
    fig = go.Figure(go.Heatmap(z=shown, x=col_labels, y=row_labels, text=np.where(hidden, "", numbers),
                               customdata=text, texttemplate="%{text}",
                               colorscale=colorscale, zmid=zmid if np.isfinite(shown).any() else None,
                               hoverongaps=False, hovertemplate="%{y}, %{x}: %{customdata}<extra></extra>"))
    if hidden.any():
        fig.add_trace(go.Heatmap(z=np.where(hidden, 1.0, np.nan), x=col_labels, y=row_labels,
                                 text=np.where(hidden, "−∞", ""),
                                 texttemplate="%{text}", colorscale=[[0, "#d9d9d9"], [1, "#d9d9d9"]], showscale=False,
                                 hoverongaps=False,
                                 hovertemplate=f"%{{y}}, %{{x}}: {words('attention_steps.chart.masked')}"
                                               "<extra></extra>"))
    columns_axis, rows_axis = col_title or words("attention_steps.chart.columns"), row_title or words(
        "attention_steps.chart.rows")
    fig.update_layout(title=title, height=140 + 36 * len(row_labels), margin=dict(l=10, r=10, t=50, b=10),
                      xaxis=dict(title=columns_axis, type="category"),
                      yaxis=dict(title=rows_axis, type="category", autorange="reversed"))
    return with_data(fig, ChartData(title or "", maps=(Map(shown, tuple(map(str, row_labels)),
                                                          tuple(map(str, col_labels)), row_title=rows_axis,
                                                          column_title=columns_axis),)))

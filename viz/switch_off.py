"""Charts of heads switched off while the model writes (model/switch_off.py): the two continuations aligned token by
token, the first divergence marked; and both models' per-token loss on a repeated random sequence."""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from viz.attention import html_escaped
from viz.chart_data import ChartData, Map, Series, with_data
from viz.words import Words

MARGIN = dict(l=10, r=10, t=60, b=10)
SAME, FIRST, AFTER = 0.0, 1.0, 0.5  # a row's colour: both texts agree, the first divergence, every row after it
INTACT_COLOUR, SWITCHED_COLOUR = "#4c78a8", "#e45756"


def aligned_tokens_chart(intact: list[str], switched: list[str], divergence: int | None, title: str, *,
                         words: Words) -> go.Figure:
    """One row per new token (1 … N, top first), the intact model's token beside the switched-off model's, quoted so
    that spaces and newlines show; the first row where they differ in orange and its label marked, every row after it
    lighter (the two texts have parted there: later rows follow different contexts). A text that ended first leaves
    its later cells empty."""
    rows = max(len(intact), len(switched))
    cells = [[html_escaped(repr(text[i])) if i < len(text) else "" for text in (intact, switched)]
             for i in range(rows)]  # (N, 2)
    state = np.array([[SAME if divergence is None or i < divergence else FIRST if i == divergence else AFTER] * 2
                      for i in range(rows)])  # (N, 2)
    labels = [f"{i + 1} ◀ {words('llm_switch_off.chart.first_divergence')}" if i == divergence else str(i + 1)
              for i in range(rows)]
    columns = [words("llm_switch_off.chart.intact"), words("llm_switch_off.chart.switched")]
    fig = go.Figure(go.Heatmap(
        z=state, x=columns, y=labels, text=cells, texttemplate="%{text}", textfont=dict(size=14),
        colorscale=[[0, "#f2f2f2"], [0.5, "#fde3c8"], [1, "#f58518"]], zmin=0, zmax=1, showscale=False,
        xgap=2, ygap=2, hovertemplate=f"{words('llm_switch_off.chart.token_axis')} %{{y}} · %{{x}}: %{{text}}"
                                      "<extra></extra>"))
    fig.update_layout(title=title, height=170 + 28 * rows, margin=MARGIN,
                      xaxis=dict(type="category"),  # the column names under the rows: above, a long title met them
                      yaxis=dict(title=words("llm_switch_off.chart.token_axis"), autorange="reversed",
                                 type="category"))
    # what it carries is which rows differ: 1 where the two tokens differ, the tokens themselves as its labels
    differs = np.array([[float(i >= len(intact) or i >= len(switched) or intact[i] != switched[i])]
                        for i in range(rows)])
    return with_data(fig, ChartData(title or "", maps=(Map(
        differs, tuple(f"{i + 1}: {a} | {b}" for i, (a, b) in enumerate(cells)),
        (words("llm_switch_off.chart.differs"),), row_title=words("llm_switch_off.chart.token_axis")),)))


def copy_loss_chart(intact: np.ndarray, switched: np.ndarray, period: int, title: str, *,
                    words: Words) -> go.Figure:
    """Per-token loss (nats) at positions 1 … 2n − 1 of r + r (position t predicts token t + 1), the intact model and
    the switched-off one; the second copy, where a model that copies from context can predict, shaded."""
    positions = list(range(1, len(intact) + 1))
    intact_name, switched_name = words("llm_switch_off.chart.intact"), words("llm_switch_off.chart.switched")
    fig = go.Figure([
        go.Scatter(x=positions, y=intact, mode="lines+markers", name=intact_name, line=dict(color=INTACT_COLOUR),
                   hovertemplate=f"{intact_name} · %{{x}}: %{{y:.2f}}<extra></extra>"),
        go.Scatter(x=positions, y=switched, mode="lines+markers", name=switched_name,
                   line=dict(color=SWITCHED_COLOUR, dash="dash"),
                   hovertemplate=f"{switched_name} · %{{x}}: %{{y:.2f}}<extra></extra>")])
    fig.add_vrect(x0=period + 0.5, x1=len(intact) + 0.5, fillcolor="#bbbbbb", opacity=0.2, line_width=0,
                  annotation_text=words("llm_switch_off.chart.second_copy"), annotation_position="top left")
    fig.update_layout(title=title, height=380, margin=MARGIN, legend=dict(orientation="h", y=-0.2),
                      xaxis=dict(title=words("llm_switch_off.chart.position_axis")),
                      yaxis=dict(title=words("llm_switch_off.chart.loss_axis"), rangemode="tozero"))
    return with_data(fig, ChartData(title or "", series=(
        Series("line", positions, np.asarray(intact, dtype=float).tolist(), intact_name),
        Series("line", positions, np.asarray(switched, dtype=float).tolist(), switched_name))))

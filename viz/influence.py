"""The chart of prompt influence by three methods (model/explain/influence.py): one bar per prompt token in each of
three panels side by side, gradient × input, occlusion and attention rollout, the tokens on a shared y axis, the
first at the top. Each method's most influential token (its largest bar in size) is outlined. Gradient × input and
occlusion are signed nats (blue: the token raises the answer; vermillion: it lowers it); rollout is a share on a log
axis, since the first token (the attention sink) takes nearly all of it and the others' order would not show.
Words come from i18n/<lang>/llm_influence.toml (table [chart]); token text is escaped in position_labels.
"""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from viz.chart_data import ChartData, Series, with_data
from viz.llm_answer import position_labels
from viz.words import Words

RAISES, LOWERS = "#0072B2", "#D55E00"  # Okabe–Ito blue and vermillion, as the attribution bars
ROW_PX = 22  # px per token row: 32 rows and the panels' titles fit a 1280×720 screen
OUTLINE = 3  # px of the outline around each method's most influential token


def influence_bars(tokens: list[str], gradient: np.ndarray, occlusion: np.ndarray, rollout: np.ndarray,
                   title: str, *, words: Words) -> go.Figure:
    """tokens (T,), and each method's influence of every token (T,) -> three horizontal bar panels side by side."""
    labels = position_labels(tokens)
    panels = ((words("llm_influence.chart.gradient"), np.asarray(gradient, dtype=float), False),
              (words("llm_influence.chart.occlusion"), np.asarray(occlusion, dtype=float), False),
              (words("llm_influence.chart.rollout"), np.asarray(rollout, dtype=float), True))
    fig = make_subplots(rows=1, cols=3, shared_yaxes=True, horizontal_spacing=0.04,
                        subplot_titles=[name for name, _, _ in panels])
    series = []
    for column, (name, values, log) in enumerate(panels, start=1):
        top = int(np.argmax(np.abs(values)))
        fig.add_trace(go.Bar(
            x=values, y=labels, orientation="h", name=name,
            marker=dict(color=[RAISES if value >= 0 else LOWERS for value in values],
                        line=dict(color="black", width=[OUTLINE if i == top else 0 for i in range(len(values))])),
            hovertemplate=f"%{{y}}<br>{name}: %{{x:{'.2e' if log else '+.3f'}}}<extra></extra>"), row=1, col=column)
        if log:
            fig.update_xaxes(type="log", exponentformat="power", row=1, col=column)  # 10⁻⁸, not "10n"
        else:
            fig.update_xaxes(zeroline=True, zerolinecolor="#888", row=1, col=column)
        series.append(Series("bar", values, tuple(labels), name=name, horizontal=True))
    fig.update_yaxes(autorange="reversed", type="category", row=1, col=1)  # "3: ' France'": the labels say it
    fig.update_layout(title=title, height=150 + ROW_PX * len(tokens), margin=dict(l=10, r=10, t=90, b=10),
                      showlegend=False, bargap=0.25)
    return with_data(fig, ChartData(title, series=tuple(series)))

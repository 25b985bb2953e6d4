"""Residual connection chart: the gradient norm at each layer's input, with and without the skip, on a log axis.

Every word shown comes from i18n/<lang>/residual.toml, through the caller's `words` (viz/words.py).
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from viz.chart_data import ChartData, Series, with_data
from viz.words import Words

WIRING_COLORS = {"plain": "#d62728", "residual": "#1f77b4", "residual_ln": "#2ca02c"}


def wiring_label(wiring: str, *, words: Words) -> str:
    """The reader's name for a wiring ("residual" -> "with skip: x + f(x)")."""
    return words(f"residual.wiring.{wiring}")


def gradient_norm_chart(norms: dict[str, np.ndarray], title: str = "", *, words: Words) -> go.Figure:
    """norms: wiring ("plain", "residual", "residual_ln") -> (depth,) gradient norm at the input of layers 1..depth,
    per example, with the gradient arriving at the output scaled to norm 1.

    Layer 1 is next to the input, so reading right to left follows the backward pass. A norm of exactly 0 (an
    underflowed gradient) cannot sit on a log axis and leaves a gap in its line.
    """
    fig = go.Figure()
    depth = 0
    layer = words("residual.chart.layer")
    lines = []
    for wiring, values in norms.items():
        values = np.asarray(values, dtype=float)
        depth = max(depth, len(values))
        name = wiring_label(wiring, words=words)
        lines.append(Series("line", list(range(1, len(values) + 1)), np.where(values > 0, values, np.nan), name))
        fig.add_trace(go.Scatter(
            x=lines[-1].x, y=lines[-1].y, mode="lines+markers",
            name=name, line=dict(color=WIRING_COLORS[wiring]),
            hovertemplate=f"{name}<br>{layer} %{{x}}: ‖∂L/∂x‖ = %{{y:.3e}}<extra></extra>"))
    fig.add_hline(y=1.0, line=dict(color="#7f7f7f", dash="dot"),
                  annotation_text=words("residual.chart.reference"), annotation_position="bottom right")
    fig.update_layout(title=title, height=460, margin=dict(l=10, r=10, t=60, b=10),
                      legend=dict(orientation="h", yanchor="bottom", y=1.0, xanchor="left", x=0),
                      xaxis=dict(title=words("residual.chart.x_title"), range=[0.5, depth + 0.5],
                                 tickformat="d", dtick=None if depth > 10 else 1),  # layers are whole numbers
                      yaxis=dict(title=words("residual.chart.y_title"), type="log", exponentformat="power"))
    return with_data(fig, ChartData(title or "", series=tuple(lines)))


def gradient_table(norms: dict[str, np.ndarray], *, words: Words) -> pd.DataFrame:
    """The chart's numbers: one row per layer (1 = next to the input), one column per wiring."""
    depth = max(len(values) for values in norms.values())
    frame = pd.DataFrame({wiring_label(w, words=words): np.asarray(v, dtype=float) for w, v in norms.items()},
                         index=pd.RangeIndex(1, depth + 1, name=words("residual.chart.layer")))
    return frame

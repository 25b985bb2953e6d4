"""Residual connection chart: the gradient norm at each layer's input, with and without the skip, on a log axis."""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

WIRING_STYLE = {
    "plain": ("without skip: f(x)", "#d62728"),
    "residual": ("with skip: x + f(x)", "#1f77b4"),
    "residual_ln": ("skip + LayerNorm: LN(x + f(x))", "#2ca02c"),
}
Y_TITLE = "gradient norm ‖∂L/∂xₗ‖ (dimensionless, log scale)"


def gradient_norm_chart(norms: dict[str, np.ndarray], title: str = "") -> go.Figure:
    """norms: wiring ("plain", "residual", "residual_ln") -> (depth,) gradient norm at the input of layers 1..depth,
    per example, with the gradient arriving at the output scaled to norm 1.

    Layer 1 is next to the input, so reading right to left follows the backward pass. A norm of exactly 0 (an
    underflowed gradient) cannot sit on a log axis and leaves a gap in its line.
    """
    fig = go.Figure()
    depth = 0
    for wiring, values in norms.items():
        values = np.asarray(values, dtype=float)
        depth = max(depth, len(values))
        name, color = WIRING_STYLE[wiring]
        fig.add_trace(go.Scatter(
            x=list(range(1, len(values) + 1)), y=np.where(values > 0, values, np.nan), mode="lines+markers",
            name=name, line=dict(color=color),
            hovertemplate=f"{name}<br>layer %{{x}}: ‖∂L/∂x‖ = %{{y:.3e}}<extra></extra>"))
    fig.add_hline(y=1.0, line=dict(color="#7f7f7f", dash="dot"),
                  annotation_text="1: what the identity path alone carries back", annotation_position="bottom right")
    fig.update_layout(title=title, height=460, margin=dict(l=10, r=10, t=60, b=10),
                      legend=dict(orientation="h", yanchor="bottom", y=1.0, xanchor="left", x=0),
                      xaxis=dict(title="layer index l (1 = next to the input; backward pass runs right to left)",
                                 range=[0.5, depth + 0.5]),
                      yaxis=dict(title=Y_TITLE, type="log", exponentformat="power"))
    return fig

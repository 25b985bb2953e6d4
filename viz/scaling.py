"""Charts for the softmax-scaling explorer."""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots


def dot_product_histogram(raw: np.ndarray, scaled: np.ndarray, d_k: int) -> go.Figure:
    fig = go.Figure()
    fig.add_trace(go.Histogram(x=raw, name=f"q·k (variance {raw.var():.2f}, theory {d_k})", opacity=0.6,
                               histnorm="probability density", nbinsx=80))
    fig.add_trace(go.Histogram(x=scaled, name=f"q·k / √d_k (variance {scaled.var():.2f}, theory 1)", opacity=0.6,
                               histnorm="probability density", nbinsx=80))
    fig.update_layout(title=f"Dot products of random q, k with d_k = {d_k} ({len(raw):,} pairs)", barmode="overlay",
                      xaxis_title="score value (unitless)", yaxis_title="probability density", height=380,
                      legend=dict(orientation="h", y=-0.25), margin=dict(l=10, r=10, t=50, b=10))
    return fig


def softmax_bars(probabilities: np.ndarray, labels: list[str], title: str) -> go.Figure:
    fig = go.Figure(go.Bar(x=labels, y=probabilities, text=[f"{p:.3f}" for p in probabilities], textposition="auto",
                           hovertemplate="%{x}: %{y:.4f}<extra></extra>"))
    fig.update_layout(title=title, xaxis_title="key", yaxis_title="softmax weight (probability)",
                      yaxis_range=[0, 1], height=320, margin=dict(l=10, r=10, t=50, b=10))
    return fig


def jacobian_heatmap(jacobian: np.ndarray, labels: list[str], title: str) -> go.Figure:
    bound = max(float(np.abs(jacobian).max()), 1e-9)
    fig = go.Figure(go.Heatmap(z=jacobian, x=labels, y=labels, colorscale="RdBu_r", zmin=-bound, zmax=bound,
                               text=np.round(jacobian, 3), texttemplate="%{text}",
                               hovertemplate="∂y_%{y} / ∂z_%{x} = %{z:.4f}<extra></extra>",
                               colorbar=dict(title="∂y_i/∂z_j")))
    fig.update_layout(title=title, xaxis_title="input score z_j", yaxis_title="output weight y_i", height=360,
                      yaxis_autorange="reversed", margin=dict(l=10, r=10, t=50, b=10))
    return fig


def saturation_chart(curve: dict[str, np.ndarray], current: float) -> go.Figure:
    fig = make_subplots(specs=[[{"secondary_y": True}]])
    fig.add_trace(go.Scatter(x=curve["scale"], y=curve["entropy"], name="entropy (nats)"), secondary_y=False)
    fig.add_trace(go.Scatter(x=curve["scale"], y=curve["max_weight"], name="max weight"), secondary_y=False)
    fig.add_trace(go.Scatter(x=curve["scale"], y=curve["jacobian_norm"], name="‖Jacobian‖ (gradient size)",
                             line=dict(dash="dash")), secondary_y=True)
    fig.add_vline(x=current, line=dict(color="#d62728"), annotation_text="current")
    fig.update_xaxes(title_text="scale multiplying the scores (log axis)", type="log")
    fig.update_yaxes(title_text="entropy (nats) / max weight", secondary_y=False)
    fig.update_yaxes(title_text="Frobenius norm of the Jacobian", secondary_y=True)
    fig.update_layout(title="As the scores grow, softmax saturates and its gradient vanishes", height=380,
                      legend=dict(orientation="h", y=-0.3), margin=dict(l=10, r=10, t=50, b=10))
    return fig

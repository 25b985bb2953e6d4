"""Training curves: loss per step and validation metrics at evaluation steps."""
from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots


def history_frame(history: list[dict]) -> pd.DataFrame:
    """One row per step: step, loss, lr, elapsed_s and (on evaluation steps) val_* columns."""
    return pd.DataFrame(history)


def training_curves(history: list[dict], title: str = "Training") -> go.Figure:
    frame = history_frame(history)
    fig = make_subplots(specs=[[{"secondary_y": True}]])
    if not frame.empty:
        fig.add_trace(go.Scatter(x=frame["step"], y=frame["loss"], name="training loss (cross-entropy)",
                                 line=dict(width=1)), secondary_y=False)
        if len(frame) >= 20:
            smooth = frame["loss"].rolling(20, min_periods=1).mean()
            fig.add_trace(go.Scatter(x=frame["step"], y=smooth, name="training loss, 20-step mean"),
                          secondary_y=False)
        if "token_accuracy" in frame:
            fig.add_trace(go.Scatter(x=frame["step"], y=frame["token_accuracy"].rolling(20, min_periods=1).mean(),
                                     name="training token accuracy, 20-step mean", line=dict(dash="dash")),
                          secondary_y=True)
        if "val_exact_match" in frame:
            val = frame.dropna(subset=["val_exact_match"])
            fig.add_trace(go.Scatter(x=val["step"], y=val["val_exact_match"], name="validation exact match",
                                     mode="lines+markers"), secondary_y=True)
            fig.add_trace(go.Scatter(x=val["step"], y=val["val_token_accuracy"], name="validation token accuracy",
                                     mode="lines+markers", line=dict(dash="dot")), secondary_y=True)
    fig.update_xaxes(title_text="step")
    fig.update_yaxes(title_text="loss (nats per token)", secondary_y=False)
    fig.update_yaxes(title_text="accuracy (fraction)", range=[0, 1.02], secondary_y=True)
    fig.update_layout(title=title, height=380, legend=dict(orientation="h", y=-0.3), margin=dict(l=10, r=10, t=50, b=10))
    return fig


def accuracy_by_length_chart(rows_by_model: dict[str, list[dict]], metric: str = "exact_match") -> go.Figure:
    """One line per model: metric against the source-length bucket (words)."""
    fig = go.Figure()
    for name, rows in rows_by_model.items():
        fig.add_trace(go.Scatter(x=[f"{r['min_words']}–{r['max_words']}" for r in rows], y=[r[metric] for r in rows],
                                 mode="lines+markers", name=name,
                                 customdata=[r["sentences"] for r in rows],
                                 hovertemplate="%{x} words: %{y:.3f} (%{customdata} sentences)<extra></extra>"))
    label = {"exact_match": "exact match (fraction)", "bleu": "BLEU (0–100)"}[metric]
    fig.update_layout(title=f"{label.split(' (')[0]} against sentence length (test + long-sentence splits)",
                      xaxis_title="source sentence length (words)", yaxis_title=label, height=400,
                      margin=dict(l=10, r=10, t=50, b=10), legend=dict(orientation="h", y=-0.25))
    return fig

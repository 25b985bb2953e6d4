"""Training curves: loss per step and validation metrics at evaluation steps; accuracy against sentence length."""
from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from viz.words import Words


def history_frame(history: list[dict]) -> pd.DataFrame:
    """One row per step: step, loss, lr, elapsed_s and (on evaluation steps) val_* columns."""
    return pd.DataFrame(history)


def training_curves(history: list[dict], title: str | None = None, *, words: Words) -> go.Figure:
    frame = history_frame(history)
    fig = make_subplots(specs=[[{"secondary_y": True}]])
    if not frame.empty:
        fig.add_trace(go.Scatter(x=frame["step"], y=frame["loss"], name=words("train.curve_loss"),
                                 line=dict(width=1)), secondary_y=False)
        if len(frame) >= 20:
            smooth = frame["loss"].rolling(20, min_periods=1).mean()
            fig.add_trace(go.Scatter(x=frame["step"], y=smooth, name=words("train.curve_loss_mean")),
                          secondary_y=False)
        if "token_accuracy" in frame:
            fig.add_trace(go.Scatter(x=frame["step"], y=frame["token_accuracy"].rolling(20, min_periods=1).mean(),
                                     name=words("train.curve_token_accuracy"), line=dict(dash="dash")),
                          secondary_y=True)
        if "val_exact_match" in frame:
            val = frame.dropna(subset=["val_exact_match"])
            fig.add_trace(go.Scatter(x=val["step"], y=val["val_exact_match"], name=words("train.curve_val_exact"),
                                     mode="lines+markers"), secondary_y=True)
            fig.add_trace(go.Scatter(x=val["step"], y=val["val_token_accuracy"], name=words("train.curve_val_tokens"),
                                     mode="lines+markers", line=dict(dash="dot")), secondary_y=True)
    fig.update_xaxes(title_text=words("train.axis_step"))
    fig.update_yaxes(title_text=words("train.axis_loss"), secondary_y=False)
    fig.update_yaxes(title_text=words("train.axis_accuracy"), range=[0, 1.02], secondary_y=True)
    fig.update_layout(title=title if title is not None else words("train.curves_default_title"), height=380,
                      legend=dict(orientation="h", y=-0.3), margin=dict(l=10, r=10, t=50, b=10))
    return fig


def accuracy_by_length_chart(rows_by_model: dict[str, list[dict]], metric: str = "exact_match",
                             *, words: Words) -> go.Figure:
    """One line per model: metric ("exact_match" or "bleu") against the source-length bucket (words)."""
    # Only the words are translated; the %{...} placeholders are composed here, never passed through a template.
    hover = f"%{{x}} {words('compare.hover_words')}: %{{y:.3f}} (%{{customdata}} {words('compare.hover_sentences')})" \
            "<extra></extra>"
    fig = go.Figure()
    for name, rows in rows_by_model.items():
        fig.add_trace(go.Scatter(x=[f"{r['min_words']}–{r['max_words']}" for r in rows], y=[r[metric] for r in rows],
                                 mode="lines+markers", name=name, customdata=[r["sentences"] for r in rows],
                                 hovertemplate=hover))
    fig.update_layout(title=dict(text=words("compare.length_chart_title", metric=words(f"compare.metric_{metric}")),
                                 # at the container's top (about 30 px with its pad)
                                 automargin=True, yref="container", y=1, yanchor="top", pad=dict(t=8, b=4)),
                      xaxis_title=words("compare.length_axis"), yaxis_title=words(f"compare.axis_{metric}"), height=440,
                      # which line is which model, above the plot: on a projected stop the chart's top is on the
                      # first screen, its bottom is not. The top margin holds the title AND three legend rows (about
                      # 20 px each): a narrow chart (a phone, a student's revealed chart beside the sidebar) stacks one
                      # model a row, and plotly grows the margin for the legend or the title, whichever is taller, never
                      # for both, so a margin sized for either alone let the legend's rows cover the title
                      margin=dict(l=10, r=10, t=100, b=10),
                      legend=dict(orientation="h", x=0, xanchor="left", y=1.0, yanchor="bottom"))
    return fig

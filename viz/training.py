"""Training curves: loss per step and validation metrics at evaluation steps; accuracy against sentence length."""
from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from viz.chart_data import ChartData, Series, with_data
from viz.words import Words


def history_frame(history: list[dict]) -> pd.DataFrame:
    """One row per step: step, loss, lr, elapsed_s and (on evaluation steps) val_* columns."""
    return pd.DataFrame(history)


def training_curves(history: list[dict], title: str | None = None, *, words: Words) -> go.Figure:
    frame = history_frame(history)
    fig = make_subplots(specs=[[{"secondary_y": True}]])
    lines = []

    def add(x, y, name: str, right: bool, **style) -> None:
        lines.append(Series("line", x, y, name))
        fig.add_trace(go.Scatter(x=x, y=y, name=name, **style), secondary_y=right)

    if not frame.empty:
        add(frame["step"], frame["loss"], words("train.curve_loss"), False, line=dict(width=1))
        if len(frame) >= 20:
            add(frame["step"], frame["loss"].rolling(20, min_periods=1).mean(), words("train.curve_loss_mean"), False)
        if "token_accuracy" in frame:
            add(frame["step"], frame["token_accuracy"].rolling(20, min_periods=1).mean(),
                words("train.curve_token_accuracy"), True, line=dict(dash="dash"))
        if "val_exact_match" in frame:
            val = frame.dropna(subset=["val_exact_match"])
            add(val["step"], val["val_exact_match"], words("train.curve_val_exact"), True, mode="lines+markers")
            add(val["step"], val["val_token_accuracy"], words("train.curve_val_tokens"), True, mode="lines+markers",
                line=dict(dash="dot"))
    fig.update_xaxes(title_text=words("train.axis_step"))
    fig.update_yaxes(title_text=words("train.axis_loss"), secondary_y=False)
    fig.update_yaxes(title_text=words("train.axis_accuracy"), range=[0, 1.02], secondary_y=True)
    title = title if title is not None else words("train.curves_default_title")
    fig.update_layout(title=title, height=380, legend=dict(orientation="h", y=-0.3),
                      margin=dict(l=10, r=10, t=50, b=10))
    return with_data(fig, ChartData(title, series=tuple(lines)))


def accuracy_by_length_chart(rows_by_model: dict[str, list[dict]], metric: str = "exact_match",
                             *, words: Words) -> go.Figure:
    """One line per model: metric ("exact_match" or "bleu") against the source-length bucket (words)."""
    # Only the words are translated; the %{...} placeholders are composed here, never passed through a template.
    hover = f"%{{x}} {words('compare.hover_words')}: %{{y:.3f}} (%{{customdata}} {words('compare.hover_sentences')})" \
            "<extra></extra>"
    fig = go.Figure()
    lines = []
    for name, rows in rows_by_model.items():
        lines.append(Series("line", [f"{r['min_words']}–{r['max_words']}" for r in rows], [r[metric] for r in rows],
                            name))
        fig.add_trace(go.Scatter(x=lines[-1].x, y=lines[-1].y, mode="lines+markers", name=name,
                                 customdata=[r["sentences"] for r in rows], hovertemplate=hover))
    title = words("compare.length_chart_title", metric=words(f"compare.metric_{metric}"))
    fig.update_layout(title=dict(text=title,
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
    return with_data(fig, ChartData(title, series=tuple(lines)))

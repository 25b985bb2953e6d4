"""Charts of model/explain/'s results: special-token survival, head importance, pruning curve, pattern grid.

Rows of every layers × heads chart are "<kind> L<layer>", columns "H<head>" (1-based, as on screen elsewhere).
Words come from i18n/<lang>/explain.toml (table "chart"), through the caller's `words` (viz/words.py).
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from model.explain.kinds import head_label
from viz.attention import html_escaped
from viz.chart_data import ChartData, Map, Series, with_data
from viz.words import Words

PATTERN_COLOURS = {"previous": "#1f77b4", "next": "#17becf", "self": "#2ca02c", "sink": "#d62728",
                   "first": "#8c564b", "alignment": "#ff7f0e", "induction": "#e377c2", "broad": "#bcbd22",
                   "block": "#9467bd"}
DIMMED = "#e5e5e5"


def head_names(layers: int, heads: int) -> list[str]:
    return [head_label(l, h) for l in range(layers) for h in range(heads)]


def survival_bars(weight_share: np.ndarray, norm_share: np.ndarray, title: str = "",
                  series_names: tuple[str, str] | None = None, *, words: Words) -> go.Figure:
    """weight_share, norm_share (L, h): per head, the share of α and of the norms N on special-token keys.
    series_names: the two bars' legend names (default: those of <bos>/<eos>), plain words: escaped here, so that a
    special token in them reads as itself, not as plotly markup ("weight α on /")."""
    names = head_names(*weight_share.shape)
    weight_name, norm_name = (html_escaped(name) for name in series_names or (
        words("explain.chart.weight_share"), words("explain.chart.norm_share")))
    fig = go.Figure([
        go.Bar(x=names, y=weight_share.ravel(), name=weight_name, marker_color="#1f77b4",
               hovertemplate="%{x}: %{y:.1%}<extra></extra>"),
        go.Bar(x=names, y=norm_share.ravel(), name=norm_name, marker_color="#ff7f0e",
               hovertemplate="%{x}: %{y:.1%}<extra></extra>"),
    ])
    fig.update_layout(title=title, barmode="group", height=320, margin=dict(l=10, r=10, t=50, b=10),
                      yaxis=dict(title=words("explain.chart.share_axis"), tickformat=".0%", rangemode="tozero"),
                      xaxis=dict(title=words("explain.chart.head_axis")), legend=dict(orientation="h", y=-0.3))
    return with_data(fig, ChartData(title or "", series=(Series("bar", names, weight_share.ravel(), weight_name),
                                                         Series("bar", names, norm_share.ravel(), norm_name))))


def layers_by_heads(values: np.ndarray, row_labels: list[str], title: str, value_name: str,
                    text: np.ndarray | None = None, colorscale: str = "Reds", zmid: float | None = None,
                    *, words: Words) -> go.Figure:
    """values (R, h): a heatmap with rows row_labels ("Encoder self L1", ...) and columns H1..Hh, numbers in cells."""
    values = np.asarray(values, dtype=float)
    columns = [f"H{h + 1}" for h in range(values.shape[1])]
    text = np.vectorize(lambda v: f"{v:+.3f}" if zmid is not None else f"{v:.3g}")(values) if text is None else text
    fig = go.Figure(go.Heatmap(z=values, x=columns, y=row_labels, text=text, texttemplate="%{text}",
                               colorscale=colorscale, zmid=zmid, colorbar=dict(title=value_name),
                               hovertemplate=f"%{{y}} %{{x}}<br>{value_name} %{{z:.4f}}<extra></extra>"))
    fig.update_layout(title=title, height=140 + 42 * len(row_labels), margin=dict(l=10, r=10, t=50, b=10),
                      xaxis=dict(title=words("explain.chart.head_axis"), type="category"),
                      yaxis=dict(title=words("explain.chart.layer_axis"), type="category", autorange="reversed"))
    return with_data(fig, ChartData(title or "", maps=(Map(values, tuple(map(str, row_labels)), tuple(columns),
                                                          row_title=words("explain.chart.layer_axis"),
                                                          column_title=words("explain.chart.head_axis")),)))


def importance_table(names: list[str], exact_match_drop: np.ndarray, loss_rise: np.ndarray,
                     gradient: np.ndarray, order: list[int], *, words: Words) -> pd.DataFrame:
    """One row per head, least important first (order), with its rank and the three importance numbers."""
    return pd.DataFrame({
        words("explain.chart.rank"): range(1, len(order) + 1),
        words("explain.chart.head"): [names[n] for n in order],
        words("explain.chart.exact_match_drop"): [float(exact_match_drop[n]) for n in order],
        words("explain.chart.loss_rise"): [float(loss_rise[n]) for n in order],
        words("explain.chart.gradient"): [float(gradient[n]) for n in order],
    })


def pruning_curve_chart(rows: list[dict], total_heads: int, title: str = "", measure: str = "exact_match",
                        measure_label: str | None = None, *, words: Words) -> go.Figure:
    """rows [{k, <measure>, loss?}]: quality after switching off the k least important heads. measure "exact_match"
    (translation models, with the loss in the hover) or e.g. "similarity" (an encoder's mean cosine similarity to
    its own embeddings with every head on); both are shares, 0..1. measure "loss" (a language model's next-token
    loss in nats) is drawn on its own scale, from 0."""
    ks = [r["k"] for r in rows]
    label = measure_label or words(f"explain.chart.{measure}")
    with_loss = measure != "loss" and all("loss" in r for r in rows)
    share = measure != "loss"
    hover = f"k = %{{x}}<br>{label} %{{y:{'.1%' if share else '.4f'}}}" + (
        f"<br>{words('explain.chart.loss')} %{{customdata:.4f}}" if with_loss else "") + "<extra></extra>"
    fig = go.Figure(go.Scatter(
        x=ks, y=[r[measure] for r in rows], mode="lines+markers", name=label,
        customdata=[r["loss"] for r in rows] if with_loss else None, hovertemplate=hover))
    fig.update_layout(title=title, height=360, margin=dict(l=10, r=10, t=50, b=10),
                      xaxis=dict(title=words("explain.chart.k_axis", total=total_heads),
                                 range=[-0.5, total_heads + 0.5], dtick=max(2, total_heads // 12)),
                      yaxis=dict(title=label, tickformat=".0%", range=[0, 1.02]) if share else
                      dict(title=label, rangemode="tozero"))
    return with_data(fig, ChartData(title or "", series=(Series("line", ks, [r[measure] for r in rows], label),)))


def encoder_importance_table(names: list[str], change: np.ndarray, gradient: np.ndarray, order: list[int],
                             change_label: str, gradient_label: str, *, words: Words) -> pd.DataFrame:
    """An encoder's heads, least important first (order indexes names/change/gradient, all flat)."""
    return pd.DataFrame({
        words("explain.chart.rank"): range(1, len(order) + 1),
        words("explain.chart.head"): [names[n] for n in order],
        change_label: [float(change[n]) for n in order],
        gradient_label: [float(gradient[n]) for n in order],
    })


def gradient_importance_table(names: list[str], gradient: np.ndarray, order: list[int],
                              gradient_label: str, *, words: Words) -> pd.DataFrame:
    """A language model's heads, least important first (order indexes the flat names/gradient)."""
    return pd.DataFrame({
        words("explain.chart.rank"): range(1, len(order) + 1),
        words("explain.chart.head"): [names[n] for n in order],
        gradient_label: [float(gradient[n]) for n in order],
    })


def pattern_grid(labels: np.ndarray, row_labels: list[str], title: str, shown: str | None = None,
                 *, words: Words) -> go.Figure:
    """labels (R, h) of pattern ids: each cell coloured and named by its label; with `shown`, other labels grey."""
    labels = np.asarray(labels, dtype=object)
    patterns = list(PATTERN_COLOURS)
    codes = np.vectorize(patterns.index)(labels).astype(float)
    colours = [PATTERN_COLOURS[p] if shown in (None, p) else DIMMED for p in patterns]
    scale = []
    for n, colour in enumerate(colours):  # one flat band of the colour scale per pattern
        scale += [[n / len(patterns), colour], [(n + 1) / len(patterns), colour]]
    names = np.vectorize(lambda p: words(f"explain.patterns.{p}"), otypes=[object])(labels)
    # 12 heads a row (BERT): a two-word label on two lines stays inside its cell
    written = np.vectorize(_two_lines, otypes=[object])(names) if labels.shape[1] > 8 else names
    columns = [f"H{h + 1}" for h in range(labels.shape[1])]
    fig = go.Figure(go.Heatmap(z=codes, x=columns, y=row_labels, text=written, texttemplate="%{text}",
                               colorscale=scale, zmin=-0.5, zmax=len(patterns) - 0.5, showscale=False,
                               xgap=2, ygap=2, hovertemplate="%{y} %{x}: %{text}<extra></extra>"))
    fig.update_layout(title=title, height=140 + 42 * len(row_labels), margin=dict(l=10, r=10, t=50, b=10),
                      xaxis=dict(title=words("explain.chart.head_axis"), type="category"),
                      yaxis=dict(title=words("explain.chart.layer_axis"), type="category", autorange="reversed"))
    # its cells are patterns, named in them (a code's number only picks the colour): the CSV and the words name them
    return with_data(fig, ChartData(title or "", maps=(Map(codes, tuple(map(str, row_labels)), tuple(columns),
                                                          row_title=words("explain.chart.layer_axis"),
                                                          column_title=words("explain.chart.head_axis"),
                                                          cell_names=names),)))


def _two_lines(label: str) -> str:
    """'special-token sink' -> 'special-token<br>sink': split at the space nearest the middle (none: unchanged)."""
    spaces = [i for i, ch in enumerate(label) if ch == " "]
    if not spaces:
        return label
    cut = min(spaces, key=lambda i: abs(i - len(label) / 2))
    return f"{label[:cut]}<br>{label[cut + 1:]}"

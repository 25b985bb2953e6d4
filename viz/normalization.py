"""Normalization charts: the (batch × time × feature) tensor with pooled cells outlined, statistics, before/after.

Layout convention: one small heatmap per sequence, rows are positions (tokens), columns are features.
Padding is drawn grey and never carries a value. Values are activations, which have no physical unit: axes and
colour bars say "activation" (input) or "standard deviations from the mean" (output, which is what a
normalised value measures). Every word shown comes from i18n/<lang>/normalization.toml, through the caller's
`words` (viz/words.py).
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from viz.chart_data import ChartData, Map, Series, numbered_labels, with_data
from viz.words import Words

DIVERGING = "RdBu_r"
PAD_GREY = "#d9d9d9"
HIGHLIGHT = "#111111"
COLLAPSED = "#d62728"


def norm_kind_label(kind: str, *, words: Words) -> str:
    """The reader's name for a normalisation kind ("layer" -> "LayerNorm")."""
    return words(f"normalization.kind_label.{kind}")


def _word(words: Words, name: str, **values: object) -> str:
    return words(f"normalization.chart.{name}", **values)


def _bound(values: np.ndarray) -> float:
    finite = values[np.isfinite(values)]
    return float(np.abs(finite).max()) if finite.size and np.abs(finite).max() > 0 else 1.0


def _runs(column: np.ndarray) -> list[tuple[int, int]]:
    """Contiguous True runs of a 1-D boolean array as (first, last) index pairs."""
    runs, start = [], None
    for i, on in enumerate(list(column) + [False]):
        if on and start is None:
            start = i
        elif not on and start is not None:
            runs.append((start, i - 1))
            start = None
    return runs


def _outline_rectangles(cells: np.ndarray) -> list[tuple[int, int, int, int]]:
    """(T, d) boolean -> rectangles (row0, row1, col0, col1) covering the True cells, adjacent equal columns merged."""
    rectangles, open_runs = [], {}  # run -> first column it appeared in
    for col in range(cells.shape[1] + 1):
        runs = set(_runs(cells[:, col])) if col < cells.shape[1] else set()
        for run in list(open_runs):
            if run not in runs:
                rectangles.append((run[0], run[1], open_runs.pop(run), col - 1))
        for run in runs:
            open_runs.setdefault(run, col)
    return rectangles


def tensor_grid(x: np.ndarray, mask: np.ndarray, highlight: np.ndarray | None = None, title: str = "",
                value_name: str | None = None, zmax: float | None = None, *, words: Words) -> go.Figure:
    """x (B, T, d) as B small heatmaps (rows: positions, columns: features); mask (B, T) True for real tokens.

    highlight (B, T, d) boolean: the cells pooled into one statistic, outlined in black on every sequence.
    """
    x = np.asarray(x, dtype=float)
    mask = np.asarray(mask, dtype=bool)
    value_name = value_name or _word(words, "activation")
    sequence, position, feature = _word(words, "sequence"), _word(words, "position"), _word(words, "feature")
    batch, length, d = x.shape
    cols = min(batch, 4)
    rows = math.ceil(batch / cols)
    fig = make_subplots(rows=rows, cols=cols, subplot_titles=[_word(words, "sequence_title", sequence=b + 1,
                                                                    length=int(mask[b].sum())) for b in range(batch)],
                        horizontal_spacing=0.04, vertical_spacing=0.12 if rows > 1 else 0.08)
    bound = zmax if zmax is not None else _bound(x[mask])
    maps = []
    for b in range(batch):
        row, col = b // cols + 1, b % cols + 1
        z = np.where(mask[b][:, None], x[b], np.nan)  # (T, d)
        maps.append(Map(z, numbered_labels(length, 1), numbered_labels(d, 1),
                        row_title=_word(words, "position_token") if col == 1 else "",
                        column_title=feature if row == rows else ""))
        positions, features = np.meshgrid(np.arange(1, length + 1), np.arange(1, d + 1), indexing="ij")
        custom = np.stack([positions, features], axis=-1)  # (T, d, 2)
        fig.add_trace(go.Heatmap(
            z=z, x=list(range(1, d + 1)), y=list(range(1, length + 1)), customdata=custom, coloraxis="coloraxis",
            hoverongaps=False, hovertemplate=f"{sequence} {b + 1}, {position} %{{customdata[0]}}, {feature} "
                                             f"%{{customdata[1]}}<br>{value_name} %{{z:.4f}}<extra></extra>"),
            row=row, col=col)
        if not mask[b].all():
            grey = np.where(mask[b][:, None], np.nan, 1.0) * np.ones((1, d))  # (T, d)
            fig.add_trace(go.Heatmap(
                z=grey, x=list(range(1, d + 1)), y=list(range(1, length + 1)), customdata=custom, showscale=False,
                colorscale=[[0, PAD_GREY], [1, PAD_GREY]], hoverongaps=False,
                hovertemplate=f"{sequence} {b + 1}, {position} %{{customdata[0]}}: {_word(words, 'padding_hover')}"
                              "<extra></extra>"), row=row, col=col)
        if highlight is not None:
            index = b + 1
            suffix = "" if index == 1 else str(index)
            for r0, r1, c0, c1 in _outline_rectangles(np.asarray(highlight[b], dtype=bool)):
                fig.add_shape(type="rect", xref=f"x{suffix}", yref=f"y{suffix}", x0=c0 + 0.5, x1=c1 + 1.5,
                              y0=r0 + 0.5, y1=r1 + 1.5, line=dict(color=HIGHLIGHT, width=3))
        fig.update_xaxes(title_text=feature if row == rows else None, dtick=1 if d <= 16 else None, row=row, col=col)
        fig.update_yaxes(title_text=_word(words, "position_token") if col == 1 else None, autorange="reversed",
                         dtick=1 if length <= 16 else None, row=row, col=col)
    fig.update_layout(title=title, height=min(900, rows * (110 + 26 * length) + 80),
                      margin=dict(l=10, r=10, t=70, b=10),
                      coloraxis=dict(colorscale=DIVERGING, cmin=-bound, cmax=bound, cmid=0,
                                     colorbar=dict(title=value_name)))
    return with_data(fig, ChartData(title or "", maps=tuple(maps)))


def _statistic_heatmap(fig: go.Figure, values: np.ndarray, count: np.ndarray, col: int, x_label: str,
                       y_label: str, name: str, colorbar_x: float, is_variance: bool, *, words: Words) -> Map:
    """values, count (rows, cols); cells that pooled nothing are blank; zero variances are marked with a red 0.
    -> the map drawn."""
    rows, cols = values.shape
    drawn = np.where(count >= 1, values, np.nan)
    fig.add_trace(go.Heatmap(
        z=drawn, x=list(range(1, cols + 1)), y=list(range(1, rows + 1)),
        customdata=count, hoverongaps=False, colorbar=dict(title=name, x=colorbar_x),
        colorscale="Oranges" if is_variance else DIVERGING, zmin=0 if is_variance else None,
        zmid=None if is_variance else 0,
        hovertemplate=f"{y_label} %{{y}}, {x_label} %{{x}}<br>{name} %{{z:.4f}}<br>{_word(words, 'pooled_values')} "
                      "%{customdata}<extra></extra>"), row=1, col=col)
    collapsed = (count >= 1) & (values == 0) if is_variance else np.zeros(values.shape, dtype=bool)
    if collapsed.any():
        r, c = np.nonzero(collapsed)
        fig.add_trace(go.Scatter(x=c + 1, y=r + 1, mode="text", text=["0"] * len(r), showlegend=False,
                                 textfont=dict(color=COLLAPSED, size=14),
                                 hovertemplate=_word(words, "zero_variance") + "<extra></extra>"),
                      row=1, col=col)
    fig.update_xaxes(title_text=x_label, row=1, col=col)
    # The right map has the left one's rows: its own row labels and title would sit against the left colour bar.
    fig.update_yaxes(title_text=y_label if col == 1 else None, showticklabels=col == 1, autorange="reversed",
                     row=1, col=col)
    return Map(drawn, numbered_labels(rows, 1), numbered_labels(cols, 1), row_title=y_label if col == 1 else "",
               column_title=x_label)


def statistics_chart(mean: np.ndarray, var: np.ndarray, count: np.ndarray, kind: str, title: str = "",
                     *, words: Words) -> go.Figure:
    """Mean and variance side by side, in the shape the statistic has for `kind`.

    layer: (B, T) heatmaps, one value per token; batch: (d,) bars, one per feature; batch_per_step: (T, d) heatmaps.
    Variances of exactly 0 pooled from real values (one value only) are drawn red / marked "0".
    """
    mean, var, count = (np.asarray(a) for a in (mean, var, count))
    mean_word, variance_word, feature = _word(words, "mean"), _word(words, "variance"), _word(words, "feature")
    fig = make_subplots(rows=1, cols=2, subplot_titles=[mean_word, variance_word], horizontal_spacing=0.14)
    if kind == "batch":
        features = list(range(1, len(mean) + 1))
        collapsed = (count >= 1) & (var == 0)
        pooled = f"<br>{_word(words, 'pooled_tokens')} %{{customdata}}<extra></extra>"
        fig.add_trace(go.Bar(x=features, y=mean, name=mean_word, customdata=count, marker_color="#1f77b4",
                             hovertemplate=f"{feature} %{{x}}<br>{mean_word} %{{y:.4f}}" + pooled), row=1, col=1)
        fig.add_trace(go.Bar(x=features, y=var, name=variance_word, customdata=count,
                             marker_color=np.where(collapsed, COLLAPSED, "#ff7f0e").tolist(),
                             hovertemplate=f"{feature} %{{x}}<br>{variance_word} %{{y:.4f}}" + pooled), row=1, col=2)
        fig.update_xaxes(title_text=feature, dtick=1 if len(features) <= 16 else None)
        fig.update_yaxes(title_text=_word(words, "mean_axis"), row=1, col=1)
        fig.update_yaxes(title_text=_word(words, "variance_axis"), row=1, col=2)
        fig.update_layout(showlegend=False)
        height = 340
        data = ChartData(title or "", series=(Series("bar", features, mean, mean_word),
                                              Series("bar", features, var, variance_word)))
    else:
        x_label, y_label = ((_word(words, "position"), _word(words, "sequence")) if kind == "layer"
                            else (feature, _word(words, "position")))
        maps = (_statistic_heatmap(fig, mean, count, 1, x_label, y_label, _word(words, "mean_axis"), 0.43,
                                   is_variance=False, words=words),
                _statistic_heatmap(fig, var, count, 2, x_label, y_label, _word(words, "variance_axis"), 1.0,
                                   is_variance=True, words=words))
        height = min(700, 160 + 26 * mean.shape[0])
        data = ChartData(title or "", maps=maps)
    fig.update_layout(title=title, height=height, margin=dict(l=10, r=10, t=70, b=10))
    return with_data(fig, data)


def before_after_chart(x: np.ndarray, output: np.ndarray, mask: np.ndarray, title: str = "",
                       *, words: Words) -> go.Figure:
    """Every real token as a row (padding dropped), features as columns: the input left, the normalised output right."""
    x, output = np.asarray(x, dtype=float), np.asarray(output, dtype=float)
    mask = np.asarray(mask, dtype=bool)
    seq, pos = np.nonzero(mask)  # real tokens in order
    labels = [f"s{b + 1}·t{t + 1}" for b, t in zip(seq, pos)]
    before, after = x[mask], output[mask]  # (N_real, d)
    d = x.shape[-1]
    rows = list(range(len(labels)))
    fig = make_subplots(rows=1, cols=2, subplot_titles=[_word(words, "before"), _word(words, "after")],
                        horizontal_spacing=0.16)
    token, feature = _word(words, "token"), _word(words, "feature")
    maps = tuple(Map(values, tuple(labels), numbered_labels(d, 1), row_title=_word(words, "real_token") if col == 1
                     else "", column_title=feature) for col, values in enumerate((before, after), start=1))
    for col, (values, name, axis) in enumerate([(before, _word(words, "activation"), "coloraxis"),
                                                (after, _word(words, "std_devs"), "coloraxis2")], start=1):
        fig.add_trace(go.Heatmap(z=values, x=list(range(1, d + 1)), y=rows, coloraxis=axis,
                                 customdata=np.array(labels, dtype=object)[:, None].repeat(d, axis=1),
                                 hovertemplate=f"{token} %{{customdata}}, {feature} %{{x}}<br>{name} %{{z:.4f}}"
                                               "<extra></extra>"), row=1, col=col)
        fig.update_xaxes(title_text=feature, dtick=1 if d <= 16 else None, row=1, col=col)
        # the right map has the same rows: labelled once, so nothing sits against the left colour bar
        fig.update_yaxes(title_text=_word(words, "real_token") if col == 1 else None, showticklabels=col == 1,
                         autorange="reversed", tickmode="array", tickvals=rows, ticktext=labels, row=1, col=col)
    bound_before, bound_after = _bound(before), _bound(after)
    fig.update_layout(
        title=title, height=min(900, 140 + 22 * len(labels)), margin=dict(l=10, r=10, t=70, b=10),
        coloraxis=dict(colorscale=DIVERGING, cmin=-bound_before, cmax=bound_before,
                       colorbar=dict(title=_word(words, "activation"), x=0.42)),
        coloraxis2=dict(colorscale=DIVERGING, cmin=-bound_after, cmax=bound_after,
                        colorbar=dict(title=_word(words, "std_devs_short"), x=1.0)))
    return with_data(fig, ChartData(title or "", maps=maps))


def _column(words: Words, name: str, **values: object) -> str:
    return words(f"normalization.table.{name}", **values)


def comparison_table(demos: dict, *, words: Words) -> pd.DataFrame:
    """One row per normalisation kind (a dict kind -> model.foundations.normalization.NormalizationDemo) for the
    same batch."""
    rows = []
    for kind, demo in demos.items():
        real = demo.count[demo.count >= 1]
        rows.append({
            _column(words, "kind"): norm_kind_label(kind, words=words),
            _column(words, "statistics"): int(real.size),
            _column(words, "min_values"): int(real.min()),
            _column(words, "zero_variance"): int(demo.collapsed.sum()),
            _column(words, "zeroed"): f"{demo.zeroed_fraction:.0%}",
            _column(words, "torch"): (_column(words, "agrees", diff=f"{demo.torch_max_abs_diff:.1e}")
                                      if demo.torch_error is None
                                      else _column(words, "refuses", error=demo.torch_error)),
        })
    return pd.DataFrame(rows)


def cells_table(x: np.ndarray, output: np.ndarray, mask: np.ndarray, highlight: np.ndarray | None = None,
                *, words: Words) -> pd.DataFrame:
    """Every real value as a row (sequence, position, feature, input, normalised, in the outlined statistic).

    x, output, highlight (B, T, d); mask (B, T). Padding is left out, as it is left out of every statistic.
    """
    x, output = np.asarray(x, dtype=float), np.asarray(output, dtype=float)
    real = np.broadcast_to(np.asarray(mask, dtype=bool)[..., None], x.shape)  # (B, T, d)
    b, t, f = np.nonzero(real)
    frame = {_column(words, "sequence"): b + 1, _column(words, "position"): t + 1, _column(words, "feature"): f + 1,
             _column(words, "input"): x[real], _column(words, "output"): output[real]}
    if highlight is not None:
        frame[_column(words, "outlined")] = np.asarray(highlight, dtype=bool)[real]
    return pd.DataFrame(frame)


def statistics_table(mean: np.ndarray, var: np.ndarray, count: np.ndarray, kind: str, *, words: Words) -> pd.DataFrame:
    """One row per statistic that pooled at least one real value, indexed as statistics_chart draws them."""
    mean, var, count = (np.asarray(a) for a in (mean, var, count))
    axes = {"layer": ("sequence", "position"), "batch": ("feature",), "batch_per_step": ("position", "feature")}[kind]
    where = np.nonzero(count >= 1)
    frame = {_column(words, axis): index + 1 for axis, index in zip(axes, where)}
    frame |= {_column(words, "mean"): mean[where], _column(words, "variance"): var[where],
              _column(words, "count"): count[where]}
    return pd.DataFrame(frame)

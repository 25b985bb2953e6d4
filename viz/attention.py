"""Attention charts: heatmaps (one head, a grid of heads, a difference), BertViz-style lines, bars.

Convention: rows are queries (what is attending), columns are keys (what is attended to).
Token text goes through `html_escaped()` so that nothing a user typed is interpreted by plotly's HTML subset,
and positions (not text) are the axis values so repeated tokens stay separate rows/columns. Words come from
tr() (i18n/<lang>/attention.toml, table "chart"); hover templates are composed here, never .format()-ed.
"""
from __future__ import annotations

import html

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from i18n import tr

SEQUENTIAL = "Blues"
LINE_BANDS = 8  # width/opacity levels in the lines view
DIVERGING = "RdBu_r"
BLOCK_FRAME = "#d55e00"  # Okabe–Ito vermillion: seen on every shade of Blues and of presenter mode's Cividis


def html_escaped(token: str) -> str:
    """Token text safe for plotly (which renders a small HTML subset in labels)."""
    return html.escape(token, quote=True)


def _ticks(tokens: list[str]) -> dict:
    return dict(tickmode="array", tickvals=list(range(len(tokens))), ticktext=[html_escaped(t) for t in tokens])


def _hover(query_tokens: list[str], key_tokens: list[str]) -> np.ndarray:
    q = np.array([html_escaped(t) for t in query_tokens], dtype=object)[:, None]
    k = np.array([html_escaped(t) for t in key_tokens], dtype=object)[None, :]
    return np.stack(np.broadcast_arrays(q, k), axis=-1)


def _pair_hover() -> str:
    """'query %{customdata[0]} → key %{customdata[1]}' in the reader's language (plotly fills the tokens in)."""
    return f"{tr('attention.chart.query')} %{{customdata[0]}} → {tr('attention.chart.key')} %{{customdata[1]}}"


def attention_heatmap(weights: np.ndarray, query_tokens: list[str], key_tokens: list[str], title: str = "",
                      masked: np.ndarray | None = None, zmax: float | None = 1.0, colorscale: str = SEQUENTIAL,
                      value_name: str | None = None, height: int | None = None,
                      block: tuple[int, int] | None = None) -> go.Figure:
    """weights (T_q, T_k); masked (T_q, T_k) True where the key was hidden from the query (drawn grey);
    block (first, end): framed, the rows from `end` on over the key columns first..end-1 (a decoder-only
    translator's French rows over its English words: what an encoder-decoder's cross-attention holds)."""
    value_name = value_name or tr("attention.chart.weight")
    weights = np.asarray(weights, dtype=float)
    z = weights.copy()
    if masked is not None:
        z[masked] = np.nan
    fig = go.Figure(go.Heatmap(
        z=z, x=list(range(len(key_tokens))), y=list(range(len(query_tokens))), customdata=_hover(query_tokens, key_tokens),
        colorscale=colorscale, zmin=0 if zmax is not None and colorscale == SEQUENTIAL else None, zmax=zmax,
        colorbar=dict(title=value_name), hoverongaps=False,
        hovertemplate=f"{_pair_hover()}<br>{value_name} %{{z:.4f}}<extra></extra>",
    ))
    if masked is not None and masked.any():
        grey = np.where(masked, 1.0, np.nan)
        fig.add_trace(go.Heatmap(
            z=grey, x=list(range(len(key_tokens))), y=list(range(len(query_tokens))),
            customdata=_hover(query_tokens, key_tokens), colorscale=[[0, "#d9d9d9"], [1, "#d9d9d9"]], showscale=False,
            hoverongaps=False, hovertemplate=f"{_pair_hover()}<br>{tr('attention.chart.masked')}<extra></extra>"))
    if block is not None:
        first, end = block  # cell (row i, column j) spans i ± 0.5, j ± 0.5
        fig.add_shape(type="rect", x0=first - 0.5, x1=end - 0.5, y0=end - 0.5, y1=len(query_tokens) - 0.5,
                      line=dict(color=BLOCK_FRAME, width=2, dash="dash"), fillcolor="rgba(0,0,0,0)")
    size = max(len(query_tokens), len(key_tokens))
    fig.update_layout(title=title, height=height or min(700, max(260, 160 + 28 * size)), margin=dict(l=10, r=10, t=50, b=10),
                      xaxis=dict(title=tr("attention.chart.keys_axis"), side="bottom", **_ticks(key_tokens)),
                      yaxis=dict(title=tr("attention.chart.queries_axis"), autorange="reversed",
                                 **_ticks(query_tokens)))
    return fig


def difference_heatmap(a: np.ndarray, b: np.ndarray, query_tokens, key_tokens, title: str = "") -> go.Figure:
    """a − b on a diverging scale centred on 0."""
    diff = np.asarray(a, dtype=float) - np.asarray(b, dtype=float)
    bound = float(np.nanmax(np.abs(diff))) or 1.0
    fig = attention_heatmap(diff, query_tokens, key_tokens, title, zmax=bound, colorscale=DIVERGING,
                            value_name="A − B")
    fig.update_traces(zmin=-bound, zmid=0, selector=dict(type="heatmap"))
    return fig


def head_grid(weights: np.ndarray, query_tokens, key_tokens, title: str = "", selected: tuple[int, int] | None = None,
              masked: np.ndarray | None = None, labels=None) -> go.Figure:
    """weights (L, h, T_q, T_k) as an L × h grid of small heatmaps (rows: layers, columns: heads).

    Each small map's axes carry the tokens (labels hidden, too small to read) so its CSV export names them.
    labels: (L, h) short names of each head's pattern (model.explain.patterns.label_heads), appended to its title."""
    layers, heads = weights.shape[:2]
    titles = [f"L{l + 1} H{h + 1}" + (f" · {labels[l][h]}" if labels is not None else "")
              for l in range(layers) for h in range(heads)]
    height = max(260, 170 * layers + 60)
    # room between rows for a row's subplot titles (about 30 px), which sat on the thumbnails above them
    fig = make_subplots(rows=layers, cols=heads, horizontal_spacing=0.02,
                        vertical_spacing=min(0.3, max(0.04, 30 / (height - 70))),
                        subplot_titles=titles)
    hover = _hover(query_tokens, key_tokens)
    pair, weight = _pair_hover(), tr("attention.chart.weight")
    xs, ys = list(range(len(key_tokens))), list(range(len(query_tokens)))
    for l in range(layers):
        for h in range(heads):
            z = np.asarray(weights[l, h], dtype=float).copy()
            if masked is not None:
                z[masked] = np.nan
            fig.add_trace(go.Heatmap(
                z=z, x=xs, y=ys, customdata=hover, coloraxis="coloraxis", hoverongaps=False,
                name=f"L{l + 1} H{h + 1}",
                hovertemplate=f"{tr('attention.chart.layer_head', layer=l + 1, head=h + 1)}<br>{pair}"
                              f"<br>{weight} %{{z:.4f}}<extra></extra>"), row=l + 1, col=h + 1)
            # fixed ranges: the click targets' markers (below) would otherwise pad the axes past the cells
            fig.update_xaxes(showticklabels=False, range=[-0.5, len(key_tokens) - 0.5], row=l + 1, col=h + 1,
                             **_ticks(key_tokens))
            fig.update_yaxes(showticklabels=False, range=[len(query_tokens) - 0.5, -0.5], row=l + 1, col=h + 1,
                             **_ticks(query_tokens))
    _add_click_targets(fig, weights, query_tokens, key_tokens)
    if selected is not None:
        l, h = selected
        index = l * heads + h + 1
        suffix = "" if index == 1 else str(index)
        fig.add_shape(type="rect", xref=f"x{suffix} domain", yref=f"y{suffix} domain", x0=0, y0=0, x1=1, y1=1,
                      line=dict(color="#d62728", width=3))
    if labels is not None and heads > 8:  # 12 thumbnails a row: the longer titles in a smaller font
        fig.update_annotations(font_size=11)
    fig.update_layout(title=title, coloraxis=dict(colorscale=SEQUENTIAL, cmin=0, cmax=1, colorbar=dict(title=weight)),
                      height=height, margin=dict(l=10, r=10, t=60, b=10))
    return fig


CLICK_TARGETS = "click_targets"  # the `meta` of the grid's invisible scatter traces: controls, not data
CLICK_TARGETS_MAX = 5000  # invisible markers in the whole grid (each is an SVG element in the browser)


def _blocks(length: int, count: int) -> list[np.ndarray]:
    return np.array_split(np.arange(length), min(count, length))


def _block_name(tokens: list[str], block: np.ndarray) -> str:
    first, last = html_escaped(tokens[block[0]]), html_escaped(tokens[block[-1]])
    return first if len(block) == 1 else f"{first}…{last}"


def _add_click_targets(fig: go.Figure, weights: np.ndarray, query_tokens, key_tokens) -> None:
    """An invisible scatter trace over each thumbnail, so that a click on it selects one of its points.

    Streamlit's plotly selection (st.plotly_chart on_select) reports points of scatter traces, never heatmap cells
    (streamlit issue #8760, plotly.js has no click data for heatmaps). Each point carries its head as
    customdata[3:5] (layer, head, 0-based). One marker per cell while the whole grid stays under CLICK_TARGETS_MAX
    markers; a bigger grid gets one marker per block of cells, its hover naming the block ("first…last") and its
    mean weight. The markers win plotly's hover over the heatmap (a point under the cursor is nearer than a cell),
    so they carry the same "query … → key …" hover.
    """
    layers, heads, rows, cols = weights.shape
    side = max(2, int((CLICK_TARGETS_MAX / (layers * heads)) ** 0.5))  # markers a side per thumbnail
    row_blocks, col_blocks = _blocks(rows, side), _blocks(cols, side)
    ys = np.array([block.mean() for block in row_blocks])
    xs = np.array([block.mean() for block in col_blocks])
    grid_y, grid_x = (a.ravel() for a in np.meshgrid(ys, xs, indexing="ij"))
    names = [(_block_name(query_tokens, r), _block_name(key_tokens, c)) for r in row_blocks for c in col_blocks]
    # thumbnail height in px (figure height less margins, split among the rows) / blocks: the marker's size
    height = fig.layout.height or max(260, 170 * layers + 60)
    size = max(6, int((height - 70) / layers * 0.9 / len(row_blocks)))
    pair, weight = _pair_hover(), tr("attention.chart.weight")
    for l in range(layers):
        for h in range(heads):
            z = np.nan_to_num(np.asarray(weights[l, h], dtype=float))
            means = [float(z[np.ix_(r, c)].mean()) for r in row_blocks for c in col_blocks]
            data = np.array([[q, k, m, l, h] for (q, k), m in zip(names, means)], dtype=object)
            fig.add_trace(go.Scatter(
                x=grid_x, y=grid_y, mode="markers", customdata=data, meta=CLICK_TARGETS, showlegend=False,
                marker=dict(symbol="square", size=size, color="rgba(0,0,0,0)"),
                selected=dict(marker=dict(opacity=0)), unselected=dict(marker=dict(opacity=0)),
                name=f"L{l + 1} H{h + 1}",
                hovertemplate=f"{tr('attention.chart.layer_head', layer=l + 1, head=h + 1)}<br>{pair}"
                              f"<br>{weight} %{{customdata[2]:.4f}}<extra></extra>"), row=l + 1, col=h + 1)


def grid_head(point: dict) -> tuple[int, int] | None:
    """(layer, head), 0-based, of a point Streamlit reports selected in head_grid's figure; None for anything else."""
    data = point.get("customdata")
    if not isinstance(data, (list, tuple)) or len(data) != 5:
        return None
    return int(data[3]), int(data[4])


def attention_lines(weights: np.ndarray, query_tokens: list[str], key_tokens: list[str], title: str = "",
                    threshold: float = 0.02) -> go.Figure:
    """Queries on the left, keys on the right; a line per pair, its width and opacity the weight (BertViz style)."""
    weights = np.asarray(weights, dtype=float)
    fig = go.Figure()
    # One trace per band of weights (not one per line): a 20-token sentence would otherwise send 400 traces to
    # the browser on every rerun. Lines in a band share width and opacity; hover still names each pair.
    bands = np.linspace(threshold, 1.0, LINE_BANDS + 1)
    for low, high in zip(bands[:-1], bands[1:]):
        in_band = (weights >= low) & ((weights < high) | (high == 1.0))
        if not in_band.any():
            continue
        xs, ys, texts = [], [], []
        for i, j in zip(*np.nonzero(in_band)):
            text = f"{html_escaped(query_tokens[i])} → {html_escaped(key_tokens[j])}: {weights[i, j]:.4f}"
            xs += [0, 1, None]
            ys += [i, j, None]
            texts += [text, text, None]
        middle = (low + high) / 2
        fig.add_trace(go.Scatter(x=xs, y=ys, mode="lines", line=dict(width=1 + 8 * middle, color="#1f77b4"),
                                 opacity=0.15 + 0.85 * middle, hoverinfo="text", text=texts, showlegend=False,
                                 name=tr("attention.chart.band", low=f"{low:.2f}", high=f"{high:.2f}")))
    fig.add_trace(go.Scatter(x=[0] * len(query_tokens), y=list(range(len(query_tokens))), mode="text",
                             text=[html_escaped(t) for t in query_tokens], textposition="middle left", showlegend=False,
                             hoverinfo="skip"))
    fig.add_trace(go.Scatter(x=[1] * len(key_tokens), y=list(range(len(key_tokens))), mode="text",
                             text=[html_escaped(t) for t in key_tokens], textposition="middle right", showlegend=False,
                             hoverinfo="skip"))
    rows = max(len(query_tokens), len(key_tokens))
    fig.update_layout(title=title, height=min(900, 120 + 26 * rows), margin=dict(l=10, r=10, t=50, b=10),
                      xaxis=dict(range=[-0.6, 1.6], showticklabels=False, showgrid=False, zeroline=False,
                                 title=tr("attention.chart.lines_axis")),
                      yaxis=dict(autorange="reversed", showticklabels=False, showgrid=False, zeroline=False))
    return fig


def probability_bars(tokens: list[str], probabilities: list[float], title: str = "") -> go.Figure:
    """Horizontal bars of candidate tokens and their probabilities (highest on top)."""
    fig = go.Figure(go.Bar(x=probabilities, y=[html_escaped(t) for t in tokens], orientation="h",
                           text=[f"{p:.1%}" for p in probabilities], textposition="auto",
                           hovertemplate="%{y}: %{x:.4f}<extra></extra>"))
    fig.update_layout(title=title, height=120 + 30 * len(tokens), margin=dict(l=10, r=10, t=50, b=10),
                      xaxis=dict(title=tr("attention.chart.probability"), range=[0, 1], tickformat=".0%"),
                      yaxis=dict(autorange="reversed", title=tr("attention.chart.next_token")))
    return fig


def head_statistics_table(stats: dict[str, np.ndarray], average_heads: bool = False) -> pd.DataFrame:
    """stats values (L, h) -> a long table with layer, head and one column per statistic (names translated)."""
    names = {name: tr(f"attention.stats.{name}") for name in stats}
    layer, head = tr("attention.stats.layer"), tr("attention.stats.head")
    layers, heads = next(iter(stats.values())).shape
    rows = [{layer: l + 1, head: h + 1, **{names[k]: float(v[l, h]) for k, v in stats.items()}}
            for l in range(layers) for h in range(heads)]
    table = pd.DataFrame(rows)
    if average_heads:
        table = table.drop(columns=head).groupby(layer, as_index=False).mean()
    return table


def csv_safe(text: str) -> str:
    """A cell that a spreadsheet will not run as a formula (=, +, -, @ at the start)."""
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text


def attention_table(weights: np.ndarray, query_tokens: list[str], key_tokens: list[str]) -> pd.DataFrame:
    """weights (T_q, T_k) as a table: rows 'i: query token', columns 'j: key token' (positions keep repeats apart)."""
    return pd.DataFrame(np.asarray(weights, dtype=float),
                        index=[csv_safe(f"{i}: {t}") for i, t in enumerate(query_tokens)],
                        columns=[csv_safe(f"{j}: {t}") for j, t in enumerate(key_tokens)]).rename_axis(
                            tr("attention.chart.table_axis"))

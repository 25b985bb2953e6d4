"""Attention charts: heatmaps (one head, a grid of heads, a difference), BertViz-style lines, bars.

Convention: rows are queries (what is attending), columns are keys (what is attended to).
Token text goes through `html_escaped()` so that nothing a user typed is interpreted by plotly's HTML subset,
and positions (not text) are the axis values so repeated tokens stay separate rows/columns. Words come from
i18n/<lang>/attention.toml (table "chart"), through the caller's `words` (viz/words.py); hover templates are composed
here, never .format()-ed.
"""
from __future__ import annotations

import html

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from viz.chart_data import ChartData, Map, Series, with_data
from viz.words import Words

SEQUENTIAL = "Blues"
LINE_BANDS = 8  # width/opacity levels in the lines view
DIVERGING = "RdBu_r"
BLOCK_FRAME = "#d55e00"  # Okabe–Ito vermillion: seen on every shade of Blues and of presenter mode's Cividis
# A heatmap of more cells than this (a 128-token text) names its cells' tokens by position in the hover, and sends its
# weights as float32: the two tokens of each of a 512-token map's 262,144 cells would be most of its JSON, and
# serialising that holds the replica's page slot for the other students.
TOKEN_HOVER_CELLS = 128 * 128


def html_escaped(token: str) -> str:
    """Token text safe for plotly (which renders a small HTML subset in labels): &, < and > escaped.

    Quotes are left as they are: without a "<" no tag, and so no attribute, can start, and plotly decodes only a few
    named entities (not &quot;), so an escaped quote showed as &quot; in a lens cell or a title."""
    return html.escape(token, quote=False)


def _ticks(tokens: list[str]) -> dict:
    return dict(tickmode="array", tickvals=list(range(len(tokens))), ticktext=[html_escaped(t) for t in tokens])


def _hover(query_tokens: list[str], key_tokens: list[str]) -> np.ndarray:
    q = np.array([html_escaped(t) for t in query_tokens], dtype=object)[:, None]
    k = np.array([html_escaped(t) for t in key_tokens], dtype=object)[None, :]
    return np.stack(np.broadcast_arrays(q, k), axis=-1)


def _pair_hover(words: Words) -> str:
    """'query %{customdata[0]} → key %{customdata[1]}' in the reader's language (plotly fills the tokens in)."""
    return f"{words('attention.chart.query')} %{{customdata[0]}} → {words('attention.chart.key')} %{{customdata[1]}}"


def attention_heatmap(weights: np.ndarray, query_tokens: list[str], key_tokens: list[str], title: str = "",
                      masked: np.ndarray | None = None, zmax: float | None = 1.0, colorscale: str = SEQUENTIAL,
                      value_name: str | None = None, height: int | None = None,
                      block: tuple[int, int] | None = None, rows_title: str | None = None,
                      *, words: Words) -> go.Figure:
    """weights (T_q, T_k); masked (T_q, T_k) True where the key was hidden from the query (drawn grey);
    block (first, end): framed, the rows from `end` on over the key columns first..end-1 (a decoder-only
    translator's French rows over its English words: what an encoder-decoder's cross-attention holds);
    rows_title: what the rows are when they are not queries (one query's row per head: "heads")."""
    value_name = value_name or words("attention.chart.weight")
    large = len(query_tokens) * len(key_tokens) > TOKEN_HOVER_CELLS
    weights = np.asarray(weights, dtype=np.float32 if large else float)
    z = weights.copy()
    if masked is not None:
        z[masked] = np.nan
    if large:  # the positions, which the axes' tick labels name
        hover, pair = None, f"{words('attention.chart.query')} %{{y}} → {words('attention.chart.key')} %{{x}}"
    else:
        hover, pair = _hover(query_tokens, key_tokens), _pair_hover(words)
    fig = go.Figure(go.Heatmap(
        z=z, x=list(range(len(key_tokens))), y=list(range(len(query_tokens))), customdata=hover,
        colorscale=colorscale, zmin=0 if zmax is not None and colorscale == SEQUENTIAL else None, zmax=zmax,
        colorbar=dict(title=value_name), hoverongaps=False,
        hovertemplate=f"{pair}<br>{value_name} %{{z:.4f}}<extra></extra>",
    ))
    if masked is not None and masked.any():
        grey = np.where(masked, 1.0, np.nan)
        fig.add_trace(go.Heatmap(
            z=grey, x=list(range(len(key_tokens))), y=list(range(len(query_tokens))),
            customdata=hover, colorscale=[[0, "#d9d9d9"], [1, "#d9d9d9"]], showscale=False,
            hoverongaps=False, hovertemplate=f"{pair}<br>{words('attention.chart.masked')}<extra></extra>"))
    if block is not None:
        first, end = block  # cell (row i, column j) spans i ± 0.5, j ± 0.5
        fig.add_shape(type="rect", x0=first - 0.5, x1=end - 0.5, y0=end - 0.5, y1=len(query_tokens) - 0.5,
                      line=dict(color=BLOCK_FRAME, width=2, dash="dash"), fillcolor="rgba(0,0,0,0)")
    size = max(len(query_tokens), len(key_tokens))
    keys_axis, rows_axis = words("attention.chart.keys_axis"), rows_title or words("attention.chart.queries_axis")
    fig.update_layout(title=title, height=height or min(700, max(260, 160 + 28 * size)), margin=dict(l=10, r=10, t=50, b=10),
                      xaxis=dict(title=keys_axis, side="bottom", **_ticks(key_tokens)),
                      yaxis=dict(title=rows_axis, autorange="reversed", **_ticks(query_tokens)))
    return with_data(fig, ChartData(title or "", maps=(token_map(z, query_tokens, key_tokens, rows_axis, keys_axis),)))


def token_map(values: np.ndarray, query_tokens, key_tokens, rows_title: str = "", columns_title: str = "",
              name: str | None = None) -> Map:
    """values (T_q, T_k) as a Map whose rows and columns are tokens, written as the axes write them."""
    return Map(values, tuple(html_escaped(t) for t in query_tokens), tuple(html_escaped(t) for t in key_tokens),
               name=name, row_title=rows_title, column_title=columns_title)


def difference_heatmap(a: np.ndarray, b: np.ndarray, query_tokens, key_tokens, title: str = "",
                       *, words: Words, value_name: str = "A − B") -> go.Figure:
    """a − b on a diverging scale centred on 0; `value_name` names it on the colour bar and in the hover (the head
    finder passes its B as `a`: "B − A")."""
    diff = np.asarray(a, dtype=float) - np.asarray(b, dtype=float)
    bound = float(np.nanmax(np.abs(diff))) or 1.0
    fig = attention_heatmap(diff, query_tokens, key_tokens, title, zmax=bound, colorscale=DIVERGING,
                            value_name=value_name, words=words)
    fig.update_traces(zmin=-bound, zmid=0, selector=dict(type="heatmap"))
    return fig


GRID_GAP_COLUMNS = 1  # empty (NaN) columns between two heads' maps in the tiled grid
TITLE_BAND = 0.3  # the empty rows above each layer's maps, as a share of its rows: room for the thumbnails' titles


def _grid_bands(rows: int) -> int:
    return max(1, int(np.ceil(rows * TITLE_BAND)))


def tile_origin(layer: int, head: int, rows: int, cols: int) -> tuple[int, int]:
    """(y, x) of the top-left cell of a head's map in the tiled matrix."""
    band = _grid_bands(rows)
    return layer * (rows + band) + band, head * (cols + GRID_GAP_COLUMNS)


def head_grid(weights: np.ndarray, query_tokens, key_tokens, title: str = "", selected: tuple[int, int] | None = None,
              masked: np.ndarray | None = None, labels=None, first_layer: int = 0, *, words: Words) -> go.Figure:
    """weights (L, h, T_q, T_k) as an L × h grid of small maps (rows: layers, columns: heads).

    One heatmap trace: the heads' maps tiled into one matrix, a column of empty cells between two heads and a band of
    empty rows above each layer for the thumbnails' titles. (One subplot per head is far slower for the browser to
    draw: each brings its own axes and layers.) The hover is the click targets' (_add_click_targets: the layer, head,
    query and key of each cell, or of each block of a big grid), which win plotly's hover over every cell anyway: the
    heatmap itself sends no per-cell text (three strings a cell would be most of the grid's bytes, serialised by the
    server and parsed by the browser at every first draw). Its data (viz/chart_data.py) is the heads' maps, one
    named map each ("L13 H2"), for the CSV and the chart's words.
    labels: (L, h) short names of each head's pattern (model.explain.patterns.label_heads), appended to its title.
    first_layer: the model's layer (0-based) that weights[0] is, when the grid shows one page of a deep model's layers
    (SmolLM2's 30): titles, ticks, hover and click targets name the model's own layer numbers; selected is 0-based
    within the page."""
    weights = np.asarray(weights, dtype=float)
    layers, heads, rows, cols = weights.shape
    band = _grid_bands(rows)
    height_cells, width_cells = layers * (rows + band), heads * (cols + GRID_GAP_COLUMNS) - GRID_GAP_COLUMNS
    tiles = weights.copy()  # (L, h, T_q, T_k) as drawn: NaN where masked
    if masked is not None:
        tiles[..., masked] = np.nan
    z = np.full((height_cells, width_cells), np.nan)
    for l in range(layers):
        for h in range(heads):
            y, x = tile_origin(l, h, rows, cols)
            z[y:y + rows, x:x + cols] = tiles[l, h]
    weight = words("attention.chart.weight")
    fig = go.Figure(go.Heatmap(
        z=z, x=list(range(width_cells)), y=list(range(height_cells)), coloraxis="coloraxis", hoverinfo="skip"))
    height = max(260, 170 * layers + 60)
    small = labels is not None and heads > 8  # 12 thumbnails a row: the longer titles in a smaller font
    for l in range(layers):
        for h in range(heads):
            y, x = tile_origin(l, h, rows, cols)
            fig.add_annotation(text=f"L{first_layer + l + 1} H{h + 1}" + (f" · {labels[l][h]}" if labels is not None else ""),
                               x=x + (cols - 1) / 2, y=y - 0.5, xref="x", yref="y", yanchor="bottom",
                               showarrow=False, font_size=11 if small else 16)
    _add_click_targets(fig, weights, query_tokens, key_tokens, height, first_layer, words=words)
    if selected is not None:
        y, x = tile_origin(*selected, rows, cols)
        fig.add_shape(type="rect", xref="x", yref="y", x0=x - 0.5, x1=x + cols - 0.5, y0=y - 0.5, y1=y + rows - 0.5,
                      line=dict(color="#d62728", width=3))
    centres_x = [tile_origin(0, h, rows, cols)[1] + (cols - 1) / 2 for h in range(heads)]
    centres_y = [tile_origin(l, 0, rows, cols)[0] + (rows - 1) / 2 for l in range(layers)]
    fig.update_layout(title=title, coloraxis=dict(colorscale=SEQUENTIAL, cmin=0, cmax=1, colorbar=dict(title=weight)),
                      height=height, margin=dict(l=10, r=10, t=60, b=10),
                      xaxis=dict(range=[-0.5, width_cells - 0.5], tickmode="array", tickvals=centres_x,
                                 ticktext=[words("attention.chart.head_tick", head=h + 1) for h in range(heads)],
                                 showgrid=False, zeroline=False),
                      yaxis=dict(range=[height_cells - 0.5, -0.5], tickmode="array", tickvals=centres_y,
                                 ticktext=[words("attention.chart.layer_tick", layer=first_layer + l + 1)
                                           for l in range(layers)],
                                 showgrid=False, zeroline=False))
    maps = tuple(token_map(tiles[l, h], query_tokens, key_tokens, name=f"L{first_layer + l + 1} H{h + 1}")
                 for l in range(layers) for h in range(heads))
    return with_data(fig, ChartData(title or "", maps=maps, grid=True))


CLICK_TARGETS = "click_targets"  # the `meta` of the grid's invisible scatter trace: controls, not data
# Invisible markers in the whole grid: each is an SVG element the browser draws, so a marker per cell of a large
# grid would cost more than the heatmap and its titles. The real encoder's 72 thumbnails (intro stop 17) get 2 × 2
# blocks each (288 markers; 1,152 at 4 × 4 made the grid's draw the slowest Next of the lesson): a thumbnail is
# about 90 px wide on a projector, too small to aim at one of its 256 cells, and its click opens the head, whose own
# map hovers per cell.
CLICK_TARGETS_MAX = 300


def _blocks(length: int, count: int) -> list[np.ndarray]:
    return np.array_split(np.arange(length), min(count, length))


def _block_name(tokens: list[str], block: np.ndarray) -> str:
    first, last = html_escaped(tokens[block[0]]), html_escaped(tokens[block[-1]])
    return first if len(block) == 1 else f"{first}…{last}"


def _add_click_targets(fig: go.Figure, weights: np.ndarray, query_tokens, key_tokens, height: int,
                       first_layer: int = 0, *, words: Words) -> None:
    """An invisible scatter trace over the thumbnails, so that a click on one selects one of its points.

    Streamlit's plotly selection (st.plotly_chart on_select) reports points of scatter traces, never heatmap cells
    (streamlit issue #8760, plotly.js has no click data for heatmaps). Each point carries its head as
    customdata[3:5] (layer, head, 0-based). One marker per cell while the whole grid stays under CLICK_TARGETS_MAX
    markers; a bigger grid gets one marker per block of cells, its hover naming the block ("first…last") and its
    mean weight. They are the grid's hover (the heatmap has none): "layer … head …, query … → key …" and the weight.
    """
    layers, heads, rows, cols = weights.shape
    side = max(2, int((CLICK_TARGETS_MAX / (layers * heads)) ** 0.5))  # markers a side per thumbnail
    row_blocks, col_blocks = _blocks(rows, side), _blocks(cols, side)
    ys = np.array([block.mean() for block in row_blocks])
    xs = np.array([block.mean() for block in col_blocks])
    block_y, block_x = (a.ravel() for a in np.meshgrid(ys, xs, indexing="ij"))
    names = [(_block_name(query_tokens, r), _block_name(key_tokens, c)) for r in row_blocks for c in col_blocks]
    # a map's height in px (the figure's less its margins, its share of it less the title band) / blocks: the size
    size = max(6, int((height - 70) / layers * rows / (rows + _grid_bands(rows)) * 0.9 / len(row_blocks)))
    grid_x, grid_y, data, text = [], [], [], []
    for l in range(layers):
        for h in range(heads):
            y, x = tile_origin(l, h, rows, cols)
            z = np.nan_to_num(np.asarray(weights[l, h], dtype=float))
            means = [float(z[np.ix_(r, c)].mean()) for r in row_blocks for c in col_blocks]
            grid_x.append(block_x + x)
            grid_y.append(block_y + y)
            data += [[q, k, m, first_layer + l, h] for (q, k), m in zip(names, means)]
            text += [words("attention.chart.layer_head", layer=first_layer + l + 1, head=h + 1)] * len(means)
    fig.add_trace(go.Scatter(
        x=np.concatenate(grid_x), y=np.concatenate(grid_y), mode="markers", customdata=np.array(data, dtype=object),
        text=text, meta=CLICK_TARGETS, showlegend=False, name="",
        marker=dict(symbol="square", size=size, color="rgba(0,0,0,0)"),
        selected=dict(marker=dict(opacity=0)), unselected=dict(marker=dict(opacity=0)),
        hovertemplate=f"%{{text}}<br>{_pair_hover(words)}<br>{words('attention.chart.weight')} %{{customdata[2]:.4f}}"
                      "<extra></extra>"))


def grid_head(point: dict) -> tuple[int, int] | None:
    """(layer, head), 0-based, of a point Streamlit reports selected in head_grid's figure; None for anything else."""
    data = point.get("customdata")
    if not isinstance(data, (list, tuple)) or len(data) != 5:
        return None
    return int(data[3]), int(data[4])


def attention_lines(weights: np.ndarray, query_tokens: list[str], key_tokens: list[str], title: str = "",
                    threshold: float = 0.02, *, words: Words) -> go.Figure:
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
                                 name=words("attention.chart.band", low=f"{low:.2f}", high=f"{high:.2f}")))
    fig.add_trace(go.Scatter(x=[0] * len(query_tokens), y=list(range(len(query_tokens))), mode="text",
                             text=[html_escaped(t) for t in query_tokens], textposition="middle left", showlegend=False,
                             hoverinfo="skip"))
    fig.add_trace(go.Scatter(x=[1] * len(key_tokens), y=list(range(len(key_tokens))), mode="text",
                             text=[html_escaped(t) for t in key_tokens], textposition="middle right", showlegend=False,
                             hoverinfo="skip"))
    rows = max(len(query_tokens), len(key_tokens))
    fig.update_layout(title=title, height=min(900, 120 + 26 * rows), margin=dict(l=10, r=10, t=50, b=10),
                      xaxis=dict(range=[-0.6, 1.6], showticklabels=False, showgrid=False, zeroline=False,
                                 title=words("attention.chart.lines_axis")),
                      yaxis=dict(autorange="reversed", showticklabels=False, showgrid=False, zeroline=False))
    # its numbers are the weights it draws, as the map of the same head has them (the lines are drawing aids)
    return with_data(fig, ChartData(title or "", maps=(token_map(weights, query_tokens, key_tokens,
                                                                 words("attention.chart.queries_axis"),
                                                                 words("attention.chart.keys_axis")),)))


def probability_bars(tokens: list[str], probabilities: list[float], title: str = "", *, words: Words) -> go.Figure:
    """Horizontal bars of candidate tokens and their probabilities (highest on top)."""
    labels = [html_escaped(t) for t in tokens]
    fig = go.Figure(go.Bar(x=probabilities, y=labels, orientation="h",
                           text=[f"{p:.1%}" for p in probabilities], textposition="auto",
                           hovertemplate="%{y}: %{x:.4f}<extra></extra>"))
    fig.update_layout(title=title, height=120 + 30 * len(tokens), margin=dict(l=10, r=10, t=50, b=10),
                      xaxis=dict(title=words("attention.chart.probability"), range=[0, 1], tickformat=".0%"),
                      yaxis=dict(autorange="reversed", title=words("attention.chart.next_token")))
    return with_data(fig, ChartData(title or "", series=(Series("bar", probabilities, labels, horizontal=True),)))


def head_statistics_table(stats: dict[str, np.ndarray], average_heads: bool = False, *, words: Words) -> pd.DataFrame:
    """stats values (L, h) -> a long table with layer, head and one column per statistic (names translated)."""
    names = {name: words(f"attention.stats.{name}") for name in stats}
    layer, head = words("attention.stats.layer"), words("attention.stats.head")
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


def attention_table(weights: np.ndarray, query_tokens: list[str], key_tokens: list[str],
                    *, words: Words) -> pd.DataFrame:
    """weights (T_q, T_k) as a table: rows 'i: query token', columns 'j: key token' (positions keep repeats apart)."""
    return pd.DataFrame(np.asarray(weights, dtype=float),
                        index=[csv_safe(f"{i}: {t}") for i, t in enumerate(query_tokens)],
                        columns=[csv_safe(f"{j}: {t}") for j, t in enumerate(key_tokens)]).rename_axis(
                            words("attention.chart.table_axis"))

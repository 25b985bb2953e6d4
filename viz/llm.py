"""Charts of the LLM page (app_pages/llm.py): the next-token odds, the new token's attention row in one layer's heads,
the KV cache per layer and per step, and which query heads share a key/value head (grouped-query attention).

Arrays in, plotly figures out; token text is escaped (plotly renders a small HTML subset in labels).
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from viz.chart_data import ChartData, Map, Series, with_data
from viz.words import Words
from viz.attention import SEQUENTIAL, html_escaped
from viz.encoder import thin_tick_labels

MARGIN = dict(l=10, r=10, t=60, b=10)
CHOSEN, OTHER = "#a11a2b", "#6a8fb5"  # the chosen token's bar; the other candidates'
REUSED, COMPUTED = "#c6dbef", "#08306b"  # a cached position's cell; a position computed this step
CHART_WIDTH = 1100  # px the page gives a full-width chart (tick labels are thinned to fit it)


def next_token_chart(tokens: list[str], probabilities: list[float], chosen: int | None, title: str,
                     *, words: Words) -> go.Figure:
    """The top candidates for the next token (most likely on top) and their probabilities; chosen: the index of the
    token the step picked among them (None when a sampled token lies outside them)."""
    labels = [f"{i + 1}. {html_escaped(repr(t))}" for i, t in enumerate(tokens)]  # quoted: spaces and newlines show
    colours = [CHOSEN if i == chosen else OTHER for i in range(len(tokens))]
    fig = go.Figure(go.Bar(x=probabilities, y=labels, orientation="h", marker_color=colours,
                           text=[f"{p:.1%}" for p in probabilities], textposition="auto",
                           hovertemplate="%{y}: %{x:.4f}<extra></extra>"))
    fig.update_layout(title=title, height=140 + 34 * len(tokens), margin=MARGIN,
                      xaxis=dict(title=words("llm.chart.probability"), range=[0, 1], tickformat=".0%"),
                      yaxis=dict(autorange="reversed", title=words("llm.chart.candidate")))
    return with_data(fig, ChartData(title or "", series=(Series("bar", probabilities, labels, horizontal=True),)))


def next_token_table(tokens: list[str], probabilities: list[float], tokens_off: list[str],
                     probabilities_off: list[float], *, words: Words) -> pd.DataFrame:
    """The top candidates after the text with every head on and with the chosen heads switched off, side by side
    (rank by rank); tokens quoted, so that spaces and newlines show."""
    return pd.DataFrame({
        words("llm_explain.rank"): range(1, len(tokens) + 1),
        words("llm_explain.token_on"): [repr(t) for t in tokens],
        words("llm_explain.probability_on"): probabilities,
        words("llm_explain.token_off"): [repr(t) for t in tokens_off],
        words("llm_explain.probability_off"): probabilities_off,
    })


def attention_row_chart(weights: np.ndarray, key_tokens: list[str], kv_head_of: list[int], title: str,
                        *, words: Words) -> go.Figure:
    """weights (h, T_k): one layer's heads (rows) attending from the newest query to every cached key (columns);
    kv_head_of[i]: the key/value head query head i reads (named in its row label)."""
    weights = np.asarray(weights, dtype=float)
    heads, length = weights.shape
    rows = [words("llm.chart.head_row", head=i + 1, kv=kv_head_of[i] + 1) for i in range(heads)]
    keys = [f"{j}: {html_escaped(t)}" for j, t in enumerate(key_tokens)]
    hover = np.broadcast_to(np.array(keys, dtype=object)[None, :], (heads, length))
    fig = go.Figure(go.Heatmap(
        z=weights, x=list(range(length)), y=rows, customdata=hover, colorscale=SEQUENTIAL, zmin=0, zmax=1,
        colorbar=dict(title=words("llm.chart.weight")),
        hovertemplate=f"%{{y}} → {words('llm.chart.key')} %{{customdata}}<br>{words('llm.chart.weight')} "
                      f"%{{z:.4f}}<extra></extra>"))
    fig.update_layout(title=title, height=200 + 30 * heads, margin=MARGIN,
                      xaxis=dict(title=words("llm.chart.keys_axis"), tickmode="array", tickvals=list(range(length)),
                                 ticktext=[html_escaped(t) for t in key_tokens]),
                      yaxis=dict(title=words("llm.chart.heads_axis"), autorange="reversed", type="category"))
    data = ChartData(title or "", maps=(Map(weights, tuple(rows), tuple(html_escaped(t) for t in key_tokens),
                                            row_title=words("llm.chart.heads_axis"),
                                            column_title=words("llm.chart.keys_axis")),))
    return with_data(thin_tick_labels(fig, CHART_WIDTH), data)  # every key named, labelled on the axis or not


def cache_layers_chart(layers: int, key_tokens: list[str], computed_from: int, title: str,
                       *, words: Words) -> go.Figure:
    """Every layer's cache after a step (rows: layers; columns: positions): positions before `computed_from` were
    read from the cache, the others computed this step (the same in every layer: each layer keeps its own K, V)."""
    length = len(key_tokens)
    z = np.zeros((layers, length))
    z[:, computed_from:] = 1.0  # (L, T_k): 1 where this step computed the position's K and V
    states = np.array([words("llm.chart.reused"), words("llm.chart.computed")], dtype=object)
    names = [f"{j}: {html_escaped(t)}" for j, t in enumerate(key_tokens)]
    custom = np.stack(np.broadcast_arrays(np.array(names, dtype=object)[None, :], states[z.astype(int)]), axis=-1)
    fig = go.Figure(go.Heatmap(
        z=z, x=list(range(length)), y=[words("llm.chart.layer_row", layer=i + 1) for i in range(layers)],
        customdata=custom, colorscale=[[0, REUSED], [1, COMPUTED]], zmin=0, zmax=1, showscale=False, xgap=1,
        hovertemplate="%{y}, %{customdata[0]}: %{customdata[1]}<extra></extra>"))
    for state, colour in ((0, REUSED), (1, COMPUTED)):  # a legend for the two colours (empty traces)
        fig.add_trace(go.Scatter(x=[None], y=[None], mode="markers", name=str(states[state]),
                                 marker=dict(symbol="square", size=14, color=colour)))
    fig.update_layout(title=title, height=520, margin=MARGIN, legend=dict(orientation="h", y=-0.18),
                      plot_bgcolor="white",
                      xaxis=dict(title=words("llm.chart.positions_axis"), tickmode="array",
                                 tickvals=list(range(length)), ticktext=[html_escaped(t) for t in key_tokens],
                                 showgrid=False),
                      yaxis=dict(title=words("llm.chart.layers_axis"), autorange="reversed", type="category",
                                 showgrid=False))
    # what it draws: 1 where a layer computed a position's K and V this step, 0 where it read them from the cache
    return with_data(thin_tick_labels(fig, CHART_WIDTH), ChartData(title or "", maps=(
        Map(z, tuple(words("llm.chart.layer_row", layer=i + 1) for i in range(layers)),
            tuple(names), row_title=words("llm.chart.layers_axis"),
            column_title=words("llm.chart.positions_axis")),)))


def work_per_step_chart(with_cache: list[int], without_cache: list[int], title: str, *, words: Words) -> go.Figure:
    """Key vectors computed at each step 1 … n (all layers and key/value heads), with the cache and without."""
    steps = list(range(1, len(with_cache) + 1))
    fig = go.Figure([go.Bar(x=steps, y=with_cache, name=words("llm.chart.with_cache"), marker_color=COMPUTED),
                     go.Bar(x=steps, y=without_cache, name=words("llm.chart.without_cache"), marker_color=OTHER)])
    fig.update_layout(title=title, barmode="group", height=360, margin=MARGIN, legend=dict(orientation="h", y=-0.25),
                      xaxis=dict(title=words("llm.chart.step_axis"), dtick=1 if len(steps) <= 20 else None),
                      yaxis=dict(title=words("llm.chart.keys_computed_axis")))
    return with_data(fig, ChartData(title or "", series=(
        Series("bar", steps, with_cache, words("llm.chart.with_cache")),
        Series("bar", steps, without_cache, words("llm.chart.without_cache")))))


def kv_groups_chart(groups: list[list[int]], num_heads: int, title: str, *, words: Words) -> go.Figure:
    """groups[g]: the query heads that read key/value head g; drawn as a (query heads × key/value heads) table."""
    z = np.zeros((num_heads, len(groups)))
    for g, members in enumerate(groups):
        z[members, g] = 1.0  # (h, h_kv): 1 where query head i reads key/value head g
    text = np.where(z > 0, words("llm.chart.reads"), "")
    fig = go.Figure(go.Heatmap(
        z=z, x=[words("llm.chart.kv_head", kv=g + 1) for g in range(len(groups))],
        y=[words("llm.chart.query_head", head=i + 1) for i in range(num_heads)], text=text, texttemplate="%{text}",
        colorscale=[[0, "#f7f7f7"], [1, "#6a8fb5"]], zmin=0, zmax=1, showscale=False, xgap=2, ygap=2,
        hovertemplate="%{y} · %{x}: %{text}<extra></extra>"))
    fig.update_layout(title=title, height=140 + 34 * num_heads, margin=MARGIN,
                      xaxis=dict(title=words("llm.chart.kv_heads_axis"), type="category"),
                      yaxis=dict(title=words("llm.chart.query_heads_axis"), autorange="reversed", type="category"))
    # what it draws: 1 where query head i reads key/value head g (its cells say so in words too)
    return with_data(fig, ChartData(title or "", maps=(Map(
        z, tuple(words("llm.chart.query_head", head=i + 1) for i in range(num_heads)),
        tuple(words("llm.chart.kv_head", kv=g + 1) for g in range(len(groups))),
        row_title=words("llm.chart.query_heads_axis"), column_title=words("llm.chart.kv_heads_axis")),)))

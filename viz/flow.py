"""The information-flow graph of one prompt (model/explain/flow.py; Ferrando & Voita 2024): tokens on x, the residual
stream's rows on y (the embeddings at the bottom, each block's output above), an edge wherever a block's heads carry
at least a threshold's share of a node from a node of the row below, the residual's straight edges in light grey, the
route to the prediction (the edges kept from the last position's top node down) in vermillion, each node coloured by
the share its block's MLP writes and sized by its relevance to the prediction. A click on a node selects it (its
points carry (row, position)).

Words come from i18n/<lang>/llm_flow.toml (table [chart]), passed in; token text is escaped (viz.llm_answer's labels).
"""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from viz.attention import SEQUENTIAL
from viz.chart_data import ChartData, Map, with_data
from viz.llm_answer import COMMITMENT_MARK, lens_row_labels, position_labels
from viz.words import Words

ROUTE = COMMITMENT_MARK  # Okabe–Ito vermillion, as the lens's commitment frames
EDGE = "rgba(60, 60, 60, 0.45)"
STRAIGHT = "rgba(150, 150, 150, 0.35)"
# An edge's width by its share: at least the threshold, then these bounds (projected, a 1 px edge is still seen)
WIDTH_BOUNDS = (0.2, 0.5)
WIDTHS = (1.0, 2.5, 4.5)
ROW_PX = 17  # px per row, as the lens map's: its 31 rows, title and token labels fit a 1280×720 screen
NODE_PX = (5, 16)  # a node's marker size, from no relevance to all of it


def _segments(starts: list[tuple[int, int]], ends: list[tuple[int, int]]) -> tuple[list, list]:
    """Lines from each (x, y) start to its end, in one trace (None between them)."""
    xs, ys = [], []
    for (x0, y0), (x1, y1) in zip(starts, ends):
        xs += [x0, x1, None]
        ys += [y0, y1, None]
    return xs, ys


def _edge_traces(edges: np.ndarray, kept: np.ndarray, colour: str, name: str) -> list[go.Scatter]:
    """edges (L, T, T) shares, kept (L, T, T) bool -> one trace per width class: block l's edge from (l, j) up to
    (l+1, i)."""
    traces = []
    bounds = (-np.inf, *WIDTH_BOUNDS, np.inf)
    for width, low, high in zip(WIDTHS, bounds[:-1], bounds[1:]):
        layer, query, key = np.nonzero(kept & (edges >= low) & (edges < high))
        if not len(layer):
            continue
        xs, ys = _segments(list(zip(key.tolist(), layer.tolist())), list(zip(query.tolist(), (layer + 1).tolist())))
        traces.append(go.Scatter(x=xs, y=ys, mode="lines", line=dict(color=colour, width=width), hoverinfo="skip",
                                 name=name, showlegend=False))
    return traces


def _straight_trace(kept: np.ndarray, colour: str, width: float, name: str) -> go.Scatter | None:
    """kept (L, T) bool: the residual edge (l, i) → (l+1, i) of each True."""
    layer, position = np.nonzero(kept)
    if not len(layer):
        return None
    xs, ys = _segments(list(zip(position.tolist(), layer.tolist())), list(zip(position.tolist(),
                                                                              (layer + 1).tolist())))
    return go.Scatter(x=xs, y=ys, mode="lines", line=dict(color=colour, width=width), hoverinfo="skip", name=name,
                      showlegend=False)


def flow_graph(edges: np.ndarray, residual_shares: np.ndarray, mlp_shares: np.ndarray, relevance: np.ndarray,
               route: tuple[np.ndarray, np.ndarray], tokens: list[str], threshold: float, title: str, *,
               selected: tuple[int, int] | None = None, words: Words) -> go.Figure:
    """edges (L, T, T): the share of node (l+1, i) carried from (l, j); residual_shares (L, T); mlp_shares (L, T);
    relevance (L+1, T); route: (edges (L, T, T), residual (L, T)) bool, the route at `threshold`; selected: the
    clicked (row, position), ringed."""
    edges, straight = np.asarray(edges, dtype=float), np.asarray(residual_shares, dtype=float)
    mlp, relevance = np.asarray(mlp_shares, dtype=float), np.asarray(relevance, dtype=float)
    route_edges, route_straight = (np.asarray(part, dtype=bool) for part in route)
    layers, length = straight.shape
    rows, columns = lens_row_labels(layers, words=words), position_labels(tokens)
    shown = edges >= threshold
    fig = go.Figure()
    straight_trace = _straight_trace((straight >= threshold) & ~route_straight, STRAIGHT, 1.0,
                                     words("llm_flow.chart.residual_edge"))
    for trace in ([] if straight_trace is None else [straight_trace]):
        fig.add_trace(trace)
    for trace in _edge_traces(edges, shown & ~route_edges, EDGE, words("llm_flow.chart.attention_edge")):
        fig.add_trace(trace)
    route_trace = _straight_trace(route_straight, ROUTE, 2.5, words("llm_flow.chart.route"))
    for trace in ([] if route_trace is None else [route_trace]):
        fig.add_trace(trace)
    for trace in _edge_traces(edges, route_edges, ROUTE, words("llm_flow.chart.route")):
        fig.add_trace(trace)
    # the nodes: row 0 has no MLP (its share 0); a node's size grows with its relevance to the prediction
    node_mlp = np.vstack([np.zeros((1, length)), mlp])  # (L+1, T)
    row, position = np.meshgrid(np.arange(layers + 1), np.arange(length), indexing="ij")
    sizes = NODE_PX[0] + (NODE_PX[1] - NODE_PX[0]) * np.sqrt(np.clip(relevance, 0, 1))
    into = np.vstack([np.full((1, length), np.nan), straight])  # the residual share into each node
    mlp_word, relevance_word, straight_word = (words("llm_flow.chart.mlp_share"), words("llm_flow.chart.relevance"),
                                               words("llm_flow.chart.residual_share"))
    hover = [f"{rows[r]} · {columns[p]}<br>{relevance_word}: {relevance[r, p]:.1%}"
             + ("" if r == 0 else f"<br>{mlp_word}: {node_mlp[r, p]:.0%}<br>{straight_word}: {into[r, p]:.0%}")
             for r, p in zip(row.ravel(), position.ravel())]
    fig.add_trace(go.Scatter(
        x=position.ravel().tolist(), y=row.ravel().tolist(), mode="markers", name=words("llm_flow.chart.nodes"),
        marker=dict(size=sizes.ravel().tolist(), color=node_mlp.ravel().tolist(), colorscale=SEQUENTIAL, cmin=0,
                    cmax=1, line=dict(width=0.5, color="#555"),
                    colorbar=dict(title=mlp_word, tickformat=".0%", len=0.6)),
        customdata=np.stack([row.ravel(), position.ravel()], axis=1).tolist(), hovertext=hover,
        hovertemplate="%{hovertext}<extra></extra>", showlegend=False))
    if selected is not None:
        fig.add_trace(go.Scatter(x=[selected[1]], y=[selected[0]], mode="markers", hoverinfo="skip",
                                 name=words("llm_flow.chart.selected"), showlegend=False,
                                 marker=dict(size=NODE_PX[1] + 8, color="rgba(0,0,0,0)",
                                             line=dict(width=3, color=ROUTE))))
    fig.update_layout(title=title, height=150 + ROW_PX * (layers + 1), margin=dict(l=10, r=10, t=60, b=10),
                      clickmode="event+select", dragmode=False,
                      # automargin: 64 turned token labels take their room from the plot, not past its bottom
                      xaxis=dict(title=words("llm_flow.chart.position_axis"), tickmode="array", automargin=True,
                                 tickvals=list(range(length)), ticktext=columns, range=[-0.7, length - 0.3]),
                      yaxis=dict(title=words("llm_flow.chart.row_axis"), tickmode="array",
                                 tickvals=list(range(layers + 1)), ticktext=rows, range=[-0.7, layers + 0.7]))
    data = (Map(relevance.astype(float), tuple(rows), tuple(columns), name=relevance_word,
                row_title=words("llm_flow.chart.row_axis"), column_title=words("llm_flow.chart.position_axis")),
            Map(node_mlp[1:], tuple(rows[1:]), tuple(columns), name=mlp_word,
                row_title=words("llm_flow.chart.row_axis"), column_title=words("llm_flow.chart.position_axis")))
    return with_data(fig, ChartData(title or "", maps=data))


def flow_node(customdata) -> tuple[int, int] | None:
    """A clicked point's (row, position), or None for a point that is no node."""
    try:
        row, position = customdata
        return int(row), int(position)
    except (TypeError, ValueError):
        return None

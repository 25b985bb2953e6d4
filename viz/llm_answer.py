"""Charts of the page "How an LLM finds its answer" (app_pages/llm_answer.py): the logit lens (nostalgebraist 2020) as a
layer × position map of each cell's top token, one token's rank and probability by layer, residual-stream activation
patching (Meng et al. 2022; Wang et al. 2022) as a layer × position map of p(answer) or of the logit difference, the
same per head at the last position (layer × head), and direct logit attribution: the parts that write most into the
answer's logit, and the sink heads' contributions beside their weight on the first token.

Both maps put positions on x ("3: ' France'", counted from 0) and the residual stream's rows on y, the output at the
top: the lens's row 0 is the token embeddings ("emb"), row l the output of block l ("L1" … "L30"); the patching map's
row l is block l's output, patched. Words come from i18n/<lang>/llm_answer.toml (table [chart]); token text is
escaped (plotly renders a small HTML subset in labels).
"""
from __future__ import annotations

import numbers

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from model.explain.kinds import head_label
from viz.attention import CLICK_TARGETS, DIVERGING, SEQUENTIAL, html_escaped
from viz.chart_data import ChartData, Map, Series, with_data
from viz.words import Words

MARGIN = dict(l=10, r=10, t=60, b=10)
LENS_TEXT_COLUMNS = 12  # a lens map writes each cell's top token in it up to this many positions (hover past it)
CELL_TEXT_CHARACTERS = 8  # a cell's token is cut to this many characters on the map (the hover has it whole)
COMMITMENT_MARK = "#d55e00"  # Okabe–Ito vermillion: seen on every shade of Blues and of presenter mode's Cividis
ROW_PX = 17  # px per layer row: 31 rows and their cell text fit a 1280×720 screen below the controls
# A patching map has no cell text: projected, its rows are this low (the page names every k-th layer where 14 px labels
# would overlap: ui/charts.show_chart), so that the whole map from L30 down to the early layers fits under a stop's
# bar at 1280×720.
COMPACT_ROW_PX = 9


def position_labels(tokens: list[str]) -> list[str]:
    """'3: ' France'': the position and the token quoted (so a leading space shows), escaped for plotly."""
    return [f"{position}: {html_escaped(repr(token))}" for position, token in enumerate(tokens)]


def lens_row_labels(layers: int, *, words: Words) -> list[str]:
    """The L + 1 rows of a lens: the embeddings, then each block's output."""
    return [words("llm_answer.chart.embeddings_row")] + [f"L{layer}" for layer in range(1, layers + 1)]


def _axis(labels: list[str]) -> dict:
    return dict(tickmode="array", tickvals=list(range(len(labels))), ticktext=labels)


def cell_text(token: str) -> str:
    """A token as a lens cell writes it: without quotes (a newline as \\n, a token of spaces as ␣), cut to
    CELL_TEXT_CHARACTERS, escaped."""
    shown = repr(token)[1:-1]  # the token without its quotes; a newline shows as \n
    if not shown.strip():  # a token of spaces only would be an empty cell: each space as ␣
        shown = shown.replace(" ", "\u2423") or "\u2423"
    return html_escaped(shown if len(shown) <= CELL_TEXT_CHARACTERS else shown[:CELL_TEXT_CHARACTERS - 1] + "…")


def lens_map(top_tokens: np.ndarray, top_probs: np.ndarray, tokens: list[str], commitment: np.ndarray, title: str,
             *, words: Words) -> go.Figure:
    """top_tokens (L+1, T, k) the text of each cell's k most likely next tokens, most likely first; top_probs
    (L+1, T, k) their probabilities; tokens (T,) the input; commitment (T,) each position's commitment row.

    Colour: the top token's probability; the cell's text: the top token (up to LENS_TEXT_COLUMNS positions); hover:
    all k with their probabilities; a frame around each position's commitment cell (from that row on, the top token
    is the model's final prediction)."""
    top_probs = np.asarray(top_probs, dtype=float)
    rows, length, k = top_probs.shape
    row_names, columns = lens_row_labels(rows - 1, words=words), position_labels(tokens)
    hover = np.empty((rows, length), dtype=object)
    for row in range(rows):
        for position in range(length):
            candidates = "<br>".join(f"{rank + 1}. {html_escaped(repr(str(top_tokens[row, position, rank])))} "
                                     f"{top_probs[row, position, rank]:.1%}" for rank in range(k))
            hover[row, position] = f"{row_names[row]} · {columns[position]}<br>{candidates}"
    text = None
    if length <= LENS_TEXT_COLUMNS:
        text = np.vectorize(cell_text, otypes=[object])(np.asarray(top_tokens)[..., 0])
    probability = words("llm_answer.chart.top_probability")
    fig = go.Figure(go.Heatmap(
        z=top_probs[..., 0], x=list(range(length)), y=list(range(rows)), colorscale=SEQUENTIAL, zmin=0, zmax=1,
        colorbar=dict(title=probability, tickformat=".0%"), text=text, texttemplate=None if text is None else "%{text}",
        textfont=dict(size=10), hoverinfo="skip"))  # the hover is the click targets' (below)
    commit = np.asarray(commitment, dtype=int)
    for position, row in enumerate(commit):  # a frame around the cell, clear of the token written in it
        fig.add_shape(type="rect", x0=position - 0.5, x1=position + 0.5, y0=row - 0.5, y1=row + 0.5,
                      line=dict(color=COMMITMENT_MARK, width=3), fillcolor="rgba(0,0,0,0)")
    # the frames' hover and their rows in the figure's own data (CSV, the chart in words): invisible points
    fig.add_trace(go.Scatter(
        x=list(range(length)), y=commit.tolist(), mode="markers", name=words("llm_answer.chart.commitment"),
        marker=dict(size=14, opacity=0), showlegend=False, customdata=[row_names[row] for row in commit],
        hovertemplate=f"{words('llm_answer.chart.commitment')}: %{{customdata}}<extra></extra>"))
    fig.update_layout(title=title, height=140 + ROW_PX * rows, margin=MARGIN,
                      xaxis=dict(title=words("llm_answer.chart.position_axis"), **_axis(columns)),
                      yaxis=dict(title=words("llm_answer.chart.row_axis"), **_axis(row_names)))
    lens = Map(top_probs[..., 0], tuple(row_names), tuple(columns), row_title=words("llm_answer.chart.row_axis"),
               column_title=words("llm_answer.chart.position_axis"))
    commitments = Series("marks", list(range(length)), commit.tolist(), words("llm_answer.chart.commitment"),
                         rows=tuple(row_names[row] for row in commit), columns=tuple(columns))
    # A click opens the cell's top tokens under the map: one invisible marker a cell (at most 31 × 64), which carries
    # the cell's hover. Streamlit reports clicks on scatter points only (streamlit issue #8760), and a heatmap with a
    # hover of its own takes the click: the heatmap has none. Controls, not data (no CSV, no words).
    rows_at, positions_at = np.divmod(np.arange(rows * length), length)
    fig.add_trace(go.Scatter(
        x=positions_at, y=rows_at, mode="markers", meta=CLICK_TARGETS, showlegend=False, name="",
        # as lists: a numpy array goes out as a binary typed array, whose points' customdata plotly does not report
        customdata=np.stack([rows_at, positions_at], axis=1).tolist(), hovertext=hover.ravel(),
        hovertemplate="%{hovertext}<extra></extra>", marker=dict(symbol="square", size=12, color="rgba(0,0,0,0)"),
        selected=dict(marker=dict(opacity=0)), unselected=dict(marker=dict(opacity=0))))
    return with_data(fig, ChartData(title or "", maps=(lens,), series=(commitments,)))


def lens_cell_of(point: dict) -> tuple[int, int] | None:
    """(row, position), 0-based, of a point Streamlit reports selected in lens_map's figure; None for anything else
    (a commitment frame's point, another chart's)."""
    data = point.get("customdata")
    if not isinstance(data, (list, tuple)) or len(data) != 2 or not all(isinstance(v, numbers.Real) for v in data):
        return None
    return int(data[0]), int(data[1])


def rank_by_layer(ranks: np.ndarray, probs: np.ndarray, token: str, title: str, *, words: Words) -> go.Figure:
    """A token's rank (1 = the top token; log scale, rank 1 at the top) and probability in each row of the lens at one
    position: ranks (L+1,), probs (L+1,), row 0 the embeddings."""
    ranks, probs = np.asarray(ranks, dtype=float), np.asarray(probs, dtype=float)
    names = lens_row_labels(len(ranks) - 1, words=words)
    rank, probability = words("llm_answer.chart.rank"), words("llm_answer.chart.probability")
    shown = html_escaped(repr(token))
    fig = make_subplots(specs=[[{"secondary_y": True}]])
    fig.add_trace(go.Scatter(x=names, y=ranks, mode="lines+markers", name=f"{rank} ({shown})",
                             hovertemplate=f"%{{x}}: {rank} %{{y:,.0f}}<extra></extra>"), secondary_y=False)
    fig.add_trace(go.Scatter(x=names, y=probs, mode="lines+markers", name=f"{probability} ({shown})",
                             line=dict(dash="dot"), hovertemplate=f"%{{x}}: {probability} %{{y:.2%}}<extra></extra>"),
                  secondary_y=True)
    # The legend above the plot, under the title: below it, the 31 row names (turned, projected) pushed the axis title
    # into it. The top margin holds the title and two legend rows (a narrow chart stacks the two entries); plotly grows
    # the margin for the title or the legend, never for both.
    fig.update_layout(title=dict(text=title, automargin=True, yref="container", y=1, yanchor="top", pad=dict(t=8, b=4)),
                      height=420, margin={**MARGIN, "t": 100},
                      legend=dict(orientation="h", x=0, xanchor="left", y=1.0, yanchor="bottom"),
                      xaxis=dict(title=words("llm_answer.chart.row_axis"), type="category"))
    fig.update_yaxes(title_text=words("llm_answer.chart.rank_axis"), type="log", autorange="reversed",
                     secondary_y=False)
    fig.update_yaxes(title_text=words("llm_answer.chart.probability_axis"), range=[0, 1], tickformat=".0%",
                     secondary_y=True, showgrid=False)
    return with_data(fig, ChartData(title or "", series=(Series("line", names, ranks, f"{rank} ({shown})"),
                                                         Series("line", names, probs, f"{probability} ({shown})"))))


def patching_columns(clean_tokens: list[str], corrupt_tokens: list[str]) -> list[str]:
    """A position's label: its clean token, and "clean → corrupted" where the two prompts differ."""
    return [f"{position}: {html_escaped(repr(clean))}" if clean == corrupt else
            f"{position}: {html_escaped(repr(clean))} → {html_escaped(repr(corrupt))}"
            for position, (clean, corrupt) in enumerate(zip(clean_tokens, corrupt_tokens))]


def patching_map(values: np.ndarray, clean_tokens: list[str], corrupt_tokens: list[str], title: str, value_name: str,
                 *, difference: bool = False, compact: bool = False, words: Words) -> go.Figure:
    """values (L, T): the corrupted run's result at its last position when block l's output at position t is the clean
    run's; p(answer) in 0 … 1, or (difference) logit(answer) − logit(wrong) on a diverging scale centred on 0.
    compact (projected): rows of COMPACT_ROW_PX."""
    values = np.asarray(values, dtype=float)
    layers, length = values.shape
    rows, columns = [f"L{layer}" for layer in range(1, layers + 1)], patching_columns(clean_tokens, corrupt_tokens)
    hover = np.array([[f"{words('llm_answer.chart.patched', layer=row, position=column)}" for column in columns]
                      for row in rows], dtype=object)
    shown = "%{z:.2f}" if difference else "%{z:.1%}"
    fig = go.Figure(go.Heatmap(z=values, x=list(range(length)), y=list(range(layers)), hovertext=hover,
                               hovertemplate=f"%{{hovertext}}<br>{html_escaped(value_name)} {shown}<extra></extra>",
                               **_value_scale(values, value_name, difference)))
    fig.update_layout(title=title, height=140 + (COMPACT_ROW_PX if compact else ROW_PX) * layers, margin=MARGIN,
                      xaxis=dict(title=words("llm_answer.chart.position_axis"), **_axis(columns)),
                      yaxis=dict(title=words("llm_answer.chart.patched_axis"), **_axis(rows)))
    return with_data(fig, ChartData(title or "", maps=(Map(values, tuple(rows), tuple(columns),
                                                          row_title=words("llm_answer.chart.patched_axis"),
                                                          column_title=words("llm_answer.chart.position_axis")),)))


def _value_scale(values: np.ndarray, value_name: str, difference: bool) -> dict:
    """p(answer) on 0 … 1; a logit difference on a diverging scale centred on 0 (presenter mode keeps it diverging)."""
    if difference:
        bound = float(np.abs(values).max()) or 1.0
        return dict(colorscale=DIVERGING, zmid=0, zmin=-bound, zmax=bound, colorbar=dict(title=value_name))
    return dict(colorscale=SEQUENTIAL, zmin=0, zmax=1, colorbar=dict(title=value_name, tickformat=".0%"))


def heads_map(values: np.ndarray, title: str, value_name: str, labelled: int = 3, *, difference: bool = False,
              words: Words) -> go.Figure:
    """values (L, H): the corrupted run's result when one head's output at the last position is the clean run's;
    the `labelled` cells furthest from the map's median are named on the map. Layer 30 at the top, as in the maps
    above it."""
    values = np.asarray(values, dtype=float)
    layers, heads = values.shape
    rows, columns = [f"L{layer}" for layer in range(1, layers + 1)], [f"H{head}" for head in range(1, heads + 1)]
    shown = "%{z:.2f}" if difference else "%{z:.1%}"
    fig = go.Figure(go.Heatmap(z=values, x=columns, y=rows, hovertemplate=f"%{{y}} %{{x}}<br>{html_escaped(value_name)} "
                               f"{shown}<extra></extra>", **_value_scale(values, value_name, difference)))
    median = float(np.median(values))
    distance = np.abs(values - median)
    def shown_value(value: float) -> str:
        return f"{value:+.2f}" if difference else f"{value:.0%}"
    # A label that reads zero, or the same as the map's ordinary cell, names nothing: it only covers its neighbours
    # (on a phone "L24 H1 0%" lay over "L24 H4 42%").
    ordinary = {shown_value(0.0), shown_value(-0.0), shown_value(median)}
    for flat in np.argsort(distance, axis=None)[::-1][:labelled]:
        layer, head = divmod(int(flat), heads)
        value = shown_value(float(values[layer, head]))
        if value in ordinary:
            continue
        fig.add_annotation(x=columns[head], y=rows[layer], text=f"<b>{head_label(layer, head)}</b> {value}",
                           showarrow=True, arrowhead=0, ax=0, ay=-22, bgcolor="#ffffff", bordercolor="#333333",
                           font=dict(color="#111111", size=12))
    fig.update_layout(title=title, height=140 + ROW_PX * layers, margin=MARGIN,
                      xaxis=dict(title=words("llm_answer.chart.head_axis"), type="category"),
                      yaxis=dict(title=words("llm_answer.chart.head_layer_axis"), type="category"))
    return with_data(fig, ChartData(title or "", maps=(Map(values, tuple(rows), tuple(columns),
                                                          row_title=words("llm_answer.chart.head_layer_axis"),
                                                          column_title=words("llm_answer.chart.head_axis")),)))


def attribution_parts(heads: np.ndarray, mlps: np.ndarray, embedding: float, *, words: Words) -> pd.DataFrame:
    """Every part's direct contribution (logit units) in one table, largest first: heads (L, H) as "L20 H3", MLPs (L,)
    as "MLP 12", and the embeddings."""
    heads, mlps = np.asarray(heads, dtype=float), np.asarray(mlps, dtype=float)
    names = [head_label(layer, head) for layer in range(heads.shape[0]) for head in range(heads.shape[1])]
    names += [words("llm_answer.chart.mlp", layer=layer + 1) for layer in range(len(mlps))]
    names.append(words("llm_answer.chart.embeddings_part"))
    values = np.concatenate([heads.ravel(), mlps, [embedding]])
    frame = pd.DataFrame({"part": names, "contribution": values})
    return frame.sort_values("contribution", ascending=False, kind="stable").reset_index(drop=True)


def attribution_bars(heads: np.ndarray, mlps: np.ndarray, embedding: float, title: str, count: int = 15,
                     *, words: Words) -> go.Figure:
    """The `count` parts with the largest direct contributions in size (either sign), sorted by contribution, the
    largest on top; positive bars push the token's logit up, negative ones down."""
    parts = attribution_parts(heads, mlps, embedding, words=words)
    kept = parts.loc[parts["contribution"].abs().sort_values(ascending=False, kind="stable").index[:count]]
    kept = kept.sort_values("contribution", ascending=False, kind="stable")
    contribution = words("llm_answer.chart.contribution")
    colours = ["#0072B2" if value >= 0 else "#D55E00" for value in kept["contribution"]]
    fig = go.Figure(go.Bar(x=kept["contribution"], y=kept["part"], orientation="h", marker_color=colours,
                           text=[f"{value:+.2f}" for value in kept["contribution"]], textposition="auto",
                           hovertemplate=f"%{{y}}: {contribution} %{{x:+.3f}}<extra></extra>"))
    fig.update_layout(title=title, height=140 + 26 * len(kept), margin=MARGIN, showlegend=False,
                      xaxis=dict(title=contribution, zeroline=True),
                      yaxis=dict(title=words("llm_answer.chart.part_axis"), autorange="reversed", type="category"))
    return with_data(fig, ChartData(title or "", series=(Series("bar", kept["contribution"], kept["part"],
                                                                horizontal=True),)))


def sink_heads_table(heads: np.ndarray, attention_to_first: np.ndarray, count: int = 8,
                     *, words: Words) -> pd.DataFrame:
    """The `count` heads that put the most weight on the first token (from the last position), with their direct
    contribution beside it: a sink head's large weight writes almost nothing into the answer's logit."""
    heads, weights = np.asarray(heads, dtype=float), np.asarray(attention_to_first, dtype=float)
    order = np.argsort(weights, axis=None)[::-1][:count]
    rows = [divmod(int(flat), weights.shape[1]) for flat in order]
    return pd.DataFrame({
        words("llm_answer.chart.head_column"): [head_label(layer, head) for layer, head in rows],
        words("llm_answer.chart.first_weight_column"): [round(float(weights[layer, head]), 3) for layer, head in rows],
        words("llm_answer.chart.contribution_column"): [round(float(heads[layer, head]), 3) for layer, head in rows],
    })

"""Positional-encoding charts: the table, chosen dimensions over position, dials next to a binary counter,
the similarity between positions, and the check that a shift by k is one fixed rotation M_k.

Conventions: rows are positions p (top = 0), columns are dimensions; encoding values are unitless. Words come from
i18n/<lang>/positional.toml, through the caller's `words` (viz/words.py).
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from viz.chart_data import ChartData, Map, Series, numbered_labels, with_data
from viz.words import Words
from viz.attention import DIVERGING

MARGIN = dict(l=10, r=10, t=60, b=10)


def dimension_name(dim: int, *, words: Words) -> str:
    """'dim 4 (sin, i=2)': which function and which pair a dimension belongs to."""
    return words("positional.chart.dimension_name", dim=dim, fn="sin" if dim % 2 == 0 else "cos", i=dim // 2)


def encoding_heatmap(table: np.ndarray, title: str, bound: float | None = 1.0, height: int | None = None,
                     *, words: Words) -> go.Figure:
    """table (T, d_model) on a diverging scale −bound … bound (bound None: the table's largest |value|)."""
    table = np.asarray(table, dtype=float)
    bound = bound if bound is not None else float(np.abs(table).max()) or 1.0
    fig = go.Figure(go.Heatmap(
        z=table, x=np.arange(table.shape[1]), y=np.arange(table.shape[0]), colorscale=DIVERGING, zmin=-bound,
        zmax=bound, zmid=0, colorbar=dict(title=words("positional.chart.value")),
        hovertemplate=f"{words('positional.chart.position')} %{{y}}, {words('positional.chart.dimension')} %{{x}}"
                      f"<br>{words('positional.chart.value')} %{{z:.4f}}<extra></extra>"))
    fig.update_layout(title=title, height=height or min(700, 200 + 3 * table.shape[0]), margin=MARGIN,
                      xaxis=dict(title=words("positional.chart.dimension_axis")),
                      yaxis=dict(title=words("positional.chart.position_axis"), autorange="reversed"))
    return with_data(fig, ChartData(title or "", maps=(_positions_map(table, words("positional.chart.position_axis"),
                                                                      words("positional.chart.dimension_axis")),)))


def _positions_map(values: np.ndarray, rows_title: str, columns_title: str) -> Map:
    """values (R, C) on axes whose positions 0 … are their labels."""
    return Map(values, numbered_labels(values.shape[0]), numbered_labels(values.shape[1]), row_title=rows_title,
               column_title=columns_title)


DEFAULT_DIMS = [0, 10, 21, 40]  # the curves shown first: sin and cos of four clearly different wavelengths
DASHES = ("solid", "dash", "dot", "dashdot", "longdash", "longdashdot")  # with colour: lines told apart in grey too


def dimension_curves(table: np.ndarray, dims: list[int], title: str = "", fine: np.ndarray | None = None,
                     fine_positions: np.ndarray | None = None, *, words: Words) -> go.Figure:
    """One line per chosen dimension over position: drawn through fine (P, d_model) sampled at fine_positions (P,)
    between the integers when given (a smooth curve), with a dot at each integer position, the table (T, d_model).
    """
    table = np.asarray(table, dtype=float)
    if fine is None:
        fine, fine_positions = table, np.arange(table.shape[0])
    fine, x = np.asarray(fine, dtype=float), np.asarray(fine_positions, dtype=float)
    at_integer = np.isclose(x, np.round(x))  # the positions a sequence actually has
    position = words("positional.chart.position")
    fig = go.Figure([go.Scatter(x=x, y=fine[:, d], mode="lines+markers", name=dimension_name(d, words=words),
                                line=dict(dash=DASHES[n % len(DASHES)], width=2),
                                marker=dict(size=np.where(at_integer, 6, 0).tolist()),
                                hovertemplate=f"{dimension_name(d, words=words)}<br>{position} %{{x:.2f}}: "
                                              "%{y:.4f}<extra></extra>")
                     for n, d in enumerate(dims)])
    fig.update_layout(title=title or words("positional.chart.curves_title"), height=380, margin=MARGIN,
                      xaxis=dict(title=words("positional.chart.position_axis")),
                      yaxis=dict(title=words("positional.chart.curves_y"), range=[-1.1, 1.1]),
                      legend=dict(title=words("positional.chart.dimension")))
    return with_data(fig, ChartData(title or words("positional.chart.curves_title"),
                                    series=tuple(Series("line", x, fine[:, d], dimension_name(d, words=words))
                                                 for d in dims)))


def curves_table(table: np.ndarray, dims: list[int], *, words: Words) -> pd.DataFrame:
    """The curves' numbers at the integer positions (the CSV of the chart; its lines are sampled between them)."""
    frame = pd.DataFrame({dimension_name(d, words=words): np.asarray(table, dtype=float)[:, d] for d in dims})
    frame.index.name = words("positional.chart.position")
    return frame


def dials_and_counter(angles: np.ndarray, bits: np.ndarray, wavelengths: np.ndarray, position: int,
                      per_row: int = 16, *, words: Words) -> go.Figure:
    """angles (d_model // 2,) radians of each pair at `position`; bits (B,) of position, least significant first.

    Each dial is a clock hand that starts at 12 o'clock and turns clockwise by ω_i per position, so its tip is
    (PE(p, 2i), PE(p, 2i+1)). The counter below it is the discrete version: bit j flips every 2^j positions.
    """
    angles, bits, wavelengths = (np.asarray(a, dtype=float) for a in (angles, bits, wavelengths))
    pairs, dial_rows = len(angles), math.ceil(len(angles) / per_row)
    columns = min(pairs, per_row)
    dial_px, bits_px, gap_px = 72 * dial_rows + 24, 60, 85  # pixel heights, so the dials stay round and close
    plot_px = dial_px + bits_px + gap_px
    fig = make_subplots(rows=2, cols=1, row_heights=[dial_px, bits_px], vertical_spacing=gap_px / plot_px,
                        subplot_titles=[words("positional.chart.dials_subtitle", position=position),
                                        words("positional.chart.bits_subtitle", position=position)])
    step = 2.6
    cx = (np.arange(pairs) % per_row) * step  # dial centres, left to right then the next row
    cy = -(np.arange(pairs) // per_row) * step
    # All dial faces as one polyline (NaN between circles): one trace, not one layout shape per dial, which made
    # plotly validate 128 shapes on every rerun (two thirds of this page's server time).
    theta = np.append(np.linspace(0, 2 * np.pi, 41), np.nan)
    fig.add_trace(go.Scatter(x=(cx[:, None] + np.cos(theta)).ravel(), y=(cy[:, None] + np.sin(theta)).ravel(),
                             mode="lines", line=dict(color="#9e9e9e", width=1), hoverinfo="skip", showlegend=False),
                  row=1, col=1)
    tip_x, tip_y = cx + np.sin(angles), cy + np.cos(angles)  # clockwise from 12 o'clock: (sin, cos) = (PE_2i, PE_2i+1)
    hands_x = np.column_stack([cx, tip_x, np.full(pairs, np.nan)]).ravel()
    hands_y = np.column_stack([cy, tip_y, np.full(pairs, np.nan)]).ravel()
    fig.add_trace(go.Scatter(x=hands_x, y=hands_y, mode="lines", line=dict(color="#d62728", width=2),
                             hoverinfo="skip", showlegend=False), row=1, col=1)
    # Plain text (no %{...}): the hover template below only inserts it.
    hover = [words("positional.chart.dial_hover", i=i, dim_sin=2 * i, dim_cos=2 * i + 1,
                   degrees=f"{math.degrees(a):.1f}", radians=f"{a:.3f}", turn=f"{w:,.1f}", sin=f"{math.sin(a):.4f}",
                   cos=f"{math.cos(a):.4f}")
             for i, (a, w) in enumerate(zip(angles, wavelengths))]
    fig.add_trace(go.Scatter(x=tip_x, y=tip_y, mode="markers", marker=dict(color="#d62728", size=6), text=hover,
                             hovertemplate="%{text}<extra></extra>", showlegend=False), row=1, col=1)
    fig.add_trace(go.Scatter(x=cx, y=cy - 1.25, mode="text", text=[str(i) for i in range(pairs)],
                             textfont=dict(size=10, color="#616161"), hoverinfo="skip", showlegend=False), row=1, col=1)
    fig.update_xaxes(title=words("positional.chart.dials_x", per_row=per_row),
                     range=[-1.3, (columns - 1) * step + 1.3], showticklabels=False, showgrid=False, zeroline=False,
                     constrain="domain", row=1, col=1)
    # Equal scales keep the circles round; constrain="domain" shrinks the box instead of padding the range, toward
    # the top: the dials right under their subtitle (centred, they would sit lower, below a projector's fold).
    fig.update_yaxes(title=words("positional.chart.dials_y"), scaleanchor="x", scaleratio=1, constrain="domain",
                     constraintoward="top",
                     range=[-(dial_rows - 1) * step - 1.5, 1.2], showticklabels=False, showgrid=False, zeroline=False,
                     row=1, col=1)
    fig.add_trace(go.Heatmap(
        z=bits[None, :], x=np.arange(len(bits)), y=[0], text=[[str(int(b)) for b in bits]], texttemplate="%{text}",
        colorscale=[[0, "#f5f5f5"], [1, "#1f77b4"]], zmin=0, zmax=1, showscale=False, xgap=3,
        customdata=[[words("positional.chart.bit_hover", j=j, worth=2 ** j) for j in range(len(bits))]],
        hovertemplate="%{customdata}: %{z}<extra></extra>"),
        row=2, col=1)
    fig.update_xaxes(title=words("positional.chart.bits_x"), dtick=1, row=2, col=1)
    fig.update_yaxes(title=words("positional.chart.bit"), showticklabels=False, row=2, col=1)
    fig.update_layout(title=words("positional.chart.dials_title", position=position),
                      height=plot_px + 130, margin=dict(l=10, r=10, t=80, b=50))
    # the lines as drawn: the dials' faces, their hands and the hands' tips (the bits are a colour per bit)
    lines = ((cx[:, None] + np.cos(theta)).ravel(), (cy[:, None] + np.sin(theta)).ravel()), (hands_x, hands_y), \
        (tip_x, tip_y)
    return with_data(fig, ChartData(words("positional.chart.dials_title", position=position),
                                    series=tuple(Series("line", x, y) for x, y in lines)))


def dials_table(angles: np.ndarray, wavelengths: np.ndarray, *, words: Words) -> pd.DataFrame:
    """The dials chart's numbers, one row per (sin, cos) pair: its angle, how often it turns, where its hand points."""
    angles, wavelengths = np.asarray(angles, dtype=float), np.asarray(wavelengths, dtype=float)
    columns = [words(f"positional.chart.table_{name}") for name in ("pair", "angle", "turn", "sin", "cos")]
    return pd.DataFrame(dict(zip(columns, (np.arange(len(angles)), angles, wavelengths, np.sin(angles),
                                           np.cos(angles)))))


def similarity_heatmap(similarity: np.ndarray, title: str = "", *, words: Words) -> go.Figure:
    """similarity (T, T): PE(p)·PE(q); constant along each diagonal when it depends on p − q only."""
    similarity = np.asarray(similarity, dtype=float)
    bound = float(np.abs(similarity).max()) or 1.0
    fig = go.Figure(go.Heatmap(
        z=similarity, x=np.arange(similarity.shape[1]), y=np.arange(similarity.shape[0]), colorscale=DIVERGING,
        zmin=-bound, zmax=bound, zmid=0, colorbar=dict(title="PE(p)·PE(q)"),
        hovertemplate="p %{y}, q %{x} (q − p = %{customdata})<br>PE(p)·PE(q) = %{z:.4f}<extra></extra>",
        customdata=np.arange(similarity.shape[1])[None, :] - np.arange(similarity.shape[0])[:, None]))
    fig.update_layout(title=title or words("positional.chart.similarity_title"),
                      height=min(700, 220 + 3 * len(similarity)), margin=MARGIN,
                      xaxis=dict(title=words("positional.chart.position_q_axis")),
                      yaxis=dict(title=words("positional.chart.position_axis"), autorange="reversed"))
    return with_data(fig, ChartData(title or words("positional.chart.similarity_title"),
                                    maps=(_positions_map(similarity, words("positional.chart.position_axis"),
                                                         words("positional.chart.position_q_axis")),)))


def similarity_by_offset(similarity: np.ndarray, references: list[int], title: str = "", *, words: Words) -> go.Figure:
    """PE(p)·PE(p + Δ) against Δ for a few reference positions p: the lines coincide when only Δ matters."""
    similarity = np.asarray(similarity, dtype=float)
    length = similarity.shape[0]
    fig = go.Figure()
    lines = []
    for n, p in enumerate(references):
        offsets = np.arange(length) - p  # Δ = q − p for q = 0 … T − 1
        lines.append(Series("line", offsets, similarity[p], f"p = {p}"))
        width = max(1.5, 8 - 2 * n)  # thinner lines on top of wider ones, so lines that coincide stay visible
        fig.add_trace(go.Scatter(x=offsets, y=similarity[p], mode="lines", name=f"p = {p}", line=dict(width=width),
                                 hovertemplate=f"p = {p}, Δ = %{{x}}<br>PE(p)·PE(p+Δ) = %{{y:.4f}}<extra></extra>"))
    fig.update_layout(title=title or words("positional.chart.offset_title"),
                      height=380, margin=MARGIN, xaxis=dict(title=words("positional.chart.offset_x")),
                      yaxis=dict(title=words("positional.chart.offset_y")),
                      legend=dict(title=words("positional.chart.reference")))
    return with_data(fig, ChartData(title or words("positional.chart.offset_title"), series=tuple(lines)))


def rotation_matrix_heatmap(rotation: np.ndarray, k: int, *, words: Words) -> go.Figure:
    """rotation (d_model, d_model) M_k: block diagonal, one 2×2 rotation per (sin, cos) pair."""
    size = rotation.shape[0]
    fig = encoding_heatmap(rotation, words("positional.chart.rotation_matrix_title", k=k),
                           height=min(560, 200 + 3 * size), words=words)
    entry = words("positional.chart.entry")
    fig.update_traces(colorbar=dict(title=entry),
                      hovertemplate=f"{words('positional.chart.row')} %{{y}}, {words('positional.chart.column')} %{{x}}"
                                    f"<br>{entry} %{{z:.4f}}<extra></extra>")
    fig.update_layout(xaxis=dict(title=words("positional.chart.rotation_x"), scaleanchor="y", constrain="domain"),
                      yaxis=dict(title=words("positional.chart.rotation_y"), autorange="reversed"))
    matrix = _positions_map(np.asarray(rotation, dtype=float), words("positional.chart.rotation_y"),
                            words("positional.chart.rotation_x"))
    return with_data(fig, ChartData(words("positional.chart.rotation_matrix_title", k=k), maps=(matrix,)))


def rotation_check(shifted: np.ndarray, rotated: np.ndarray, position: int, k: int, *, words: Words) -> go.Figure:
    """shifted, rotated (P, d_model): PE(p + k) and M_k·PE(p) for p = 0 … P − 1; one p compared, then each p's error."""
    shifted, rotated = np.asarray(shifted, dtype=float), np.asarray(rotated, dtype=float)
    error = np.abs(shifted - rotated).max(axis=1)  # (P,)
    dims = np.arange(shifted.shape[1])
    # One above the other: side by side in the page's 3/5 column there is no room for the right one's axis title and
    # its subplot title (projected at 1280×720).
    fig = make_subplots(rows=2, cols=1, vertical_spacing=0.2,
                        subplot_titles=[words("positional.chart.compare_subtitle", p=position, shifted=position + k,
                                              k=k),
                                        words("positional.chart.error_subtitle")])
    dimension = words("positional.chart.dimension")
    fig.add_trace(go.Scatter(x=dims, y=shifted[position], mode="lines+markers",
                             name=words("positional.chart.from_formula", k=k), marker=dict(size=7),
                             hovertemplate=f"{dimension} %{{x}}: %{{y:.6f}}<extra></extra>"), row=1, col=1)
    fig.add_trace(go.Scatter(x=dims, y=rotated[position], mode="markers",
                             name=words("positional.chart.from_rotation", k=k), marker=dict(symbol="x", size=8),
                             hovertemplate=f"{dimension} %{{x}}: %{{y:.6f}}<extra></extra>"), row=1, col=1)
    fig.add_trace(go.Scatter(x=np.arange(len(error)), y=error, mode="lines", name="max |PE(p+k) − M_k·PE(p)|",
                             hovertemplate="p %{x}: %{y:.2e}<extra></extra>"), row=2, col=1)
    fig.update_xaxes(title=dimension, row=1, col=1)
    fig.update_yaxes(title=words("positional.chart.value_axis"), range=[-1.1, 1.1], row=1, col=1)
    fig.update_xaxes(title=words("positional.chart.position_axis"), row=2, col=1)
    fig.update_yaxes(title=words("positional.chart.error_y"), exponentformat="e", rangemode="tozero", row=2, col=1)
    fig.update_layout(title=words("positional.chart.rotation_title", k=k), height=640, margin=MARGIN,
                      legend=dict(orientation="h", y=-0.14))
    return with_data(fig, ChartData(words("positional.chart.rotation_title", k=k), series=(
        Series("line", dims, shifted[position], words("positional.chart.from_formula", k=k)),
        Series("line", dims, rotated[position], words("positional.chart.from_rotation", k=k)),
        Series("line", np.arange(len(error)), error, "max |PE(p+k) − M_k·PE(p)|"))))

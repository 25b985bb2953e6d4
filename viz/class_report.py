"""The class report's charts (pure plotly; the two rounds on the teacher's live screen: altair, as its answer chart): share right per question in round 1 and round 2 (bars), each check
question's share right before and after the lecture (a slope chart), and how often each misconception was picked."""
from __future__ import annotations

import html

import altair as alt
import pandas as pd
import plotly.graph_objects as go
import plotly.io as pio

OKABE_ITO_BLUE, OKABE_ITO_ORANGE, OKABE_ITO_SKY = "#0072B2", "#E69F00", "#56B4E9"


def rounds_bars(labels: list[str], first: list[float | None], second: list[float | None], title: str,
                first_name: str, second_name: str, axis: str) -> go.Figure:
    """Share right (0..1) per question: round 1 beside round 2 (None: no answer in that round, no bar)."""
    fig = go.Figure([
        go.Bar(x=labels, y=first, name=first_name, marker_color=OKABE_ITO_BLUE, texttemplate="%{y:.0%}",
               hovertemplate="%{x}<br>%{y:.0%}<extra>" + first_name + "</extra>"),
        go.Bar(x=labels, y=second, name=second_name, marker_color=OKABE_ITO_ORANGE, texttemplate="%{y:.0%}",
               marker_pattern_shape="/",  # told apart by pattern too, not colour alone
               hovertemplate="%{x}<br>%{y:.0%}<extra>" + second_name + "</extra>")])
    fig.update_layout(title=title, barmode="group", yaxis=dict(title=axis, range=[0, 1.05], tickformat=".0%"),
                      xaxis=dict(type="category"), height=360, margin=dict(t=60, b=40),
                      legend=dict(orientation="h", y=-0.2))
    return fig


def slope_chart(labels: list[str], pre: list[float | None], post: list[float | None], gains: list[str], title: str,
                before: str, after: str, axis: str) -> go.Figure:
    """One line per check question from its share right before to after (0..1), its gain written at the end."""
    fig = go.Figure()
    for label, start, end, gain in zip(labels, pre, post, gains, strict=True):
        if start is None or end is None:
            continue
        fig.add_trace(go.Scatter(x=[before, after], y=[start, end], mode="lines+markers+text", name=label,
                                 text=["", f"{label}: {gain}"], textposition="middle right",
                                 hovertemplate="%{x}: %{y:.0%}<extra>" + label + "</extra>"))
    fig.update_layout(title=title, yaxis=dict(title=axis, range=[0, 1.05], tickformat=".0%"),
                      xaxis=dict(type="category", range=[-0.3, 1.9]), height=360, margin=dict(t=60),
                      showlegend=False)
    return fig


def misconception_bars(ideas: list[str], rates: list[float], title: str, axis: str) -> go.Figure:
    """How often each misconception was picked (share of the answers to its question), most picked at the top."""
    fig = go.Figure(go.Bar(x=rates, y=ideas, orientation="h", marker_color=OKABE_ITO_ORANGE, texttemplate="%{x:.0%}",
                           hovertemplate="%{y}<br>%{x:.0%}<extra></extra>"))
    fig.update_layout(title=title, xaxis=dict(title=axis, range=[0, 1.05], tickformat=".0%"),
                      yaxis=dict(autorange="reversed", automargin=True), height=max(240, 60 + 34 * len(ideas)),
                      margin=dict(t=60))
    return fig


def report_html(title: str, notes: list[str], figures: list[go.Figure], tables: list[tuple[str, str]]) -> str:
    """One self-contained HTML file that opens offline: plotly.js written inline once (from the installed plotly
    package, no CDN), the figures, and the tables (already HTML, escaped by pandas). `notes` are plain text."""
    parts = [pio.to_html(fig, full_html=False, include_plotlyjs=index == 0, config={"displaylogo": False})
             for index, fig in enumerate(figures)]
    body = "\n".join([f"<h1>{html.escape(title)}</h1>", *(f"<p>{html.escape(note)}</p>" for note in notes), *parts,
                      *(f"<h2>{html.escape(name)}</h2>\n{table}" for name, table in tables)])
    return ("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>" + html.escape(title) + "</title>"
            "<style>body{font-family:sans-serif;max-width:1100px;margin:auto;padding:1em}"
            "table{border-collapse:collapse}td,th{border:1px solid #999;padding:4px 8px;text-align:right}</style>"
            "</head><body>\n" + body + "\n</body></html>\n")


def two_rounds_chart(rows: pd.DataFrame, count_title: str, right: str, wrong: str) -> alt.Chart:
    """Both rounds of a peer-instruction question side by side, per answer (pure altair).

    rows: columns answer (text), round (its name, e.g. "Round 1 (alone)"), students (count), right (True/False/None).
    The rounds are two blues (Okabe-Ito), neither right's green nor wrong's orange: before the reveal the chart gives
    no answer away; after it each bar says ✓ right / ✗ wrong beside it (words, not colour alone)."""
    marks = [f"✓ {right}" if r is True else f"✗ {wrong}" if r is False else "" for r in rows["right"]]
    data = rows.drop(columns="right").assign(mark=marks)
    rounds = list(dict.fromkeys(data["round"]))
    encoding = {
        "y": alt.Y("answer:N", title=None, axis=alt.Axis(labelLimit=260, labelFontSize=14)),
        "yOffset": alt.YOffset("round:N", sort=rounds),
        "x": alt.X("students:Q", title=count_title, axis=alt.Axis(tickMinStep=1)),
        "tooltip": ["answer:N", "round:N", "students:Q"]}
    bars = alt.Chart(data).mark_bar().encode(
        color=alt.Color("round:N", title=None, sort=rounds, legend=alt.Legend(orient="bottom", labelLimit=400),
                        scale=alt.Scale(domain=rounds, range=[OKABE_ITO_BLUE, OKABE_ITO_SKY][: len(rounds)])),
        **encoding).properties(height=alt.Step(22))
    return bars + bars.mark_text(align="left", dx=6, fontSize=14, color="#111111").encode(
        text="mark:N", color=alt.value("#111111"))

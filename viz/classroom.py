"""The teacher's answer chart: how many students gave each answer; after the reveal, right answers coloured and
marked ✓ (wrong ones ✗) beside each bar (pure altair)."""
from __future__ import annotations

import altair as alt
import pandas as pd

OKABE_ITO_GREEN, OKABE_ITO_ORANGE, GREY = "#009E73", "#E69F00", "#999999"
NEUTRAL = "#0072B2"  # Okabe-Ito blue: the bars before the reveal, neither right's green nor wrong's orange


def answer_chart(rows: pd.DataFrame, count_title: str, right: str, wrong: str) -> alt.Chart:
    """rows: columns answer (text, shown as plain text), students (count), right (True/False/None).
    The answers label the bars themselves (no axis title: it would overlap long labels)."""
    data = rows.assign(verdict=[right if r is True else wrong if r is False else "?" for r in rows["right"]])
    data = data.drop(columns="right")  # None in a bool column: keep the chart's data to text and numbers
    colours = {right: OKABE_ITO_GREEN, wrong: OKABE_ITO_ORANGE, "?": GREY}
    shown = [v for v in colours if v in set(data["verdict"])]  # no legend entry for a verdict nobody got
    encoding = {
        "y": alt.Y("answer:N", title=None, sort="-x", axis=alt.Axis(labelLimit=320, labelFontSize=14)),
        "x": alt.X("students:Q", title=count_title, axis=alt.Axis(tickMinStep=1)),
        "tooltip": ["answer:N", "students:Q"]}
    if shown == ["?"]:  # nothing graded (before the reveal): one neutral colour, no legend that could hint
        return alt.Chart(data.drop(columns="verdict")).mark_bar(color=NEUTRAL).encode(**encoding).properties(
            height=alt.Step(36))
    # After the reveal each bar also says ✓ right / ✗ wrong beside it: never told by colour alone (WCAG 1.4.1).
    marks = {right: f"✓ {right}", wrong: f"✗ {wrong}", "?": ""}
    bars = alt.Chart(data.assign(mark=[marks[v] for v in data["verdict"]])).mark_bar().encode(
        # No colour legend: the words beside the bars say it, and a legend at the right ran into them.
        color=alt.Color("verdict:N", title=None, legend=None,
                        scale=alt.Scale(domain=shown, range=[colours[v] for v in shown])),
        **encoding).properties(height=alt.Step(36))
    return bars + bars.mark_text(align="left", dx=6, fontSize=14, color="#111111").encode(
        text="mark:N", color=alt.value("#111111"))


READABLE_TEXT = 16  # px: the teacher's charts are projected; every axis label, title and legend at least this


def readable(chart: alt.TopLevelMixin, size: int = READABLE_TEXT) -> alt.TopLevelMixin:
    """The chart with its axis labels and titles and its legend at `size` px (Vega-Lite draws them at 10-11 px)."""
    return chart.configure_axis(labelFontSize=size, titleFontSize=size).configure_legend(
        labelFontSize=size, titleFontSize=size)

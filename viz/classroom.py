"""The teacher's answer chart: how many students gave each answer, right answers coloured (pure altair)."""
from __future__ import annotations

import altair as alt
import pandas as pd

OKABE_ITO_GREEN, OKABE_ITO_ORANGE, GREY = "#009E73", "#E69F00", "#999999"


def answer_chart(rows: pd.DataFrame, count_title: str, right: str, wrong: str) -> alt.Chart:
    """rows: columns answer (text, shown as plain text), students (count), right (True/False/None).
    The answers label the bars themselves (no axis title: it would overlap long labels)."""
    data = rows.assign(verdict=[right if r is True else wrong if r is False else "?" for r in rows["right"]])
    data = data.drop(columns="right")  # None in a bool column: keep the chart's data to text and numbers
    colours = {right: OKABE_ITO_GREEN, wrong: OKABE_ITO_ORANGE, "?": GREY}
    shown = [v for v in colours if v in set(data["verdict"])]  # no legend entry for a verdict nobody got
    return alt.Chart(data).mark_bar().encode(
        y=alt.Y("answer:N", title=None, sort="-x", axis=alt.Axis(labelLimit=320, labelFontSize=14)),
        x=alt.X("students:Q", title=count_title, axis=alt.Axis(tickMinStep=1)),
        color=alt.Color("verdict:N", title=None, scale=alt.Scale(domain=shown, range=[colours[v] for v in shown])),
        tooltip=["answer:N", "students:Q"],
    ).properties(height=alt.Step(36))

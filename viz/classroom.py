"""The teacher's answer chart: how many students gave each answer, right answers coloured (pure altair)."""
from __future__ import annotations

import altair as alt
import pandas as pd

OKABE_ITO_GREEN, OKABE_ITO_ORANGE, GREY = "#009E73", "#E69F00", "#999999"


def answer_chart(rows: pd.DataFrame, answer_title: str, count_title: str, right: str, wrong: str) -> alt.Chart:
    """rows: columns answer (text, shown as plain text), students (count), right (True/False/None)."""
    data = rows.assign(verdict=[right if r is True else wrong if r is False else "?" for r in rows["right"]])
    data = data.drop(columns="right")  # None in a bool column: keep the chart's data to text and numbers
    return alt.Chart(data).mark_bar().encode(
        y=alt.Y("answer:N", title=answer_title, sort="-x"),
        x=alt.X("students:Q", title=count_title, axis=alt.Axis(tickMinStep=1)),
        color=alt.Color("verdict:N", title=None, scale=alt.Scale(domain=[right, wrong, "?"],
                                                                 range=[OKABE_ITO_GREEN, OKABE_ITO_ORANGE, GREY])),
        tooltip=["answer:N", "students:Q"],
    ).properties(height=alt.Step(36))

"""The class report on the teacher's page: per question both rounds, the switch matrix, the check questions' gain
⟨g⟩ (Hake 1998) with the number of students who answered both, the misconceptions picked; plotted, and downloadable
as CSV and as one HTML file that opens offline. Teacher-only: it reads through her handle on the class
(classroom/teacher.ClassTeacher), its files are served to her browser only, and it names nobody: students are the store's random ids,
never shown. Read from the store whenever it is drawn (it is drawn only while its section is open) and each file when
it is downloaded, from what she has revealed (classroom/report.reportable)."""
from __future__ import annotations

import io
import time
from collections.abc import Callable

import pandas as pd
import streamlit as st

from classroom.lessons import Lesson, localized
from classroom.report import ClassReport, build_report, reportable
from classroom.teacher import ClassTeacher
from i18n import current_language, tr, using_language
from serving.private_media import keep_private, private_file_name
from ui.live_class.gradebook import gradebook_downloads
from ui.seat import browser_seat
from viz.attention import csv_safe
from viz.class_report import misconception_bars, report_html, rounds_bars, slope_chart

# Stable column names (the CSV's; the page shows them translated: report.col_<name>)
QUESTION_COLUMNS = ["stop", "question", "round1_answered", "round1_right", "round2_answered", "round2_right",
                    "right_right", "wrong_right", "right_wrong", "wrong_wrong", "grouped"]
# peer instruction's gain with discussion groups formed by disagreement ("groups") and without ("neighbours")
DISCUSSION_COLUMNS = ["discussion", "questions", "pre_right", "post_right", "pairs", "gain"]
CHECK_COLUMNS = ["check", "question", "pre_right", "post_right", "students_both", "gain"]
MISCONCEPTION_COLUMNS = ["misconception", "question", "when", "picks", "answered", "rate"]
TEXT_COLUMNS = ["stop", "question", "text", "students"]  # a text question's approved groups
CELL_COLUMNS = ["stop", "question", "round", "cell", "taps", "right"]  # a cell question's taps per cell
PROJECTED_COLUMNS = ["stop", "question", "kind", "at", "seconds"]  # what she projected: its kind and time, no name
COUNT_COLUMNS = ("stop", "round1_answered", "round2_answered", "right_right", "wrong_right", "right_wrong",
                 "wrong_wrong", "grouped", "questions", "pairs", "students_both", "picks", "answered", "students",
                 "round", "taps", "seconds")
DISCUSSIONS = {True: "groups", False: "neighbours"}  # the CSV's code of each kind of discussion


def report_tables(report: ClassReport, language: str) -> dict[str, pd.DataFrame]:
    """The report as seven tables with stable column names: questions (`grouped`: 1 where the discussion had groups
    formed by disagreement), discussions (round 1 to round 2 in groups and among neighbours, each that occurred),
    checks (the lecture's row last), misconceptions, the texts the teacher approved (per text question, most
    students first), cells (a cell question's taps per cell, "query,key" 1-based) and what she projected (its kind,
    when, for how many seconds; never which answer nor whose)."""
    questions = pd.DataFrame([[q.stop, localized(q.prompt, language), q.first.answered, q.first.share,
                               q.second.answered if q.second else None, q.second.share if q.second else None,
                               q.switches.right_right, q.switches.wrong_right, q.switches.right_wrong,
                               q.switches.wrong_wrong, int(q.grouped)] for q in report.questions],
                             columns=QUESTION_COLUMNS)
    discussions = pd.DataFrame([[DISCUSSIONS[d.grouped], d.questions, d.pre, d.post, d.pairs, d.gain]
                                for d in report.discussions], columns=DISCUSSION_COLUMNS)
    lecture = report.lecture
    checks = pd.DataFrame([[c.check_id, localized(c.prompt, language), c.pre, c.post, c.students, c.gain]
                           for c in report.checks]
                          + [["lecture", tr("report.lecture"), lecture.pre, lecture.post, lecture.students,
                              lecture.gain]], columns=CHECK_COLUMNS)
    misconceptions = pd.DataFrame([[localized(p.idea, language), localized(p.prompt, language), p.when, p.picks,
                                    p.answered, p.rate] for p in report.misconceptions], columns=MISCONCEPTION_COLUMNS)
    texts = pd.DataFrame([[q.stop, localized(q.prompt, language), text, students] for q in report.questions
                          for text, students in q.texts], columns=TEXT_COLUMNS)
    cells = pd.DataFrame([[q.stop, localized(q.prompt, language), t.round, t.cell, t.taps, t.right]
                          for q in report.questions for t in q.taps], columns=CELL_COLUMNS)
    projected = pd.DataFrame([[p.stop, localized(p.prompt, language), p.kind,
                               time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(p.at)),
                               None if p.seconds is None else round(p.seconds)] for p in report.projected],
                             columns=PROJECTED_COLUMNS)
    tables = {"questions": questions, "discussions": discussions, "checks": checks, "misconceptions": misconceptions,
              "texts": texts, "cells": cells, "projected": projected}
    # counts stay whole numbers (also in the CSV, where the tables' other columns are empty)
    return {name: table.astype({c: "Int64" for c in COUNT_COLUMNS if c in table}) for name, table in tables.items()}


def drawn_tables(tables: dict[str, pd.DataFrame]) -> dict[str, pd.DataFrame]:
    """The tables the page and the HTML file draw: the approved texts and what was projected only where there are any
    (the CSV keeps their columns whatever the lesson)."""
    return {name: table for name, table in tables.items() if name not in ("texts", "projected") or not table.empty}


def report_csv(tables: dict[str, pd.DataFrame]) -> bytes:
    """One CSV: the tables one after another, each row tagged with its table (texts made formula-safe)."""
    frames = []
    for name, table in tables.items():
        safe = table.copy()
        for column in ("question", "misconception", "text"):
            if column in safe:
                safe[column] = [csv_safe(str(text)) for text in safe[column]]
        frames.append(safe.assign(table=name))
    buffer = io.StringIO()
    pd.concat(frames, ignore_index=True)[["table", *dict.fromkeys(c for f in frames for c in f.columns
                                                                  if c != "table")]].to_csv(buffer, index=False)
    return buffer.getvalue().encode("utf-8")


def report_figures(report: ClassReport, language: str) -> list:
    share = tr("report.share_right")
    figures = []
    if report.questions:
        figures.append(rounds_bars([tr("report.stop_label", stop=q.stop) for q in report.questions],
                                   [q.first.share for q in report.questions],
                                   [q.second.share if q.second else None for q in report.questions],
                                   tr("report.rounds_title"), tr("peer.round_one"), tr("peer.round_two"), share))
    rows = [c for c in report.checks if c.pre is not None]
    if rows:
        figures.append(slope_chart([c.check_id for c in rows], [c.pre for c in rows], [c.post for c in rows],
                                   [_gain_text(c.gain) for c in rows], tr("report.slope_title"),
                                   tr("report.before"), tr("report.after"), share))
    if report.misconceptions:
        figures.append(misconception_bars([f"{localized(p.idea, language)} ({when_label(p.when)})"
                                           for p in report.misconceptions],
                                          [p.rate for p in report.misconceptions], tr("report.misconceptions_title"),
                                          tr("report.pick_rate")))
    return figures


def _gain_text(gain: float | None) -> str:
    return "⟨g⟩ –" if gain is None else f"⟨g⟩ {gain:.2f}"


def when_label(when: str) -> str:
    """A misconception row's "when" (the CSV's code: 1, 2, pre, post) as the page says it."""
    return {"1": tr("peer.round_one"), "2": tr("peer.round_two"), "pre": tr("report.before"),
            "post": tr("report.after")}.get(when, when)


def _shown(table: pd.DataFrame) -> pd.DataFrame:
    """A table as the page and the HTML file show it: translated column names; rounds, checks, discussions in words."""
    if "when" in table:
        table = table.assign(when=[when_label(w) for w in table["when"]])
    if "grouped" in table:
        table = table.assign(grouped=[tr("report.grouped_yes") if g else tr("report.grouped_no")
                                      for g in table["grouped"]])
    if "kind" in table:  # what was projected: an approved text, a tapped cell, a student's view
        table = table.assign(kind=[tr(f"showcase.kind_{k}") for k in table["kind"]])
    if "discussion" in table:
        table = table.assign(discussion=[tr(f"report.discussion_{d}") for d in table["discussion"]])
    return table.rename(columns={c: tr(f"report.col_{c}") for c in table.columns})


def report_files(teacher: ClassTeacher, lesson: Lesson, language: str, seat: str | None, title: str,
                 notes: list[str]) -> tuple[Callable[[], bytes], Callable[[], bytes]]:
    """The report's CSV and HTML files as functions that read the store when called: an answer stored after the page
    drew the report is in the file. The page hands both to st.download_button, which calls them on their click;
    served to this seat only (serving/private_media.py)."""
    def fresh() -> tuple[ClassReport, dict[str, pd.DataFrame]]:
        read = teacher.report_answers()
        report = build_report(lesson, reportable(read), grouped=read.grouped, approved_texts=read.approved_texts,
                              projections=read.projections)
        return report, report_tables(report, language)

    def csv_file() -> bytes:
        with using_language(language):
            return keep_private(report_csv(fresh()[1]), seat)

    def html_file() -> bytes:  # it carries all of plotly.js: made on its click, not on every run of the page
        with using_language(language):
            report, tables = fresh()
            return keep_private(report_html(title, notes, report_figures(report, language),
                                            [(tr(f"report.table_{n}"), _shown(t).to_html(index=False, na_rep="–",
                                                                                         escape=True))
                                             for n, t in drawn_tables(tables).items()]).encode("utf-8"), seat)

    return csv_file, html_file


def class_report(teacher: ClassTeacher, lesson: Lesson) -> None:
    """Draw the report (inside the teacher's page, in a section drawn only while open) with its CSV and HTML
    downloads. Read from the store on every run that draws it: opening the section reruns the page, and what enters
    the report (a question she reveals, the check questions when she ends the class) comes with a click of hers,
    which reruns the page too. So it holds the answers stored when it is opened or drawn again, and each file holds
    those stored when it is downloaded (built on its click). Only questions she has revealed (the check questions once
    the class ended): the projected page names no right or wrong option of a question the class still answers. The
    downloads are served to her browser only (serving/private_media.py)."""
    read = teacher.report_answers()  # (drawn inside the teacher page's `said`: a refusal is said there)
    language = current_language()
    shown = reportable(read)
    held_back = len({row.question for row in read.rows} - {row.question for row in shown})
    st.caption(tr("report.read_at", time=time.strftime("%H:%M:%S", time.localtime(read.at)), held=held_back))
    report = build_report(lesson, shown, grouped=read.grouped, approved_texts=read.approved_texts,
                          projections=read.projections)
    days = teacher.store.keep_seconds / 86400
    retention = tr("report.retention", days=f"{days:g}")
    st.caption(retention)
    tables = report_tables(report, language)
    lecture = report.lecture
    columns = st.columns(3)
    columns[0].metric(tr("report.lecture_gain"), "–" if lecture.gain is None else f"{lecture.gain:.2f}",
                      help=tr("report.gain_help"))
    columns[1].metric(tr("report.pre_post"), "–" if lecture.pre is None else f"{lecture.pre:.0%} → {lecture.post:.0%}")
    columns[2].metric(tr("report.students_both"), lecture.students)
    figures = report_figures(report, language)
    for index, figure in enumerate(figures):
        st.plotly_chart(figure, key=f"report_figure_{index}")
    for name, table in drawn_tables(tables).items():
        st.markdown(f"**{tr(f'report.table_{name}')}**")
        st.dataframe(_shown(table), hide_index=True)  # cells are plain text
    seat = browser_seat()
    left, right = st.columns(2)
    title = tr("report.title_file", lesson=localized(lesson.title, language), code=teacher.code)
    csv_file, html_file = report_files(teacher, lesson, language, seat, title, [retention, tr("report.gain_help")])
    # Both made on their click (st.download_button calls them then): the answers stored when she downloads
    left.download_button(tr("report.csv"), csv_file, file_name=private_file_name(teacher.code, "csv"),
                         mime="text/csv", key="report_csv", on_click="ignore", help=tr("report.files_help"))
    right.download_button(tr("report.html"), html_file, file_name=private_file_name(teacher.code, "html"),
                          mime="text/html", key="report_html", on_click="ignore", help=tr("report.files_help"))
    gradebook_downloads(teacher, lesson)  # per student and question, for a learning management system

"""The teacher's gradebook export, for a live class as for a self-paced one: CSV files a learning management system
imports, built from the store's answers (classroom/gradebook.py) when she clicks, and served to her browser only.

Three files:
- the gradebook: one row per seat (the seat's label in the class, its identifier: students are anonymous, so she maps
  the labels to her students), one numeric column per question in the lesson's order (1 right, 0 wrong, empty when
  she gave no counted answer or the question is not graded), and `total`, the questions right: the layout Moodle's
  "Import grades from CSV" maps column by column, and a Canvas gradebook takes once its columns are named;
- the answers, one row per answer given (long format): seat, question, round, answer, right (1, 0 or empty), late
  (given after the Reveal or its round: never counted) and when it was stored, in ISO 8601 UTC (the server's clock);
- the class summary, one row per question: how many answered, were graded, were right, and the share right.
A peer-instruction question counts the last round she answered in time (round 2 over round 1). Every text cell is
made safe for a spreadsheet (a seat's label, an answer, a question id starting with = + - @ gets a leading
apostrophe: viz.attention.csv_safe), so a student's words never run as a formula on the teacher's computer.
"""
from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from datetime import UTC, datetime

import streamlit as st

from classroom.gradebook import GradedAnswer, Gradebook
from classroom.lessons import Lesson
from classroom.teacher import ClassTeacher
from i18n import tr
from serving.private_media import keep_private, private_file_name
from ui.live_class.homework import stop_questions
from ui.seat import browser_seat
from viz.attention import csv_safe

GRADEBOOK_COLUMNS = ("seat", "total")  # around the question columns
ANSWER_COLUMNS = ("seat", "question", "round", "answer", "right", "late", "answered_at")
SUMMARY_COLUMNS = ("question", "answered", "graded", "right", "share_right")


def iso_utc(seconds: float) -> str:
    """Unix seconds -> '2026-12-01T18:00:05Z' (ISO 8601, UTC)."""
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def lesson_questions(lesson: Lesson) -> list[str]:
    """The lesson's question ids in its order: each stop's own question, then its check questions."""
    return [qid for stop in lesson.stops for qid in stop_questions(lesson, stop)]


def counted(book: Gradebook) -> dict[tuple[str, str], GradedAnswer]:
    """(seat, question) -> the answer that counts: in time (not late), the last round given."""
    chosen: dict[tuple[str, str], GradedAnswer] = {}
    for answer in book.answers:
        key = (answer.seat, answer.question)
        if not answer.late and (key not in chosen or answer.round > chosen[key].round):
            chosen[key] = answer
    return chosen


def _columns(book: Gradebook, questions: Sequence[str]) -> list[str]:
    """The lesson's questions, then any other question answered in the class (none, as a class keeps its lesson)."""
    return [*questions, *sorted({a.question for a in book.answers} - set(questions))]


def _csv(header: Sequence[str], rows: list[list[object]]) -> bytes:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow([csv_safe(str(cell)) for cell in header])
    for row in rows:
        writer.writerow([csv_safe(cell) if isinstance(cell, str) else cell for cell in row])
    return buffer.getvalue().encode("utf-8")


def _right(answer: GradedAnswer | None) -> str | int:
    return "" if answer is None or answer.correct is None else int(answer.correct)


def gradebook_csv(book: Gradebook, questions: Sequence[str]) -> bytes:
    """One row per admitted seat: its label, a column per question (1, 0, empty), `total` right."""
    columns, chosen = _columns(book, questions), counted(book)
    rows = []
    for seat in book.seats:
        marks = [_right(chosen.get((seat, q))) for q in columns]
        rows.append([seat, *marks, sum(mark for mark in marks if mark != "")])
    return _csv([GRADEBOOK_COLUMNS[0], *columns, GRADEBOOK_COLUMNS[1]], rows)


def answers_csv(book: Gradebook) -> bytes:
    """One row per answer given, as stored, with its time in ISO 8601 UTC."""
    return _csv(ANSWER_COLUMNS, [[a.seat, a.question, a.round, a.answer, _right(a), int(a.late), iso_utc(a.at)]
                                 for a in book.answers])


def summary_csv(book: Gradebook, questions: Sequence[str]) -> bytes:
    """One row per question: how many answered (in time), were graded, were right, and the share right."""
    chosen = list(counted(book).values())
    rows = []
    for question in _columns(book, questions):
        mine = [a for a in chosen if a.question == question]
        graded = [a.correct for a in mine if a.correct is not None]
        rows.append([question, len(mine), len(graded), sum(graded),
                     round(sum(graded) / len(graded), 4) if graded else ""])
    return _csv(SUMMARY_COLUMNS, rows)


def gradebook_downloads(teacher: ClassTeacher, lesson: Lesson) -> None:
    """Her three CSV files, each built from the store on its click (what is stored when she downloads) and served to
    her browser only (serving/private_media.py: a private name, registered to her seat)."""
    seat, questions = browser_seat(), lesson_questions(lesson)
    files = (("gradebook", lambda: gradebook_csv(teacher.gradebook(), questions)),
             ("answers", lambda: answers_csv(teacher.gradebook())),
             ("summary", lambda: summary_csv(teacher.gradebook(), questions)))
    st.markdown(f"**{tr('homework.gradebook_title')}**")
    st.caption(tr("homework.gradebook_help"))
    for column, (kind, build) in zip(st.columns(len(files)), files, strict=True):
        column.download_button(tr(f"homework.{kind}_csv"), lambda build=build: keep_private(build(), seat),
                               file_name=private_file_name(teacher.code, "csv", kind), mime="text/csv",
                               key=f"gradebook_{kind}", on_click="ignore")

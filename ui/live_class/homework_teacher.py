"""The teacher's side of a self-paced class (homework, classroom/self_paced.py): the start form's fields (self-paced,
and the deadline in hours from now: the server's clock) and, in place of the live class's panel, the class's progress
read live from the store (how many students are at each stop, each question's share right), refreshed every few
seconds. The report and the gradebook are in the page's report section, as for a live class (ui/live_class/report.py,
gradebook.py)."""
from __future__ import annotations

import time

import streamlit as st

from classroom.errors import utc_minute
from classroom.lessons import Lesson, localized
from classroom.self_paced import MAX_DEADLINE_DAYS
from classroom.teacher import ClassTeacher
from i18n import current_language, tr
from ui.errors import lab_fragment
from ui.language import reader_zone
from ui.live_class.homework import stop_questions
from ui.live_class.refusals import TEACHER, said

PROGRESS_SECONDS = 5  # her progress tables refresh this often
DEFAULT_HOURS = 48
MAX_HOURS = 24 * MAX_DEADLINE_DAYS


def deadline_fields() -> float | None:
    """Inside the start form: whether the class is self-paced and its deadline -> the deadline (unix seconds, now on
    the server's clock plus the hours she chose), None for a live class."""
    paced, hours = st.columns([1, 1], vertical_alignment="bottom")
    chosen = paced.checkbox(tr("homework.self_paced"), key="class_start_paced", help=tr("homework.self_paced_help"))
    due = hours.number_input(tr("homework.due_in_hours"), min_value=1, max_value=MAX_HOURS, value=DEFAULT_HOURS,
                             step=1, key="class_start_hours", help=tr("homework.due_in_help", days=MAX_DEADLINE_DAYS))
    return time.time() + 3600 * int(due) if chosen else None


def homework_panel(teacher: ClassTeacher, lesson: Lesson) -> None:
    """In place of the live class's stop and controls: the lesson, the deadline and the progress (no stop to move, no
    Reveal: each student reads right or wrong as she answers)."""
    st.subheader(tr("homework.teacher_title", lesson=localized(lesson.title, current_language())))
    _progress(teacher, lesson)


@lab_fragment(run_every=PROGRESS_SECONDS)
def _progress(teacher: ClassTeacher, lesson: Lesson) -> None:
    progress = None
    with said(TEACHER):
        progress = teacher.progress()
    if progress is None:
        return
    due = utc_minute(progress.deadline, reader_zone())
    if progress.past_deadline:
        st.warning(tr("homework.teacher_past", deadline=due), icon=":material/event_busy:")
    else:
        st.info(tr("homework.teacher_due", deadline=due), icon=":material/event:")
    last = len(lesson.stops)
    columns = st.columns(2)
    columns[0].metric(tr("homework.students"), progress.students)
    columns[1].metric(tr("homework.at_last_stop"), progress.at_stop.get(last, 0))
    language = current_language()
    st.markdown(f"**{tr('homework.table_stops')}**")
    st.dataframe([{tr("homework.col_stop"): stop.number, tr("homework.col_title"): localized(stop.title, language),
                   tr("homework.col_students"): progress.at_stop.get(stop.number, 0)} for stop in lesson.stops],
                 hide_index=True, key="homework_stops")
    rows = []
    for stop in lesson.stops:
        asked = [stop.question] * (stop.question is not None) + [check.question for check in stop.checks]
        for qid, question in zip(stop_questions(lesson, stop), asked, strict=True):
            tally = progress.questions.get(qid)
            share = None if tally is None else tally.share_right
            rows.append({tr("homework.col_stop"): stop.number,
                         tr("homework.col_question"): localized(question.prompt, language) or qid,
                         tr("homework.col_answered"): 0 if tally is None else tally.answered,
                         tr("homework.col_right"): "–" if share is None else f"{share:.0%}"})
    if rows:
        st.markdown(f"**{tr('homework.table_questions')}**")
        st.dataframe(rows, hide_index=True, key="homework_questions")
    st.caption(tr("homework.progress_help", time=time.strftime("%H:%M:%S", time.localtime(progress.at))))

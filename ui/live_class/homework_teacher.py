"""The teacher's side of a self-paced class (homework, classroom/self_paced.py): the start form's fields (self-paced,
and the deadline as a date and a time in her own time zone, kept as an instant: the server's clock enforces it) and,
in place of the live class's panel, the class's progress read live from the store (how many students are at each
stop, each question's share right), refreshed every few seconds. The report and the gradebook are in the page's
report section, as for a live class (ui/live_class/report.py, gradebook.py)."""
from __future__ import annotations

import datetime as dt
import time
from typing import NamedTuple
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

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
DEFAULT_DAYS = 2  # the date the form opens on: two days on, at the next full hour
SOONEST_MINUTES = 5  # a deadline closer than this is a slip (no student could answer)


class DeadlineChoice(NamedTuple):
    """What the start form read: self-paced or not, and the deadline's date and time in `zone` (her browser's)."""
    self_paced: bool
    date: dt.date
    time: dt.time
    zone: dt.tzinfo


def _zone(name: str | None) -> dt.tzinfo:
    try:
        return ZoneInfo(name) if name else dt.UTC
    except (ZoneInfoNotFoundError, ValueError):  # a name her browser sent that this server's tz database lacks
        return dt.UTC


def deadline_fields() -> DeadlineChoice:
    """Inside the start form: whether the class is self-paced, and its deadline's date and time in her time zone
    (named in the label; UTC where her browser sent none). Read once the form is sent (deadline_of)."""
    zone = _zone(reader_zone())
    opens = (dt.datetime.now(zone) + dt.timedelta(days=DEFAULT_DAYS)).replace(minute=0, second=0, microsecond=0) \
        + dt.timedelta(hours=1)
    chosen = st.checkbox(tr("homework.self_paced"), key="class_start_paced", help=tr("homework.self_paced_help"))
    day, hour = st.columns([1, 1])
    help_text = tr("homework.due_help", days=MAX_DEADLINE_DAYS)
    date = day.date_input(tr("homework.due_date"), value=opens.date(), min_value=dt.datetime.now(zone).date(),
                          max_value=(dt.datetime.now(zone) + dt.timedelta(days=MAX_DEADLINE_DAYS)).date(),
                          key="class_start_due_date", help=help_text)
    at = hour.time_input(tr("homework.due_time", zone=str(zone)), value=opens.time(), step=dt.timedelta(minutes=15),
                         key="class_start_due_time", help=help_text)
    return DeadlineChoice(chosen, date, at, zone)


def deadline_of(choice: DeadlineChoice, now: float | None = None) -> tuple[float | None, str | None]:
    """The start form's deadline -> (unix seconds or None for a live class, None) or (None, why it is refused): from
    SOONEST_MINUTES on to MAX_DEADLINE_DAYS days, on the server's clock (`now`)."""
    if not choice.self_paced:
        return None, None
    now = time.time() if now is None else now
    if not isinstance(choice.date, dt.date) or not isinstance(choice.time, dt.time):
        return None, tr("homework.due_missing")
    deadline = dt.datetime.combine(choice.date, choice.time, tzinfo=choice.zone).timestamp()
    if deadline < now + 60 * SOONEST_MINUTES:
        return None, tr("homework.due_too_soon", minutes=SOONEST_MINUTES)
    if deadline > now + 86400 * MAX_DEADLINE_DAYS:
        return None, tr("homework.due_too_far", days=MAX_DEADLINE_DAYS)
    return deadline, None


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

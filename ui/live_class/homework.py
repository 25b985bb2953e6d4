"""A student's side of a self-paced class (homework, classroom/self_paced.py): her own stop, her Next, her questions.

The lesson bar (ui/lesson_bar/bar.py) asks this module in a self-paced class only; every rule is the store's: her Next
moves her seat one stop on once her stop's questions are answered (ClassStore.advance, with the questions named here
from the lesson, never by her browser), she opens any stop up to hers and none after it (ui/lesson_bar/stops.go_to
asks furthest_stop), she answers each question once, and the store refuses anything from the deadline on (the
server's clock). She reads right or wrong as soon as she has answered (no peer rounds, no Reveal), with the page under
it, as a student alone does. A reload, a new tab or another day finds her seat, her stop and her answers in the store.
"""
from __future__ import annotations

import time

import streamlit as st

from classroom.errors import utc_minute
from classroom.lesson_questions import shows_page_while_asked
from classroom.lessons import Lesson, Stop, check_question_id, question_id
from classroom.measures import MeasureError
from classroom.store import ClassSession
from i18n import tr
from ui.lessons.measured import worded
from ui.lessons.questions import expected_answer, show_answer
from ui.errors import lab_fragment
from ui.language import reader_zone
from ui.live_class.peer_student import FIRST_ANSWERS, Ballot, vote_form
from ui.live_class.refusals import ANSWER, said
from ui.seat import class_store
from ui.session import lab_session

_vote = lab_fragment()(vote_form)  # her form reruns alone; once the store took her answer, the whole page shows


def paced_class() -> ClassSession | None:
    """This student's class when it is self-paced (None: no class, or a live one)."""
    code = lab_session().seat.code
    session = class_store().shared_session(code) if code else None
    return session if session is not None and session.self_paced else None


def own_stop(lesson: Lesson) -> int | None:
    """The furthest stop she has reached in her self-paced class on this lesson (None: not in one)."""
    session, seat = paced_class(), lab_session().seat
    if session is None or session.lesson != lesson.id:
        return None
    return class_store().own_stop(session.code, seat.student_id or "")


def stop_questions(lesson: Lesson, stop: Stop) -> list[str]:
    """The ids of every question a stop asks (its own, its check questions): what her Next needs answered."""
    own = [question_id(lesson.id, stop)] if stop.question is not None else []
    return own + [check_question_id(lesson.id, check.when, check.id) for check in stop.checks]


def next_stop(lesson: Lesson, number: int) -> None:
    """Her Next to stop `number` (a callback, before the stop opens): the store moves her seat there, or says why not
    (a question of her stop unanswered, the deadline passed). Outside a self-paced class: nothing."""
    session, seat = paced_class(), lab_session().seat
    if session is None or session.lesson != lesson.id or not 1 < number <= len(lesson.stops):
        return
    with said(ANSWER):
        class_store().advance(session.code, seat.student_id or "", number,
                              stop_questions(lesson, lesson.stops[number - 2]), len(lesson.stops))


def next_held(lesson: Lesson, number: int) -> str | None:
    """Why her Next is off at stop `number` (its help text), None when it is on: in a live class, the class's stop (the
    teacher moves it); in a self-paced one, her own stop while a question of it is unanswered, or the deadline."""
    seat = lab_session().seat
    seen = seat.seen if seat.code else None
    if seen is None or seen.lesson != lesson.id:
        return None
    session = paced_class()
    if session is None:
        return tr("lessons.next_follows_teacher") if number >= seen.stop else None
    reached = class_store().own_stop(session.code, seat.student_id or "") or 1
    if number < reached:  # back among the stops she has reached: hers to open again, deadline or not
        return None
    if session.deadline <= time.time():
        return tr("homework.next_past_deadline")
    answered = class_store().answered(session.code, seat.student_id or "")
    if number > reached or not set(stop_questions(lesson, lesson.stops[number - 1])) <= answered:
        return tr("homework.next_answer_first")
    return None


def paced_question(lesson: Lesson, stop: Stop, qid: str) -> bool:
    """Her question in a self-paced class: the form, then (once the store took it) right or wrong and the page.
    -> whether the page shows."""
    session, seat = paced_class(), lab_session().seat
    due = utc_minute(session.deadline, reader_zone())
    if session.deadline <= time.time():
        st.warning(tr("homework.past_deadline", deadline=due), icon=":material/event_busy:")
    else:
        st.caption(tr("homework.due", deadline=due))
    try:
        expected = expected_answer(stop)
    except MeasureError as error:  # her answer is still taken, ungraded: she is never stuck at this stop
        st.warning(tr("lessons.no_answer", line=stop.line or "?", reason=worded(error)))
        expected = None
    answers = lab_session().lesson.answers
    stored = class_store().student_answer(session.code, seat.student_id or "", qid)  # the store's, not a solo one
    answers.pop(qid, None)
    if stored is not None:
        answers[qid] = stored
    ballot = Ballot(stop, qid, f"q_{lesson.id}_{stop.number}", FIRST_ANSWERS, expected, 1, session.code,
                    seat.student_id)
    if shows_page_while_asked(stop.question):  # her answer is a view of the page: it shows while she sets it
        _vote(ballot, then_page=stored is None, done="showcase.view_sent", hint=False)  # sent: her Next comes on
        return True
    if stored is not None:
        show_answer(stop.question, stored, expected)
        return True
    _vote(ballot, then_page=True)
    return False

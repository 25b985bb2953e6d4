"""A student's vote on a stop's question in a live class: one round, or peer instruction (round 1 alone, a discussion
with the teacher's countdown, round 2 with the same options; Crouch & Mazur 2001).

The answer form is an st.fragment: choosing and sending an answer reruns only the form, not the page's charts. The
page (whose chart gives the answer away) shows after the answer in one round; in peer instruction it stays hidden
until the teacher reveals, and so does right or wrong: knowing it before round 2 would end the discussion. Round 1's
distribution is never shown to a student. Answers are kept as the store keeps them (one per round), so a reload or a
replica's death finds both rounds again (the student's id is her seat's: ui/lessons/bar.student_id)."""
from __future__ import annotations

import time
from dataclasses import replace

import streamlit as st

from classroom.lessons import Check, Stop, check_question_id
from classroom.store import NotAdmitted, QuestionPhase, StoreBusy
from i18n import tr
from ui.lessons.classroom import class_store
from ui.page_slots import crowded, note_answer
from ui.errors import page_guard
from ui.lessons.questions import Expected, answer_label, ask, expected_answer, show_answer
from ui.text import escape_markdown

PAGE_OWED = "_lesson_page_owed"  # session_state: an answer taken while the server was crowded; the poll draws its page
SECOND_ANSWERS = "lesson_second_answers"  # session_state: {question id: canonical round-2 answer}
CHECK_ANSWERS = "lesson_check_answers"  # session_state: {check question id: canonical answer}
COUNTDOWN_SECONDS = 1  # the discussion's countdown ticks this often (a fragment with no query: cheap)


def _label(stop: Stop, answer: str) -> str:
    return escape_markdown(answer_label(stop.question, answer))


def store_answer(code: str, student: str, qid: str, given: str, expected: Expected | None, round: int) -> bool:
    """Send the answer to the class; -> False (with a message) when it was not stored."""
    try:
        class_store().answer(code, student, qid, given, None if expected is None else expected.is_right(given),
                             round=round)
        return True
    except StoreBusy:
        st.warning(tr("lessons.busy"))
    except NotAdmitted:
        st.warning(tr("lessons.not_admitted"))
    except LookupError:
        st.warning(tr("lessons.class_ended"))
    return False


@st.fragment
def _vote(stop: Stop, qid: str, key: str, answers_key: str, code: str | None, student: str | None,
          expected: Expected | None, round: int, then_page: bool, done: str | None = None,
          submit: str | None = None) -> None:
    """The form of one round. A sent answer is stored; then the whole page reruns when it now shows the stop's page
    (`then_page`: one round), else the form gives way to the answer taken (this fragment's run only).

    In a class answering at once (every page slot of the process taken: ui/page_slots.py) the whole-page rerun
    would queue behind the class's pages, and so would the words that confirm the answer (issue 24: 13.5 s at
    300 students). Then this run confirms the answer itself, and the student's next class poll (ui/lessons/bar.py,
    every few seconds) draws her page, in the queue."""
    with page_guard():
        answers = st.session_state.setdefault(answers_key, {})
        if qid not in answers:
            slot = st.empty()  # the form, cleared once the answer is stored
            with slot.container():
                given = ask(stop, key, submit)
                if given is None and then_page:  # in the slot: it goes with the form when the answer is confirmed
                    st.info(tr("lessons.answer_first"))
            if given is None:
                return
            if code and not store_answer(code, student, qid, given, expected, round):
                return
            if code:
                note_answer(student)
            answers[qid] = given
            if then_page and (not code or not crowded()):
                st.rerun(scope="app")
            slot.empty()
            if then_page:
                st.session_state[PAGE_OWED] = qid
                show_answer(stop.question, given, expected)
                st.caption(tr("lessons.chart_follows"))
                return
        # answered in this round (peer instruction: wait for the teacher's next phase)
        done = done or ("peer.first_round_done" if round == 1 else "peer.second_round_done")
        st.info(tr(done, answer=_label(stop, answers[qid])), icon=":material/how_to_vote:")


def solo_question(stop: Stop, qid: str, key: str, answers_key: str, expected: Expected | None) -> bool:
    """Outside a class: the form, then the answer and the page."""
    answers = st.session_state.setdefault(answers_key, {})
    if qid in answers:
        show_answer(stop.question, answers[qid], expected)
        return True
    _vote(stop, qid, key, answers_key, None, None, expected, 1, True)
    return False


def class_question(stop: Stop, qid: str, key: str, answers_key: str, code: str, student: str,
                   expected: Expected | None, phase: QuestionPhase, revealed: bool) -> bool:
    """A student in a class: the question as the teacher's phase for it says; -> whether the page may show."""
    store = class_store()
    firsts = st.session_state.setdefault(answers_key, {})
    seconds = st.session_state.setdefault(SECOND_ANSWERS, {})
    for answers, round in ((firsts, 1), (seconds, 2)):  # answered before a reload or on a replica that died
        if qid not in answers and (earlier := store.student_answer(code, student, qid, round=round)) is not None:
            answers[qid] = earlier
    first, second = firsts.get(qid), seconds.get(qid)
    if revealed:  # the last answer counts for the student; after the reveal the question is no longer asked
        show_answer(stop.question, second or first, expected)
        if second is not None and first is not None and first != second:
            st.caption(tr("peer.changed", answer=_label(stop, first)))
        return True
    if phase.mode == "one":
        if first is not None:
            show_answer(stop.question, first, expected)
            return True
        _vote(stop, qid, key, answers_key, code, student, expected, 1, True)
        return False
    if phase.phase == "round1":
        _vote(stop, qid, key, answers_key, code, student, expected, 1, False)
        return False
    if first is not None:
        st.caption(tr("peer.your_first", answer=_label(stop, first)))
    if phase.phase == "discussion":
        st.info(tr("peer.discussion"), icon=":material/forum:")
        if phase.discussion_ends is not None:
            countdown(phase.discussion_ends)
        return False
    if second is None:
        st.markdown(tr("peer.second_round"))
    _vote(stop, qid, f"{key}_round2", SECOND_ANSWERS, code, student, expected, 2, False)
    return False


def check_id(lesson_id: str, check: Check) -> str:
    return check_question_id(lesson_id, check.when, check.id)


def check_questions(lesson_id: str, stop: Stop, code: str, student: str) -> None:
    """A student in a class at the first or last stop: the lecture's check questions, each its own form; the answer
    is taken, never graded on screen (the class report compares before and after)."""
    store = class_store()
    answers = st.session_state.setdefault(CHECK_ANSWERS, {})
    when = stop.checks[0].when
    with st.expander(tr(f"peer.checks_{when}", count=len(stop.checks)), expanded=True, icon=":material/quiz:"):
        for check in stop.checks:
            qid = check_id(lesson_id, check)
            if qid not in answers and (earlier := store.student_answer(code, student, qid)) is not None:
                answers[qid] = earlier
            as_stop = replace(stop, question=check.question)  # the question widgets read a stop's question
            _vote(as_stop, qid, f"check_{when}_{check.id}", CHECK_ANSWERS, code, student,
                  expected_answer(as_stop), 1, False, "peer.check_done", tr("peer.check_submit"))


def clock(seconds: float) -> str:
    """Seconds left -> 'm:ss'."""
    whole = max(0, int(seconds + 0.999))  # 0.2 s left still reads 0:01, never 0:00 before the end
    return f"{whole // 60}:{whole % 60:02d}"


@st.fragment(run_every=COUNTDOWN_SECONDS)
def countdown(ends: float) -> None:
    """The discussion's countdown, the same on every screen (the end is stored: unix seconds)."""
    left = ends - time.time()
    if left > 0:
        st.markdown(f"### {tr('peer.time_left', time=clock(left))}")
    else:
        st.caption(tr("peer.time_up"))

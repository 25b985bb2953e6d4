"""A student's vote on a stop's question in a live class: one round, or peer instruction (round 1 alone, a discussion
with the teacher's countdown, round 2 with the same options; Crouch & Mazur 2001).

The answer form is an st.fragment: choosing and sending an answer reruns only the form, not the page's charts. The
page (whose chart gives the answer away) and right or wrong stay hidden until the teacher reveals, in one round as in
peer instruction: a student who saw them could tell the class, or answer again from a private window (a new student),
and in peer instruction knowing them before round 2 would end the discussion. The store takes an answer only at the
stop the class is on (ClassStore.answer): an answer to a stop the student looks back at is refused, and said so. Round 1's
distribution is never shown to a student. Answers are kept as the store keeps them (one per round), so a reload or a
replica's death finds both rounds again (the student's id is her seat's: ui/lesson_bar/bar.student_id)."""
from __future__ import annotations

import time
from dataclasses import dataclass, replace

import streamlit as st

from classroom.lessons import Check, Stop, check_question_id
from classroom.lesson_questions import shows_page_while_asked
from classroom.errors import AnsweredAlready
from classroom.store import QuestionPhase
from i18n import tr
from ui.seat import class_store
from ui.live_class.countdown import student_countdown
from ui.live_class.peer_groups import talk_line
from ui.live_class.refusals import ANSWER, said
from runtime.page_slots import note_answer
from ui.errors import lab_fragment
from ui.lessons.cell_question import map_again
from ui.lessons.questions import Expected, answer_markdown, answer_shown, ask, expected_answer, show_answer
from ui.lessons.view_question import app_views
from ui.session import lab_session

# The answers this student gave, each a {question id: canonical answer} of the session's lesson state
# (ui.session.LessonState), named by the field: round 1 (or outside a class), round 2, the check questions.
FIRST_ANSWERS, SECOND_ANSWERS, CHECK_ANSWERS = "answers", "second_answers", "check_answers"
COUNTDOWN_SECONDS = 1  # the discussion's countdown ticks this often (a fragment with no query: cheap)


def _label(stop: Stop, answer: str, expected: Expected | None = None) -> str:
    return answer_markdown(stop.question, answer, expected)


@dataclass(frozen=True)
class Ballot:
    """One question's form in one round: the stop that asks it (a check question: the stop with it as its question),
    its id, the form's widget key, which of the student's answers it fills (FIRST_ANSWERS, ...), the round, the
    expected answer; in a class, the class code and the student's id (outside one: None, nothing is sent)."""
    stop: Stop
    qid: str
    key: str
    answers: str
    expected: Expected | None
    round: int = 1
    code: str | None = None
    student: str | None = None


def store_answer(ballot: Ballot, given: str) -> str | None:
    """Send the answer to the class -> the answer that counts (`given`, or the first one this student gave from
    another tab), None when the store refused it (said on the page). The store takes answers only at the stop the
    class is on: one given elsewhere is refused, and said so; a cell question's only on its map (the server's cells,
    never the client's)."""
    store, expected = class_store(), ballot.expected
    right = None if expected is None else expected.is_right(given)
    valid = None if expected is None or expected.cells is None else expected.cells.answers()
    with said(ANSWER, here=ballot.stop.number) as outcome:
        try:
            if ballot.stop.question.kind == "text":  # bounded and rate-limited per seat (classroom/text_answers.py)
                store.answer_text(ballot.code, ballot.student, ballot.qid, given, right, stop=ballot.stop.number)
            elif ballot.stop.question.kind == "view":  # a view of this app, checked again by the store
                given = store.answer_view(ballot.code, ballot.student, ballot.qid, given, app_views(),
                                          stop=ballot.stop.number)
            else:
                store.answer(ballot.code, ballot.student, ballot.qid, given, right, round=ballot.round,
                             stop=ballot.stop.number, valid=valid)
        except AnsweredAlready:  # the first answer counts: this session shows that one
            return store.student_answer(ballot.code, ballot.student, ballot.qid, ballot.round) or given
    return None if outcome.refused else given


def _answers(field: str) -> dict[str, str]:
    """This student's answers of one kind (FIRST_ANSWERS, SECOND_ANSWERS, CHECK_ANSWERS)."""
    return getattr(lab_session().lesson, field)


def vote_form(ballot: Ballot, then_page: bool = False, done: str | None = None, submit: str | None = None,
              hint: bool = True) -> None:
    """The form of one round. A sent answer is stored; then the whole page reruns when it now shows the stop's page
    (`then_page`: outside a class, with no live class holding the stop back), else the form gives way to the answer
    taken (the run of the fragment it is in only: its own, _vote, or a student's live question,
    ui/live_class/live_question.py). In a class the page waits for the teacher's Reveal, so an answer never queues a
    whole-page run behind the class's pages: this run confirms it."""
    stop, qid, code = ballot.stop, ballot.qid, ballot.code
    answers = _answers(ballot.answers)
    if qid not in answers:
        slot = st.empty()  # the form, cleared once the answer is stored
        with slot.container():
            given = ask(stop, ballot.key, submit)
            if given is None and then_page and hint:  # in the slot: it goes with the form once answered
                st.info(tr("lessons.answer_first"))
        if given is None:
            return
        if code and (given := store_answer(ballot, given)) is None:
            if stop.question.kind == "cell":  # the run that sent it left the map out: back for another try
                map_again(stop, ballot.key)
            return
        if code:
            note_answer(ballot.student)
        answers[qid] = given
        if then_page:
            st.rerun(scope="app")
        slot.empty()
    # answered in this round (wait for the teacher's next phase or her Reveal)
    done = done or ("peer.first_round_done" if ballot.round == 1 else "peer.second_round_done")
    st.info(tr(done, answer=_label(stop, answers[qid], ballot.expected)), icon=":material/how_to_vote:")


_vote = lab_fragment()(vote_form)  # a form that reruns alone (outside a class, a check question, a head grid)


def solo_question(stop: Stop, qid: str, key: str, expected: Expected | None,
                  held_back: bool) -> bool:
    """Outside a class: the form, then the answer and the page. `held_back`: a live class on this server is at this
    stop and has not revealed it (ClassStore.live_unrevealed): the answer and the page wait for its Reveal, or a
    student could learn them here (a private window is a new session outside the class) and answer there."""
    answers = _answers(FIRST_ANSWERS)
    if shows_page_while_asked(stop.question):  # her answer is a view of the page: it shows while she sets it
        _vote(Ballot(stop, qid, key, FIRST_ANSWERS, expected), done="showcase.view_sent")
        return True
    if held_back:
        if qid in answers:
            st.info(tr("lessons.held_back", answer=_label(stop, answers[qid], expected)), icon=":material/hourglass_top:")
        else:
            _vote(Ballot(stop, qid, key, FIRST_ANSWERS, expected), done="lessons.held_back")
        return False
    if answer_shown(qid in answers):  # alone, her own answer reveals it
        show_answer(stop.question, answers[qid], expected)
        return True
    _vote(Ballot(stop, qid, key, FIRST_ANSWERS, expected), then_page=True)
    return False


def earlier_answers(qid: str, code: str, student: str) -> None:
    """This student's answers to a class question given before a reload or on a replica that died, from the store
    (a whole run's work: the live question's polls between whole runs read only the class's phase)."""
    store = class_store()
    for answers, round in ((_answers(FIRST_ANSWERS), 1), (_answers(SECOND_ANSWERS), 2)):
        if qid not in answers and (earlier := store.student_answer(code, student, qid, round=round)) is not None:
            answers[qid] = earlier


def class_question(stop: Stop, qid: str, key: str, code: str, student: str,
                   expected: Expected | None, phase: QuestionPhase, revealed: bool, live: bool = True) -> bool:
    """A student in a class: the question as the teacher's phase for it says; -> whether the page may show.
    `live`: drawn inside the student's live question (ui/live_class/live_question.py, a fragment), its forms are plain
    forms whose answer reruns that fragment; else each form is a fragment of its own (_vote)."""
    form = vote_form if live else _vote
    firsts, seconds = _answers(FIRST_ANSWERS), _answers(SECOND_ANSWERS)
    first, second = firsts.get(qid), seconds.get(qid)
    if answer_shown(revealed):  # the last answer counts for the student; after the reveal the question is not asked
        show_answer(stop.question, second or first, expected)
        if second is not None and first is not None and first != second:
            st.caption(tr("peer.changed", answer=_label(stop, first, expected)))
        return True
    if phase.mode == "one":  # the answer is taken; right or wrong, and the page that shows it, come with the Reveal
        done = "showcase.view_sent" if shows_page_while_asked(stop.question) else "lessons.answer_taken"
        form(Ballot(stop, qid, key, FIRST_ANSWERS, expected, 1, code, student), done=done)
        return False
    if phase.phase == "round1":
        form(Ballot(stop, qid, key, FIRST_ANSWERS, expected, 1, code, student))
        return False
    if first is not None:
        st.caption(tr("peer.your_first", answer=_label(stop, first, expected)))
    if phase.phase == "discussion":
        if phase.group_size:  # groups formed by disagreement: whom she talks with, by seat label
            talk_line(code, student, qid)
        else:
            st.info(tr("peer.discussion"), icon=":material/forum:")
        if phase.discussion_ends is not None:
            student_countdown(phase.discussion_ends)  # counted in her browser (ui/live_class/countdown.py)
        return False
    if second is None:
        st.markdown(tr("peer.second_round"))
    form(Ballot(stop, qid, f"{key}_round2", SECOND_ANSWERS, expected, 2, code, student))
    return False


def check_id(lesson_id: str, check: Check) -> str:
    return check_question_id(lesson_id, check.when, check.id)


def check_questions(lesson_id: str, stop: Stop, code: str, student: str) -> bool:
    """A student in a class at the first or last stop: the lecture's check questions, each its own form; the answer
    is taken, never graded on screen (the class report compares before and after). -> whether a "pre" check is still
    unanswered: the stop's text waits for them (it would answer them: the gain would be understated), and the last
    answer reruns the page to show it."""
    store = class_store()
    answers = _answers(CHECK_ANSWERS)
    when = stop.checks[0].when
    for check in stop.checks:
        qid = check_id(lesson_id, check)
        if qid not in answers and (earlier := store.student_answer(code, student, qid)) is not None:
            answers[qid] = earlier
    pending = when == "pre" and any(check_id(lesson_id, check) not in answers for check in stop.checks)
    with st.expander(tr(f"peer.checks_{when}", count=len(stop.checks)), expanded=True, icon=":material/quiz:"):
        for check in stop.checks:
            qid = check_id(lesson_id, check)
            as_stop = replace(stop, question=check.question)  # the question widgets read a stop's question
            _vote(Ballot(as_stop, qid, f"check_{when}_{check.id}", CHECK_ANSWERS, expected_answer(as_stop), 1, code,
                         student), then_page=pending, done="peer.check_done", submit=tr("peer.check_submit"),
                  hint=False)
    return pending


def clock(seconds: float) -> str:
    """Seconds left -> 'm:ss'."""
    whole = max(0, int(seconds + 0.999))  # 0.2 s left still reads 0:01, never 0:00 before the end
    return f"{whole // 60}:{whole % 60:02d}"


@lab_fragment(run_every=COUNTDOWN_SECONDS)
def countdown(ends: float) -> None:
    """The discussion's countdown on the teacher's projected page, the same on every screen (the end is stored: unix
    seconds); a student's is counted in her browser (ui/live_class/countdown.py)."""
    left = ends - time.time()
    if left > 0:
        st.markdown(f"### {tr('peer.time_left', time=clock(left))}")
    else:
        st.caption(tr("peer.time_up"))

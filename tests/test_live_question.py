"""A student's live question (ui/live_class/live_question.py): which rerun each change of her class calls for, and at the
teacher's Reveal the question's own run draws right or wrong and the stop's chart without rerunning her whole page."""
from dataclasses import replace

import pytest
import streamlit
from streamlit.testing.v1 import AppTest

from classroom.database import DATABASE_URL_ENV, store_location
from classroom.records import ClassSession
from classroom.store import ClassStore, QuestionPhase
from ui.lessons.catalogue import lessons
from ui.live_class.live_question import Scope, poll_scope, polls_itself, seen_of

QID = "intro:1"  # stop 1: which model translates long sentences worst (right: option 3)
LIVE = ClassSession("ABC123", "intro", 1, 2e9, frozenset())


def test_which_rerun_each_change_of_the_class_calls_for():
    seen = seen_of(LIVE)
    assert poll_scope(seen, LIVE) is Scope.NOTHING
    # the question's own changes: its fragment redraws itself
    assert poll_scope(seen, replace(LIVE, revealed=frozenset({QID}))) is Scope.FRAGMENT
    discussion = frozenset({QuestionPhase(QID, "peer", "discussion", 2e9, False)})
    assert poll_scope(seen, replace(LIVE, phases=discussion)) is Scope.FRAGMENT
    # the class moved on or back, changed lesson, or ended: the whole page follows it (a new stop, a new page)
    assert poll_scope(seen, replace(LIVE, stop=2)) is Scope.APP
    assert poll_scope(seen, replace(LIVE, stop=2, revealed=frozenset({QID}))) is Scope.APP
    assert poll_scope(seen, replace(LIVE, lesson="llm")) is Scope.APP
    assert poll_scope(seen, None) is Scope.APP
    assert poll_scope(None, LIVE) is Scope.APP  # a page that never saw its class


def test_a_head_grid_is_no_live_question():
    """A head question's grid (a button per head) would be drawn again at every poll of every student still choosing:
    it keeps its own form and the class poll; a short question is a live question."""
    stops = lessons()[0]["intro"].stops
    kinds = {stop.question.kind: polls_itself(stop) for stop in stops if stop.question is not None}
    assert kinds["choice"] and kinds["number"] and not kinds["head"]
    assert not any(polls_itself(stop) for stop in stops if stop.question is None)


def _student_at_stop_one(code: str, student: str, seen: tuple) -> None:
    """A student's live question at stop 1 as the lesson bar draws it, the page not shown under it (unrevealed when
    her last whole run drew it): each run of this script is what a run of the fragment alone does."""
    from ui.lessons.catalogue import lessons
    from ui.live_class.live_question import LiveQuestion, live_question
    from ui.live_class.peer_student import earlier_answers
    from ui.lessons.questions import expected_answer
    from ui.session import lab_session

    stop = lessons()[0]["intro"].stops[0]
    seat = lab_session().seat
    if seat.seen is None:  # her whole run's reading of the class, before the Reveal
        seat.code, seat.student_id, seat.seen = code, student, seen
        earlier_answers("intro:1", code, student)
    live_question(LiveQuestion(stop, "intro:1", "q_intro_1", expected_answer(stop), page_below=False))


@pytest.fixture
def store(tmp_path, monkeypatch) -> ClassStore:
    monkeypatch.setenv("ATTENTION_LAB_DATA", str(tmp_path))
    monkeypatch.delenv(DATABASE_URL_ENV, raising=False)
    return ClassStore(store_location())


def test_the_reveal_is_drawn_by_the_question_alone_and_a_move_reruns_the_page(store, monkeypatch):
    teacher = store.create_class("intro")
    store.join(teacher.code, "s1")
    store.answer(teacher.code, "s1", QID, "1", False, stop=1)
    before = seen_of(store.session(teacher.code))
    reruns: list[str] = []
    monkeypatch.setattr(streamlit, "rerun", lambda scope="app": reruns.append(scope))  # record, do not rerun

    at = AppTest.from_function(_student_at_stop_one, args=(teacher.code, "s1", before), default_timeout=60)
    at.run()
    assert not at.exception and not reruns
    assert not at.get("plotly_chart") and any("Your answer is taken" in i.value for i in at.info)  # before

    teacher.reveal(QID)
    at.run()  # the fragment's timer run after the Reveal
    assert not at.exception and not reruns  # the verdict and the chart come without a whole-page run
    assert any("The model's answer: GRU without attention" in w.value for w in at.warning)
    assert len(at.get("plotly_chart")) == 1  # the stop's section alone: accuracy by sentence length
    # the chart alone, in the view's metric: the metric's radio and the CSV come with the whole page (150 students
    # per replica draw this run at once)
    assert not [r for r in at.radio if r.key == "cmp_metric"] and not at.get("download_button")
    assert at.button(key="revealed_whole_page").label == "Show the whole page"

    teacher.move(2)
    at.run()
    assert reruns == ["app"]  # the class moved: her whole page opens stop 2 (ui/lesson_bar/bar._follow_class)

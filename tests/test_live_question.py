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


CELL_QID, CELL_STOP = "intro:12", 12  # the decoding stop's cell question (tests/test_lessons.CELL_STOP)


def _student_at_the_cell_stop(code: str, student: str, seen: tuple, pick: int) -> None:
    """A student's live question at the cell stop, as _student_at_stop_one's: her pick in the key list (its value
    before the first run, as her tap leaves it), then each run is what a run of the fragment alone does."""
    CELL_QID, CELL_STOP = "intro:12", 12  # noqa: N806 (the script has no module globals)
    from ui.lessons.catalogue import lessons
    from ui.live_class.live_question import LiveQuestion, live_question
    from ui.lessons.questions import expected_answer
    from ui.session import WidgetKey, lab_session

    stop = lessons()[0]["intro"].stops[CELL_STOP - 1]
    seat = lab_session().seat
    if seat.seen is None:
        seat.code, seat.student_id, seat.seen = code, student, seen
        WidgetKey(f"q_intro_{CELL_STOP}_key").set(pick)
    live_question(LiveQuestion(stop, CELL_QID, f"q_intro_{CELL_STOP}", expected_answer(stop), page_below=False))


def test_a_classes_cell_maps_are_built_once_and_the_reveal_draws_the_real_map_alone(store, monkeypatch):
    """Issue 55 at 300 students: the map to tap is one figure for the whole class (and a copy per pick), not one per
    student's run, and at the Reveal each student's question draws the real map (one figure for the class) under her
    verdict instead of rerunning her whole page (the decoding page names no section to draw alone)."""
    import ui.lessons.cell_question as cell_question
    import ui.live_class.cell_results as cell_results
    from ui.charts import _shared_chart

    builds = {"picker": 0, "pick": 0, "answer": 0}

    def counted(name, build):
        def counting(*args, **kwargs):
            builds[name] += 1
            return build(*args, **kwargs)
        return counting

    monkeypatch.setattr(cell_question, "cell_picker", counted("picker", cell_question.cell_picker))
    monkeypatch.setattr(cell_question, "with_pick", counted("pick", cell_question.with_pick))
    monkeypatch.setattr(cell_results, "answer_map", counted("answer", cell_results.answer_map))
    _shared_chart.clear()
    teacher = store.create_class("intro")
    teacher.move(CELL_STOP)
    seen = seen_of(store.session(teacher.code))
    reruns: list[str] = []
    monkeypatch.setattr(streamlit, "rerun", lambda scope="app": reruns.append(scope))
    students = []
    for number, pick in enumerate((1, 1, 2)):
        store.join(teacher.code, f"s{number}")
        at = AppTest.from_function(_student_at_the_cell_stop, args=(teacher.code, f"s{number}", seen, pick),
                                   default_timeout=60)
        at.run()
        assert not at.exception and len(at.get("plotly_chart")) == 1  # the map to tap, its weights hidden
        students.append(at)
    assert builds == {"picker": 1, "pick": 2, "answer": 0}, builds  # one map, a copy per pick (1, 2): for the class
    for at in students:
        at.button(key=f"q_intro_{CELL_STOP}_submit").click().run()
        assert not at.exception and any("Your answer is taken" in i.value for i in at.info)
    assert store.stored_answers(teacher.code) == 3
    # a run that sends an answer leaves the map out (the confirmation replaces the question); one the store refuses
    # (a seat the class has not let in) draws it again under the refusal, for another try
    outsider = AppTest.from_function(_student_at_the_cell_stop, args=(teacher.code, "s9", seen, 2), default_timeout=60)
    outsider.run()
    outsider.button(key=f"q_intro_{CELL_STOP}_submit").click().run()
    assert not outsider.exception and any("not let you in" in w.value for w in outsider.warning)
    assert len(outsider.get("plotly_chart")) == 1 and store.stored_answers(teacher.code) == 3
    teacher.reveal(CELL_QID)
    for at in students:
        at.run()  # her class watch's run of the fragment after the Reveal
        assert not at.exception and not reruns  # no whole-page run
        (chart,) = at.get("plotly_chart")
        assert "The real map" in chart.proto.spec and '"zmax"' in chart.proto.spec  # the weights, shown now
        assert at.success or at.warning  # her verdict above it
    assert builds["answer"] == 1, builds  # one real map for the class

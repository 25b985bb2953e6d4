"""Self-paced classes (homework, classroom/self_paced.py): each seat's own stop, one answer per question, none ahead of
her stop, nothing from the deadline on (the server's clock, injected as `now`), the teacher's progress and gradebook,
purge. Every test runs on SQLite and on PostgreSQL (tests/conftest.py's `store_location`)."""
import pytest

from classroom.errors import (AnsweredAlready, NotAdmitted, NotAnsweredYet, NotOpenYet, NotReached, NotTheTeacher,
                              PastDeadline)
from classroom.report import reportable
from classroom.self_paced import MAX_DEADLINE_DAYS, REPORT_GRACE_SECONDS
from classroom.store import ADMITTED, ClassStore

T0 = 1_800_000_000.0  # the server's clock at the class's start (unix seconds)
DAY = 86400.0
STOP1 = ("hw:1", "hw:pre:scale")  # stop 1's own question and its "pre" check question


@pytest.fixture()
def store(store_location):
    store = ClassStore(store_location)
    yield store
    store.close()


def _homework(store, days=2.0, students=("ana", "bo")):
    teacher = store.create_class("hw", now=T0, deadline=T0 + days * DAY)
    for student in students:
        assert store.join(teacher.code, student, now=T0 + 1) == ADMITTED
    return teacher, teacher.code


def test_a_deadline_is_after_now_and_within_its_bound_and_the_class_outlives_the_class_hours(store):
    for deadline in (T0, T0 - 1, T0 + MAX_DEADLINE_DAYS * DAY + 1):
        with pytest.raises(ValueError):
            store.create_class("hw", now=T0, deadline=deadline)
    teacher, code = _homework(store, days=3)
    session = store.session(code, now=T0 + 2 * DAY)  # long past the live class's 4 hours
    assert session.deadline == T0 + 3 * DAY and session.expires == T0 + 3 * DAY + REPORT_GRACE_SECONDS
    assert store.session(code, now=T0 + 3 * DAY + REPORT_GRACE_SECONDS) is None
    live = store.create_class("hw", now=T0)
    assert store.session(live.code, now=T0).deadline is None
    # a self-paced class holds nothing back on pages opened outside it (it has no class stop and no Reveal)
    assert not store.live_unrevealed("hw", 2, "hw:2", now=T0 + 1) and store.live_unrevealed("hw", 1, "hw:1", now=T0)
    assert [lesson for lesson, *_ in store.live_positions(now=T0 + 1)] == ["hw"]


def test_each_student_answers_at_her_own_pace_once_each_and_never_ahead(store):
    teacher, code = _homework(store)
    now = T0 + 60
    store.answer(code, "ana", "hw:1", "B", True, now, stop=1)
    with pytest.raises(AnsweredAlready):  # the first answer counts
        store.answer(code, "ana", "hw:1", "A", False, now, stop=1)
    with pytest.raises(NotReached) as ahead:  # a stop she has not reached
        store.answer(code, "ana", "hw:2", "A", True, now, stop=2)
    assert ahead.value.stop == 1
    with pytest.raises(NotAnsweredYet):  # Next with stop 1's check question unanswered
        store.advance(code, "ana", 2, STOP1, last=3, now=now)
    store.answer(code, "ana", "hw:pre:scale", "x", None, now, stop=1)
    assert store.advance(code, "ana", 2, STOP1, last=3, now=now) == 2
    with pytest.raises(NotReached):  # one stop at a time
        store.advance(code, "ana", 4, ("hw:2",), last=3, now=now)
    teacher.move(3, now)  # the teacher's move is no way ahead: a self-paced class has no class stop to move
    assert store.session(code).stop == 1
    with pytest.raises(NotReached):
        store.answer(code, "ana", "hw:3", "A", True, now, stop=3)
    assert store.advance(code, "ana", 1, (), last=3, now=now) == 2  # looking back keeps her place
    store.answer(code, "ana", "hw:2", "A", False, now, stop=2)
    with pytest.raises(NotOpenYet):  # no second round in a self-paced class
        store.answer(code, "ana", "hw:2", "A", True, now, round=2, stop=2)
    assert store.advance(code, "ana", 3, ("hw:2",), last=3, now=now) == 3
    with pytest.raises(NotReached):  # past the last stop
        store.advance(code, "ana", 4, (), last=3, now=now)
    # bo is still at stop 1: her pace is her own
    assert store.own_stop(code, "bo", now) == 1 and store.own_stop(code, "ana", now) == 3
    with pytest.raises(NotReached):
        store.answer(code, "bo", "hw:2", "A", True, now, stop=2)
    with pytest.raises(NotAdmitted):
        store.answer(code, "stranger", "hw:1", "A", True, now, stop=1)
    # she leaves and comes back on the same seat: her place and her answers are kept
    assert store.join(code, "ana", now=now + 3600) == ADMITTED and store.own_stop(code, "ana", now + 3600) == 3
    assert store.student_answer(code, "ana", "hw:2") == "A"
    progress = teacher.progress(now=now)
    assert progress.at_stop == {1: 1, 3: 1} and progress.students == 2 and not progress.past_deadline
    tally = progress.questions["hw:2"]
    assert (tally.answered, tally.graded, tally.right, tally.share_right) == (1, 1, 0, 0.0)
    assert progress.questions["hw:pre:scale"].share_right is None  # not graded
    with pytest.raises(NotTheTeacher):
        store.teacher(code, "wrong", "hw").progress(now=now)


def test_after_the_deadline_the_store_refuses_answers_and_moves_with_the_deadline_in_its_words(store):
    teacher, code = _homework(store, days=1)
    deadline = T0 + DAY
    store.answer(code, "ana", "hw:1", "B", True, deadline - 1, stop=1)
    for late in (deadline, deadline + 3600):
        with pytest.raises(PastDeadline) as refused:
            store.answer(code, "bo", "hw:1", "B", True, late, stop=1)
        assert refused.value.deadline == deadline
        assert refused.value.values() == {"deadline": "2027-01-16 08:00 UTC"}
        with pytest.raises(PastDeadline):
            store.advance(code, "ana", 2, ("hw:1",), last=3, now=late)
    assert store.stored_answers(code) == 1  # nothing stored after it
    # the teacher reads her progress, report and gradebook after the deadline (and after the class ends)
    assert teacher.progress(now=deadline + 60).past_deadline
    assert [row.answer for row in teacher.report_answers(now=deadline + REPORT_GRACE_SECONDS + 60).rows] == ["B"]
    book = teacher.gradebook(now=deadline + 60)
    assert [(a.question, a.answer, a.correct, a.at) for a in book.answers] == [("hw:1", "B", True, deadline - 1)]
    assert len(book.seats) == 2


def test_the_report_of_a_self_paced_class_holds_every_answer_a_live_ones_waits_for_reveals(store):
    paced, code = _homework(store)
    store.answer(code, "ana", "hw:1", "B", True, T0 + 5, stop=1)
    store.answer(code, "ana", "hw:pre:scale", "2", True, T0 + 6, stop=1)
    assert {row.question for row in reportable(paced.report_answers(now=T0 + 7))} == {"hw:1", "hw:pre:scale"}
    live = store.create_class("hw", now=T0)
    store.join(live.code, "ana", now=T0)
    store.answer(live.code, "ana", "hw:1", "B", True, T0 + 5, stop=1)
    assert reportable(live.report_answers(now=T0 + 7)) == []  # nothing before its Reveal


def test_a_live_class_keeps_its_class_stop_rules(store):
    teacher = store.create_class("hw", now=T0)
    store.join(teacher.code, "ana", now=T0)
    with pytest.raises(NotAdmitted):  # the live class has no seat stops to advance
        store.advance(teacher.code, "ana", 2, (), last=3, now=T0)
    assert store.own_stop(teacher.code, "ana", T0) is None


def test_purge_keeps_a_self_paced_class_answers_until_the_keep_time_after_it_ends(store_location):
    store = ClassStore(store_location, keep_days=7)
    try:
        teacher, code = _homework(store, days=20)
        store.answer(code, "ana", "hw:1", "B", True, T0 + 10, stop=1)
        live = store.create_class("hw", now=T0)
        store.join(live.code, "ana", now=T0)
        store.answer(live.code, "ana", "hw:1", "C", True, T0 + 10, stop=1)
        store.purge(now=T0 + 9 * DAY)  # the live class's answers are past the keep time; the homework is still open
        assert store.stored_answers(code) == 1 and store.stored_answers(live.code) == 0
        store.purge(now=T0 + 20 * DAY + REPORT_GRACE_SECONDS + 7 * DAY + 1)
        assert store.stored_answers(code) == 0
    finally:
        store.close()


def test_a_deadline_is_said_in_the_readers_time_zone_beside_the_servers_utc():
    """Her browser's zone first (what 'due Thursday 9:00' means to her), UTC beside it (the store's clock); a zone name
    this machine lacks, or any other text a browser sends, gives UTC alone."""
    from classroom.errors import utc_minute

    at = 1_796_244_600.0  # 2026-12-02 20:50 UTC
    assert utc_minute(at) == "2026-12-02 20:50 UTC"
    assert utc_minute(at, "Asia/Seoul") == "2026-12-03 05:50 Asia/Seoul (2026-12-02 20:50 UTC)"
    for other in ("UTC", "Etc/UTC", "Not/AZone", "../etc/passwd", "*bold*", ""):
        assert utc_minute(at, other) == "2026-12-02 20:50 UTC", other


def test_a_replica_restart_keeps_her_stop_and_every_answer(store_location):
    """Issue 57's reliability: a self-paced class lives in the store, not in a replica; a store opened again on the same
    database (a restarted replica, or the other one) finds her stop, her answers and the class's deadline."""
    first = ClassStore(store_location)
    teacher, code = _homework(first)
    first.answer(code, "ana", "hw:1", "B", True, T0 + 60, stop=1)
    first.answer(code, "ana", "hw:pre:scale", "x", None, T0 + 61, stop=1)
    assert first.advance(code, "ana", 2, STOP1, last=3, now=T0 + 62) == 2
    first.close()
    again = ClassStore(store_location)
    try:
        assert again.own_stop(code, "ana", now=T0 + 3600) == 2 and again.own_stop(code, "bo", now=T0 + 3600) == 1
        assert again.answered(code, "ana") == {"hw:1", "hw:pre:scale"}
        with pytest.raises(AnsweredAlready):  # still one answer each
            again.answer(code, "ana", "hw:1", "A", False, T0 + 3601, stop=1)
        assert again.session(code, now=T0 + 3600).deadline == T0 + 2 * DAY
    finally:
        again.close()

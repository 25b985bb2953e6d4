"""The live class's store (classroom/store.py): tokens, one answer per student, expiry, floods, two processes.

Every test that takes `store` or `store_location` runs twice: on a SQLite file and on a real PostgreSQL server
(tests/conftest.py starts one per session from Debian's package)."""
import multiprocessing
import sqlite3
import threading
import time

import pytest

from tests.test_class_schema import run_script
from classroom.errors import (AnsweredAlready, ClassEnded, NoSuchClass, NotAdmitted, NotOpenYet, NotTheTeacher,
                              OffTheMap, RoundOneOpen)
from classroom.partners import partners, seat_label_of
from classroom.store import (DATABASE_URL_ENV, MAX_CLASS_SIZE, ClassElsewhere, ClassStore, QuestionPhase, StoreBusy,
                             Switches, is_postgres, normalise_code, store_location, to_postgres)


@pytest.fixture()
def store(store_location):
    store = ClassStore(store_location)
    yield store
    store.close()


def test_teacher_token_guards_results_reveal_and_move(store):
    teacher = store.create_class("intro", stop=3)
    code = teacher.code
    assert normalise_code(code.lower()[:3] + " " + code[3:]) == code
    store.join(code, "student-a")
    store.answer(code, "student-a", "intro:3", "1", True, stop=3)
    for token in ("wrong", ""):
        impostor = store.teacher(code, token, "intro")
        for method, args in ((impostor.results, ("intro:3",)), (impostor.move, (5,)),
                             (impostor.reveal, ("intro:3",)), (impostor.seats, ()), (impostor.report_answers, ())):
            with pytest.raises(NotTheTeacher) as error:
                method(*args)
            assert error.value.code == code
    assert store.session(code).stop == 3 and store.session(code).revealed == frozenset()
    teacher.move(5)
    assert store.session(code).stop == 5
    teacher.reveal("intro:3")
    assert "intro:3" in store.session(code).revealed
    assert teacher.results("intro:3").counts == {"1": 1}
    other = store.create_class("intro")
    with pytest.raises(NotTheTeacher):  # one class's token opens no other class
        store.teacher(other.code, teacher.token, "intro").results("intro:3")
    with pytest.raises(NoSuchClass):
        store.teacher("ZZZZZZ", teacher.token, "intro").results("intro:3")


def test_a_student_answering_a_thousand_times_counts_once(store):
    teacher = store.create_class("intro")
    code = teacher.code
    store.join(code, "same-student")
    store.answer(code, "same-student", "q", "0", True, stop=1)
    for i in range(1, 1000):
        with pytest.raises(AnsweredAlready):
            store.answer(code, "same-student", "q", str(i % 3), i % 3 == 0, stop=1)
    results = teacher.results("q")
    assert results.answered == 1 and results.counts == {"0": 1} and results.correct == 1
    assert store.student_answer(code, "same-student", "q") == "0"
    assert store.stored_answers(code) == 1


def test_distribution_share_correct_and_ungraded_answers(store):
    teacher = store.create_class("intro")
    code = teacher.code
    for student in "abc":
        store.join(code, student)
    for student, answer, correct in (("a", "L2 H3", True), ("b", "L2 H3", True), ("c", "L1 H1", False)):
        store.answer(code, student, "q", answer, correct, stop=1)
    results = teacher.results("q")
    assert results.counts == {"L1 H1": 1, "L2 H3": 2} and results.answered == 3 and results.correct == 2
    store.answer(code, "a", "free", "<b>hi</b>", None, stop=1)
    assert teacher.results("free").correct is None  # nothing to grade against
    assert teacher.results("free").counts == {"<b>hi</b>": 1}  # stored as text; the UI shows it as text


def test_wrong_and_expired_codes(store):
    assert normalise_code("") == "" and normalise_code("<script>") == "" and normalise_code("ABCDE0") == ""
    assert store.session("ZZZZZZ") is None
    with pytest.raises(NoSuchClass) as unknown:
        store.answer("ZZZZZZ", "s", "q", "1", True, stop=1)
    assert type(unknown.value) is NoSuchClass
    now = time.time()
    teacher = store.create_class("intro", now=now)
    code = teacher.code
    assert store.session(code, now=now + 3.9 * 3600) is not None
    assert store.session(code, now=now + 4.1 * 3600) is None  # default: a class lasts 4 h
    with pytest.raises(ClassEnded):
        store.answer(code, "s", "q", "1", True, now=now + 4.1 * 3600, stop=1)
    with pytest.raises(ClassEnded):
        teacher.move(2, now=now + 4.1 * 3600)


def test_answers_are_deleted_after_the_keep_time(store_location):
    store = ClassStore(store_location, keep_days=7)
    now = time.time()
    teacher = store.create_class("intro", now=now)
    code = teacher.code
    store.join(code, "s", now=now + 30)
    store.answer(code, "s", "q", "1", True, now=now + 60, stop=1)
    store.purge(now=now + 6 * 86400)
    assert store.student_answer(code, "s", "q") == "1"
    store.purge(now=now + 8 * 86400)
    assert store.student_answer(code, "s", "q") is None
    store.close()


def test_times_keep_their_seconds(store):
    """A class ends at the second it was told to (PostgreSQL's REAL would round unix seconds to about 2 minutes)."""
    now = 1_764_000_000.25
    teacher = store.create_class("intro", now=now)
    code = teacher.code
    assert store.session(code, now=now).expires == now + 4 * 3600
    teacher.end(now=now + 10)
    assert store.session(code, now=now + 9.5) is not None and store.session(code, now=now + 10.5) is None
    store.record_failure("code", ("ip:1",), now=now)
    assert store.failures("code", "ip:1", 600, now=now + 100) == (1, now)


def test_the_teacher_takes_the_class_back_and_controls_it(store):
    teacher = store.create_class("intro", teacher_seat="seat-1", lesson_source="[lesson]")
    code = teacher.code
    assert store.class_of_seat("seat-1") == code and store.class_of_seat("seat-2") is None
    second = store.take_back(code, seat="seat-2")
    assert (second.code, second.lesson) == (code, "intro") and second.token != teacher.token
    assert store.class_of_seat("seat-2") == code
    teacher.move(3)
    second.move(4)  # both devices keep control
    assert store.session(code).stop == 4
    with pytest.raises(NoSuchClass):
        store.take_back("ZZZZZZ")
    assert store.session(code).lesson_source == "[lesson]" and store.session(code).uploads
    with pytest.raises(NotTheTeacher):
        store.teacher(code, "wrong", "intro").set_uploads(False)
    second.set_uploads(False)
    assert not store.session(code).uploads
    teacher.reveal("q")
    teacher.reveal("q")  # revealing twice is harmless
    teacher.end()
    assert store.session(code) is None
    with pytest.raises(ClassEnded):
        store.take_back(code)


def test_wrong_guesses_are_counted_per_client_within_the_window(store):
    now = time.time()
    for i in range(3):
        store.record_failure("code", ("ip:10.0.0.1", f"session:{i}"), now=now + i)
    assert store.failures("code", "ip:10.0.0.1", 600, now=now + 3)[0] == 3
    assert store.failures("code", "session:0", 600, now=now + 3)[0] == 1
    assert store.failures("password", "ip:10.0.0.1", 600, now=now + 3)[0] == 0
    assert store.failures("code", "ip:10.0.0.1", 600, now=now + 601.5)[0] == 1  # the first two left the window


def _answer_many(path: str, code: str, prefix: str, count: int) -> None:
    store = ClassStore(path)
    for i in range(count):
        store.join(code, f"{prefix}-{i}")
        store.answer(code, f"{prefix}-{i}", "q", prefix, True, stop=1)
    store.close()


@pytest.mark.slow
def test_two_processes_write_to_one_database_and_the_teacher_sees_both(store_location):
    path = store_location
    teacher = ClassStore(path).create_class("intro", class_size=MAX_CLASS_SIZE)
    code = teacher.code
    spawn = multiprocessing.get_context("spawn")  # two fresh interpreters, like two server replicas
    workers = [spawn.Process(target=_answer_many, args=(str(path), code, name, 150)) for name in ("one", "two")]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(60)
        assert worker.exitcode == 0
    assert teacher.results("q").counts == {"one": 150, "two": 150}


def _flood(store: ClassStore, code: str, per_second: int, seconds: float, threads: int) -> tuple[int, int, int]:
    """`per_second` answers a second from `threads` threads, each a different student -> (sent, stored, refused)."""
    sent, stored, refused = [0] * threads, [0] * threads, [0] * threads
    start = time.perf_counter()
    total = int(per_second * seconds)

    def work(t: int) -> None:
        for i in range(t, total, threads):
            delay = start + i / per_second - time.perf_counter()  # paced: answer i is due at i / rate
            if delay > 0:
                time.sleep(delay)
            sent[t] += 1
            try:
                store.join(code, f"student-{i}")  # each a new student, admitted (the class is as large as the flood)
                store.answer(code, f"student-{i}", "q", str(i % 4), i % 4 == 0, stop=1)
                stored[t] += 1
            except StoreBusy:
                refused[t] += 1  # the UI says "not saved, answer again": refused with a message

    pool = [threading.Thread(target=work, args=(t,)) for t in range(threads)]
    for thread in pool:
        thread.start()
    for thread in pool:
        thread.join()
    return sum(sent), sum(stored), sum(refused)


def test_a_burst_of_answers_from_many_threads_is_all_stored(store):
    teacher = store.create_class("intro", class_size=MAX_CLASS_SIZE)
    code = teacher.code
    sent, stored, refused = _flood(store, code, per_second=100_000, seconds=0.006, threads=8)  # as fast as possible
    assert sent == 600 and stored + refused == sent
    assert teacher.results("q").answered == stored


@pytest.mark.slow
def test_200_answers_a_second_for_10_seconds_are_stored_or_refused_none_lost(store):
    teacher = store.create_class("intro", class_size=MAX_CLASS_SIZE)
    code = teacher.code
    sent, stored, refused = _flood(store, code, per_second=200, seconds=10, threads=16)
    assert sent == 2000 and stored + refused == sent
    results = teacher.results("q")
    assert results.answered == stored  # every answer the store said it kept is there
    if refused == 0:
        assert results.correct == 500  # every fourth answer is right


def test_answer_chart_counts_and_colours():
    import json

    import pandas as pd

    from viz.classroom import answer_chart

    rows = pd.DataFrame({"answer": ["<b>x</b>", "L2 H2"], "students": [1, 3], "right": [False, True]})
    spec = answer_chart(rows, "students", "right", "wrong").to_dict()
    data = next(iter(spec["datasets"].values()))
    assert {(d["answer"], d["students"], d["verdict"]) for d in data} == {("<b>x</b>", 1, "wrong"),
                                                                        ("L2 H2", 3, "right")}
    bars, marks = spec["layer"]
    assert bars["encoding"]["color"]["scale"]["domain"] == ["right", "wrong"]  # no "?" entry when all are graded
    assert marks["encoding"]["text"]["field"] == "mark"  # right and wrong said beside each bar, not by colour alone
    assert {(d["answer"], d["mark"]) for d in data} == {("<b>x</b>", "✗ wrong"), ("L2 H2", "✓ right")}
    assert json.dumps(spec)  # plain JSON: the answer text is data, never markup


# ---- the two engines behind one module
def test_the_database_url_in_the_environment_picks_postgresql(monkeypatch, tmp_path):
    monkeypatch.setenv("ATTENTION_LAB_DATA", str(tmp_path))
    monkeypatch.delenv(DATABASE_URL_ENV, raising=False)
    assert store_location() == str(tmp_path / "classroom.sqlite3") and not is_postgres(store_location())
    monkeypatch.setenv(DATABASE_URL_ENV, "postgresql://lab:secret@db.school.example:5432/attention")
    assert is_postgres(store_location()) and store_location().endswith("/attention")


def test_a_store_opened_from_the_environment_is_the_database_it_names(store_location, monkeypatch, tmp_path):
    """ClassStore() with no argument (what every replica does) reads and writes the database the DSN names."""
    monkeypatch.setenv("ATTENTION_LAB_DATA", str(tmp_path / "unused"))
    if is_postgres(store_location):
        monkeypatch.setenv(DATABASE_URL_ENV, store_location)
    else:
        monkeypatch.delenv(DATABASE_URL_ENV, raising=False)
        monkeypatch.setenv("ATTENTION_LAB_DATA", str(tmp_path))
        store_location = str(tmp_path / "classroom.sqlite3")
    from_environment = ClassStore()
    teacher = from_environment.create_class("intro")
    code = teacher.code
    from_environment.join(code, "s")
    from_environment.answer(code, "s", "q", "1", True, stop=1)
    named = ClassStore(store_location)
    assert named.teacher(code, teacher.token, "intro").results("q").counts == {"1": 1}
    assert (from_environment.postgres, from_environment.path is None) == (is_postgres(store_location),) * 2
    from_environment.close()
    named.close()


OLD_SCHEMA = """
CREATE TABLE classes (code TEXT PRIMARY KEY, token_sha256 TEXT NOT NULL, lesson TEXT NOT NULL, stop INTEGER NOT NULL,
                      created REAL NOT NULL, expires REAL NOT NULL);
CREATE TABLE answers (code TEXT NOT NULL, question TEXT NOT NULL, student TEXT NOT NULL, answer TEXT NOT NULL,
                      correct INTEGER, created REAL NOT NULL, PRIMARY KEY (code, question, student));
INSERT INTO classes VALUES ('ABCDEF', 'x', 'intro', 2, 0, 9e9);
INSERT INTO answers VALUES ('ABCDEF', 'q', 'early', '1', 1, 0);
"""


def test_a_database_of_the_first_release_gains_the_new_columns(store_location):
    """Classes and answers made before teacher_seat, lesson_source, uploads and late still work after an upgrade."""
    run_script(store_location, OLD_SCHEMA)
    store = ClassStore(store_location)
    old = store.session("ABCDEF", now=1.0)
    assert (old.stop, old.uploads, old.lesson_source) == (2, True, None)
    assert store.student_answer("ABCDEF", "early", "q") == "1"
    teacher = store.create_class("intro", teacher_seat="seat", lesson_source="text")
    code = teacher.code
    store.join(code, "late")
    teacher.reveal("q")
    store.answer(code, "late", "q", "1", True, stop=1)
    assert teacher.results("q").late == 1 and store.class_of_seat("seat") == code
    ClassStore(store_location).close()  # opening again adds nothing twice
    store.close()


def test_statements_are_translated_in_one_place_and_sqlite_only_sql_is_refused():
    assert to_postgres("BEGIN IMMEDIATE") == "BEGIN"
    assert to_postgres("SELECT 1 FROM t WHERE a = ? AND b LIKE 'x%'") == "SELECT 1 FROM t WHERE a = %s AND b LIKE 'x%%'"
    with pytest.raises(ValueError, match="SQLite-only"):
        to_postgres("INSERT OR IGNORE INTO revealed VALUES (?, ?)")


def test_an_unreachable_postgresql_refuses_with_store_busy(monkeypatch, tmp_path):
    """No server behind the DSN: the answer is refused with a message (StoreBusy), never lost silently."""
    with pytest.raises(StoreBusy):
        ClassStore(f"postgresql://nobody@/nothing?host={tmp_path}", busy_seconds=1)


def test_a_burst_from_many_threads_uses_at_most_the_pool_of_connections(postgres_dsn, monkeypatch):
    """PostgreSQL: 8 threads answering at once share ATTENTION_LAB_DATABASE_POOL connections (a server's
    max_connections is shared by every replica), and every answer is still stored."""
    import psycopg

    from tests.postgres_server import fresh_database

    monkeypatch.setenv("ATTENTION_LAB_DATABASE_POOL", "2")
    with fresh_database(postgres_dsn) as dsn:
        store = ClassStore(dsn)
        teacher = store.create_class("intro", class_size=MAX_CLASS_SIZE)
        code = teacher.code
        sent, stored, refused = _flood(store, code, per_second=100_000, seconds=0.003, threads=8)
        assert (sent, stored, refused) == (300, 300, 0)
        with psycopg.connect(dsn, autocommit=True) as admin:
            opened = admin.execute("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                                   "AND pid <> pg_backend_pid()").fetchone()[0]
        assert opened == 2  # the pool keeps its two open for the next calls; no thread opened a third
        store.close()


# ---- peer instruction: two rounds
def _peer_class(store):
    teacher = store.create_class("intro")
    code = teacher.code
    for student in "abcdef":
        store.join(code, student)
    teacher.set_phase("q", "peer")
    return teacher


def test_peer_instruction_rounds_switch_matrix_and_late_first_votes(store):
    teacher = _peer_class(store)
    code = teacher.code
    with pytest.raises(NotTheTeacher):  # only the teacher moves the rounds
        store.teacher(code, "wrong", "intro").set_phase("q", "peer", "round2")
    first = {"a": ("1", True), "b": ("2", False), "c": ("2", False), "d": ("1", True), "e": ("3", False)}
    for student, (answer, right) in first.items():
        store.answer(code, student, "q", answer, right, stop=1)
    with pytest.raises(NotOpenYet):  # round 2 is not open yet: refused
        store.answer(code, "a", "q", "1", True, round=2, stop=1)
    teacher.set_phase("q", "peer", "discussion", discussion_seconds=90, now=1000.0)
    assert store.session(code).phase_of("q").discussion_ends == 1090.0
    store.answer(code, "f", "q", "1", True, stop=1)  # round 1 after it closed: stored, but late
    teacher.set_phase("q", "peer", "round2")
    assert store.session(code).phase_of("q").discussion_ends == 1090.0  # round 2 keeps the countdown's end
    second = {"a": ("1", True), "b": ("1", True), "c": ("2", False), "d": ("2", False), "f": ("1", True)}
    for student, (answer, right) in second.items():
        store.answer(code, student, "q", answer, right, round=2, stop=1)
    with pytest.raises(AnsweredAlready):  # the first round-2 answer counts
        store.answer(code, "a", "q", "3", False, round=2, stop=1)
    one, two = teacher.results("q"), teacher.results("q", round=2)
    assert one.counts == {"1": 2, "2": 2, "3": 1} and one.correct == 2 and one.late == 1
    assert two.counts == {"1": 3, "2": 2} and two.correct == 3 and two.late == 0
    # a, b, c, d answered both rounds counted (e skipped round 2, f's first vote was late)
    assert teacher.switches("q") == Switches(right_right=1, wrong_right=1, right_wrong=1, wrong_wrong=1)
    with pytest.raises(NotTheTeacher):
        store.teacher(code, "wrong", "intro").switches("q")
    assert store.student_answer(code, "b", "q") == "2" and store.student_answer(code, "b", "q", round=2) == "1"


def test_phase_is_seen_by_every_store_and_survives_a_reload(tmp_path):
    path = tmp_path / "db"
    teacher = ClassStore(path).create_class("intro")
    code = teacher.code
    assert ClassStore(path).session(code).phase_of("q") == QuestionPhase("q")  # default: one round, round 1
    ClassStore(path).teacher(code, teacher.token, "intro").set_phase("q", "peer", "discussion", discussion_seconds=60,
                                                                  shown=True)  # the handle, on another replica
    replica = ClassStore(path).session(code).phase_of("q")  # another process's store: the same row
    assert (replica.mode, replica.phase, replica.shown, replica.open_round) == ("peer", "discussion", True, None)
    # A student who reloads (same seat -> same id) finds her round-1 answer and may give round 2 once it opens.
    teacher.set_phase("q", "peer", "round2")
    store = ClassStore(path)
    store.join(code, "seat-1")
    assert store.session(code).phase_of("q").open_round == 2
    store.answer(code, "seat-1", "q", "2", False, round=2, stop=1)
    assert ClassStore(path).student_answer(code, "seat-1", "q", round=2) == "2"
    assert teacher.switches("q").both == 0  # no round-1 answer from seat-1: not in the matrix


def test_reveal_makes_both_rounds_late(store):
    teacher = _peer_class(store)
    code = teacher.code
    teacher.set_phase("q", "peer", "round2")
    teacher.reveal("q")
    store.answer(code, "a", "q", "1", True, round=2, stop=1)
    assert teacher.results("q", round=2).answered == 0 and teacher.results("q", round=2).late == 1


def test_a_database_from_before_rounds_keeps_its_answers(tmp_path):

    path = tmp_path / "old.sqlite3"
    with sqlite3.connect(path) as db:  # the answers table as the first releases made it
        db.executescript("CREATE TABLE answers (code TEXT NOT NULL, question TEXT NOT NULL, student TEXT NOT NULL, "
                         "answer TEXT NOT NULL, correct INTEGER, created REAL NOT NULL, "
                         "PRIMARY KEY (code, question, student));"
                         "INSERT INTO answers VALUES ('ABCDEF', 'q', 's', '2', 1, 1.0);")
    store = ClassStore(path)
    assert store.student_answer("ABCDEF", "s", "q") == "2" and store.student_answer("ABCDEF", "s", "q", 2) is None


def test_an_ended_class_keeps_its_answers_for_its_teacher_until_the_keep_time(tmp_path):
    store = ClassStore(tmp_path / "db", keep_days=7)
    now = time.time()
    teacher = store.create_class("intro", now=now)
    code = teacher.code
    store.join(code, "s", now=now + 5)
    store.answer(code, "s", "q", "1", True, now=now + 10, stop=1)
    teacher.end(now=now + 20)
    store.purge(now=now + 86400)  # a day later (another class started): the report is still hers
    assert [r.answer for r in teacher.answer_rows(now=now + 86400)] == ["1"]
    with pytest.raises(NotTheTeacher):
        store.teacher(code, "wrong", "intro").answer_rows(now=now + 86400)
    with pytest.raises(ClassEnded):  # nothing else works on an ended class
        teacher.reveal("q", now=now + 86400)
    store.purge(now=now + 8 * 86400)
    with pytest.raises(NoSuchClass):  # gone with its answers
        teacher.answer_rows(now=now + 8 * 86400)


# ---- answers only for the class's stop (issue 36, item 3)
def test_only_the_stop_the_class_is_on_takes_answers(store):
    """An answer ahead of the class (or to a stop it has left) is refused in the store, whatever the page does; the
    "pre" check questions belong to stop 1, the "post" ones to the last stop, the stop's own question to its stop."""
    teacher = store.create_class("intro")
    code = teacher.code
    store.join(code, "a")
    with pytest.raises(ClassElsewhere) as ahead:
        store.answer(code, "a", "intro:3", "1", True, stop=3)
    assert ahead.value.stop == 1
    with pytest.raises(ClassElsewhere):
        store.answer(code, "a", "intro:post:weight", "2", True, stop=18)  # the post-test while the class is on 1
    with pytest.raises(ClassElsewhere):
        store.answer(code, "a", "llm:1", "2", True, stop=1)  # another lesson's question: not this class's
    with pytest.raises(ValueError):
        store.answer(code, "a", "intro:3", "1", True, stop=1)  # an id that names another stop than the one given
    with pytest.raises(ValueError):
        store.answer(code, "a", "intro:pre:weight", "1", True, stop=2)  # a pre check is asked at stop 1 only
    store.answer(code, "a", "intro:pre:weight", "1", False, stop=1)
    store.answer(code, "a", "intro:1", "1", False, stop=1)
    assert store.stored_answers(code) == 2
    teacher.move(3)
    store.answer(code, "a", "intro:3", "1", True, stop=3)
    with pytest.raises(ClassElsewhere):  # the class has left stop 1: no more pre-test answers, no second chances
        store.answer(code, "b", "intro:pre:weight", "2", True, stop=1)
    teacher.move(18)
    store.answer(code, "a", "intro:post:weight", "2", True, stop=18)
    assert store.stored_answers(code) == 4


def test_a_cell_question_takes_only_a_cell_of_its_map_at_the_class_stop_from_its_own_class(store):
    """Issue 55: the server hands the store the cells the question takes (a row's cells, never the client's); a tap
    off them, to a stop the class has left or from a seat of another class is refused and nothing is stored; the
    rules of every answer still hold (one per seat, late after the Reveal)."""
    teacher, other = store.create_class("intro", stop=12), store.create_class("intro", stop=12)
    code = teacher.code
    row = frozenset(f"6,{key}" for key in range(1, 9))  # the named row 6 of an 8-key map
    store.join(code, "a")
    store.join(other.code, "b")
    for tap in ("5,2", "6,9", "6,0", "", "6,2;DROP TABLE answers", "6,2" + "\u200b"):
        with pytest.raises(OffTheMap) as refused:
            store.answer(code, "a", "intro:12", tap, False, stop=12, valid=row)
        assert refused.value.code == code
    with pytest.raises(NotAdmitted):  # her seat is in another class: a forged code takes nothing
        store.answer(code, "b", "intro:12", "6,2", True, stop=12, valid=row)
    assert store.stored_answers(code) == store.stored_answers(other.code) == 0
    store.answer(code, "a", "intro:12", "6,2", True, stop=12, valid=row)
    with pytest.raises(AnsweredAlready):
        store.answer(code, "a", "intro:12", "6,3", False, stop=12, valid=row)
    teacher.reveal("intro:12")
    store.join(code, "c")
    store.answer(code, "c", "intro:12", "6,2", True, stop=12, valid=row)  # after the Reveal: late, never counted
    teacher.move(13)
    store.join(code, "d")
    with pytest.raises(ClassElsewhere):  # a stale stop: the class has moved on
        store.answer(code, "d", "intro:12", "6,2", True, stop=12, valid=row)
    results = teacher.results("intro:12")
    assert results.counts == {"6,2": 1} and results.correct == 1 and results.late == 1
    assert store.stored_answers(code) == 2


def test_a_live_class_keeps_its_unrevealed_stop_back_from_everyone(store):
    assert not store.live_unrevealed("intro", 4, "intro:4")
    teacher = store.create_class("intro", stop=4)
    assert store.live_unrevealed("intro", 4, "intro:4")
    assert not store.live_unrevealed("intro", 5, "intro:5") and not store.live_unrevealed("llm", 4, "llm:4")
    other_teacher = store.create_class("intro", stop=4)
    teacher.reveal("intro:4")
    assert store.live_unrevealed("intro", 4, "intro:4")  # the other class has not revealed it yet
    other_teacher.reveal("intro:4")
    assert not store.live_unrevealed("intro", 4, "intro:4")
    third_teacher = store.create_class("intro", stop=4)
    third_teacher.end()
    assert not store.live_unrevealed("intro", 4, "intro:4")  # an ended class keeps nothing back


def test_the_report_reads_the_answers_and_reveals_at_once_for_the_teacher_only(store):
    teacher = store.create_class("intro")
    code = teacher.code
    store.join(code, "a")
    store.answer(code, "a", "intro:1", "2", True, stop=1)
    with pytest.raises(NotTheTeacher):
        store.teacher(code, "wrong", "intro").report_answers()
    read = teacher.report_answers(now=time.time())
    assert [r.question for r in read.rows] == ["intro:1"] and read.revealed == frozenset() and not read.ended
    teacher.reveal("intro:1")
    teacher.end()
    read = teacher.report_answers()
    assert read.revealed == {"intro:1"} and read.ended  # an ended class's report stays hers


# ---- peers paired by disagreement
def test_discussion_groups_are_stored_for_their_class_and_only_after_round_one(store, store_location):
    teacher = _peer_class(store)  # six seats: a..f, in that order
    code = teacher.code
    labels = {student: seat_label_of(store, code, student) for student in "abcdef"}
    assert labels == {"a": "A2", "b": "C2", "c": "E2", "d": "F2", "e": "H2", "f": "J2"}  # in the order they joined
    assert seat_label_of(store, code, "nobody") is None
    votes = {"a": ("1", True), "b": ("2", False), "c": ("2", False), "d": ("1", True), "e": ("3", False)}
    for student, (answer, right) in votes.items():  # f does not vote
        store.answer(code, student, "q", answer, right, stop=1)
    with pytest.raises(RoundOneOpen):  # groups come from round 1's votes: not while it is open
        teacher.group("q")
    teacher.set_phase("q", "peer", "discussion", discussion_seconds=60)
    with pytest.raises(NotTheTeacher):
        store.teacher(code, "wrong", "intro").group("q")
    other = store.create_class("intro")  # another class, the same question id, in its discussion too
    other.set_phase("q", "peer", "discussion")
    with pytest.raises(NotTheTeacher):  # one class's token groups no other class
        store.teacher(other.code, teacher.token, "intro").group("q")
    with pytest.raises(RoundOneOpen):  # a question with no peer phase past round 1
        teacher.group("another question")

    summary = teacher.group("q", 2, seed=7)
    assert (summary.size, summary.groups, summary.with_right, summary.voters, summary.right) == (2, 2, 2, 5, 2)
    replica = ClassStore(store_location)  # another replica: the same groups, the same phase
    phase = replica.session(code).phase_of("q")
    assert (phase.group_size, phase.group_seed, phase.phase) == (2, 7, "discussion")
    by_label = {label: student for student, label in labels.items()}
    groups = {frozenset({labels[s], *partners(replica, code, s, "q")}) for s in votes}
    assert sorted(len(g) for g in groups) == [2, 3] and set().union(*groups) == {labels[s] for s in votes}
    for group in groups:  # each group: different answers and a right one; its members name each other only
        assert len({votes[by_label[label]][0] for label in group}) > 1
        assert any(votes[by_label[label]][1] for label in group)
    assert partners(store, code, "f", "q") == ()  # she did not vote: no group (she joins any)
    assert partners(store, other.code, "a", "q") == () and other.grouping("q") is None  # nothing in the other class
    assert teacher.grouping("q") == summary and teacher.report_answers().grouped == {"q"}

    before = replica.session(code)
    again = teacher.group("q", 3, seed=8)  # again, in threes: a new seed, so every student's page sees a change
    assert (again.size, again.groups) == (3, 2) and replica.session(code) != before
    teacher.ungroup("q")
    assert teacher.grouping("q") is None and partners(store, code, "a", "q") == ()
    assert replica.session(code).phase_of("q").group_size == 0 and teacher.report_answers().grouped == frozenset()
    replica.close()

"""The live class's store (classroom/store.py): tokens, one answer per student, expiry, floods, two processes.

Every test that takes `store` or `store_location` runs twice: on a SQLite file and on a real PostgreSQL server
(tests/conftest.py starts one per session from Debian's package)."""
import multiprocessing
import sqlite3
import threading
import time

import pytest

from classroom.store import (DATABASE_URL_ENV, MAX_CLASS_SIZE, ClassElsewhere, ClassStore, QuestionPhase, StoreBusy, Switches, is_postgres,
                             normalise_code, store_location, to_postgres)


@pytest.fixture()
def store(store_location):
    store = ClassStore(store_location)
    yield store
    store.close()


def test_teacher_token_guards_results_reveal_and_move(store):
    code, token = store.create_class("intro", stop=3)
    assert normalise_code(code.lower()[:3] + " " + code[3:]) == code
    store.join(code, "student-a")
    assert store.answer(code, "student-a", "intro:3", "1", True, stop=3)
    assert store.results(code, "wrong", "intro:3") is None
    assert store.results(code, "", "intro:3") is None
    assert not store.move(code, "wrong", 5) and store.session(code).stop == 3
    assert not store.reveal(code, "wrong", "intro:3") and store.session(code).revealed == frozenset()
    assert store.move(code, token, 5) and store.session(code).stop == 5
    assert store.reveal(code, token, "intro:3") and "intro:3" in store.session(code).revealed
    assert store.results(code, token, "intro:3").counts == {"1": 1}
    other_code, _ = store.create_class("intro")
    assert store.results(other_code, token, "intro:3") is None  # one class's token opens no other class


def test_a_student_answering_a_thousand_times_counts_once(store):
    code, token = store.create_class("intro")
    store.join(code, "same-student")
    stored = [store.answer(code, "same-student", "q", str(i % 3), i % 3 == 0, stop=1) for i in range(1000)]
    assert stored.count(True) == 1
    results = store.results(code, token, "q")
    assert results.answered == 1 and results.counts == {"0": 1} and results.correct == 1
    assert store.student_answer(code, "same-student", "q") == "0"
    assert store.stored_answers(code) == 1


def test_distribution_share_correct_and_ungraded_answers(store):
    code, token = store.create_class("intro")
    for student in "abc":
        store.join(code, student)
    for student, answer, correct in (("a", "L2 H3", True), ("b", "L2 H3", True), ("c", "L1 H1", False)):
        store.answer(code, student, "q", answer, correct, stop=1)
    results = store.results(code, token, "q")
    assert results.counts == {"L1 H1": 1, "L2 H3": 2} and results.answered == 3 and results.correct == 2
    store.answer(code, "a", "free", "<b>hi</b>", None, stop=1)
    assert store.results(code, token, "free").correct is None  # nothing to grade against
    assert store.results(code, token, "free").counts == {"<b>hi</b>": 1}  # stored as text; the UI shows it as text


def test_wrong_and_expired_codes(store):
    assert normalise_code("") == "" and normalise_code("<script>") == "" and normalise_code("ABCDE0") == ""
    assert store.session("ZZZZZZ") is None
    with pytest.raises(LookupError):
        store.answer("ZZZZZZ", "s", "q", "1", True, stop=1)
    now = time.time()
    code, token = store.create_class("intro", now=now)
    assert store.session(code, now=now + 3.9 * 3600) is not None
    assert store.session(code, now=now + 4.1 * 3600) is None  # default: a class lasts 4 h
    with pytest.raises(LookupError):
        store.answer(code, "s", "q", "1", True, now=now + 4.1 * 3600, stop=1)
    assert not store.move(code, token, 2, now=now + 4.1 * 3600)


def test_answers_are_deleted_after_the_keep_time(store_location):
    store = ClassStore(store_location, keep_days=7)
    now = time.time()
    code, token = store.create_class("intro", now=now)
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
    code, token = store.create_class("intro", now=now)
    assert store.session(code, now=now).expires == now + 4 * 3600
    assert store.end_class(code, token, now=now + 10)
    assert store.session(code, now=now + 9.5) is not None and store.session(code, now=now + 10.5) is None
    store.record_failure("code", ("ip:1",), now=now)
    assert store.failures("code", "ip:1", 600, now=now + 100) == (1, now)


def test_the_teacher_takes_the_class_back_and_controls_it(store):
    code, token = store.create_class("intro", teacher_seat="seat-1", lesson_source="[lesson]")
    assert store.class_of_seat("seat-1") == code and store.class_of_seat("seat-2") is None
    second = store.take_back(code, seat="seat-2")
    assert second and second != token and store.class_of_seat("seat-2") == code
    assert store.move(code, token, 3) and store.move(code, second, 4)  # both devices keep control
    assert store.take_back("ZZZZZZ") is None
    assert store.session(code).lesson_source == "[lesson]" and store.session(code).uploads
    assert not store.set_uploads(code, "wrong", False) and store.set_uploads(code, second, False)
    assert not store.session(code).uploads
    assert store.reveal(code, token, "q") and store.reveal(code, token, "q")  # revealing twice is harmless
    assert store.end_class(code, token) and store.session(code) is None and store.take_back(code) is None


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
    code, token = ClassStore(path).create_class("intro", class_size=MAX_CLASS_SIZE)
    spawn = multiprocessing.get_context("spawn")  # two fresh interpreters, like two server replicas
    workers = [spawn.Process(target=_answer_many, args=(str(path), code, name, 150)) for name in ("one", "two")]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(60)
        assert worker.exitcode == 0
    assert ClassStore(path).results(code, token, "q").counts == {"one": 150, "two": 150}


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
                stored[t] += store.answer(code, f"student-{i}", "q", str(i % 4), i % 4 == 0, stop=1)
            except StoreBusy:
                refused[t] += 1  # the UI says "not saved, answer again": refused with a message

    pool = [threading.Thread(target=work, args=(t,)) for t in range(threads)]
    for thread in pool:
        thread.start()
    for thread in pool:
        thread.join()
    return sum(sent), sum(stored), sum(refused)


def test_a_burst_of_answers_from_many_threads_is_all_stored(store):
    code, token = store.create_class("intro", class_size=MAX_CLASS_SIZE)
    sent, stored, refused = _flood(store, code, per_second=100_000, seconds=0.006, threads=8)  # as fast as possible
    assert sent == 600 and stored + refused == sent
    assert store.results(code, token, "q").answered == stored


@pytest.mark.slow
def test_200_answers_a_second_for_10_seconds_are_stored_or_refused_none_lost(store):
    code, token = store.create_class("intro", class_size=MAX_CLASS_SIZE)
    sent, stored, refused = _flood(store, code, per_second=200, seconds=10, threads=16)
    assert sent == 2000 and stored + refused == sent
    results = store.results(code, token, "q")
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
    code, token = from_environment.create_class("intro")
    from_environment.join(code, "s")
    from_environment.answer(code, "s", "q", "1", True, stop=1)
    named = ClassStore(store_location)
    assert named.results(code, token, "q").counts == {"1": 1}
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
    if is_postgres(store_location):
        import psycopg

        with psycopg.connect(store_location, autocommit=True) as db:
            db.execute(OLD_SCHEMA.replace("REAL", "DOUBLE PRECISION"))
    else:
        with sqlite3.connect(store_location) as db:
            db.executescript(OLD_SCHEMA)
    store = ClassStore(store_location)
    old = store.session("ABCDEF", now=1.0)
    assert (old.stop, old.uploads, old.lesson_source) == (2, True, None)
    assert store.student_answer("ABCDEF", "early", "q") == "1"
    code, token = store.create_class("intro", teacher_seat="seat", lesson_source="text")
    store.join(code, "late")
    store.reveal(code, token, "q")
    assert store.answer(code, "late", "q", "1", True, stop=1)
    assert store.results(code, token, "q").late == 1 and store.class_of_seat("seat") == code
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
        code, token = store.create_class("intro", class_size=MAX_CLASS_SIZE)
        sent, stored, refused = _flood(store, code, per_second=100_000, seconds=0.003, threads=8)
        assert (sent, stored, refused) == (300, 300, 0)
        with psycopg.connect(dsn, autocommit=True) as admin:
            opened = admin.execute("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                                   "AND pid <> pg_backend_pid()").fetchone()[0]
        assert opened == 2  # the pool keeps its two open for the next calls; no thread opened a third
        store.close()


# ---- peer instruction: two rounds
def _peer_class(store):
    code, token = store.create_class("intro")
    for student in "abcdef":
        store.join(code, student)
    assert store.set_phase(code, token, "q", "peer")
    return code, token


def test_peer_instruction_rounds_switch_matrix_and_late_first_votes(store):
    code, token = _peer_class(store)
    assert not store.set_phase(code, "wrong", "q", "peer", "round2")  # only the teacher moves the rounds
    first = {"a": ("1", True), "b": ("2", False), "c": ("2", False), "d": ("1", True), "e": ("3", False)}
    for student, (answer, right) in first.items():
        assert store.answer(code, student, "q", answer, right, stop=1)
    assert not store.answer(code, "a", "q", "1", True, round=2, stop=1)  # round 2 is not open yet: refused
    assert store.set_phase(code, token, "q", "peer", "discussion", discussion_seconds=90, now=1000.0)
    assert store.session(code).phase_of("q").discussion_ends == 1090.0
    assert store.answer(code, "f", "q", "1", True, stop=1)  # round 1 after it closed: stored, but late
    assert store.set_phase(code, token, "q", "peer", "round2")
    assert store.session(code).phase_of("q").discussion_ends == 1090.0  # round 2 keeps the countdown's end
    second = {"a": ("1", True), "b": ("1", True), "c": ("2", False), "d": ("2", False), "f": ("1", True)}
    for student, (answer, right) in second.items():
        assert store.answer(code, student, "q", answer, right, round=2, stop=1)
    assert not store.answer(code, "a", "q", "3", False, round=2, stop=1)  # the first round-2 answer counts
    one, two = store.results(code, token, "q"), store.results(code, token, "q", round=2)
    assert one.counts == {"1": 2, "2": 2, "3": 1} and one.correct == 2 and one.late == 1
    assert two.counts == {"1": 3, "2": 2} and two.correct == 3 and two.late == 0
    # a, b, c, d answered both rounds counted (e skipped round 2, f's first vote was late)
    assert store.switches(code, token, "q") == Switches(right_right=1, wrong_right=1, right_wrong=1, wrong_wrong=1)
    assert store.switches(code, "wrong", "q") is None
    assert store.student_answer(code, "b", "q") == "2" and store.student_answer(code, "b", "q", round=2) == "1"


def test_phase_is_seen_by_every_store_and_survives_a_reload(tmp_path):
    path = tmp_path / "db"
    code, token = ClassStore(path).create_class("intro")
    assert ClassStore(path).session(code).phase_of("q") == QuestionPhase("q")  # default: one round, round 1
    ClassStore(path).set_phase(code, token, "q", "peer", "discussion", discussion_seconds=60, shown=True)
    replica = ClassStore(path).session(code).phase_of("q")  # another process's store: the same row
    assert (replica.mode, replica.phase, replica.shown, replica.open_round) == ("peer", "discussion", True, None)
    # A student who reloads (same seat -> same id) finds her round-1 answer and may give round 2 once it opens.
    ClassStore(path).set_phase(code, token, "q", "peer", "round2")
    store = ClassStore(path)
    store.join(code, "seat-1")
    assert store.session(code).phase_of("q").open_round == 2
    assert store.answer(code, "seat-1", "q", "2", False, round=2, stop=1)
    assert ClassStore(path).student_answer(code, "seat-1", "q", round=2) == "2"
    assert store.switches(code, token, "q").both == 0  # no round-1 answer from seat-1: not in the matrix


def test_reveal_makes_both_rounds_late(store):
    code, token = _peer_class(store)
    store.set_phase(code, token, "q", "peer", "round2")
    store.reveal(code, token, "q")
    assert store.answer(code, "a", "q", "1", True, round=2, stop=1)
    assert store.results(code, token, "q", round=2).answered == 0 and store.results(code, token, "q", round=2).late == 1


def test_a_database_from_before_rounds_keeps_its_answers(tmp_path):
    import sqlite3

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
    code, token = store.create_class("intro", now=now)
    store.join(code, "s", now=now + 5)
    store.answer(code, "s", "q", "1", True, now=now + 10, stop=1)
    assert store.end_class(code, token, now=now + 20)
    store.purge(now=now + 86400)  # a day later (another class started): the report is still hers
    assert [r.answer for r in store.answer_rows(code, token, now=now + 86400)] == ["1"]
    assert store.answer_rows(code, "wrong", now=now + 86400) is None
    assert not store.reveal(code, token, "q", now=now + 86400)  # nothing else works on an ended class
    store.purge(now=now + 8 * 86400)
    assert store.answer_rows(code, token, now=now + 8 * 86400) is None  # gone with its answers


# ---- answers only for the class's stop (issue 36, item 3)
def test_only_the_stop_the_class_is_on_takes_answers(store):
    """An answer ahead of the class (or to a stop it has left) is refused in the store, whatever the page does; the
    "pre" check questions belong to stop 1, the "post" ones to the last stop, the stop's own question to its stop."""
    code, token = store.create_class("intro")
    store.join(code, "a")
    with pytest.raises(ClassElsewhere) as ahead:
        store.answer(code, "a", "intro:3", "1", True, stop=3)
    assert ahead.value.stop == 1
    with pytest.raises(ClassElsewhere):
        store.answer(code, "a", "intro:post:weight", "2", True, stop=17)  # the post-test while the class is on 1
    with pytest.raises(ClassElsewhere):
        store.answer(code, "a", "llm:1", "2", True, stop=1)  # another lesson's question: not this class's
    with pytest.raises(ValueError):
        store.answer(code, "a", "intro:3", "1", True, stop=1)  # an id that names another stop than the one given
    with pytest.raises(ValueError):
        store.answer(code, "a", "intro:pre:weight", "1", True, stop=2)  # a pre check is asked at stop 1 only
    assert store.answer(code, "a", "intro:pre:weight", "1", False, stop=1)
    assert store.answer(code, "a", "intro:1", "1", False, stop=1)
    assert store.stored_answers(code) == 2
    assert store.move(code, token, 3)
    assert store.answer(code, "a", "intro:3", "1", True, stop=3)
    with pytest.raises(ClassElsewhere):  # the class has left stop 1: no more pre-test answers, no second chances
        store.answer(code, "b", "intro:pre:weight", "2", True, stop=1)
    assert store.move(code, token, 17)
    assert store.answer(code, "a", "intro:post:weight", "2", True, stop=17)
    assert store.stored_answers(code) == 4


def test_a_live_class_keeps_its_unrevealed_stop_back_from_everyone(store):
    assert not store.live_unrevealed("intro", 4, "intro:4")
    code, token = store.create_class("intro", stop=4)
    assert store.live_unrevealed("intro", 4, "intro:4")
    assert not store.live_unrevealed("intro", 5, "intro:5") and not store.live_unrevealed("llm", 4, "llm:4")
    other, other_token = store.create_class("intro", stop=4)
    store.reveal(code, token, "intro:4")
    assert store.live_unrevealed("intro", 4, "intro:4")  # the other class has not revealed it yet
    store.reveal(other, other_token, "intro:4")
    assert not store.live_unrevealed("intro", 4, "intro:4")
    third, third_token = store.create_class("intro", stop=4)
    store.end_class(third, third_token)
    assert not store.live_unrevealed("intro", 4, "intro:4")  # an ended class keeps nothing back


def test_the_report_reads_the_answers_and_reveals_at_once_for_the_teacher_only(store):
    code, token = store.create_class("intro")
    store.join(code, "a")
    store.answer(code, "a", "intro:1", "2", True, stop=1)
    assert store.report_answers(code, "wrong") is None
    read = store.report_answers(code, token, now=time.time())
    assert [r.question for r in read.rows] == ["intro:1"] and read.revealed == frozenset() and not read.ended
    store.reveal(code, token, "intro:1")
    store.end_class(code, token)
    read = store.report_answers(code, token)
    assert read.revealed == {"intro:1"} and read.ended  # an ended class's report stays hers

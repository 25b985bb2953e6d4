"""The class store's schema (classroom/schema.sql) and its ordered migrations (classroom/migrations.py): a new database
gets the schema and the latest version; a database made by the releases before versions were stored opens, keeps its
classes, seats, phases and answers, and ends in the same shape as a new one. Every test runs on SQLite and PostgreSQL
(tests/conftest.py's store_location)."""
import hashlib
import sqlite3
import time

import pytest

from classroom.errors import AnsweredAlready
from classroom.migrations import LATEST, MIGRATIONS, columns, migrate, schema
from classroom.partners import seat_label_of
from classroom.store import ClassStore, is_postgres

# The schema as the store wrote it inline in its constructor before schema.sql and schema_version (copied here as
# it was, so that this test keeps describing the databases that exist in schools).
INLINE_SCHEMA = """
CREATE TABLE IF NOT EXISTS classes (
    code TEXT PRIMARY KEY, token_sha256 TEXT NOT NULL, lesson TEXT NOT NULL, stop INTEGER NOT NULL,
    created REAL NOT NULL, expires REAL NOT NULL, teacher_seat TEXT, lesson_source TEXT,
    uploads INTEGER NOT NULL DEFAULT 1, class_size INTEGER NOT NULL DEFAULT 40
);
CREATE TABLE IF NOT EXISTS teacher_keys (
    code TEXT NOT NULL, token_sha256 TEXT NOT NULL, created REAL NOT NULL, PRIMARY KEY (code, token_sha256)
);
CREATE TABLE IF NOT EXISTS attempts (kind TEXT NOT NULL, client TEXT NOT NULL, at REAL NOT NULL);
CREATE INDEX IF NOT EXISTS attempts_by_client ON attempts (kind, client, at);
CREATE TABLE IF NOT EXISTS seats (
    code TEXT NOT NULL, student TEXT NOT NULL, address TEXT, admitted INTEGER NOT NULL, joined REAL NOT NULL,
    PRIMARY KEY (code, student)
);
CREATE INDEX IF NOT EXISTS seats_by_address ON seats (code, address);
CREATE TABLE IF NOT EXISTS revealed (code TEXT NOT NULL, question TEXT NOT NULL, PRIMARY KEY (code, question));
CREATE TABLE IF NOT EXISTS answers (
    code TEXT NOT NULL, question TEXT NOT NULL, student TEXT NOT NULL, answer TEXT NOT NULL, correct INTEGER,
    created REAL NOT NULL, late INTEGER NOT NULL DEFAULT 0, round INTEGER NOT NULL DEFAULT 1,
    PRIMARY KEY (code, question, student, round)
);
CREATE TABLE IF NOT EXISTS phases (
    code TEXT NOT NULL, question TEXT NOT NULL, mode TEXT NOT NULL, phase TEXT NOT NULL, discussion_ends REAL,
    shown INTEGER NOT NULL DEFAULT 0, PRIMARY KEY (code, question)
);
"""
TOKEN = "a-teacher-token-of-the-old-release"
NOW = time.time()
ROWS = f"""
INSERT INTO classes VALUES ('OLDCLS', '{hashlib.sha256(TOKEN.encode()).hexdigest()}', 'intro', 8, {NOW}, {NOW + 3600},
                            NULL, '[lesson]', 0, 3);
INSERT INTO teacher_keys VALUES ('OLDCLS', '{hashlib.sha256(TOKEN.encode()).hexdigest()}', {NOW});
INSERT INTO seats VALUES ('OLDCLS', 'a', NULL, 1, {NOW}), ('OLDCLS', 'b', NULL, 1, {NOW}), ('OLDCLS', 'w', NULL, 0, {NOW});
INSERT INTO phases VALUES ('OLDCLS', 'intro:8', 'peer', 'round2', {NOW + 60}, 1);
INSERT INTO revealed VALUES ('OLDCLS', 'intro:1');
INSERT INTO answers VALUES ('OLDCLS', 'intro:8', 'a', '2', 0, {NOW}, 0, 1), ('OLDCLS', 'intro:8', 'a', '3', 1, {NOW}, 0, 2);
"""


def run_script(location: str, script: str) -> None:
    """Run SQL on the database itself, as an older release did (not through the store)."""
    if is_postgres(location):
        import psycopg

        with psycopg.connect(location, autocommit=True) as db:
            db.execute(script.replace("REAL", "DOUBLE PRECISION"))
    else:
        with sqlite3.connect(location) as db:
            db.executescript(script)


def _shape(store: ClassStore) -> dict[str, set[str]]:
    with store.connect() as db:
        return {table: columns(db, table) for table in ("classes", "teacher_keys", "attempts", "seats", "revealed",
                                                        "answers", "phases", "discussion_groups", "text_moderation",
                                                        "projected", "projections", "schema_version")}


def _version(store: ClassStore) -> int:
    with store.connect() as db:
        return db.execute("SELECT version FROM schema_version").fetchone()[0]


def test_a_database_made_by_the_inline_schema_opens_migrated_with_everything_in_it(store_location, tmp_path):
    run_script(store_location, INLINE_SCHEMA + ROWS)
    store = ClassStore(store_location)
    assert _version(store) == LATEST
    session = store.session("OLDCLS")
    assert (session.lesson, session.stop, session.uploads, session.lesson_source) == ("intro", 8, False, "[lesson]")
    assert session.revealed == {"intro:1"} and session.phase_of("intro:8").phase == "round2"
    teacher = store.teacher("OLDCLS", TOKEN, "intro")  # the token the old release gave her still holds the class
    assert teacher.seats().admitted == 2 and teacher.seats().size == 3
    assert teacher.results("intro:8", round=2).counts == {"3": 1}
    store.answer("OLDCLS", "b", "intro:8", "2", True, round=2, stop=8)
    with pytest.raises(AnsweredAlready):
        store.answer("OLDCLS", "a", "intro:8", "1", False, round=2, stop=8)
    assert teacher.switches("intro:8").wrong_right == 1
    # its seats get their labels in the order they joined; a new seat takes the next one
    store.join("OLDCLS", "new")
    assert [seat_label_of(store, "OLDCLS", s) for s in ("a", "b", "w", "new")] == ["A2", "C2", "E2", "F2"]
    fresh = ClassStore(tmp_path / "fresh.sqlite3")
    assert _shape(store) == _shape(fresh)  # the same tables and columns as a new database's
    store.close()


def test_a_database_of_the_first_release_ends_in_the_shape_of_a_new_one(store_location, tmp_path):
    run_script(store_location, """
        CREATE TABLE classes (code TEXT PRIMARY KEY, token_sha256 TEXT NOT NULL, lesson TEXT NOT NULL,
                              stop INTEGER NOT NULL, created REAL NOT NULL, expires REAL NOT NULL);
        CREATE TABLE answers (code TEXT NOT NULL, question TEXT NOT NULL, student TEXT NOT NULL, answer TEXT NOT NULL,
                              correct INTEGER, created REAL NOT NULL, PRIMARY KEY (code, question, student));
        INSERT INTO answers VALUES ('ABCDEF', 'q', 's', '2', 1, 1.0);""")
    store = ClassStore(store_location)
    assert _shape(store) == _shape(ClassStore(tmp_path / "fresh.sqlite3"))
    assert _version(store) == LATEST and store.student_answer("ABCDEF", "s", "q") == "2"
    store.close()


def test_a_new_database_gets_the_schema_and_the_latest_version_and_migrates_once(store_location):
    store = ClassStore(store_location)
    assert _version(store) == LATEST
    with store.connect() as db:
        assert migrate(db) == LATEST  # opening it again finds nothing to do
        assert db.execute("SELECT COUNT(*) FROM schema_version").fetchone()[0] == 1
    ClassStore(store_location).close()
    assert _version(store) == LATEST
    store.close()


def test_migrations_are_numbered_in_order_and_the_schema_file_is_statements():
    assert [m.version for m in MIGRATIONS] == list(range(1, len(MIGRATIONS) + 1)) and LATEST == len(MIGRATIONS)
    statements = schema()
    assert all(s.startswith(("CREATE TABLE IF NOT EXISTS ", "CREATE INDEX IF NOT EXISTS ")) for s in statements)
    assert not any("--" in s for s in statements)  # comments dropped (one holds a semicolon)

"""The class store's schema and its history: classroom/schema.sql is the shape a new database gets, and MIGRATIONS
the ordered steps that bring an older database to it. The database keeps the number of the last step applied (table
schema_version); opening a store (ClassStore) applies the steps after it, in order, in one transaction: replicas that
open the store at the same time take turns (SQLite's BEGIN IMMEDIATE locks the file; on PostgreSQL a transaction-scoped
advisory lock, because two concurrent CREATE TABLE IF NOT EXISTS can both pass the check and one then fails).

A change of the schema is a new Migration at the end of the list and the same change in schema.sql. A step runs on
databases in any shape an older release left (a database from before versions were stored is at version 0 and may lack
any table or column added since the first release), so each adds only what is missing (add_column).
"""
from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from classroom.database import Database, postgres_ddl
from classroom.grouping import seat_label

SCHEMA_FILE = Path(__file__).with_name("schema.sql")
_COMMENT = re.compile(r"--[^\n]*")
_LOCK = "SELECT pg_advisory_xact_lock(hashtext('attention_lab.classroom.schema'))"


def statements(script: str) -> list[str]:
    """A SQL file -> its statements, comments dropped (a comment may hold a semicolon, a statement's text never does)."""
    return [statement.strip() for statement in _COMMENT.sub("", script).split(";") if statement.strip()]


def schema() -> list[str]:
    return statements(SCHEMA_FILE.read_text(encoding="utf-8"))


def _ddl(db: Database, sql: str) -> str:
    return postgres_ddl(sql) if db.postgres else sql


def columns(db: Database, table: str) -> set[str]:
    """The column names of `table` (empty when there is no such table)."""
    if db.postgres:
        return {row[0] for row in db.execute("SELECT column_name FROM information_schema.columns "
                                             "WHERE table_schema = current_schema() AND table_name = ?", (table,))}
    return {row[1] for row in db.execute(f"PRAGMA table_info({table})")}


def add_column(db: Database, table: str, name: str, kind: str) -> None:
    """ALTER TABLE ... ADD COLUMN, unless the table has the column already."""
    if name not in columns(db, table):
        db.execute(f"ALTER TABLE {table} ADD COLUMN {name} {_ddl(db, kind)}")


def _from_before_versions(db: Database) -> None:
    """What the releases before schema_version added, each only where missing: the tables (seats, phases, ...), the
    columns of classes and answers.late, and `round` in answers' key (peer instruction: one answer per round)."""
    for statement in schema():
        db.execute(_ddl(db, statement))  # CREATE ... IF NOT EXISTS: a table made by an older release keeps its shape
    for name, kind in (("teacher_seat", "TEXT"), ("lesson_source", "TEXT"), ("uploads", "INTEGER NOT NULL DEFAULT 1"),
                       ("class_size", "INTEGER NOT NULL DEFAULT 40")):
        add_column(db, "classes", name, kind)
    add_column(db, "answers", "late", "INTEGER NOT NULL DEFAULT 0")
    if "round" in columns(db, "answers"):
        return
    if db.postgres:
        db.execute("ALTER TABLE answers ADD COLUMN round INTEGER NOT NULL DEFAULT 1")
        db.execute("ALTER TABLE answers DROP CONSTRAINT answers_pkey")
        db.execute("ALTER TABLE answers ADD PRIMARY KEY (code, question, student, round)")
        return
    # SQLite cannot change a key: the table is copied into its new shape (schema.sql's)
    kept = "code, question, student, answer, correct, created, late"
    db.execute("ALTER TABLE answers RENAME TO answers_before_rounds")
    db.execute(next(s for s in schema() if s.startswith("CREATE TABLE IF NOT EXISTS answers ")))
    db.execute(f"INSERT INTO answers ({kept}) SELECT {kept} FROM answers_before_rounds")
    db.execute("DROP TABLE answers_before_rounds")


def _discussion_groups(db: Database) -> None:
    """Peers paired by disagreement: a short label per seat (those there are get theirs in the order they joined,
    classroom/grouping.seat_label), a question's group size and seed (phases), and the groups (discussion_groups).
    Needs no other step after the first: it adds only what is missing."""
    add_column(db, "seats", "label", "TEXT")
    add_column(db, "phases", "group_size", "INTEGER NOT NULL DEFAULT 0")
    add_column(db, "phases", "group_seed", "INTEGER")
    db.execute(_ddl(db, next(s for s in schema() if s.startswith("CREATE TABLE IF NOT EXISTS discussion_groups "))))
    numbered: dict[str, int] = {}
    for code, student in db.execute("SELECT code, student FROM seats WHERE label IS NULL "
                                    "ORDER BY code, joined, student").fetchall():
        if code not in numbered:
            numbered[code] = db.execute("SELECT COUNT(*) FROM seats WHERE code = ? AND label IS NOT NULL",
                                        (code,)).fetchone()[0]
        db.execute("UPDATE seats SET label = ? WHERE code = ? AND student = ?",
                   (seat_label(numbered[code]), code, student))
        numbered[code] += 1


def _text_moderation(db: Database) -> None:
    """Open-text answers: the teacher's approvals and hides of their groups (table text_moderation)."""
    db.execute(_ddl(db, next(s for s in schema() if s.startswith("CREATE TABLE IF NOT EXISTS text_moderation "))))


def _showcase(db: Database) -> None:
    """Anonymous student work on the projector: the item projected per class (projected) and their log (projections)."""
    added = ("CREATE TABLE IF NOT EXISTS projected ", "CREATE TABLE IF NOT EXISTS projections ",
             "CREATE INDEX IF NOT EXISTS projections_by_class ")
    for statement in schema():
        if statement.startswith(added):
            db.execute(_ddl(db, statement))


def _saved_lessons(db: Database) -> None:
    """A teacher's own lessons: their versions' TOML (saved_lessons) and who may save them (lesson_authors)."""
    for statement in schema():
        if statement.startswith(("CREATE TABLE IF NOT EXISTS saved_lessons ", "CREATE TABLE IF NOT EXISTS lesson_authors ")):
            db.execute(_ddl(db, statement))


def _self_paced(db: Database) -> None:
    """Self-paced classes (homework): a class's deadline (NULL: a live class, as every older one) and each seat's own
    stop (classroom/self_paced.py)."""
    add_column(db, "classes", "deadline", "REAL")
    add_column(db, "seats", "stop", "INTEGER NOT NULL DEFAULT 1")


def _drafts_kept(db: Database) -> None:
    """A builder's sign-in and draft kept per browser (a reload keeps both): lesson_authors.seat_sha256, lesson_drafts."""
    add_column(db, "lesson_authors", "seat_sha256", "TEXT")
    db.execute(_ddl(db, next(s for s in schema() if s.startswith("CREATE TABLE IF NOT EXISTS lesson_drafts "))))


@dataclass(frozen=True)
class Migration:
    version: int  # the database's version once this step is applied
    what: str
    apply: Callable[[Database], None]


MIGRATIONS = [
    Migration(1, "the tables and columns added before versions were stored", _from_before_versions),
    Migration(2, "seat labels and discussion groups formed by disagreement", _discussion_groups),
    Migration(3, "open-text answers: the moderation of their groups", _text_moderation),
    Migration(4, "anonymous student work on the projector: the projected item and its log", _showcase),
    Migration(5, "a teacher's own lessons: their saved versions and who may save them", _saved_lessons),
    Migration(6, "self-paced classes: a class's deadline and each seat's own stop", _self_paced),
    Migration(7, "a lesson builder's sign-in and draft kept per browser through a reload", _drafts_kept),
]
LATEST = MIGRATIONS[-1].version


def version(db: Database) -> int | None:
    """The database's version: None for an empty database, 0 for one made before versions were stored."""
    if not columns(db, "schema_version"):
        return 0 if columns(db, "classes") or columns(db, "answers") else None
    row = db.execute("SELECT MAX(version) FROM schema_version").fetchone()
    return row[0] or 0


def migrate(db: Database) -> int | None:
    """Bring the database to LATEST: schema.sql for an empty one, else the migrations after its version. -> the
    version it was at (None: it was empty)."""
    if version(db) == LATEST:  # the usual case, without taking the lock
        return LATEST
    db.execute("BEGIN IMMEDIATE")
    if db.postgres:
        db.execute(_LOCK)
    found = version(db)  # again under the lock: another replica may have done it meanwhile
    if found is None:
        for statement in schema():
            db.execute(_ddl(db, statement))
    else:
        for step in MIGRATIONS:
            if step.version > found:
                step.apply(db)
    if found != LATEST:
        db.execute("DELETE FROM schema_version")
        db.execute("INSERT INTO schema_version (version) VALUES (?)", (LATEST,))
    db.execute("COMMIT")
    return found

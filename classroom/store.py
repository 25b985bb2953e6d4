"""All the SQL of the live class: class sessions, the stop the class is on, revealed questions and answers.

Two engines behind one class, chosen by where the store is (`store_location()`):
- SQLite (the default): one file (WAL mode) in the data folder, $ATTENTION_LAB_DATA, default ./data beside app.py.
  Several server processes on one machine (serve.py's replicas) share it safely: every call opens its own
  connection, writes are single short transactions, and a writer waits up to `busy_seconds` for the lock.
- PostgreSQL, when $ATTENTION_LAB_DATABASE_URL holds a DSN (`postgresql://user:password@host:5432/dbname`): for
  replicas on several machines (deploy/README.md). Each process keeps a few connections open (a new one forks a
  server process); a call waits up to `busy_seconds` for a free connection and for a row lock.
A write that still cannot get the lock (or a database that cannot be reached) raises StoreBusy, which the UI turns
into a message: an answer is stored or refused, never lost silently.

Every statement is written once, in SQL both engines accept (`INSERT ... ON CONFLICT DO NOTHING`, CASE, CAST),
with SQLite's `?` placeholders and `BEGIN IMMEDIATE`; `to_postgres` translates those two in one place, and
`postgres_ddl` turns SQLite's REAL (8 bytes there) into PostgreSQL's DOUBLE PRECISION (REAL is 4 bytes there: unix
seconds would be rounded to minutes). A new table goes in SCHEMA, a new column of an old table in ADDED_COLUMNS.

Security: a class is created with a random teacher token; only its sha256 is stored (table teacher_keys, one row
per device the teacher holds the class on). Every teacher operation (results, reveal, move) needs a token, which
stays in that device's session_state and never goes in a URL. The teacher takes the class back after a reload or a
replica's death by her browser's seat (the HttpOnly cookie serving/seat.py sets; only its sha256 is stored), or from
another device with the teacher password (ui/lessons/teacher.py checks it; take_back() then issues a new token).
Students are anonymous: their id is their browser's seat (or a random id per session without one); one answer row
per student and question (the first one counts; repeats change nothing). An answer given after the question was
revealed is stored as late and never counted, right or not. Wrong class codes and passwords are recorded per client
address and session (table attempts), so every replica refuses a guesser after a few tries.
"""
from __future__ import annotations

import contextlib
import hashlib
import hmac
import os
import re
import secrets
import sqlite3
import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

DATA_ENV = "ATTENTION_LAB_DATA"  # folder of the database file
DATABASE_URL_ENV = "ATTENTION_LAB_DATABASE_URL"  # a PostgreSQL DSN: the store is that database instead of the file
CLASS_HOURS_ENV = "ATTENTION_LAB_CLASS_HOURS"  # how long a class session lasts (default 4)
KEEP_DAYS_ENV = "ATTENTION_LAB_KEEP_ANSWERS_DAYS"  # how long answers are kept (default 7)
DEFAULT_DATA = Path(__file__).resolve().parents[1] / "data"
DB_NAME = "classroom.sqlite3"
CODE_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"  # no 0/O, 1/I: read aloud or typed from a projector
CODE_LENGTH = 6
MAX_ANSWER_CHARS = 200
POOL_ENV = "ATTENTION_LAB_DATABASE_POOL"  # PostgreSQL connections per process (default 8)
POSTGRES_CONNECTIONS = 8  # per process: more script threads than this wait for one (a burst queues, never piles up)
POSTGRES_SCHEMES = ("postgresql://", "postgres://")

SCHEMA = """
CREATE TABLE IF NOT EXISTS classes (
    code TEXT PRIMARY KEY,
    token_sha256 TEXT NOT NULL,
    lesson TEXT NOT NULL,
    stop INTEGER NOT NULL,          -- 1-based stop the class is on
    created REAL NOT NULL,          -- unix seconds
    expires REAL NOT NULL,
    teacher_seat TEXT,              -- sha256 of the seat cookie of the browser that started it (NULL: none)
    lesson_source TEXT,             -- the lesson file's text when the class started (used while the file is broken)
    uploads INTEGER NOT NULL DEFAULT 1  -- 0: the teacher turned model uploads off for her students
);
CREATE TABLE IF NOT EXISTS teacher_keys (
    code TEXT NOT NULL,
    token_sha256 TEXT NOT NULL,
    created REAL NOT NULL,
    PRIMARY KEY (code, token_sha256)
);
CREATE TABLE IF NOT EXISTS attempts (
    kind TEXT NOT NULL,             -- 'code' or 'password'
    client TEXT NOT NULL,           -- 'ip:...' or 'session:...'
    at REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS attempts_by_client ON attempts (kind, client, at);
CREATE TABLE IF NOT EXISTS revealed (
    code TEXT NOT NULL,
    question TEXT NOT NULL,
    PRIMARY KEY (code, question)
);
CREATE TABLE IF NOT EXISTS answers (
    code TEXT NOT NULL,
    question TEXT NOT NULL,
    student TEXT NOT NULL,
    answer TEXT NOT NULL,
    correct INTEGER,                -- 1, 0, or NULL when the right answer is not known
    created REAL NOT NULL,
    late INTEGER NOT NULL DEFAULT 0, -- 1: given after the question was revealed (never counted)
    PRIMARY KEY (code, question, student)
);
"""
# Columns added after the first release: a database made before them gains them on open (ALTER TABLE ADD COLUMN).
ADDED_COLUMNS = {"classes": {"teacher_seat": "TEXT", "lesson_source": "TEXT",
                             "uploads": "INTEGER NOT NULL DEFAULT 1"},
                 "answers": {"late": "INTEGER NOT NULL DEFAULT 0"}}


class StoreBusy(RuntimeError):
    """The database stayed locked longer than the wait: the write did not happen (tell the user to retry)."""


@dataclass(frozen=True)
class ClassSession:
    code: str
    lesson: str
    stop: int
    expires: float
    revealed: frozenset[str]
    lesson_source: str | None = None
    uploads: bool = True


@dataclass(frozen=True)
class Results:
    """Answers to one question given before its reveal: {answer: count}, how many students answered, how many were
    right (None if unknown); `late`: how many answered after the reveal (not in the counts, never right)."""
    counts: dict[str, int]
    answered: int
    correct: int | None
    late: int = 0


def data_folder() -> Path:
    return Path(os.environ.get(DATA_ENV) or DEFAULT_DATA)


def _hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def normalise_code(text: str) -> str:
    """What a student typed -> a code to look up ('ab c12d' -> 'ABC12D'); anything else -> ''."""
    code = "".join(text.split()).upper()[:CODE_LENGTH + 2]
    return code if len(code) == CODE_LENGTH and all(ch in CODE_ALPHABET for ch in code) else ""


def store_location() -> str:
    """Where the class store is: the DSN in $ATTENTION_LAB_DATABASE_URL, else the SQLite file in the data folder."""
    return os.environ.get(DATABASE_URL_ENV) or str(data_folder() / DB_NAME)


def is_postgres(location: str | Path) -> bool:
    return str(location).startswith(POSTGRES_SCHEMES)


# SQLite-only words a statement must not use: the same statement runs on PostgreSQL (use ON CONFLICT DO NOTHING/UPDATE).
_SQLITE_ONLY = re.compile(r"\bINSERT\s+OR\s+(IGNORE|REPLACE)\b|\bPRAGMA\b|\bAUTOINCREMENT\b", re.IGNORECASE)


def to_postgres(sql: str) -> str:
    """A statement in the dialect this module writes -> PostgreSQL's: `?` -> `%s` (psycopg's placeholder; a literal
    `%` doubled), BEGIN IMMEDIATE -> BEGIN (PostgreSQL locks rows, not the file). Statements hold no `?` in text."""
    if _SQLITE_ONLY.search(sql):
        raise ValueError(f"SQLite-only SQL in a statement both engines run: {sql!r}")
    return re.sub(r"\bBEGIN IMMEDIATE\b", "BEGIN", sql).replace("%", "%%").replace("?", "%s")


def postgres_ddl(sql: str) -> str:
    """SQLite's REAL is 8 bytes, PostgreSQL's 4 (unix seconds would round to minutes): DOUBLE PRECISION there."""
    return re.sub(r"\bREAL\b", "DOUBLE PRECISION", sql)


class Database:
    """One connection of either engine, taking statements in this module's dialect (see `to_postgres`)."""

    def __init__(self, connection: Any, postgres: bool):
        self.connection = connection
        self.postgres = postgres

    def execute(self, sql: str, parameters: Sequence[Any] = ()) -> Any:
        """-> a cursor (fetchone, fetchall, rowcount, iteration: the same on both engines)."""
        if self.postgres:
            return self.connection.execute(to_postgres(sql), parameters or None)
        return self.connection.execute(sql, parameters)

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        if self.postgres:
            self.connection.cursor().executemany(to_postgres(sql), list(rows))
        else:
            self.connection.executemany(sql, rows)


class _PostgresPool:
    """Open connections to one PostgreSQL database, shared by a process's script threads: at most `size` in use at
    once; a call past them waits up to `wait` seconds, then StoreBusy. Connections are in autocommit mode, so a
    statement outside BEGIN ... COMMIT is its own transaction, as with SQLite's isolation_level=None. A connection the
    server dropped (a restart, a failover) fails the one call that finds it (StoreBusy: "answer again") and is
    replaced on the next."""

    def __init__(self, dsn: str, size: int, wait: float):
        self.dsn, self.wait = dsn, wait
        self.idle: list[Any] = []
        self.lock = threading.Lock()
        self.slots = threading.BoundedSemaphore(size)

    def _open(self) -> Any:
        import psycopg  # only a store on PostgreSQL needs it

        connection = psycopg.connect(self.dsn, autocommit=True, connect_timeout=max(2, round(self.wait)))
        # A statement waits for a row lock at most `wait`, then fails (StoreBusy): the same promise as SQLite's timeout.
        milliseconds = int(self.wait * 1000)
        connection.execute(f"SET lock_timeout = {milliseconds}")
        connection.execute(f"SET statement_timeout = {2 * milliseconds}")
        return connection

    @contextlib.contextmanager
    def connection(self) -> Iterator[Any]:
        import psycopg
        from psycopg.pq import TransactionStatus

        if not self.slots.acquire(timeout=self.wait):
            raise StoreBusy(f"no free database connection within {self.wait:g} s")
        connection = None
        try:
            with self.lock:
                connection = self.idle.pop() if self.idle else None
            if connection is None or connection.closed or connection.broken:
                connection = self._open()
            yield connection
        except psycopg.OperationalError as error:  # lock or statement timeout, server gone: nothing was written
            raise StoreBusy(str(error)) from error
        finally:
            if connection is not None and not (connection.closed or connection.broken):
                try:
                    if connection.info.transaction_status != TransactionStatus.IDLE:
                        connection.execute("ROLLBACK")  # a call that failed inside BEGIN: leave nothing half done
                    with self.lock:
                        self.idle.append(connection)
                except psycopg.Error:
                    connection.close()
            self.slots.release()

    def close(self) -> None:
        with self.lock:
            idle, self.idle = self.idle, []
        for connection in idle:
            connection.close()


class ClassStore:
    def __init__(self, path: Path | str | None = None, class_hours: float | None = None,
                 keep_days: float | None = None, busy_seconds: float = 5.0):
        """`path`: a SQLite file or a PostgreSQL DSN (`postgresql://...`); default: `store_location()`."""
        location = str(path) if path else store_location()
        self.postgres = is_postgres(location)
        self.path = None if self.postgres else Path(location)
        self.class_seconds = 3600 * (class_hours if class_hours is not None
                                     else float(os.environ.get(CLASS_HOURS_ENV) or 4))
        self.keep_seconds = 86400 * (keep_days if keep_days is not None
                                     else float(os.environ.get(KEEP_DAYS_ENV) or 7))
        self.busy_seconds = busy_seconds
        if self.postgres:
            size = int(os.environ.get(POOL_ENV) or POSTGRES_CONNECTIONS)
            self._pool = _PostgresPool(location, size, busy_seconds)
            self._create_postgres_tables()
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self._connect() as db:
            db.execute("PRAGMA journal_mode=WAL")  # persistent: readers never block the writer, across processes
            db.connection.executescript(SCHEMA)
            for table, columns in ADDED_COLUMNS.items():
                have = {row[1] for row in db.execute(f"PRAGMA table_info({table})")}
                for name, kind in columns.items():
                    if name not in have:
                        db.execute(f"ALTER TABLE {table} ADD COLUMN {name} {kind}")

    def _create_postgres_tables(self) -> None:
        """SCHEMA and ADDED_COLUMNS on PostgreSQL. Replicas start together, and two concurrent CREATE TABLE IF NOT
        EXISTS can both pass the check and one then fails: a transaction-scoped advisory lock makes them take turns."""
        with self._pool.connection() as connection:
            with connection.transaction():
                connection.execute("SELECT pg_advisory_xact_lock(hashtext('attention_lab.classroom.schema'))")
                connection.execute(postgres_ddl(SCHEMA))
                for table, columns in ADDED_COLUMNS.items():
                    have = {row[0] for row in connection.execute(
                        "SELECT column_name FROM information_schema.columns "
                        "WHERE table_schema = current_schema() AND table_name = %s", (table,))}
                    for name, kind in columns.items():
                        if name not in have:
                            connection.execute(f"ALTER TABLE {table} ADD COLUMN {name} {postgres_ddl(kind)}")

    def close(self) -> None:
        """Close the connections kept open (PostgreSQL); a SQLite store holds none between calls."""
        if self.postgres:
            self._pool.close()

    @contextlib.contextmanager
    def _connect(self) -> Iterator[Database]:
        """A connection for one call (sessions run in many threads and processes), in autocommit mode: a statement
        outside BEGIN ... COMMIT commits by itself. SQLite: a new connection each call; PostgreSQL: one from the pool."""
        if self.postgres:
            with self._pool.connection() as connection:
                yield Database(connection, postgres=True)
            return
        db = sqlite3.connect(self.path, timeout=self.busy_seconds, isolation_level=None)
        try:
            db.execute("PRAGMA synchronous=NORMAL")  # WAL: durable across a process crash, fast
            yield Database(db, postgres=False)
        except sqlite3.OperationalError as error:
            if "locked" in str(error) or "busy" in str(error):
                raise StoreBusy(str(error)) from error
            raise
        finally:
            db.close()

    # ---- teacher
    def create_class(self, lesson: str, stop: int = 1, now: float | None = None, teacher_seat: str | None = None,
                     lesson_source: str | None = None) -> tuple[str, str]:
        """-> (class code, teacher token). `teacher_seat`: the starting browser's seat cookie (it takes the class back
        after a reload); `lesson_source`: the lesson file's text now. Also deletes expired classes and old answers."""
        now = time.time() if now is None else now
        token = secrets.token_urlsafe(24)
        self.purge(now)
        with self._connect() as db:
            db.execute("BEGIN IMMEDIATE")
            while True:  # a code that is taken inserts nothing (no error, which would end a PostgreSQL transaction)
                code = "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))
                if db.execute("INSERT INTO classes (code, token_sha256, lesson, stop, created, expires, teacher_seat, "
                              "lesson_source) VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (code) DO NOTHING",
                              (code, _hash(token), lesson, stop, now, now + self.class_seconds,
                               _hash(teacher_seat) if teacher_seat else None, lesson_source)).rowcount == 1:
                    break
            db.execute("INSERT INTO teacher_keys VALUES (?, ?, ?)", (code, _hash(token), now))
            db.execute("COMMIT")
        return code, token

    def class_of_seat(self, seat: str, now: float | None = None) -> str | None:
        """The newest live class that the browser with this seat cookie started, or None."""
        now = time.time() if now is None else now
        if not seat:
            return None
        with self._connect() as db:
            row = db.execute("SELECT code FROM classes WHERE teacher_seat = ? AND expires > ? ORDER BY created DESC "
                             "LIMIT 1", (_hash(seat), now)).fetchone()
        return None if row is None else row[0]

    def take_back(self, code: str, now: float | None = None, seat: str | None = None) -> str | None:
        """A new teacher token for a live class (another device, or the same browser after a reload): the caller has
        proved the teacher (her seat, via class_of_seat, or the teacher password). -> the token, None when the class
        is unknown or expired. Tokens already given keep working (the projector and her phone hold one each);
        `seat` makes this browser the one that takes the class back by itself next time."""
        now = time.time() if now is None else now
        token = secrets.token_urlsafe(24)
        with self._connect() as db:
            db.execute("BEGIN IMMEDIATE")
            if db.execute("SELECT 1 FROM classes WHERE code = ? AND expires > ?", (code, now)).fetchone() is None:
                db.execute("ROLLBACK")
                return None
            db.execute("INSERT INTO teacher_keys VALUES (?, ?, ?)", (code, _hash(token), now))
            if seat:
                db.execute("UPDATE classes SET teacher_seat = ? WHERE code = ?", (_hash(seat), code))
            db.execute("COMMIT")
        return token

    def _is_teacher(self, db: Database, code: str, token: str, now: float) -> bool:
        first = db.execute("SELECT token_sha256 FROM classes WHERE code = ? AND expires > ?", (code, now)).fetchone()
        if first is None:
            return False
        hashed = _hash(token or "")
        keys = [first[0], *(row[0] for row in db.execute("SELECT token_sha256 FROM teacher_keys WHERE code = ?",
                                                         (code,)))]
        return any(hmac.compare_digest(key, hashed) for key in keys)

    def end_class(self, code: str, token: str, now: float | None = None) -> bool:
        """End the class now (it expires: students are told, nobody can answer); False as for move()."""
        now = time.time() if now is None else now
        return self._teacher_write(code, token, now, "UPDATE classes SET expires = ? WHERE code = ?", (now, code))

    def set_uploads(self, code: str, token: str, allowed: bool, now: float | None = None) -> bool:
        """The teacher allows or forbids model uploads for the students of her class; False as for move()."""
        return self._teacher_write(code, token, now, "UPDATE classes SET uploads = ? WHERE code = ?",
                                   (int(allowed), code))

    def _teacher_write(self, code: str, token: str, now: float | None, sql: str, parameters: tuple) -> bool:
        """One statement on the teacher's behalf; False without the right token or when the class has expired."""
        now = time.time() if now is None else now
        with self._connect() as db:
            if not self._is_teacher(db, code, token, now):
                return False
            db.execute(sql, parameters)
            return True

    def move(self, code: str, token: str, stop: int, now: float | None = None) -> bool:
        """Move the class to `stop` (1-based); False without the right token or when the class has expired."""
        return self._teacher_write(code, token, now, "UPDATE classes SET stop = ? WHERE code = ?", (stop, code))

    def reveal(self, code: str, token: str, question: str, now: float | None = None) -> bool:
        """Show `question`'s answer (and its page) to the class; False as for move()."""
        return self._teacher_write(code, token, now, "INSERT INTO revealed VALUES (?, ?) ON CONFLICT DO NOTHING", (code, question))

    def results(self, code: str, token: str, question: str, now: float | None = None) -> Results | None:
        """The distribution of answers to `question`; None without the right token."""
        now = time.time() if now is None else now
        with self._connect() as db:
            if not self._is_teacher(db, code, token, now):
                return None
            rows = db.execute("SELECT answer, COUNT(*), SUM(correct), COUNT(correct) FROM answers "
                              "WHERE code = ? AND question = ? AND late = 0 GROUP BY answer ORDER BY answer",
                              (code, question)).fetchall()
            late = db.execute("SELECT COUNT(*) FROM answers WHERE code = ? AND question = ? AND late = 1",
                              (code, question)).fetchone()[0]
        counts = {answer: n for answer, n, _, _ in rows}
        known = sum(graded for *_, graded in rows)
        correct = sum(right or 0 for _, _, right, _ in rows) if known else None
        return Results(counts, sum(counts.values()), correct, late)

    # ---- everyone
    def session(self, code: str, now: float | None = None) -> ClassSession | None:
        """The class a code names, or None when the code is unknown or the class has expired."""
        now = time.time() if now is None else now
        with self._connect() as db:
            row = db.execute("SELECT code, lesson, stop, expires, lesson_source, uploads FROM classes "
                             "WHERE code = ? AND expires > ?", (code, now)).fetchone()
            if row is None:
                return None
            revealed = frozenset(q for (q,) in db.execute("SELECT question FROM revealed WHERE code = ?", (code,)))
        code, lesson, stop, expires, source, uploads = row
        return ClassSession(code, lesson, stop, expires, revealed, source, bool(uploads))

    def answer(self, code: str, student: str, question: str, answer: str, correct: bool | None,
               now: float | None = None) -> bool:
        """Store a student's answer. -> True when stored now, False when this student had answered already
        (the first answer counts). An answer to a question already revealed is stored as late (never counted).
        Raises LookupError for an unknown or expired class, StoreBusy when the database stayed locked."""
        now = time.time() if now is None else now
        answer = answer[:MAX_ANSWER_CHARS]
        with self._connect() as db:
            # One statement: the class check, the reveal check and the insert are atomic, one lock per answer. (The
            # CAST gives PostgreSQL the type a bare NULL parameter in a SELECT list lacks; CASE: EXISTS is a boolean there.)
            cursor = db.execute(
                "INSERT INTO answers (code, question, student, answer, correct, created, late) "
                "SELECT ?, ?, ?, ?, CAST(? AS INTEGER), ?, "
                "CASE WHEN EXISTS (SELECT 1 FROM revealed WHERE code = ? AND question = ?) THEN 1 ELSE 0 END "
                "WHERE EXISTS (SELECT 1 FROM classes WHERE code = ? AND expires > ?) ON CONFLICT DO NOTHING",
                (code, question, student, answer, None if correct is None else int(correct), now, code, question,
                 code, now))
            if cursor.rowcount == 1:
                return True
            if db.execute("SELECT 1 FROM classes WHERE code = ? AND expires > ?", (code, now)).fetchone() is None:
                raise LookupError(code)
            return False

    def student_answer(self, code: str, student: str, question: str) -> str | None:
        """The answer this student gave (a new session after a reload or a replica's death finds it here)."""
        with self._connect() as db:
            row = db.execute("SELECT answer FROM answers WHERE code = ? AND question = ? AND student = ?",
                             (code, question, student)).fetchone()
        return None if row is None else row[0]

    def stored_answers(self, code: str) -> int:
        """How many answer rows a class has, late ones included (for the operator's benches: a count, no answers)."""
        with self._connect() as db:
            return db.execute("SELECT COUNT(*) FROM answers WHERE code = ?", (code,)).fetchone()[0]

    # ---- guessing
    def record_failure(self, kind: str, clients: tuple[str, ...], now: float | None = None) -> None:
        """A wrong class code or password, counted against each of `clients` (its address and its session)."""
        now = time.time() if now is None else now
        with self._connect() as db:
            db.executemany("INSERT INTO attempts VALUES (?, ?, ?)", [(kind, client, now) for client in clients])

    def failures(self, kind: str, client: str, window_seconds: float, now: float | None = None) -> tuple[int, float]:
        """-> (wrong tries by `client` in the last window, seconds until the oldest of them leaves the window)."""
        now = time.time() if now is None else now
        with self._connect() as db:
            count, oldest = db.execute("SELECT COUNT(*), MIN(at) FROM attempts WHERE kind = ? AND client = ? AND at > ?",
                                       (kind, client, now - window_seconds)).fetchone()
        return count, (0.0 if oldest is None else oldest + window_seconds - now)

    def purge(self, now: float | None = None) -> None:
        """Delete answers older than the keep time, and classes (with their reveals) expired as long ago."""
        now = time.time() if now is None else now
        cutoff = now - self.keep_seconds
        with self._connect() as db:
            db.execute("BEGIN IMMEDIATE")
            db.execute("DELETE FROM answers WHERE created < ?", (cutoff,))
            db.execute("DELETE FROM revealed WHERE code IN (SELECT code FROM classes WHERE expires < ?)", (cutoff,))
            db.execute("DELETE FROM teacher_keys WHERE code IN (SELECT code FROM classes WHERE expires < ?)", (now,))
            db.execute("DELETE FROM attempts WHERE at < ?", (now - 86400,))
            db.execute("DELETE FROM classes WHERE expires < ?", (cutoff,))
            db.execute("COMMIT")

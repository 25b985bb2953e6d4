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
per student and question (the first one counts; repeats change nothing). Only the stop the class is on takes
answers (checked in the same statement as the insert): none ahead of the class, none to a stop it has left. An answer
given after the question was revealed is stored as late and never counted, right or not. Peer instruction (Crouch & Mazur 2001): the teacher sets a
question's mode and phase (table phases: round 1 alone, a discussion with a countdown, round 2 with the same options),
so every replica and every reload sees it; answers carry their round, one per student, question and round, and a
round-1 answer given once round 1 has closed is late too. Wrong class codes and passwords are recorded per client
address, session and device (table attempts; classroom/guessing.py turns them into a backoff), so every replica slows
a guesser. A student answers only from a seat the class admitted (table seats): the teacher sets the class size, a join
beyond it (or beyond `seats_per_address` from one client address) waits for her to admit it, so scripted new students
(a new connection, a forged seat cookie) cannot stuff the count.
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
from dataclasses import dataclass, field
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
SEATS_PER_ADDRESS_ENV = "ATTENTION_LAB_SEATS_PER_ADDRESS"  # seats one client address fills by itself (0: no limit)
SEATS_PER_ADDRESS = 5  # a phone with a private window, a shared tablet; more from one address wait for the teacher
DEFAULT_CLASS_SIZE = 40
MAX_CLASS_SIZE = 2000
WAITING_PER_CLASS = 100  # joins waiting for the teacher; past it a join is refused (her list stays readable)
WAITING_PER_ADDRESS = 10  # of them from one client address (with a per-address limit)
ADMITTED, WAITING, FULL = "admitted", "waiting", "full"  # what a join gets

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
    uploads INTEGER NOT NULL DEFAULT 1, -- 0: the teacher turned model uploads off for her students
    class_size INTEGER NOT NULL DEFAULT 40 -- seats admitted without the teacher (she sets it, and may raise it)
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
CREATE TABLE IF NOT EXISTS seats (
    code TEXT NOT NULL,
    student TEXT NOT NULL,          -- the anonymous student id, as in answers
    address TEXT,                   -- sha256 of the client address (the per-address limit); NULL: not counted
    admitted INTEGER NOT NULL,      -- 1: may answer; 0: waits for the teacher (the class or the address was full)
    joined REAL NOT NULL,
    PRIMARY KEY (code, student)
);
CREATE INDEX IF NOT EXISTS seats_by_address ON seats (code, address);
CREATE TABLE IF NOT EXISTS revealed (
    code TEXT NOT NULL,
    question TEXT NOT NULL,
    PRIMARY KEY (code, question)
);
"""
# One answer per student, question and round; the first one counts (repeats change nothing).
ANSWERS_TABLE = """
CREATE TABLE IF NOT EXISTS answers (
    code TEXT NOT NULL,
    question TEXT NOT NULL,
    student TEXT NOT NULL,
    answer TEXT NOT NULL,
    correct INTEGER,                -- 1, 0, or NULL when the right answer is not known
    created REAL NOT NULL,
    late INTEGER NOT NULL DEFAULT 0, -- 1: given after its round closed or the question was revealed (never counted)
    round INTEGER NOT NULL DEFAULT 1, -- peer instruction: 1 alone, 2 after the discussion (one-round questions: 1)
    PRIMARY KEY (code, question, student, round)
)"""
SCHEMA += ANSWERS_TABLE + """;
CREATE TABLE IF NOT EXISTS phases (
    code TEXT NOT NULL,
    question TEXT NOT NULL,
    mode TEXT NOT NULL,             -- 'one' (one vote) or 'peer' (vote, discuss, vote again)
    phase TEXT NOT NULL,            -- 'round1', 'discussion', 'round2' (revealed: the revealed table)
    discussion_ends REAL,           -- unix seconds the discussion's countdown ends (NULL: no discussion yet)
    shown INTEGER NOT NULL DEFAULT 0, -- 1: the teacher showed round 1's distribution to the room
    PRIMARY KEY (code, question)
);
"""
MODES = ("one", "peer")
PHASES = ("round1", "discussion", "round2")
# Columns added after the first release: a database made before them gains them on open (ALTER TABLE ADD COLUMN).
ADDED_COLUMNS = {"classes": {"teacher_seat": "TEXT", "lesson_source": "TEXT",
                             "uploads": "INTEGER NOT NULL DEFAULT 1",
                             "class_size": f"INTEGER NOT NULL DEFAULT {DEFAULT_CLASS_SIZE}"},
                 "answers": {"late": "INTEGER NOT NULL DEFAULT 0"}}
# answers' key gained `round`: a table made before it is copied into the new shape once (SQLite cannot change a key)
ANSWERS_COLUMNS = "code, question, student, answer, correct, created, late"


class StoreBusy(RuntimeError):
    """The database stayed locked longer than the wait: the write did not happen (tell the user to retry)."""


class ClassElsewhere(Exception):
    """An answer to a stop the class is not on (ahead of it, or one it has left): nothing was stored. `stop`: the
    stop the class is on."""

    def __init__(self, stop: int):
        super().__init__(f"the class is on stop {stop}")
        self.stop = stop


_STOP_QUESTION = re.compile(r"[^:]+:([0-9]+)")  # 'intro:3': stop 3's own question (ui/lessons/bar.question_id)
_PRE_CHECK = re.compile(r"[^:]+:pre:.+")  # 'intro:pre:scale' (classroom/lessons.check_question_id): stop 1


def _check_asked_at(question: str, stop: int) -> None:
    """A question id that names its stop must come with that stop (a caller's slip, never a student's input)."""
    match = _STOP_QUESTION.fullmatch(question)
    if (match and int(match.group(1)) != stop) or (_PRE_CHECK.fullmatch(question) and stop != 1):
        raise ValueError(f"question {question!r} is not asked at stop {stop}")


class NotAdmitted(PermissionError):
    """An answer from a student the class has not admitted (never joined, or waiting for the teacher): not stored."""


@dataclass(frozen=True)
class QuestionPhase:
    """Where a question of the class stands: its mode ('one' or 'peer'), its phase ('round1', 'discussion',
    'round2'), when the discussion's countdown ends (unix seconds, None before), whether round 1's distribution is
    shown to the room. A question with no row is a one-round question in round 1 (as before peer instruction)."""
    question: str
    mode: str = "one"
    phase: str = "round1"
    discussion_ends: float | None = None
    shown: bool = False

    @property
    def open_round(self) -> int | None:
        """The round a student's answer goes to now: 1, 2, or None during the discussion."""
        return {"round1": 1, "round2": 2}.get(self.phase)


def phase_in(phases: frozenset[QuestionPhase], question: str, default_mode: str = "one") -> QuestionPhase:
    return next((p for p in phases if p.question == question), QuestionPhase(question, default_mode))


@dataclass(frozen=True)
class Switches:
    """Peer instruction's switch matrix: students who answered both rounds (before the reveal), counted by whether
    each answer was right. `right_right` + `wrong_right` + `right_wrong` + `wrong_wrong` = `both`."""
    right_right: int
    wrong_right: int
    right_wrong: int
    wrong_wrong: int

    @property
    def both(self) -> int:
        return self.right_right + self.wrong_right + self.right_wrong + self.wrong_wrong


@dataclass(frozen=True)
class AnswerRow:
    """One stored answer, as the class report reads it (the student is the anonymous id, never a name)."""
    question: str
    student: str
    round: int
    answer: str
    correct: bool | None
    late: bool


@dataclass(frozen=True)
class ReportAnswers:
    """The answers of one class as they were when the teacher asked for her report (ClassStore.report_answers)."""
    rows: list[AnswerRow]
    revealed: frozenset[str]  # questions the teacher had revealed
    ended: bool  # the class had ended (or expired)
    at: float  # unix seconds of the read


@dataclass(frozen=True)
class ClassSession:
    code: str
    lesson: str
    stop: int
    expires: float
    revealed: frozenset[str]
    lesson_source: str | None = None
    uploads: bool = True
    phases: frozenset[QuestionPhase] = frozenset()  # questions the teacher set a mode or phase for

    def phase_of(self, question: str, default_mode: str = "one") -> QuestionPhase:
        """The question's phase; one the teacher has not touched is in round 1 of `default_mode` (the lesson's)."""
        return phase_in(self.phases, question, default_mode)


@dataclass(frozen=True)
class Seats:
    """Who joined a class, for its teacher: the class size, how many seats are admitted, the waiting joins (student
    id, unix seconds joined; oldest first), the newest joins (student id, joined, admitted; newest first) and how many
    joined in the last minute."""
    size: int
    admitted: int
    waiting: tuple[tuple[str, float], ...]
    recent: tuple[tuple[str, float, bool], ...]
    last_minute: int = 0


@dataclass(frozen=True)
class Results:
    """Answers to one question given before its reveal: {answer: count}, how many students answered, how many were
    right (None if unknown); `late`: how many answered after the reveal (not in the counts, never right)."""
    counts: dict[str, int]
    answered: int
    correct: int | None
    late: int = 0
    # {answer: the judgement stored with it}: True right, False wrong, None not graded (the expected answer was not
    # known when it was given). What the teacher's coloured bars show, so that they and `correct` ("% right") are
    # one judgement, the one made when the answer was stored (ClassStore.answer), never a second one made later.
    right: dict[str, bool | None] = field(default_factory=dict)


def data_folder() -> Path:
    return Path(os.environ.get(DATA_ENV) or DEFAULT_DATA)


def _hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def _check_size(size: int) -> None:
    if not isinstance(size, int) or not 1 <= size <= MAX_CLASS_SIZE:
        raise ValueError(f"class size {size!r}: 1 to {MAX_CLASS_SIZE}")


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
                 keep_days: float | None = None, busy_seconds: float = 5.0, seats_per_address: int | None = None):
        """`path`: a SQLite file or a PostgreSQL DSN (`postgresql://...`); default: `store_location()`.
        `seats_per_address`: seats one client address fills without the teacher (0: no limit; default
        $ATTENTION_LAB_SEATS_PER_ADDRESS or SEATS_PER_ADDRESS)."""
        location = str(path) if path else store_location()
        self.postgres = is_postgres(location)
        self.path = None if self.postgres else Path(location)
        self.class_seconds = 3600 * (class_hours if class_hours is not None
                                     else float(os.environ.get(CLASS_HOURS_ENV) or 4))
        self.keep_seconds = 86400 * (keep_days if keep_days is not None
                                     else float(os.environ.get(KEEP_DAYS_ENV) or 7))
        self.busy_seconds = busy_seconds
        self.seats_per_address = (seats_per_address if seats_per_address is not None
                                  else int(os.environ.get(SEATS_PER_ADDRESS_ENV) or SEATS_PER_ADDRESS))
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
            self._add_round(db)

    @staticmethod
    def _add_round(db: sqlite3.Connection) -> None:
        """A database from before peer instruction: answers get `round` (all 1) in their key, in one transaction
        (another replica opening the file at the same time finds it done when it gets the lock)."""
        if "round" in {row[1] for row in db.execute("PRAGMA table_info(answers)")}:
            return
        db.execute("BEGIN IMMEDIATE")
        if "round" not in {row[1] for row in db.execute("PRAGMA table_info(answers)")}:
            db.execute("ALTER TABLE answers RENAME TO answers_before_rounds")
            db.execute(ANSWERS_TABLE)
            db.execute(f"INSERT INTO answers ({ANSWERS_COLUMNS}) SELECT {ANSWERS_COLUMNS} FROM answers_before_rounds")
            db.execute("DROP TABLE answers_before_rounds")
        db.execute("COMMIT")

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
                answers = {row[0] for row in connection.execute(
                    "SELECT column_name FROM information_schema.columns "
                    "WHERE table_schema = current_schema() AND table_name = 'answers'")}
                if "round" not in answers:  # a database from before peer instruction: `round` joins the key
                    connection.execute("ALTER TABLE answers ADD COLUMN round INTEGER NOT NULL DEFAULT 1")
                    connection.execute("ALTER TABLE answers DROP CONSTRAINT answers_pkey")
                    connection.execute("ALTER TABLE answers ADD PRIMARY KEY (code, question, student, round)")

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
                     lesson_source: str | None = None, class_size: int = DEFAULT_CLASS_SIZE) -> tuple[str, str]:
        """-> (class code, teacher token). `teacher_seat`: the starting browser's seat cookie (it takes the class back
        after a reload); `lesson_source`: the lesson file's text now; `class_size`: how many students join without
        waiting for her. Also deletes expired classes and old answers."""
        _check_size(class_size)
        now = time.time() if now is None else now
        token = secrets.token_urlsafe(24)
        self.purge(now)
        with self._connect() as db:
            db.execute("BEGIN IMMEDIATE")
            while True:  # a code that is taken inserts nothing (no error, which would end a PostgreSQL transaction)
                code = "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))
                if db.execute("INSERT INTO classes (code, token_sha256, lesson, stop, created, expires, teacher_seat, "
                              "lesson_source, class_size) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (code) DO NOTHING",
                              (code, _hash(token), lesson, stop, now, now + self.class_seconds,
                               _hash(teacher_seat) if teacher_seat else None, lesson_source,
                               class_size)).rowcount == 1:
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

    def _is_teacher(self, db: Database, code: str, token: str, now: float, ended_too: bool = False) -> bool:
        """The token is one of the class's teacher keys, and the class is live (`ended_too`: or ended, until purged:
        its report stays readable as long as its answers are kept)."""
        first = (db.execute("SELECT token_sha256 FROM classes WHERE code = ?", (code,)) if ended_too else
                 db.execute("SELECT token_sha256 FROM classes WHERE code = ? AND expires > ?", (code, now))).fetchone()
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

    def results(self, code: str, token: str, question: str, now: float | None = None,
                round: int = 1) -> Results | None:
        """The distribution of answers to `question` in `round` (1, or 2 after a peer discussion); None without the
        right token."""
        now = time.time() if now is None else now
        with self._connect() as db:
            if not self._is_teacher(db, code, token, now):
                return None
            rows = db.execute("SELECT answer, COUNT(*), SUM(correct), COUNT(correct) FROM answers "
                              "WHERE code = ? AND question = ? AND round = ? AND late = 0 GROUP BY answer "
                              "ORDER BY answer", (code, question, round)).fetchall()
            late = db.execute("SELECT COUNT(*) FROM answers WHERE code = ? AND question = ? AND round = ? "
                              "AND late = 1", (code, question, round)).fetchone()[0]
        counts = {answer: n for answer, n, _, _ in rows}
        known = sum(graded for *_, graded in rows)
        correct = sum(right or 0 for _, _, right, _ in rows) if known else None
        verdicts = {answer: None if not graded else right == graded for answer, _, right, graded in rows}
        return Results(counts, sum(counts.values()), correct, late, verdicts)

    def switches(self, code: str, token: str, question: str, now: float | None = None) -> Switches | None:
        """The switch matrix of a peer-instruction question: students with a graded, counted answer in both rounds;
        None without the right token."""
        now = time.time() if now is None else now
        with self._connect() as db:
            if not self._is_teacher(db, code, token, now):
                return None
            rows = db.execute(
                "SELECT r1.correct, r2.correct, COUNT(*) FROM answers r1 JOIN answers r2 "
                "ON r2.code = r1.code AND r2.question = r1.question AND r2.student = r1.student "
                "AND r2.round = 2 AND r2.late = 0 AND r2.correct IS NOT NULL "
                "WHERE r1.code = ? AND r1.question = ? AND r1.round = 1 AND r1.late = 0 "
                "AND r1.correct IS NOT NULL GROUP BY r1.correct, r2.correct", (code, question)).fetchall()
        cells = {(before, after): n for before, after, n in rows}
        return Switches(cells.get((1, 1), 0), cells.get((0, 1), 0), cells.get((1, 0), 0), cells.get((0, 0), 0))

    def set_phase(self, code: str, token: str, question: str, mode: str, phase: str = "round1",
                  discussion_seconds: float | None = None, shown: bool = False, now: float | None = None) -> bool:
        """The teacher sets a question's mode ('one'/'peer') and phase ('round1', 'discussion' with a countdown of
        `discussion_seconds`, 'round2'), and whether round 1's distribution is shown to the room. Stored, so every
        replica and every reload sees it; False as for move()."""
        if mode not in MODES or phase not in PHASES:
            raise ValueError(f"mode {mode!r} / phase {phase!r}")
        now = time.time() if now is None else now
        ends = None if discussion_seconds is None else now + discussion_seconds
        # A discussion's end stays when the phase moves on (round 2 keeps it; only a new discussion sets another).
        return self._teacher_write(
            code, token, now,
            "INSERT INTO phases (code, question, mode, phase, discussion_ends, shown) VALUES (?, ?, ?, ?, ?, ?) "
            "ON CONFLICT (code, question) DO UPDATE SET mode = excluded.mode, phase = excluded.phase, "
            "discussion_ends = COALESCE(excluded.discussion_ends, phases.discussion_ends), shown = excluded.shown",
            (code, question, mode, phase, ends, int(shown)))

    def answer_rows(self, code: str, token: str, now: float | None = None) -> list[AnswerRow] | None:
        """Every answer of the class, for the class report (anonymous ids), also after the class ended (until its
        answers are deleted); None without the right token."""
        now = time.time() if now is None else now
        with self._connect() as db:
            if not self._is_teacher(db, code, token, now, ended_too=True):
                return None
            return self._answer_rows(db, code)

    @staticmethod
    def _answer_rows(db: Database, code: str) -> list[AnswerRow]:
        rows = db.execute("SELECT question, student, round, answer, correct, late FROM answers WHERE code = ? "
                          "ORDER BY question, round, student", (code,)).fetchall()
        return [AnswerRow(q, s, r, a, None if c is None else bool(c), bool(late)) for q, s, r, a, c, late in rows]

    def report_answers(self, code: str, token: str, now: float | None = None) -> ReportAnswers | None:
        """What the class report is built from, read at once (the teacher's click): every answer of the class, the
        questions revealed, whether the class has ended; also after it ended (until purged). None without the right
        token."""
        now = time.time() if now is None else now
        with self._connect() as db:
            if not self._is_teacher(db, code, token, now, ended_too=True):
                return None
            rows = self._answer_rows(db, code)
            revealed = frozenset(q for (q,) in db.execute("SELECT question FROM revealed WHERE code = ?", (code,)))
            expires = db.execute("SELECT expires FROM classes WHERE code = ?", (code,)).fetchone()[0]
        return ReportAnswers(rows, revealed, expires <= now, now)

    def set_class_size(self, code: str, token: str, size: int, now: float | None = None) -> bool:
        """The teacher changes how many students join without waiting (joins already admitted stay); False as for
        move(). Waiting joins stay waiting: she admits them (admit)."""
        _check_size(size)
        return self._teacher_write(code, token, now, "UPDATE classes SET class_size = ? WHERE code = ?", (size, code))

    def admit(self, code: str, token: str, students: Sequence[str] | None = None, now: float | None = None) -> int | None:
        """The teacher admits waiting joins (`students`, or all of them): -> how many were admitted, None without the
        right token. The class size grows to hold them (she chose them)."""
        now = time.time() if now is None else now
        with self._connect() as db:
            db.execute("BEGIN IMMEDIATE")
            if not self._is_teacher(db, code, token, now):
                db.execute("ROLLBACK")
                return None
            if students is None:
                count = db.execute("UPDATE seats SET admitted = 1 WHERE code = ? AND admitted = 0", (code,)).rowcount
            else:
                count = sum(db.execute("UPDATE seats SET admitted = 1 WHERE code = ? AND student = ? AND admitted = 0",
                                       (code, student)).rowcount for student in students)
            db.execute("UPDATE classes SET class_size = (SELECT COUNT(*) FROM seats WHERE code = ? AND admitted = 1) "
                       "WHERE code = ? AND class_size < (SELECT COUNT(*) FROM seats WHERE code = ? AND admitted = 1)",
                       (code, code, code))
            db.execute("COMMIT")
        return count

    def seats(self, code: str, token: str, recent: int = 8, now: float | None = None) -> Seats | None:
        """Who joined the class (see Seats); None without the right token."""
        now = time.time() if now is None else now
        with self._connect() as db:
            if not self._is_teacher(db, code, token, now):
                return None
            size = db.execute("SELECT class_size FROM classes WHERE code = ?", (code,)).fetchone()[0]
            admitted = db.execute("SELECT COUNT(*) FROM seats WHERE code = ? AND admitted = 1", (code,)).fetchone()[0]
            waiting = db.execute("SELECT student, joined FROM seats WHERE code = ? AND admitted = 0 ORDER BY joined",
                                 (code,)).fetchall()
            newest = db.execute("SELECT student, joined, admitted FROM seats WHERE code = ? ORDER BY joined DESC "
                                "LIMIT ?", (code, recent)).fetchall()
            last_minute = db.execute("SELECT COUNT(*) FROM seats WHERE code = ? AND joined > ?",
                                     (code, now - 60)).fetchone()[0]
        return Seats(size, admitted, tuple((s, j) for s, j in waiting),
                     tuple((s, j, bool(a)) for s, j, a in newest), last_minute)

    # ---- everyone
    def join(self, code: str, student: str, address: str | None = None, now: float | None = None) -> str:
        """A student takes a seat in a live class: -> ADMITTED (may answer), WAITING (the class is full, or her client
        address filled `seats_per_address` seats: the teacher admits her or not) or FULL (the waiting list is full
        too: nothing stored). A student who has a seat gets it again (a reload, a new tab, another replica): the same
        answer as the first time, whatever the class size is now. `address`: the client address, counted for the
        per-address limit (None: not counted, e.g. a loopback client). Raises LookupError for an unknown or expired
        class, StoreBusy when the database stayed locked."""
        now = time.time() if now is None else now
        where = None if address is None else _hash(f"address:{address}")
        per_address = self.seats_per_address if where is not None else 0
        with self._connect() as db:
            db.execute("BEGIN IMMEDIATE")
            # A row lock on the class (PostgreSQL; SQLite's BEGIN IMMEDIATE locks the file): joins to one class take
            # turns, so two at once cannot both take the last seat.
            if db.execute("UPDATE classes SET class_size = class_size WHERE code = ? AND expires > ?",
                          (code, now)).rowcount != 1:
                db.execute("ROLLBACK")
                raise LookupError(code)
            seat = db.execute("SELECT admitted FROM seats WHERE code = ? AND student = ?", (code, student)).fetchone()
            if seat is not None:
                db.execute("COMMIT")
                return ADMITTED if seat[0] else WAITING
            size = db.execute("SELECT class_size FROM classes WHERE code = ?", (code,)).fetchone()[0]
            taken, waiting = db.execute("SELECT COALESCE(SUM(admitted), 0), COUNT(*) - COALESCE(SUM(admitted), 0) "
                                        "FROM seats WHERE code = ?", (code,)).fetchone()
            mine, mine_waiting = (0, 0) if not per_address else db.execute(
                "SELECT COALESCE(SUM(admitted), 0), COUNT(*) - COALESCE(SUM(admitted), 0) FROM seats "
                "WHERE code = ? AND address = ?", (code, where)).fetchone()
            if taken < size and (not per_address or mine < per_address):
                admitted = 1
            elif waiting < WAITING_PER_CLASS and (not per_address or mine_waiting < WAITING_PER_ADDRESS):
                admitted = 0
            else:
                db.execute("ROLLBACK")
                return FULL
            db.execute("INSERT INTO seats (code, student, address, admitted, joined) VALUES (?, ?, ?, ?, ?)",
                       (code, student, where, admitted, now))
            db.execute("COMMIT")
        return ADMITTED if admitted else WAITING

    def seat_status(self, code: str, student: str, now: float | None = None) -> str | None:
        """ADMITTED or WAITING for a student who joined this live class, else None."""
        now = time.time() if now is None else now
        with self._connect() as db:
            row = db.execute("SELECT seats.admitted FROM seats JOIN classes ON classes.code = seats.code "
                             "WHERE seats.code = ? AND seats.student = ? AND classes.expires > ?",
                             (code, student, now)).fetchone()
        return None if row is None else ADMITTED if row[0] else WAITING

    def session(self, code: str, now: float | None = None) -> ClassSession | None:
        """The class a code names, or None when the code is unknown or the class has expired."""
        now = time.time() if now is None else now
        with self._connect() as db:
            row = db.execute("SELECT code, lesson, stop, expires, lesson_source, uploads FROM classes "
                             "WHERE code = ? AND expires > ?", (code, now)).fetchone()
            if row is None:
                return None
            revealed = frozenset(q for (q,) in db.execute("SELECT question FROM revealed WHERE code = ?", (code,)))
            phases = frozenset(QuestionPhase(q, mode, phase, ends, bool(shown)) for q, mode, phase, ends, shown in
                               db.execute("SELECT question, mode, phase, discussion_ends, shown FROM phases "
                                          "WHERE code = ?", (code,)))
        code, lesson, stop, expires, source, uploads = row
        return ClassSession(code, lesson, stop, expires, revealed, source, bool(uploads), phases)

    def answer(self, code: str, student: str, question: str, answer: str, correct: bool | None,
               now: float | None = None, round: int = 1, *, stop: int) -> bool:
        """Store a student's answer in `round` (1; 2 only once the teacher opened round 2) to `question`, which is
        asked at `stop` of the class's lesson (ui/lessons/bar.question_stop: a stop's own question at its stop, a "pre"
        check question at stop 1, a "post" one at the last stop). -> True when stored now, False when this student
        had answered this round already (the first answer counts) or round 2 is not open.
        Only the stop the class is on takes answers: an answer to another stop (ahead of the class, or one it has
        left) is not stored and raises ClassElsewhere, so nobody answers ahead and no gain is faked. An answer to a
        question already revealed, or a round-1 answer once round 1 has closed, is stored as late (never counted).
        Raises LookupError for an unknown or expired class, NotAdmitted for a student without an
        admitted seat (join), StoreBusy when the database stayed locked."""
        now = time.time() if now is None else now
        answer = answer[:MAX_ANSWER_CHARS]
        if round not in (1, 2):
            raise ValueError(f"round {round!r}")
        _check_asked_at(question, stop)
        lesson = question.split(":", 1)[0] if ":" in question else None  # 'intro:3' belongs to lesson intro
        with self._connect() as db:
            # One statement: the class, stop, round and reveal checks and the insert are atomic, one lock per
            # answer (a teacher's move commits before or after it, never between a check and the insert). ON
            # CONFLICT DO NOTHING (not INSERT OR IGNORE) and late as CASE ... THEN 1 ELSE 0 (an integer, not a
            # boolean): PostgreSQL reads it too. (The CASTs give PostgreSQL the type a bare NULL parameter lacks.)
            cursor = db.execute(
                "INSERT INTO answers (code, question, student, answer, correct, created, late, round) "
                "SELECT ?, ?, ?, ?, CAST(? AS INTEGER), ?, "
                "CASE WHEN EXISTS (SELECT 1 FROM revealed WHERE code = ? AND question = ?) OR (? = 1 AND EXISTS "
                "(SELECT 1 FROM phases WHERE code = ? AND question = ? AND phase <> 'round1')) THEN 1 ELSE 0 END, ? "
                "WHERE EXISTS (SELECT 1 FROM classes WHERE code = ? AND expires > ? AND stop = ? "
                "AND (CAST(? AS TEXT) IS NULL OR lesson = CAST(? AS TEXT))) AND (? = 1 OR EXISTS "
                "(SELECT 1 FROM phases WHERE code = ? AND question = ? AND phase = 'round2')) "
                "AND EXISTS (SELECT 1 FROM seats WHERE code = ? AND student = ? AND admitted = 1) "
                "ON CONFLICT (code, question, student, round) DO NOTHING",
                (code, question, student, answer, None if correct is None else int(correct), now, code, question,
                 round, code, question, round, code, now, stop, lesson, lesson, round, code, question, code, student))
            if cursor.rowcount == 1:
                return True
            row = db.execute("SELECT stop, lesson FROM classes WHERE code = ? AND expires > ?", (code, now)).fetchone()
            admitted = db.execute("SELECT 1 FROM seats WHERE code = ? AND student = ? AND admitted = 1",
                                  (code, student)).fetchone() is not None
        if row is None:
            raise LookupError(code)
        if row[0] != stop or (lesson is not None and row[1] != lesson):
            raise ClassElsewhere(row[0])
        if not admitted:
            raise NotAdmitted(code)
        return False

    def live_unrevealed(self, lesson: str, stop: int, question: str, now: float | None = None) -> bool:
        """Whether a live class of `lesson` is at `stop` now and has not revealed `question`: then the same stop
        opened outside that class keeps its answer (and its page) back too, so no student learns it there first."""
        now = time.time() if now is None else now
        with self._connect() as db:
            return db.execute(
                "SELECT 1 FROM classes WHERE lesson = ? AND stop = ? AND expires > ? AND NOT EXISTS "
                "(SELECT 1 FROM revealed WHERE revealed.code = classes.code AND revealed.question = ?) LIMIT 1",
                (lesson, stop, now, question)).fetchone() is not None

    def student_answer(self, code: str, student: str, question: str, round: int = 1) -> str | None:
        """The answer this student gave in `round` (a new session after a reload or a replica's death finds it)."""
        with self._connect() as db:
            row = db.execute("SELECT answer FROM answers WHERE code = ? AND question = ? AND student = ? AND round = ?",
                             (code, question, student, round)).fetchone()
        return None if row is None else row[0]

    def stored_answers(self, code: str) -> int:
        """How many answer rows a class has, late ones included (for the operator's benches: a count, no answers)."""
        with self._connect() as db:
            return db.execute("SELECT COUNT(*) FROM answers WHERE code = ?", (code,)).fetchone()[0]

    # ---- guessing
    def record_failure(self, kind: str, clients: tuple[str, ...], now: float | None = None) -> None:
        """A wrong class code or password, counted against each of `clients` (its session, device and address)."""
        now = time.time() if now is None else now
        with self._connect() as db:
            db.executemany("INSERT INTO attempts VALUES (?, ?, ?)", [(kind, client, now) for client in clients])

    def failures(self, kind: str, client: str, window_seconds: float, now: float | None = None) -> tuple[int, float]:
        """-> (wrong tries by `client` in the last window, unix seconds of the newest of them; 0.0 when none)."""
        now = time.time() if now is None else now
        with self._connect() as db:
            count, newest = db.execute("SELECT COUNT(*), MAX(at) FROM attempts WHERE kind = ? AND client = ? AND at > ?",
                                       (kind, client, now - window_seconds)).fetchone()
        return count, (0.0 if newest is None else newest)

    def purge(self, now: float | None = None) -> None:
        """Delete answers older than the keep time, and classes (with their reveals) expired as long ago."""
        now = time.time() if now is None else now
        cutoff = now - self.keep_seconds
        with self._connect() as db:
            db.execute("BEGIN IMMEDIATE")
            db.execute("DELETE FROM answers WHERE created < ?", (cutoff,))
            db.execute("DELETE FROM revealed WHERE code IN (SELECT code FROM classes WHERE expires < ?)", (cutoff,))
            db.execute("DELETE FROM phases WHERE code IN (SELECT code FROM classes WHERE expires < ?)", (cutoff,))
            db.execute("DELETE FROM seats WHERE code IN (SELECT code FROM classes WHERE expires < ?)", (cutoff,))
            # keys go with the class (at the keep time): an ended class's report stays the teacher's to read
            db.execute("DELETE FROM teacher_keys WHERE code IN (SELECT code FROM classes WHERE expires < ?)", (cutoff,))
            db.execute("DELETE FROM attempts WHERE at < ?", (now - 86400,))
            db.execute("DELETE FROM classes WHERE expires < ?", (cutoff,))
            db.execute("COMMIT")

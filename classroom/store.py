"""The live class's store: class sessions, the stop the class is on, revealed questions, seats and answers.

One API over two engines (classroom/database.py: a SQLite file, or PostgreSQL when $ATTENTION_LAB_DATABASE_URL holds a
DSN), one schema (classroom/schema.sql, brought up to date by classroom/migrations.py when a store opens). The
teacher's operations are on the handle create_class and take_back return (classroom/teacher.ClassTeacher); a
student's are here, with her seat. Every "no" is a typed error (classroom/errors.py) that the UI turns into a
message in one place (ui/live_class/refusals.py): an answer is stored or refused, never lost silently.

The teacher takes the class back after a reload or a replica's death by her browser's seat (the HttpOnly cookie
serving/seat.py sets; only its sha256 is stored), or from another device with the teacher password
(ui/live_class/teacher.py checks it; take_back() then issues a new token).
Students are anonymous: their id is their browser's seat (or a random id per session without one); one answer row
per student and question (the first one counts; repeats change nothing). Only the stop the class is on takes
answers (checked in the same statement as the insert): none ahead of the class, none to a stop it has left (a
self-paced class, with a deadline: each seat's own stop instead, classroom/self_paced.py). An answer
given after the question was revealed is stored as late and never counted, right or not. Peer instruction (Crouch &
Mazur 2001): the teacher sets a question's mode and phase (table phases: round 1 alone, a discussion with a
countdown, round 2 with the same options), so every replica and every reload sees it; answers carry their round,
one per student, question and round, and a round-1 answer given once round 1 has closed is late too. Wrong class
codes and passwords are recorded per client address, session and device (table attempts; classroom/guessing.py
turns them into a backoff), so every replica slows a guesser. A student answers only from a seat the class admitted
(table seats): the teacher sets the class size, a join beyond it (or beyond `seats_per_address` from one client
address) waits for her to admit it, so scripted new students (a new connection, a forged seat cookie) cannot stuff
the count.
"""
from __future__ import annotations

import contextlib
import os
import re
import secrets
import threading
import time
from collections.abc import Iterator
from pathlib import Path

# Callers import the store's names from here (its values, errors and engines live in the modules named below).
from classroom.database import (DATA_ENV, DATABASE_URL_ENV, DB_NAME, Connections, Database, data_folder,  # noqa: F401
                                is_postgres, store_location, to_postgres)
from classroom.errors import (AnsweredAlready, ClassElsewhere, ClassEnded, ClassStoreError, NoSuchClass,  # noqa: F401
                              NotAdmitted, NotOpenYet, NotTheTeacher, OffTheMap, StoreBusy)
from classroom.grouping import seat_label
from classroom.live_positions import LivePositions
from classroom.guessing import WrongGuesses
from classroom.migrations import migrate
from classroom.recent import shared_reads
from classroom import self_paced
from classroom.records import (AnswerRow, ClassSession, QuestionPhase, ReportAnswers, Results, Seats,  # noqa: F401
                               Switches, phase_in)
from classroom.showcase import Showcase
from classroom.teacher import DEFAULT_CLASS_SIZE, MAX_CLASS_SIZE, ClassTeacher, check_class_size, token_hash  # noqa: F401
from classroom.self_paced import SelfPacedSeats
from classroom.text_answers import TextAnswers

CLASS_HOURS_ENV = "ATTENTION_LAB_CLASS_HOURS"  # how long a class session lasts (default 4)
KEEP_DAYS_ENV = "ATTENTION_LAB_KEEP_ANSWERS_DAYS"  # how long answers are kept (default 7)
CODE_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"  # no 0/O, 1/I: read aloud or typed from a projector
CODE_LENGTH = 6
MAX_ANSWER_CHARS = 200
SEATS_PER_ADDRESS_ENV = "ATTENTION_LAB_SEATS_PER_ADDRESS"  # seats one client address fills by itself (0: no limit)
SEATS_PER_ADDRESS = 5  # a phone with a private window, a shared tablet; more from one address wait for the teacher
WAITING_PER_CLASS = 100  # joins waiting for the teacher; past it a join is refused (her list stays readable)
WAITING_PER_ADDRESS = 10  # of them from one client address (with a per-address limit)
ADMITTED, WAITING, FULL = "admitted", "waiting", "full"  # what a join gets


_STOP_QUESTION = re.compile(r"[^:]+:([0-9]+)")  # 'intro:3': stop 3's own question (classroom/lessons.question_id)
_PRE_CHECK = re.compile(r"[^:]+:pre:.+")  # 'intro:pre:scale' (classroom/lessons.check_question_id): stop 1


def _check_asked_at(question: str, stop: int) -> None:
    """A question id that names its stop must come with that stop (a caller's slip, never a student's input)."""
    match = _STOP_QUESTION.fullmatch(question)
    if (match and int(match.group(1)) != stop) or (_PRE_CHECK.fullmatch(question) and stop != 1):
        raise ValueError(f"question {question!r} is not asked at stop {stop}")


def _no_live_class(db: Database, code: str) -> NoSuchClass:
    """The error for a code that names no live class: ClassEnded when the class is there but has ended."""
    found = db.execute("SELECT 1 FROM classes WHERE code = ?", (code,)).fetchone() is not None
    return ClassEnded(code) if found else NoSuchClass(code)


def normalise_code(text: str) -> str:
    """What a student typed -> a code to look up ('ab c12d' -> 'ABC12D'); anything else -> ''."""
    code = "".join(text.split()).upper()[:CODE_LENGTH + 2]
    return code if len(code) == CODE_LENGTH and all(ch in CODE_ALPHABET for ch in code) else ""


class ClassStore(TextAnswers, Showcase, WrongGuesses, SelfPacedSeats, LivePositions):
    """One class database: a process opens it once (ui/seat.class_store) and every session shares it; it holds the
    location, the limits and (PostgreSQL) a pool of connections, never a class's state (text answers: TextAnswers; the
    projected item: classroom/showcase.Showcase)."""

    def __init__(self, path: Path | str | None = None, class_hours: float | None = None,
                 keep_days: float | None = None, busy_seconds: float = 5.0, seats_per_address: int | None = None):
        """`path`: a SQLite file or a PostgreSQL DSN (`postgresql://...`); default: `store_location()`.
        `seats_per_address`: seats one client address fills without the teacher (0: no limit; default
        $ATTENTION_LAB_SEATS_PER_ADDRESS or SEATS_PER_ADDRESS). Opening brings the database to the latest schema."""
        location = str(path) if path else store_location()
        self.connections = Connections(location, busy_seconds)
        self.postgres, self.path = self.connections.postgres, self.connections.path
        self.class_seconds = 3600 * (class_hours if class_hours is not None
                                     else float(os.environ.get(CLASS_HOURS_ENV) or 4))
        self.keep_seconds = 86400 * (keep_days if keep_days is not None
                                     else float(os.environ.get(KEEP_DAYS_ENV) or 7))
        self.busy_seconds = busy_seconds
        self.seats_per_address = (seats_per_address if seats_per_address is not None
                                  else int(os.environ.get(SEATS_PER_ADDRESS_ENV) or SEATS_PER_ADDRESS))
        self.recent = shared_reads(location)  # the class as the students' polls read it (classroom/recent.py)
        with self.connect() as db:
            if not self.postgres:
                db.execute("PRAGMA journal_mode=WAL")  # persistent: readers never block the writer, across processes
            migrate(db)

    def close(self) -> None:
        """Close the connections kept open (PostgreSQL); a SQLite store holds none between calls."""
        self.connections.close()

    @contextlib.contextmanager
    def connect(self) -> Iterator[Database]:
        """A connection for one call (classroom/database.Connections), in autocommit mode."""
        with self.connections.connection() as db:
            yield db

    # ---- the teacher's handle
    def create_class(self, lesson: str, stop: int = 1, now: float | None = None, teacher_seat: str | None = None,
                     lesson_source: str | None = None, class_size: int = DEFAULT_CLASS_SIZE,
                     deadline: float | None = None) -> ClassTeacher:
        """A new class -> its teacher's handle. `teacher_seat`: the starting browser's seat cookie (it takes the class
        back after a reload); `lesson_source`: the lesson file's text now; `class_size`: how many students join
        without waiting for her; `deadline` (unix seconds): a self-paced class (classroom/self_paced.py), else a live
        one of `class_hours`. Also deletes expired classes and old answers."""
        check_class_size(class_size)
        now = time.time() if now is None else now
        if deadline is not None:
            self_paced.check_deadline(deadline, now)
        expires = now + self.class_seconds if deadline is None else self_paced.class_expires(deadline)
        token = secrets.token_urlsafe(24)
        self.purge(now)
        with self.connect() as db:
            db.execute("BEGIN IMMEDIATE")
            while True:  # a code that is taken inserts nothing (no error, which would end a PostgreSQL transaction)
                code = "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))
                if db.execute("INSERT INTO classes (code, token_sha256, lesson, stop, created, expires, teacher_seat, "
                              "lesson_source, class_size, deadline) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
                              "ON CONFLICT (code) DO NOTHING",
                              (code, token_hash(token), lesson, stop, now, expires,
                               token_hash(teacher_seat) if teacher_seat else None, lesson_source,
                               class_size, deadline)).rowcount == 1:
                    break
            db.execute("INSERT INTO teacher_keys VALUES (?, ?, ?)", (code, token_hash(token), now))
            db.execute("COMMIT")
        return ClassTeacher(self, code, token, lesson)

    def teacher(self, code: str, token: str, lesson: str) -> ClassTeacher:
        """The handle again from its plain data (what a session keeps: ui/session.TeacherHandle). Checks nothing
        here: each of its operations checks the token."""
        return ClassTeacher(self, code, token, lesson)

    def class_of_seat(self, seat: str, now: float | None = None) -> str | None:
        """The newest live class that the browser with this seat cookie started, or None."""
        now = time.time() if now is None else now
        if not seat:
            return None
        with self.connect() as db:
            row = db.execute("SELECT code FROM classes WHERE teacher_seat = ? AND expires > ? ORDER BY created DESC "
                             "LIMIT 1", (token_hash(seat), now)).fetchone()
        return None if row is None else row[0]

    def take_back(self, code: str, now: float | None = None, seat: str | None = None) -> ClassTeacher:
        """A new teacher handle (a new token) for a live class, on another device or the same browser after a
        reload: the caller has proved the teacher (her seat, via class_of_seat, or the teacher password). Tokens
        already given keep working (the projector and her phone hold one each); `seat` makes this browser the one
        that takes the class back by itself next time. Raises NoSuchClass (ClassEnded for an ended class)."""
        now = time.time() if now is None else now
        token = secrets.token_urlsafe(24)
        with self.connect() as db:
            db.execute("BEGIN IMMEDIATE")
            row = db.execute("SELECT lesson, expires FROM classes WHERE code = ?", (code,)).fetchone()
            if row is None or row[1] <= now:
                db.execute("ROLLBACK")
                raise NoSuchClass(code) if row is None else ClassEnded(code)
            db.execute("INSERT INTO teacher_keys VALUES (?, ?, ?)", (code, token_hash(token), now))
            if seat:
                db.execute("UPDATE classes SET teacher_seat = ? WHERE code = ?", (token_hash(seat), code))
            db.execute("COMMIT")
        return ClassTeacher(self, code, token, row[0])

    # ---- everyone
    def join(self, code: str, student: str, address: str | None = None, now: float | None = None) -> str:
        """A student takes a seat in a live class: -> ADMITTED (may answer), WAITING (the class is full, or her client
        address filled `seats_per_address` seats: the teacher admits her or not) or FULL (the waiting list is full
        too: nothing stored). A student who has a seat gets it again (a reload, a new tab, another replica): the same
        answer as the first time, whatever the class size is now. `address`: the client address, counted for the
        per-address limit (None: not counted, e.g. a loopback client). Raises NoSuchClass (ClassEnded for an ended
        class), StoreBusy when the database stayed locked."""
        now = time.time() if now is None else now
        where = None if address is None else token_hash(f"address:{address}")
        per_address = self.seats_per_address if where is not None else 0
        with self.connect() as db:
            db.execute("BEGIN IMMEDIATE")
            # A row lock on the class (PostgreSQL; SQLite's BEGIN IMMEDIATE locks the file): joins to one class take
            # turns, so two at once cannot both take the last seat.
            if db.execute("UPDATE classes SET class_size = class_size WHERE code = ? AND expires > ?",
                          (code, now)).rowcount != 1:
                db.execute("ROLLBACK")
                raise _no_live_class(db, code)
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
            # every seat ever taken is counted (a seat is never given up): its label is the class's alone
            db.execute("INSERT INTO seats (code, student, address, admitted, joined, label) VALUES (?, ?, ?, ?, ?, ?)",
                       (code, student, where, admitted, now, seat_label(taken + waiting)))
            db.execute("COMMIT")
        return ADMITTED if admitted else WAITING

    def seat_status(self, code: str, student: str, now: float | None = None) -> str | None:
        """ADMITTED or WAITING for a student who joined this live class, else None."""
        now = time.time() if now is None else now
        with self.connect() as db:
            row = db.execute("SELECT seats.admitted FROM seats JOIN classes ON classes.code = seats.code "
                             "WHERE seats.code = ? AND seats.student = ? AND classes.expires > ?",
                             (code, student, now)).fetchone()
        return None if row is None else ADMITTED if row[0] else WAITING

    def follows(self, code: str, student: str, seat: str, now: float | None = None) -> bool:
        """Whether a browser may follow live class `code`: it took a seat there (`student`, admitted or waiting) or
        started it (`seat`, its cookie: the class keeps its sha256). One indexed read; the class-version route asks
        it before it answers anything about a class (serving/class_version.py)."""
        now = time.time() if now is None else now
        with self.connect() as db:
            row = db.execute("SELECT 1 FROM classes WHERE code = ? AND expires > ? AND (teacher_seat = ? OR EXISTS "
                             "(SELECT 1 FROM seats WHERE seats.code = classes.code AND seats.student = ?))",
                             (code, now, token_hash(seat), student)).fetchone()
        return row is not None

    def session(self, code: str, now: float | None = None) -> ClassSession | None:
        """The class a code names, or None (unknown or expired); a read now is shared with the polls (shared_session)."""
        began = self.recent.began(code) if now is None else None
        now = time.time() if now is None else now
        with self.connect() as db:
            row = db.execute("SELECT code, lesson, stop, expires, lesson_source, uploads, (SELECT at FROM projected p "
                             "WHERE p.code = classes.code AND p.stop = classes.stop), deadline FROM classes "
                             "WHERE code = ? AND expires > ?", (code, now)).fetchone()
            if row is None:
                return None
            revealed = frozenset(q for (q,) in db.execute("SELECT question FROM revealed WHERE code = ?", (code,)))
            phases = frozenset(QuestionPhase(q, mode, phase, ends, bool(shown), size, seed)
                               for q, mode, phase, ends, shown, size, seed in db.execute(
                                   "SELECT question, mode, phase, discussion_ends, shown, group_size, group_seed "
                                   "FROM phases WHERE code = ?", (code,)))
        code, lesson, stop, expires, source, uploads, projected, deadline = row
        session = ClassSession(code, lesson, stop, expires, revealed, source, bool(uploads), phases, projected, deadline)
        if began is not None:
            self.recent.keep(began, session)
        return session

    def shared_session(self, code: str, max_age: float | None = None) -> ClassSession | None:
        """The class as read at most classroom/recent.SHARED_SECONDS ago (or max_age, when younger), one read for every
        poll of this process (a student's poll); a write through this process's teacher handle is seen at once."""
        return self.recent.get(code, self.session, max_age)

    def changed(self, code: str) -> None:
        """The class was written through this process (ClassTeacher): shared_session reads it again."""
        self.recent.forget(code)

    def answer(self, code: str, student: str, question: str, answer: str, correct: bool | None,
               now: float | None = None, round: int = 1, *, stop: int, valid: frozenset[str] | None = None) -> None:
        """Store a student's answer in `round` (1; 2 only once the teacher opened round 2) to `question`, which is
        asked at `stop` of the class's lesson (ui/lesson_bar/bar.question_stop: a stop's own question at its stop, a
        "pre" check question at stop 1, a "post" one at the last stop). Raises AnsweredAlready when this student has
        answered this round (the first answer counts), NotOpenYet for round 2 before the teacher opened it. `valid`:
        the answers the question takes, from the server (a cell question's cells), never the client: any other raises
        OffTheMap. Only the stop the class is on takes answers: an answer to another stop (ahead of the class, or one
        it has left) raises ClassElsewhere, so nobody answers ahead and no gain is faked. An answer to a question
        already revealed, or a round-1 answer once round 1 has closed, is stored as late (never counted). Raises
        NoSuchClass (ClassEnded for an ended class), NotAdmitted without an admitted seat (join), StoreBusy when the
        database stayed locked. Nothing is stored when it raises."""
        now = time.time() if now is None else now
        if valid is not None and answer not in valid:
            raise OffTheMap(code)
        answer = answer[:MAX_ANSWER_CHARS]
        if round not in (1, 2):
            raise ValueError(f"round {round!r}")
        _check_asked_at(question, stop)
        lesson = question.split(":", 1)[0] if ":" in question else None  # 'intro:3' belongs to lesson intro
        with self.connect() as db:
            # One statement: the class, stop, round and reveal checks and the insert are atomic, one lock per
            # answer (a teacher's move commits before or after it, never between a check and the insert). ON
            # CONFLICT DO NOTHING (not INSERT OR IGNORE) and late as CASE ... THEN 1 ELSE 0 (an integer, not a
            # boolean): PostgreSQL reads it too. (The CASTs give PostgreSQL the type a bare NULL parameter lacks.)
            cursor = db.execute(
                "INSERT INTO answers (code, question, student, answer, correct, created, late, round) "
                "SELECT ?, ?, ?, ?, CAST(? AS INTEGER), ?, "
                "CASE WHEN EXISTS (SELECT 1 FROM revealed WHERE code = ? AND question = ?) OR (? = 1 AND EXISTS "
                "(SELECT 1 FROM phases WHERE code = ? AND question = ? AND phase <> 'round1')) THEN 1 ELSE 0 END, ? "
                "WHERE EXISTS (SELECT 1 FROM classes WHERE code = ? AND expires > ? AND stop = ? AND deadline IS NULL "
                "AND (CAST(? AS TEXT) IS NULL OR lesson = CAST(? AS TEXT))) AND (? = 1 OR EXISTS "
                "(SELECT 1 FROM phases WHERE code = ? AND question = ? AND phase = 'round2')) "
                "AND EXISTS (SELECT 1 FROM seats WHERE code = ? AND student = ? AND admitted = 1) "
                "ON CONFLICT (code, question, student, round) DO NOTHING",
                (code, question, student, answer, None if correct is None else int(correct), now, code, question,
                 round, code, question, round, code, now, stop, lesson, lesson, round, code, question, code, student))
            if cursor.rowcount == 1:
                return
            # Not stored: say why (reads after the fact; the insert above alone decided)
            row = db.execute("SELECT stop, lesson, deadline FROM classes WHERE code = ? AND expires > ?",
                             (code, now)).fetchone()
            if row is None:
                raise _no_live_class(db, code)
            if row[2] is not None:  # a self-paced class: her own stop and the deadline (classroom/self_paced.py)
                return self_paced.paced_answer(db, code, student, question, answer, correct, now, round, stop, lesson)
            if row[0] != stop or (lesson is not None and row[1] != lesson):
                raise ClassElsewhere(code, row[0])
            if db.execute("SELECT 1 FROM seats WHERE code = ? AND student = ? AND admitted = 1",
                          (code, student)).fetchone() is None:
                raise NotAdmitted(code)
            if round == 2 and db.execute("SELECT 1 FROM phases WHERE code = ? AND question = ? AND phase = 'round2'",
                                         (code, question)).fetchone() is None:
                raise NotOpenYet(code)
        raise AnsweredAlready(code)

    def student_answer(self, code: str, student: str, question: str, round: int = 1) -> str | None:
        """The answer this student gave in `round` (a new session after a reload or a replica's death finds it)."""
        with self.connect() as db:
            row = db.execute("SELECT answer FROM answers WHERE code = ? AND question = ? AND student = ? AND round = ?",
                             (code, question, student, round)).fetchone()
        return None if row is None else row[0]

    def stored_answers(self, code: str) -> int:
        """How many answer rows a class has, late ones included (for the operator's benches: a count, no answers)."""
        with self.connect() as db:
            return db.execute("SELECT COUNT(*) FROM answers WHERE code = ?", (code,)).fetchone()[0]

    def purge(self, now: float | None = None) -> None:
        """Delete answers older than the keep time (a self-paced class's: the keep time after it ended), and classes
        (with their reveals) expired as long ago."""
        now = time.time() if now is None else now
        cutoff = now - self.keep_seconds
        with self.connect() as db:
            db.execute("BEGIN IMMEDIATE")
            db.execute("DELETE FROM answers WHERE created < ? AND NOT EXISTS (SELECT 1 FROM classes WHERE "
                       "classes.code = answers.code AND classes.deadline IS NOT NULL AND classes.expires >= ?)",
                       (cutoff, cutoff))
            # a class's rows go with it (at the keep time, its keys too: an ended class's report stays hers to read)
            for table in ("revealed", "phases", "discussion_groups", "seats", "teacher_keys", "text_moderation",
                          "projected", "projections"):
                db.execute(f"DELETE FROM {table} WHERE code IN (SELECT code FROM classes WHERE expires < ?)", (cutoff,))
            db.execute("DELETE FROM attempts WHERE at < ?", (now - 86400,))
            db.execute("DELETE FROM classes WHERE expires < ?", (cutoff,))
            db.execute("COMMIT")


_process_stores: dict[str, ClassStore] = {}  # location -> this process's store
_process_stores_lock = threading.Lock()


def process_store() -> ClassStore:
    """The store of $ATTENTION_LAB_DATABASE_URL or the data folder's SQLite file, one per process and location: it
    holds only the location, limits and (PostgreSQL) a thread-safe pool of connections, so every session, and the
    server's class-version route (serving/class_version.py), share it."""
    location = store_location()
    store = _process_stores.get(location)
    if store is None:
        with _process_stores_lock:  # two first calls at once make one store
            if location not in _process_stores:
                _process_stores[location] = ClassStore(location)
            store = _process_stores[location]
    return store

"""The teacher's handle on one live class: what ClassStore.create_class and ClassStore.take_back return, and the one
way to do what only the teacher does (move the class, set a question's phase, reveal, end, read the answers, the seats,
the uploads switch). No caller passes a code and a token side by side.

Security: a class is created with a random teacher token; only its sha256 is stored (table teacher_keys, one row per
device the teacher holds the class on: the projector and her phone hold one each). Every operation here checks the
token, in constant time, against them: a wrong one raises NotTheTeacher, an ended class ClassEnded (the answers and
the report stay readable until the keep time), an unknown one NoSuchClass (classroom/errors.py). The token stays in
the teacher's session (ui/session.TeacherHandle keeps the handle's plain data) and never goes in a URL.
"""
from __future__ import annotations

import hashlib
import hmac
import secrets
import time
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Any, Protocol

from classroom.database import Database
from classroom.errors import ClassEnded, NoSuchClass, NotTheTeacher, RoundOneOpen
from classroom.gradebook import Gradebook, read_gradebook
from classroom.grouping import SIZES, GroupingSummary, Vote, form_groups, summarise
from classroom.records import MODES, PHASES, AnswerRow, ClassSession, ReportAnswers, Results, Seats, Switches
from classroom.self_paced import Progress, read_progress
from classroom.text_answers import APPROVED, HIDDEN, TextGroup, moderate, read_groups
from classroom import showcase

DEFAULT_CLASS_SIZE = 40
MAX_CLASS_SIZE = 2000


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def check_class_size(size: int) -> None:
    if not isinstance(size, int) or not 1 <= size <= MAX_CLASS_SIZE:
        raise ValueError(f"class size {size!r}: 1 to {MAX_CLASS_SIZE}")


class HandleStore(Protocol):
    """What a handle needs of its ClassStore (named so, not imported: the store imports this module)."""
    keep_seconds: float

    def connect(self) -> AbstractContextManager[Database]: ...

    def session(self, code: str, now: float | None = None) -> ClassSession | None: ...

    def changed(self, code: str) -> None: ...


@dataclass(frozen=True)
class ClassTeacher:
    """The teacher of class `code` (running lesson `lesson`), holding teacher token `token`. Rebuilt from its plain
    data by ClassStore.teacher; every method checks the token again (another device may have ended the class)."""
    store: HandleStore = field(repr=False, compare=False)
    code: str
    token: str = field(repr=False)
    lesson: str

    def session(self, now: float | None = None) -> ClassSession | None:
        """The class as everyone sees it (ClassStore.session), None once it has ended."""
        return self.store.session(self.code, now)

    def check(self, now: float | None = None) -> None:
        """Raises unless this handle is the teacher of a live class (a teacher's lessons: classroom/saved_lessons)."""
        with self.store.connect() as db:
            self._check(db, time.time() if now is None else now)

    # ---- the one check
    def _check(self, db: Database, now: float, ended_too: bool = False) -> None:
        """The token is one of the class's teacher keys, and the class is live (`ended_too`: or ended, until purged:
        its report stays readable as long as its answers are kept). Raises NoSuchClass, NotTheTeacher, ClassEnded."""
        row = db.execute("SELECT token_sha256, expires FROM classes WHERE code = ?", (self.code,)).fetchone()
        if row is None:
            raise NoSuchClass(self.code)
        hashed = token_hash(self.token or "")
        keys = [row[0], *(key for (key,) in db.execute("SELECT token_sha256 FROM teacher_keys WHERE code = ?",
                                                       (self.code,)))]
        if not any(hmac.compare_digest(key, hashed) for key in keys):
            raise NotTheTeacher(self.code)
        if row[1] <= now and not ended_too:
            raise ClassEnded(self.code)

    def _write(self, now: float | None, sql: str, parameters: tuple[Any, ...]) -> None:
        """One statement on the teacher's behalf, after the check."""
        now = time.time() if now is None else now
        with self.store.connect() as db:
            self._check(db, now)
            db.execute(sql, parameters)
        self.store.changed(self.code)  # this process's students' polls read it again (classroom/recent.py)

    def _in_turn(self, now: float | None, write: Callable[[Database, float], Any]) -> Any:
        """write(db, now) in one transaction, after the check -> what it returns (a refusal writes nothing)."""
        now = time.time() if now is None else now
        with self.store.connect() as db:
            db.execute("BEGIN IMMEDIATE")
            self._check(db, now)  # (an error inside BEGIN: the connection rolls back, on both engines)
            done = write(db, now)
            db.execute("COMMIT")
        self.store.changed(self.code)
        return done

    # ---- the class
    def move(self, stop: int, now: float | None = None) -> None:
        """Move the class to `stop` (1-based); the item on its projector comes down (it answered the stop left). A
        self-paced class has no class stop (each seat keeps its own: classroom/self_paced.py): it stays."""
        def write(db: Database, now: float) -> None:
            db.execute("UPDATE classes SET stop = ? WHERE code = ? AND deadline IS NULL", (stop, self.code))
            showcase.take_down(db, self.code, now)
        self._in_turn(now, write)

    def reveal(self, question: str, now: float | None = None) -> None:
        """Show `question`'s answer (and its page) to the class (revealing twice is harmless)."""
        self._write(now, "INSERT INTO revealed VALUES (?, ?) ON CONFLICT DO NOTHING", (self.code, question))

    def end(self, now: float | None = None) -> None:
        """End the class now (it expires: students are told, nobody can answer; the report stays hers)."""
        now = time.time() if now is None else now
        self._write(now, "UPDATE classes SET expires = ? WHERE code = ?", (now, self.code))

    def set_uploads(self, allowed: bool, now: float | None = None) -> None:
        """Allow or forbid model uploads for the students of the class."""
        self._write(now, "UPDATE classes SET uploads = ? WHERE code = ?", (int(allowed), self.code))

    def set_phase(self, question: str, mode: str, phase: str = "round1", discussion_seconds: float | None = None,
                  shown: bool = False, now: float | None = None) -> None:
        """A question's mode ('one'/'peer') and phase ('round1', 'discussion' with a countdown of `discussion_seconds`,
        'round2'), and whether round 1's distribution is shown to the room. Stored, so every replica and every reload
        sees it."""
        if mode not in MODES or phase not in PHASES:
            raise ValueError(f"mode {mode!r} / phase {phase!r}")
        now = time.time() if now is None else now
        ends = None if discussion_seconds is None else now + discussion_seconds
        # A discussion's end stays when the phase moves on (round 2 keeps it; only a new discussion sets another).
        self._write(now, "INSERT INTO phases (code, question, mode, phase, discussion_ends, shown) "
                         "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (code, question) DO UPDATE SET mode = excluded.mode, "
                         "phase = excluded.phase, shown = excluded.shown, "
                         "discussion_ends = COALESCE(excluded.discussion_ends, phases.discussion_ends)",
                    (self.code, question, mode, phase, ends, int(shown)))

    # ---- seats
    def set_class_size(self, size: int, now: float | None = None) -> None:
        """How many students join without waiting (joins already admitted stay; waiting ones wait for admit)."""
        check_class_size(size)
        self._write(now, "UPDATE classes SET class_size = ? WHERE code = ?", (size, self.code))

    def admit(self, students: Sequence[str] | None = None, now: float | None = None) -> int:
        """Admit waiting joins (`students`, or all of them) -> how many were admitted. The class size grows to hold
        them (she chose them)."""
        now = time.time() if now is None else now
        code = self.code
        with self.store.connect() as db:
            db.execute("BEGIN IMMEDIATE")
            self._check(db, now)  # (an error inside BEGIN: the connection rolls back, on both engines)
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

    def seats(self, recent: int = 8, now: float | None = None) -> Seats:
        """Who joined the class (see Seats)."""
        now = time.time() if now is None else now
        code = self.code
        with self.store.connect() as db:
            self._check(db, now)
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

    # ---- answers
    def results(self, question: str, round: int = 1, now: float | None = None) -> Results:
        """The distribution of answers to `question` in `round` (1, or 2 after a peer discussion)."""
        now = time.time() if now is None else now
        with self.store.connect() as db:
            self._check(db, now)
            rows = db.execute("SELECT answer, COUNT(*), SUM(correct), COUNT(correct) FROM answers "
                              "WHERE code = ? AND question = ? AND round = ? AND late = 0 GROUP BY answer "
                              "ORDER BY answer", (self.code, question, round)).fetchall()
            late = db.execute("SELECT COUNT(*) FROM answers WHERE code = ? AND question = ? AND round = ? "
                              "AND late = 1", (self.code, question, round)).fetchone()[0]
        counts = {answer: n for answer, n, _, _ in rows}
        known = sum(graded for *_, graded in rows)
        correct = sum(right or 0 for _, _, right, _ in rows) if known else None
        verdicts = {answer: None if not graded else right == graded for answer, _, right, graded in rows}
        return Results(counts, sum(counts.values()), correct, late, verdicts)

    def switches(self, question: str, now: float | None = None) -> Switches:
        """The switch matrix of a peer-instruction question: students with a graded, counted answer in both rounds."""
        now = time.time() if now is None else now
        with self.store.connect() as db:
            self._check(db, now)
            rows = db.execute(
                "SELECT r1.correct, r2.correct, COUNT(*) FROM answers r1 JOIN answers r2 "
                "ON r2.code = r1.code AND r2.question = r1.question AND r2.student = r1.student "
                "AND r2.round = 2 AND r2.late = 0 AND r2.correct IS NOT NULL "
                "WHERE r1.code = ? AND r1.question = ? AND r1.round = 1 AND r1.late = 0 "
                "AND r1.correct IS NOT NULL GROUP BY r1.correct, r2.correct", (self.code, question)).fetchall()
        cells = {(before, after): n for before, after, n in rows}
        return Switches(cells.get((1, 1), 0), cells.get((0, 1), 0), cells.get((1, 0), 0), cells.get((0, 0), 0))

    def answer_rows(self, now: float | None = None) -> list[AnswerRow]:
        """Every answer of the class (anonymous ids), also after the class ended (until its answers are deleted)."""
        now = time.time() if now is None else now
        with self.store.connect() as db:
            self._check(db, now, ended_too=True)
            return _answer_rows(db, self.code)

    def report_answers(self, now: float | None = None) -> ReportAnswers:
        """What the class report is built from, read at once (each time her report is drawn): every answer of the
        class, the questions revealed, whether the class has ended; also after it ended (until purged)."""
        now = time.time() if now is None else now
        with self.store.connect() as db:
            self._check(db, now, ended_too=True)
            rows = _answer_rows(db, self.code)
            revealed = frozenset(q for (q,) in db.execute("SELECT question FROM revealed WHERE code = ?",
                                                          (self.code,)))
            expires, deadline = db.execute("SELECT expires, deadline FROM classes WHERE code = ?",
                                           (self.code,)).fetchone()
            grouped = frozenset(q for (q,) in db.execute("SELECT question FROM phases WHERE code = ? AND group_size > 0",
                                                         (self.code,)))
            approved = tuple(db.execute("SELECT question, text_key, shown FROM text_moderation WHERE code = ? "
                                        "AND state = ? ORDER BY question, text_key", (self.code, APPROVED)))
            projections = showcase.projection_log(db, self.code)
        return ReportAnswers(rows, revealed, expires <= now, now, grouped, tuple(tuple(row) for row in approved),
                             projections, deadline is not None)

    def gradebook(self, now: float | None = None) -> Gradebook:
        """Every admitted seat and every answer with its time (classroom/gradebook.py), also after the class ended."""
        with self.store.connect() as db:
            self._check(db, time.time() if now is None else now, ended_too=True)
            return read_gradebook(db, self.code)

    def progress(self, now: float | None = None) -> Progress:
        """A self-paced class's progress: how many at each stop, each question's tally (classroom/self_paced.py)."""
        now = time.time() if now is None else now
        with self.store.connect() as db:
            self._check(db, now, ended_too=True)
            return read_progress(db, self.code, now)

    # ---- discussion groups (classroom/grouping.py)
    def group(self, question: str, size: int = 2, seed: int | None = None,
              now: float | None = None) -> GroupingSummary:
        """Form the discussion groups of `question` from its counted round-1 votes, students whose answers differ
        together (classroom/grouping.form_groups), in groups of `size` (2 or 3), in place of any it had; stored, so
        every replica and reload shows the same groups. `seed`: a new random one when None (again: other groups).
        Raises RoundOneOpen while round 1 is open (or the question is not in peer instruction)."""
        if size not in SIZES:
            raise ValueError(f"group size {size!r}")
        now = time.time() if now is None else now
        seed = secrets.randbelow(2 ** 31) if seed is None else seed
        with self.store.connect() as db:
            db.execute("BEGIN IMMEDIATE")
            self._check(db, now)
            if db.execute("UPDATE phases SET group_size = ?, group_seed = ? WHERE code = ? AND question = ? "
                          "AND mode = 'peer' AND phase <> 'round1'", (size, seed, self.code, question)).rowcount != 1:
                db.execute("ROLLBACK")
                raise RoundOneOpen(self.code)
            votes = _votes(db, self.code, question)
            groups = form_groups(votes, size, seed)
            db.execute("DELETE FROM discussion_groups WHERE code = ? AND question = ?", (self.code, question))
            members = [(self.code, question, student, number) for number, group in enumerate(groups)
                       for student in group]
            if members:
                db.executemany("INSERT INTO discussion_groups (code, question, student, grp) VALUES (?, ?, ?, ?)",
                               members)
            db.execute("COMMIT")
        self.store.changed(self.code)
        return summarise(size, groups, votes)

    def ungroup(self, question: str, now: float | None = None) -> None:
        """Turn the discussion groups of `question` off: its students discuss with a neighbour again."""
        now = time.time() if now is None else now
        with self.store.connect() as db:
            db.execute("BEGIN IMMEDIATE")
            self._check(db, now)
            db.execute("UPDATE phases SET group_size = 0, group_seed = NULL WHERE code = ? AND question = ?",
                       (self.code, question))
            db.execute("DELETE FROM discussion_groups WHERE code = ? AND question = ?", (self.code, question))
            db.execute("COMMIT")
        self.store.changed(self.code)

    def grouping(self, question: str, now: float | None = None) -> GroupingSummary | None:
        """The discussion groups of `question` as they stand (None: none formed, or turned off)."""
        now = time.time() if now is None else now
        with self.store.connect() as db:
            self._check(db, now, ended_too=True)
            row = db.execute("SELECT group_size FROM phases WHERE code = ? AND question = ?",
                             (self.code, question)).fetchone()
            if row is None or not row[0]:
                return None
            members: dict[int, list[str]] = {}
            for student, number in db.execute("SELECT student, grp FROM discussion_groups WHERE code = ? "
                                              "AND question = ? ORDER BY grp, student", (self.code, question)):
                members.setdefault(number, []).append(student)
            votes = _votes(db, self.code, question)
        return summarise(row[0], list(members.values()), votes)

    # ---- text answers (classroom/text_answers.py): her moderation list, read on her private screen only
    def text_groups(self, question: str, now: float | None = None) -> list[TextGroup]:
        """Every group of a text question's counted answers, approved, hidden or waiting, with the word lists that
        flag it: her moderation list (the room reads ClassStore.approved_texts)."""
        now = time.time() if now is None else now
        with self.store.connect() as db:
            self._check(db, now)
            return read_groups(db, self.code, question)

    def approve_texts(self, question: str, keys: Sequence[str] | None = None, now: float | None = None) -> int:
        """Approve groups (their text_keys; None: every waiting group no word list flags) -> how many."""
        return self._moderate(question, keys, APPROVED, now)

    def hide_texts(self, question: str, keys: Sequence[str], now: float | None = None) -> int:
        """Hide groups, approved or not: the room's screens drop them at their next read -> how many."""
        return self._moderate(question, keys, HIDDEN, now)

    def _moderate(self, question: str, keys: Sequence[str] | None, state: str, now: float | None) -> int:
        def write(db: Database, now: float) -> int:
            for key in (keys or ()) if state == HIDDEN else ():  # a hidden text leaves the projector at once
                showcase.take_down(db, self.code, now, question, key)
            return moderate(db, self.code, question, keys, state, now)
        return self._in_turn(now, write)

    # ---- the projector (classroom/showcase.py): one student's work, without her name
    def project(self, question: str, kind: str, item: str, now: float | None = None, *,
                views: showcase.Views | None = None) -> None:
        """Project one answer of the class's stop: `kind` 'text' (`item`: an approved group's key), 'cell' (a tapped
        "query,key") or 'view' (a view's link a student sent; `views`: the app's pages and their parameters, checked
        again), in place of any other. Raises NotApproved for a text hidden or waiting, NoSuchAnswer for a cell or
        view no student of this class gave, NotAView for a link that is not a view, ClassElsewhere for another
        stop's question."""
        self._in_turn(now, lambda db, now: showcase.project(db, self.code, question, kind, item, now, views))

    def take_down(self, now: float | None = None) -> bool:
        """Take the projected item down -> whether one was up."""
        return bool(self._in_turn(now, lambda db, now: showcase.take_down(db, self.code, now)))


def _votes(db: Database, code: str, question: str) -> list[Vote]:
    """The counted round-1 votes of a question (one given after round 1 closed is late: its student has no group)."""
    rows = db.execute("SELECT student, answer, correct FROM answers WHERE code = ? AND question = ? AND round = 1 "
                      "AND late = 0", (code, question)).fetchall()
    return [Vote(student, answer, bool(correct)) for student, answer, correct in rows]


def _answer_rows(db: Database, code: str) -> list[AnswerRow]:
    rows = db.execute("SELECT question, student, round, answer, correct, late FROM answers WHERE code = ? "
                      "ORDER BY question, round, student", (code,)).fetchall()
    return [AnswerRow(q, s, r, a, None if c is None else bool(c), bool(late)) for q, s, r, a, c, late in rows]

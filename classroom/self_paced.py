"""Self-paced classes (homework): the teacher starts a class with a deadline, and each student goes through its stops
at her own pace. The store's rules for them live here; classroom/store.py delegates to this module.

The class's rules, checked by the store (never by a page):
- each seat keeps its own stop (seats.stop, the furthest she has reached); she moves on one stop at a time
  (advance_seat), and only once every question of her stop is answered (its own and its check questions: the server
  names them from the lesson, never the client), so the teacher gets an answer to each question, in order;
- she answers a stop she has reached, never one ahead (NotReached), each question once (AnsweredAlready: the first
  answer counts), in one round (no peer rounds, no class Reveal: she reads right or wrong as soon as she answers);
- from the deadline on (the server's clock, `now`), nothing: an answer or a move raises PastDeadline. The class stays
  open REPORT_GRACE_SECONDS longer (classes.expires), so the teacher reads its progress and report on her page; then it
  ends as a live class does, and its answers are kept the keep time after that (ClassStore.purge).
A live class's stop (classes.stop) means nothing here: the teacher does not move a self-paced class.
"""
from __future__ import annotations

import time
from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Any

from classroom.database import Database
from classroom.errors import (AnsweredAlready, ClassElsewhere, NotAdmitted, NotAnsweredYet, NotOpenYet, NotReached,
                              PastDeadline)

MAX_DEADLINE_DAYS = 30  # the furthest deadline a teacher may set
REPORT_GRACE_SECONDS = 2 * 86400  # after the deadline the class stays hers to read (answers refused) this long


def check_deadline(deadline: float, now: float) -> None:
    """A deadline after now and at most MAX_DEADLINE_DAYS ahead (the page bounds its field: a caller's slip)."""
    if not now < deadline <= now + MAX_DEADLINE_DAYS * 86400:
        raise ValueError(f"deadline {deadline!r}: after now and within {MAX_DEADLINE_DAYS} days")


def class_expires(deadline: float) -> float:
    """When a self-paced class ends (its report stays readable until the keep time after that)."""
    return deadline + REPORT_GRACE_SECONDS


def paced_answer(db: Database, code: str, student: str, question: str, given: str, correct: bool | None, now: float,
           round: int, stop: int, lesson: str | None) -> None:
    """ClassStore.answer in a self-paced class (its class row has a deadline): stored in one statement that checks the
    deadline, her seat and her stop; else the refusal that says why. Nothing is stored when it raises."""
    if round != 1:
        raise NotOpenYet(code)  # no second round in a self-paced class
    cursor = db.execute(
        "INSERT INTO answers (code, question, student, answer, correct, created, late, round) "
        "SELECT ?, ?, ?, ?, CAST(? AS INTEGER), ?, 0, 1 "
        "WHERE EXISTS (SELECT 1 FROM classes WHERE code = ? AND expires > ? AND deadline > ? "
        "AND (CAST(? AS TEXT) IS NULL OR lesson = CAST(? AS TEXT))) "
        "AND EXISTS (SELECT 1 FROM seats WHERE code = ? AND student = ? AND admitted = 1 AND stop >= ?) "
        "ON CONFLICT (code, question, student, round) DO NOTHING",
        (code, question, student, given, None if correct is None else int(correct), now, code, now, now, lesson,
         lesson, code, student, stop))
    if cursor.rowcount == 1:
        return
    row = db.execute("SELECT deadline, lesson FROM classes WHERE code = ?", (code,)).fetchone()
    if row[0] <= now:
        raise PastDeadline(code, row[0])
    if lesson is not None and row[1] != lesson:
        raise ClassElsewhere(code, 1)
    seat = db.execute("SELECT stop FROM seats WHERE code = ? AND student = ? AND admitted = 1",
                      (code, student)).fetchone()
    if seat is None:
        raise NotAdmitted(code)
    if seat[0] < stop:
        raise NotReached(code, seat[0])
    raise AnsweredAlready(code)


def seat_stop(db: Database, code: str, student: str, now: float) -> int | None:
    """The furthest stop this student reached in self-paced class `code` (None: not a self-paced class she sits in,
    or it has ended)."""
    row = db.execute("SELECT seats.stop FROM seats JOIN classes ON classes.code = seats.code WHERE seats.code = ? "
                     "AND seats.student = ? AND seats.admitted = 1 AND classes.expires > ? "
                     "AND classes.deadline IS NOT NULL", (code, student, now)).fetchone()
    return None if row is None else row[0]


def advance_seat(db: Database, code: str, student: str, to: int, required: Collection[str], last: int,
            now: float) -> int:
    """Her Next: move her seat to stop `to` -> her stop now. A stop she has reached is hers to open again (nothing is
    written); the next one only when every question of `required` (her stop's questions, named by the server from the
    lesson of `last` stops) has her answer, before the deadline. Raises NotReached (two stops ahead, past the last),
    NotAnsweredYet, PastDeadline, NotAdmitted."""
    db.execute("BEGIN IMMEDIATE")  # (a refusal inside it: the connection rolls back, on both engines)
    row = db.execute("SELECT classes.deadline, seats.stop FROM classes JOIN seats ON seats.code = classes.code "
                     "WHERE classes.code = ? AND seats.student = ? AND seats.admitted = 1 AND classes.expires > ? "
                     "AND classes.deadline IS NOT NULL", (code, student, now)).fetchone()
    if row is None:
        raise NotAdmitted(code)
    deadline, stop = row
    if to <= stop:
        db.execute("COMMIT")
        return stop
    if deadline <= now:
        raise PastDeadline(code, deadline)
    if to != stop + 1 or to > last:
        raise NotReached(code, stop)
    answered = {q for (q,) in db.execute("SELECT question FROM answers WHERE code = ? AND student = ? AND round = 1",
                                         (code, student))}
    if not set(required) <= answered:
        raise NotAnsweredYet(code, stop)
    db.execute("UPDATE seats SET stop = ? WHERE code = ? AND student = ? AND stop = ?", (to, code, student, stop))
    db.execute("COMMIT")
    return to


@dataclass(frozen=True)
class QuestionTally:
    """One question's counted answers: how many answered, how many of them were graded, how many were right."""
    answered: int
    graded: int
    right: int

    @property
    def share_right(self) -> float | None:
        return self.right / self.graded if self.graded else None


@dataclass(frozen=True)
class Progress:
    """A self-paced class as its teacher follows it: the deadline, how many admitted seats are at each stop, and each
    question's tally (its id -> QuestionTally); read at `at` (unix seconds)."""
    deadline: float
    at_stop: dict[int, int]
    questions: dict[str, QuestionTally] = field(default_factory=dict)
    at: float = 0.0

    @property
    def students(self) -> int:
        return sum(self.at_stop.values())

    @property
    def past_deadline(self) -> bool:
        return self.deadline <= self.at


def read_progress(db: Database, code: str, now: float) -> Progress:
    """The class's progress (the caller has checked the teacher: ClassTeacher.progress)."""
    deadline = db.execute("SELECT deadline FROM classes WHERE code = ?", (code,)).fetchone()[0]
    at_stop = {stop: n for stop, n in db.execute("SELECT stop, COUNT(*) FROM seats WHERE code = ? AND admitted = 1 "
                                                 "GROUP BY stop ORDER BY stop", (code,))}
    questions = {q: QuestionTally(n, graded, right or 0) for q, n, graded, right in db.execute(
        "SELECT question, COUNT(*), COUNT(correct), SUM(correct) FROM answers WHERE code = ? AND late = 0 "
        "AND round = 1 GROUP BY question ORDER BY question", (code,))}
    return Progress(deadline if deadline is not None else 0.0, at_stop, questions, now)


class SelfPacedSeats:
    """The store's side of a student in a self-paced class (mixed into classroom/store.ClassStore): her stop, her
    Next. (Her answers go through ClassStore.answer, which hands a self-paced class's to paced_answer.)"""

    def own_stop(self: Any, code: str, student: str, now: float | None = None) -> int | None:
        """The furthest stop she has reached in self-paced class `code` (None: no such class, or no seat in it)."""
        with self.connect() as db:
            return seat_stop(db, code, student, time.time() if now is None else now)

    def advance(self: Any, code: str, student: str, to: int, required: Collection[str], last: int,
                now: float | None = None) -> int:
        """Her Next to stop `to` -> her stop now (see advance_seat for the rules and refusals)."""
        with self.connect() as db:
            return advance_seat(db, code, student, to, required, last, time.time() if now is None else now)

    def answered(self: Any, code: str, student: str) -> set[str]:
        """The questions she has answered in class `code` (what her Next needs, with her stop's questions)."""
        with self.connect() as db:
            return {q for (q,) in db.execute("SELECT question FROM answers WHERE code = ? AND student = ? AND round = 1",
                                             (code, student))}

"""A class's gradebook as the store holds it: every seat the class admitted (by its label, never a name: students are
anonymous) and every answer with its time, for the teacher's exports (ui/live_class/gradebook.py builds the CSV files
a learning management system imports). Read through her handle only (ClassTeacher.gradebook checks her token)."""
from __future__ import annotations

from dataclasses import dataclass

from classroom.database import Database


@dataclass(frozen=True)
class GradedAnswer:
    """One stored answer: the seat's label, the question, the round (2: after a peer discussion), the answer, whether
    it was right (None: not graded), whether it came late (after the Reveal or its round: never counted), and when it
    was stored (unix seconds, the server's clock)."""
    seat: str
    question: str
    round: int
    answer: str
    correct: bool | None
    late: bool
    at: float


@dataclass(frozen=True)
class Gradebook:
    """Every admitted seat's label (in the order they joined) and every answer of the class."""
    seats: tuple[str, ...]
    answers: tuple[GradedAnswer, ...]


def read_gradebook(db: Database, code: str) -> Gradebook:
    seats = tuple(label for (label,) in db.execute("SELECT COALESCE(label, student) FROM seats WHERE code = ? "
                                                   "AND admitted = 1 ORDER BY joined, student", (code,)))
    rows = db.execute("SELECT COALESCE(seats.label, answers.student), answers.question, answers.round, answers.answer, "
                      "answers.correct, answers.late, answers.created FROM answers LEFT JOIN seats "
                      "ON seats.code = answers.code AND seats.student = answers.student WHERE answers.code = ? "
                      "ORDER BY answers.created, answers.question, answers.round", (code,)).fetchall()
    return Gradebook(seats, tuple(GradedAnswer(seat, q, r, a, None if c is None else bool(c), bool(late), at)
                                  for seat, q, r, a, c, late, at in rows))

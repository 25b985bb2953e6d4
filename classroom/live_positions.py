"""Where the live classes of a store are, for the pages opened outside them (mixed into classroom/store.ClassStore):
what such a page holds back (classroom/answers_ahead.py), so nobody reads a class's answers on another page first. A
self-paced class (classroom/self_paced.py) holds nothing back there: it has no class stop and no Reveal, and holding
its lesson's answers back from every page of the server until its deadline (days) would cost everyone else."""
from __future__ import annotations

import time
from typing import Any, NamedTuple


class LivePosition(NamedTuple):
    """A live class as a page outside it sees it: its lesson, its stop, the questions it has revealed, and the
    lesson's text when the class started (a teacher's saved lesson runs on that version, whatever is saved later)."""
    lesson: str
    stop: int
    revealed: frozenset[str]
    source: str | None


class LivePositions:
    """The store's reads of its live classes' positions."""

    def live_unrevealed(self: Any, lesson: str, stop: int, question: str, now: float | None = None) -> bool:
        """Whether a live class of `lesson` is at `stop` now and has not revealed `question`: then the same stop opened
        outside that class keeps its answer (and page) back too, so no student learns it there first."""
        now = time.time() if now is None else now
        with self.connect() as db:
            return db.execute(
                "SELECT 1 FROM classes WHERE lesson = ? AND stop = ? AND expires > ? AND deadline IS NULL AND NOT EXISTS "
                "(SELECT 1 FROM revealed WHERE revealed.code = classes.code AND revealed.question = ?) LIMIT 1",
                (lesson, stop, now, question)).fetchone() is not None

    def live_positions(self: Any, now: float | None = None) -> list[LivePosition]:
        """Every live class on this store: what a page opened outside those classes holds back
        (classroom/answers_ahead.py), so nobody reads a class's answers on another page first."""
        now = time.time() if now is None else now
        with self.connect() as db:
            rows = db.execute("SELECT code, lesson, stop, lesson_source FROM classes WHERE expires > ? AND "
                              "deadline IS NULL", (now,)).fetchall()
            revealed: dict[str, set[str]] = {code: set() for code, *_ in rows}
            for code, question in db.execute(
                    "SELECT revealed.code, revealed.question FROM revealed JOIN classes ON classes.code = revealed.code "
                    "WHERE classes.expires > ?", (now,)):
                revealed.setdefault(code, set()).add(question)
        return [LivePosition(lesson, stop, frozenset(revealed[code]), source) for code, lesson, stop, source in rows]

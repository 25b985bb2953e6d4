"""Where the live classes of a store are, for the pages opened outside them (mixed into classroom/store.ClassStore):
what such a page holds back (classroom/answers_ahead.py), so nobody reads a class's answers on another page first. A
self-paced class (classroom/self_paced.py) holds nothing back there: it has no class stop and no Reveal, and holding
its lesson's answers back from every page of the server until its deadline (days) would cost everyone else."""
from __future__ import annotations

import time
from typing import Any


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

    def live_positions(self: Any, now: float | None = None) -> list[tuple[str, int, frozenset[str]]]:
        """Every live class on this store as (lesson, stop, its revealed questions): what a page opened outside those
        classes holds back (classroom/answers_ahead.py), so nobody reads a class's answers on another page first."""
        now = time.time() if now is None else now
        with self.connect() as db:
            rows = db.execute("SELECT code, lesson, stop FROM classes WHERE expires > ? AND deadline IS NULL",
                              (now,)).fetchall()
            revealed: dict[str, set[str]] = {code: set() for code, _, _ in rows}
            for code, question in db.execute(
                    "SELECT revealed.code, revealed.question FROM revealed JOIN classes ON classes.code = revealed.code "
                    "WHERE classes.expires > ?", (now,)):
                revealed.setdefault(code, set()).add(question)
        return [(lesson, stop, frozenset(revealed[code])) for code, lesson, stop in rows]

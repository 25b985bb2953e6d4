"""How a wrong class code or teacher password slows the one who typed it, and nobody else.

A guess is made by a session (one tab), a device (its browser's seat cookie, serving/seat.py) and a client address.
Each wrong guess is recorded against all three (ClassStore.record_failure). The session and the device wait before
their next guess, exponentially longer with their wrong guesses of the last day: FREE_GUESSES typos cost nothing, then
2 s, 4 s, ... up to MAX_WAIT. A guess made while waiting is refused before the code or password is looked at; a guess
from a session and device without wrong guesses is always checked, so a right code or password always gets in, from
the same classroom address as the guesser. The address is never refused on its own (a school behind one NAT or one
ingress shares it): past ADDRESS_CEILING wrong guesses an hour it leaves each session and device there two free wrong
guesses, not three (FREE_GUESSES_CROWDED), so a guesser who takes a new cookie every few guesses gets two per cookie,
and a teacher's new browser that types one typo and then the right password still gets in at once (issue 53: it was told
to wait MAX_WAIT). What bounds a guesser who makes a new browser per guess is the cost of a browser: the seats and
connections one address may hold (serving/). Streamlit-free: the UI (ui/live_class/classroom.py) and the benches call it
with the store.
"""
from __future__ import annotations

import math
import time
from typing import Any

FREE_GUESSES = 3  # wrong guesses a session or device makes before any wait (typos)
FREE_GUESSES_CROWDED = 2  # … when its address is past ADDRESS_CEILING: a typo, and the right one at once
MAX_WAIT = 600.0  # seconds: the longest wait between two guesses
WINDOW = 86400.0  # wrong guesses of the last day count (the store keeps them that long)
ADDRESS_CEILING = 1000  # wrong guesses an hour from one address before its guessers get FREE_GUESSES_CROWDED
ADDRESS_WINDOW = 3600.0


def backoff(wrong: int, free: int = FREE_GUESSES) -> float:
    """Seconds a session or device waits after its `wrong`-th wrong guess: 0, 0, 2, 4, 8, ... MAX_WAIT (`free` − 1
    zeros: the guess after the `free`-th wrong one is the first to wait)."""
    return 0.0 if wrong < free else min(MAX_WAIT, 2.0 ** (wrong - free + 1))


def guess_wait(store, kind: str, guessers: tuple[str, ...], address: str | None, now: float) -> int:
    """Whole seconds before the session and device in `guessers` ('session:...', 'device:...') may guess again (0:
    now). `address` ('ip:...'): past its ceiling, FREE_GUESSES_CROWDED free typos instead of FREE_GUESSES."""
    over = address is not None and store.failures(kind, address, ADDRESS_WINDOW, now)[0] >= ADDRESS_CEILING
    free = FREE_GUESSES_CROWDED if over else FREE_GUESSES
    wait = 0.0
    for guesser in guessers:
        count, last = store.failures(kind, guesser, WINDOW, now)
        if count:
            wait = max(wait, last + backoff(count, free) - now)
    return math.ceil(wait) if wait > 0 else 0


def guesses_in(seconds: float) -> int:
    """How many guesses one session or device makes in `seconds`, guessing each time it may (all wrong)."""
    at, made = 0.0, 0
    while at <= seconds:
        made += 1
        at += backoff(made)
    return made


class WrongGuesses:
    """The store's record of wrong guesses (mixed into classroom/store.ClassStore, table attempts): every replica
    reads the same backoff."""

    def record_failure(self: Any, kind: str, clients: tuple[str, ...], now: float | None = None) -> None:
        """A wrong class code or password, counted against each of `clients` (its session, device and address)."""
        now = time.time() if now is None else now
        with self.connect() as db:
            db.executemany("INSERT INTO attempts VALUES (?, ?, ?)", [(kind, client, now) for client in clients])

    def failures(self: Any, kind: str, client: str, window_seconds: float, now: float | None = None) -> tuple[int, float]:
        """-> (wrong tries by `client` in the last window, unix seconds of the newest of them; 0.0 when none)."""
        now = time.time() if now is None else now
        with self.connect() as db:
            count, newest = db.execute("SELECT COUNT(*), MAX(at) FROM attempts WHERE kind = ? AND client = ? AND at > ?",
                                       (kind, client, now - window_seconds)).fetchone()
        return count, (0.0 if newest is None else newest)

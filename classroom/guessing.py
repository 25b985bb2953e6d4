"""How a wrong class code or teacher password slows the one who typed it, and nobody else.

A guess is made by a session (one tab), a device (its browser's seat cookie, serving/seat.py) and a client address.
Each wrong guess is recorded against all three (ClassStore.record_failure). The session and the device wait before
their next guess, exponentially longer with their wrong guesses of the last day: FREE_GUESSES typos cost nothing, then
2 s, 4 s, ... up to MAX_WAIT. A guess made while waiting is refused before the code or password is looked at; a guess
from a session and device without wrong guesses is always checked, so a right code or password always gets in, from
the same classroom address as the guesser. The address is never refused on its own (a school behind one NAT or one
ingress shares it): past ADDRESS_CEILING wrong guesses an hour it only takes away the free guesses, so every session or
device there that has guessed wrong once waits MAX_WAIT. Streamlit-free: the UI (ui/lessons/classroom.py) and the
benches call it with the store.
"""
from __future__ import annotations

import math

FREE_GUESSES = 3  # wrong guesses a session or device makes before any wait (typos)
MAX_WAIT = 600.0  # seconds: the longest wait between two guesses
WINDOW = 86400.0  # wrong guesses of the last day count (the store keeps them that long)
ADDRESS_CEILING = 1000  # wrong guesses an hour from one address before every guesser there waits MAX_WAIT
ADDRESS_WINDOW = 3600.0


def backoff(wrong: int) -> float:
    """Seconds a session or device waits after its `wrong`-th wrong guess: 0, 0, 2, 4, 8, ... MAX_WAIT."""
    return 0.0 if wrong < FREE_GUESSES else min(MAX_WAIT, 2.0 ** (wrong - FREE_GUESSES + 1))


def guess_wait(store, kind: str, guessers: tuple[str, ...], address: str | None, now: float) -> int:
    """Whole seconds before the session and device in `guessers` ('session:...', 'device:...') may guess again (0:
    now). `address` ('ip:...'): past its ceiling, any wrong guess of theirs means MAX_WAIT."""
    over = address is not None and store.failures(kind, address, ADDRESS_WINDOW, now)[0] >= ADDRESS_CEILING
    wait = 0.0
    for guesser in guessers:
        count, last = store.failures(kind, guesser, WINDOW, now)
        if count:
            wait = max(wait, last + (MAX_WAIT if over else backoff(count)) - now)
    return math.ceil(wait) if wait > 0 else 0


def guesses_in(seconds: float) -> int:
    """How many guesses one session or device makes in `seconds`, guessing each time it may (all wrong)."""
    at, made = 0.0, 0
    while at <= seconds:
        made += 1
        at += backoff(made)
    return made

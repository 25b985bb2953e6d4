"""The page slots' order (runtime/page_slots.py): a short page goes before a long one, and every page by a deadline.

Why not turns (issue 56): with ten students opening heavy pages (the answer page's information-flow section, the LLM
page's branches), a bystander opening light pages every half second waited behind every one of them: the students'
page runs come in bursts (ten new pages at once, each holding the slot 0.4-1.2 s between their analyses, which run
off the slot), and the bystander, served last just before, was the last in line behind the burst each time (4.5-8.6 s
at p95, measured per run in bench/HISTORY.md). Nor a share by page-seconds alone: that bystander, loading without a
pause, used more page-seconds (12 s in 100 s) than any student (about 4 s each), so it would wait the longest.

What tells them apart is how long a seat's pages hold the slot: its *usual hold*, the page-seconds it used lately per
turn (each turn's seconds and the count of turns decayed by half every HALF_LIFE seconds, with one turn of USUAL_HOLD
for a seat never seen: a newcomer gets no head start). A waiting run's deadline is its start (its arrival, or its
seat's latest turn if that was at most PAUSE_CREDIT before: a seat that paused goes before those that asked again at
once, as in turns) plus PATIENCE times its seat's usual hold (SHORTEST_HOLD at least), MAX_DELAY at most, and as much again for each run of the seat already
holding or waiting (a student's three tabs do not hold three places in line: issue 53); the earliest deadline goes
first (an owner that holds a slot now, behind every one that holds none, as before). So a page that holds the slot
0.1 s goes before the runs of 0.4 s pages asked up to 6 s before it, while a heavy seat's run is passed by no run
asked more than MAX_DELAY after its own: it still gets its turn (and past page_slots.WAIT_SECONDS it draws anyway).
Between light pages (under SHORTEST_HOLD) arrival decides: without that floor, ten sessions flooding the explorer's
pickers (0.03-0.06 s each) drifted apart, the quickest seats taking five times the turns of the others and a
bystander waiting up to 4.4 s; without the pause's credit that bystander, who reads half a second between pages,
queued behind every picker (p50 0.45 s against 0.13 s in turns). Like EEVDF's virtual deadlines (Linux 6.6: eligible time + request size / weight),
with the request size guessed from the seat's past.
Pure Python, no Streamlit; the clock is a parameter (tests pass a fake one).
"""
from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass

from runtime.fair_queue import FORGET_SESSIONS_AFTER, FairSlots, _Ticket

PATIENCE = 24.0  # a run's deadline: its arrival + PATIENCE × its seat's usual hold ...
MAX_DELAY = 12.0  # ... + MAX_DELAY seconds at most (well under page_slots.WAIT_SECONDS)
# A usual hold shorter than this counts as this: between light pages (an explorer's pick, 0.03-0.06 s) arrival
# decides; their differences are noise, and a deadline ahead by them let the quickest seats take every turn.
SHORTEST_HOLD = 0.15
# s a turn for a seat with no turns lately: no head start. As light as SHORTEST_HOLD, ten students' first pages (cold:
# 0.5-1.5 s each) went before a bystander with a history of light pages (6.8 s); the cost of 0.3 s: eleven new
# seats starting together (the pickers' bench) wait behind the first ones served, once (3.1 s at the row's start).
USUAL_HOLD = 0.3
# A run counts from its seat's latest turn, or this many seconds before its arrival if that is later: a seat that
# paused (a student reading, or waiting on her analysis) goes before those that asked again at once, as in turns;
# within PATIENCE × SHORTEST_HOLD, so that a heavy run's bound holds.
PAUSE_CREDIT = 1.0
HALF_LIFE = 60.0  # s: a seat's turns this old count half in its usual hold


@dataclass
class _Use:
    """A seat's turns lately: seconds held and turns, both decayed to `when`."""
    seconds: float = 0.0
    turns: float = 0.0
    when: float = 0.0

    def decayed(self, now: float) -> _Use:
        factor = math.exp2(-(now - self.when) / HALF_LIFE) if now > self.when else 1.0
        return _Use(self.seconds * factor, self.turns * factor, max(now, self.when))


class ShortFirstSlots(FairSlots):
    """FairSlots whose freed slot goes to the waiting ticket with the earliest deadline: arrival + PATIENCE × its
    owner's usual hold (MAX_DELAY at most), times 1 + its owner's runs holding or waiting then; an owner holding a
    slot behind every one that holds none; ties by arrival."""

    def __init__(self, slots: int, clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__(slots, clock)
        self._use: dict[str, _Use] = {}
        self._since: dict[str, list[float]] = {}  # owner -> when each slot it holds was handed to it

    def usual_hold(self, owner: str) -> float:
        """Seconds `owner` held a slot per turn lately (USUAL_HOLD for one not seen)."""
        with self._lock:
            return self._usual_hold(owner, self._clock())

    def delay(self, owner: str) -> float:
        """Seconds after its arrival that a run of `owner` is due, with no other run of hers holding or waiting."""
        with self._lock:
            return self._delay(owner, self._clock())

    def _delay(self, owner: str, now: float) -> float:
        return min(MAX_DELAY, PATIENCE * max(SHORTEST_HOLD, self._usual_hold(owner, now)))

    def _usual_hold(self, owner: str, now: float) -> float:
        use = self._use.get(owner, _Use(when=now)).decayed(now)
        return (use.seconds + USUAL_HOLD) / (use.turns + 1)

    def _place(self, ticket: _Ticket) -> tuple:
        return (ticket.owner in self._holding, ticket.due, ticket.number)

    def _entered(self, ticket: _Ticket, now: float) -> None:
        mine = self._holding[ticket.owner] + sum(waiting.owner == ticket.owner for waiting in self._waiting)
        start = max(self._last_turn.get(ticket.owner, -math.inf), now - PAUSE_CREDIT)
        ticket.due = start + self._delay(ticket.owner, now) * (1 + mine)

    def _granted(self, ticket: _Ticket, now: float) -> None:
        super()._granted(ticket, now)
        self._since.setdefault(ticket.owner, []).append(now)

    def _released(self, owner: str, now: float) -> None:
        since = self._since.get(owner)
        if not since:  # a release without its grant: nothing to charge
            return
        held = now - since.pop(0)  # with two slots held, either's start: the sum charged is the same
        if not since:
            del self._since[owner]
        use = self._use.get(owner, _Use(when=now)).decayed(now)
        self._use[owner] = _Use(use.seconds + held, use.turns + 1, now)

    def _forget(self, now: float, current: set[str]) -> None:
        super()._forget(now, current)
        for owner, use in list(self._use.items()):
            if now - use.when > FORGET_SESSIONS_AFTER and owner not in current:
                del self._use[owner]

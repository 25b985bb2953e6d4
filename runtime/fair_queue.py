"""A fair queue of long jobs in one server process: at most one job per session running, at most one waiting (a new
one replaces it), and the sessions served in turn, the one served longest ago first. A sliced queue (the analyses)
starts several jobs at once and lets them take turns at its computing slots (FairSlots), a slice at a time. Pure
Python, no Streamlit:
runtime/analysis_worker.py feeds it the heavy analyses of the pages, runtime/training_jobs.py the trainings.

Why turns and not arrival order: a student reloading a heavy link submits her next job while the first runs; in
arrival order she would queue ahead of everyone who came after her first job, and keep the workers for herself.
Served in turns, a session that has just had a job waits behind every session that has not.

A queue made with `stop_unwatched` (the analyses) also stops running work nobody waits for: a job's pages say so
(watch/unwatch); once none has watched it for `stop_unwatched` seconds (the student closed the tab, or her page's
rerun asked for something else), or at once when her session asks for other work, the job stops at its model's next
forward (model/forward_guard.py) and the worker goes to the next session. Within those seconds, her rerun that asks
for the same work watches the running job again instead of starting it anew.
"""
from __future__ import annotations

import itertools
import threading
import time
from collections import Counter, OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from typing import Any

from model.forward_guard import Stopped, TimeLimitExceeded, deadline

QUEUED, RUNNING, DONE, FAILED, TOO_SLOW, CANCELLED = "queued", "running", "done", "failed", "too_slow", "cancelled"
ENDED = (DONE, FAILED, TOO_SLOW, CANCELLED)
FORGET_SESSIONS_AFTER = 600.0  # s: a session's last turn older than this no longer decides its place
# A sliced queue's job gives its computing slot up after this many seconds of work when another session's job waits
# for one (at its model's next forward), so that a fourth student's analysis starts while three others run.
SLICE_SECONDS = 1.0
TURN_POLL_SECONDS = 0.5  # a job waiting for its turn looks at its stop flag this often
FINISHED_KEYS = 256  # the latest keys computed, for finished_lately


@dataclass(eq=False)
class _Ticket:
    owner: str
    number: int  # arrival order
    due: float = 0.0  # a subclass's place for it (runtime/page_share.py)
    granted: threading.Event = field(default_factory=threading.Event)


class FairSlots:
    """`slots` slots handed out by turns of their owners: a slot that frees goes to the waiting ticket of the owner
    whose latest turn is oldest (never served: first), ties by arrival; an owner holding a slot waits behind every
    owner who holds none. Waiting threads sleep on their own event, without the GIL; a slot is handed to its next
    holder directly (no thundering herd of a class's waiting runs). A subclass (runtime/page_share.py) orders by
    another rule: _place and the hooks below, called under the lock with `clock()`'s time."""

    def __init__(self, slots: int, clock: Callable[[], float] = time.monotonic) -> None:
        self._lock = threading.Lock()
        self._clock = clock
        self._free = slots
        self._waiting: list[_Ticket] = []
        self._holding: Counter[str] = Counter()
        self._last_turn: dict[str, float] = {}
        self._numbers = itertools.count()

    def acquire(self, owner: str, timeout: float) -> bool:
        """Wait for a slot, `timeout` seconds at most: True when one was taken (give it back with release)."""
        ticket = _Ticket(owner, next(self._numbers))
        with self._lock:
            self._entered(ticket, self._clock())
            self._waiting.append(ticket)
            self._hand_out()
        if ticket.granted.wait(timeout):
            return True
        with self._lock:  # timed out, unless the slot came in the meantime
            if ticket.granted.is_set():
                return True
            self._waiting.remove(ticket)
            return False

    def release(self, owner: str) -> None:
        with self._lock:
            self._free += 1
            self._holding[owner] -= 1
            if self._holding[owner] <= 0:
                del self._holding[owner]
            self._released(owner, self._clock())
            self._hand_out()

    def anyone_waiting(self) -> bool:
        """Some ticket waits (read without the lock: a hint, asked at every forward of a sliced job)."""
        return bool(self._waiting)

    def waiting(self) -> list[str]:
        """The owners of the waiting tickets, in the order they will be served."""
        with self._lock:
            return [ticket.owner for ticket in sorted(self._waiting, key=self._place)]

    def _place(self, ticket: _Ticket) -> tuple:
        return (ticket.owner in self._holding, self._last_turn.get(ticket.owner, float("-inf")), ticket.number)

    def _entered(self, ticket: _Ticket, now: float) -> None:  # a ticket is about to wait
        pass

    def _granted(self, ticket: _Ticket, now: float) -> None:
        self._last_turn[ticket.owner] = now

    def _released(self, owner: str, now: float) -> None:  # a slot of `owner`'s was given back
        pass

    def _forget(self, now: float, current: set[str]) -> None:
        """Drop what is kept of the owners not `current` served last over FORGET_SESSIONS_AFTER ago."""
        for owner, when in list(self._last_turn.items()):
            if now - when > FORGET_SESSIONS_AFTER and owner not in current:
                del self._last_turn[owner]

    def _hand_out(self) -> None:
        """(Under the lock.)"""
        now = self._clock()
        while self._free > 0 and self._waiting:
            ticket = min(self._waiting, key=self._place)
            self._waiting.remove(ticket)
            self._free -= 1
            self._holding[ticket.owner] += 1
            self._granted(ticket, now)
            ticket.granted.set()
        if len(self._last_turn) > 4 * (len(self._waiting) + len(self._holding)) + 64:  # now and then, not each time
            self._forget(now, {ticket.owner for ticket in self._waiting} | set(self._holding))


class _Turn:
    """A sliced job's turn at one of its queue's computing slots (model/forward_guard.Turn): taken before its work
    starts, given up at a forward once it has computed SLICE_SECONDS while another session's job waits for one, and
    taken again in that session's turn."""

    def __init__(self, slots: FairSlots, session: str, stop: threading.Event, slice_seconds: float) -> None:
        self.slots, self.session, self.stop, self.slice_seconds = slots, session, stop, slice_seconds
        self.held, self.since, self.computed = False, 0.0, 0.0  # computed: seconds of its turns before this one

    def take(self) -> None:
        """Wait for a slot; Stopped when the job's stop flag is raised meanwhile (nobody waits for it any more)."""
        while not self.slots.acquire(self.session, timeout=TURN_POLL_SECONDS):
            if self.stop.is_set():
                raise Stopped
        self.held, self.since = True, time.monotonic()

    def due(self) -> bool:
        return time.monotonic() - self.since > self.slice_seconds and self.slots.anyone_waiting()

    def pass_on(self) -> None:
        self.release()
        self.take()

    def release(self) -> None:
        if self.held:
            self.held = False
            self.computed += time.monotonic() - self.since
            self.slots.release(self.session)

    def computing_seconds(self) -> float:
        return self.computed + (time.monotonic() - self.since if self.held else 0.0)


@dataclass(eq=False)
class Job:
    session: str
    key: Hashable  # what is computed: two sessions asking the same key share nothing but the cache
    work: Callable[[], Any] | None
    number: int  # arrival order in the queue
    state: str = QUEUED
    result: Any = None
    error: BaseException | None = None
    submitted: float = field(default_factory=time.monotonic)
    started: float | None = None
    finished: float | None = None
    done: threading.Event = field(default_factory=threading.Event)
    stop: threading.Event = field(default_factory=threading.Event)  # set: its model work stops at the next forward
    watchers: int = 0  # pages waiting for it now
    turn: _Turn | None = None  # a sliced queue's: its turns at the computing slots

    def computing_seconds(self) -> float:
        """Seconds it has computed (a sliced job's own turns; else since it started); 0 before it started."""
        if self.turn is not None:
            return self.turn.computing_seconds()
        return 0.0 if self.started is None else (self.finished or time.monotonic()) - self.started

    @property
    def ended(self) -> bool:
        return self.state in ENDED


class FairQueue:
    """`workers` jobs compute at once; a job's model work stops at `time_limit` seconds of its own computing
    (model/forward_guard.py; None: no limit, the work bounds itself). `thread_setup` runs once in each thread.

    With `running` > workers the queue is sliced: up to `running` jobs (of as many sessions) are started, each in a
    thread of its own, and they take turns at the `workers` computing slots, SLICE_SECONDS at a time (at their models'
    forwards: model/forward_guard.py), so a new session's job starts within a slice or two instead of after every
    running job has ended; a paused job holds its memory, hence the bound, and `room_for_another` (the jobs started
    now -> whether the process's memory holds one more) is asked before a job beyond one a slot starts."""

    def __init__(self, name: str, workers: int = 1, time_limit: float | None = None,
                 thread_setup: Callable[[], None] = lambda: None, stop_unwatched: float | None = None,
                 running: int | None = None, slice_seconds: float = SLICE_SECONDS,
                 room_for_another: Callable[[int], bool] = lambda started: True) -> None:
        self.name, self.workers, self.time_limit, self._setup = name, workers, time_limit, thread_setup
        self.stop_unwatched = stop_unwatched
        self.threads = max(workers, running or workers)
        self.slice_seconds = slice_seconds
        self._computing = FairSlots(workers) if self.threads > workers else None
        self._room_for_another = room_for_another  # (jobs started now) -> may one more start beside them?
        self._lock = threading.Condition()
        self._queued: list[Job] = []
        self._running: list[Job] = []
        self._last_turn: dict[str, float] = {}  # session -> when its latest job started
        self._probes: dict[Hashable, int] = {}  # key -> pages trying it in their own thread now
        self._threads: list[threading.Thread] = []
        self._numbers = itertools.count(1)
        self._finished: OrderedDict[Hashable, None] = OrderedDict()  # keys of the latest jobs done, oldest first

    # --- the sessions' side -------------------------------------------------------------------------------------

    def submit(self, session: str, key: Hashable, work: Callable[[], Any], watch: bool = False) -> Job:
        """Queue `work` for `session`; a job of hers still waiting is cancelled (the newer request replaces it). With
        stop_unwatched: a job of hers with the same key, waiting or running and not stopped, is returned instead of a
        new one, and a running job of hers that no page watches is stopped (superseded). `watch`: the job returned
        is watched by the caller (as watch(), in the same step), until unwatch."""
        with self._lock:
            if self.stop_unwatched is not None:
                same = [job for job in self._running + self._queued
                        if job.session == session and job.key == key and not job.stop.is_set()]
                if same:
                    same[0].watchers += watch
                    return same[0]
                for old in self._running:
                    if old.session == session and not old.watchers:
                        old.stop.set()
            for old in [job for job in self._queued if job.session == session]:
                self._end(old, CANCELLED)
            job = Job(session, key, work, next(self._numbers), watchers=int(watch))
            self._queued.append(job)
            if len(self._threads) < self.threads:
                thread = threading.Thread(target=self._serve, name=f"{self.name}-{len(self._threads) + 1}",
                                          daemon=True)
                self._threads.append(thread)
                thread.start()
            self._lock.notify_all()
            return job

    def cancel(self, job: Job) -> bool:
        """Take a waiting job out of the queue (True); a running one runs on (False: stop it by its own means)."""
        with self._lock:
            if job.state != QUEUED:
                return False
            self._end(job, CANCELLED)
            self._lock.notify_all()
            return True

    def watch(self, job: Job) -> None:
        """A page waits for `job` (until unwatch)."""
        with self._lock:
            job.watchers += 1

    def unwatch(self, job: Job) -> None:
        """A page no longer waits for `job`: with no page left, a waiting job is withdrawn, and a running one stops
        after stop_unwatched seconds unless a page watches it again by then."""
        with self._lock:
            job.watchers -= 1
            if job.watchers or job.ended:
                return
            if job.state == QUEUED:
                self._end(job, CANCELLED)
                self._lock.notify_all()
            elif self.stop_unwatched is not None:
                timer = threading.Timer(self.stop_unwatched, self._stop_if_unwatched, (job,))
                timer.daemon = True
                timer.start()

    def _stop_if_unwatched(self, job: Job) -> None:
        with self._lock:
            if not job.watchers and not job.ended:
                job.stop.set()

    def place(self, job: Job) -> int:
        """0 while the job runs (or has ended); else 1 + the jobs the workers will start before it."""
        with self._lock:
            if job.state != QUEUED:
                return 0
            return self._order().index(job) + 1 if job in self._queued else 0

    def running(self) -> list[Job]:
        with self._lock:
            return list(self._running)

    def queued(self) -> list[Job]:
        """The waiting jobs, in the order the workers will start them."""
        with self._lock:
            return self._order()

    def finished_lately(self, key: Hashable) -> bool:
        """A job of `key` ended done among the latest FINISHED_KEYS (its result is then likely in its cache)."""
        with self._lock:
            return key in self._finished

    def is_running(self, key: Hashable) -> bool:
        with self._lock:
            return any(job.key == key for job in self._running)

    def begin_probe(self, key: Hashable) -> bool:
        """A page is about to try `key` in its own thread: False when a worker computes it now (the page would then
        wait on the cache's lock for the whole computation); else True, and no worker starts `key` until
        end_probe."""
        with self._lock:
            if any(job.key == key for job in self._running):
                return False
            self._probes[key] = self._probes.get(key, 0) + 1
            return True

    def end_probe(self, key: Hashable) -> None:
        with self._lock:
            self._probes[key] -= 1
            if not self._probes[key]:
                del self._probes[key]
            self._lock.notify_all()

    # --- the workers' side --------------------------------------------------------------------------------------

    def _order(self) -> list[Job]:
        """Waiting jobs in serving order: a session's turn comes by when it was last served (never: first), then by
        arrival; a session with a job running waits for it (the order is recomputed when a job ends)."""
        busy = {job.session for job in self._running}
        return sorted(self._queued, key=lambda job: (job.session in busy,
                                                     self._last_turn.get(job.session, float("-inf")), job.number))

    def _next(self) -> Job:
        with self._lock:
            while True:
                ready = [job for job in self._order() if job.session not in {r.session for r in self._running}
                         and job.key not in self._probes]
                if ready and len(self._running) >= self.workers and not self._room_for_another(len(self._running)):
                    ready = []  # a job beyond one a computing slot waits for memory to hold its working peak too
                if ready:
                    job = ready[0]
                    self._queued.remove(job)
                    job.state, job.started = RUNNING, time.monotonic()
                    self._running.append(job)
                    self._last_turn[job.session] = job.started
                    self._forget_old_turns(job.started)
                    return job
                self._lock.wait(timeout=1.0)

    def _forget_old_turns(self, now: float) -> None:
        waiting = {job.session for job in self._queued + self._running}
        for session, when in list(self._last_turn.items()):
            if now - when > FORGET_SESSIONS_AFTER and session not in waiting:
                del self._last_turn[session]

    def _end(self, job: Job, state: str) -> None:
        """(Under the lock.)"""
        if job in self._queued:
            self._queued.remove(job)
        if job in self._running:
            self._running.remove(job)
        job.state, job.finished = state, time.monotonic()
        job.done.set()

    def _serve(self) -> None:
        self._setup()
        while True:
            job = self._next()
            state = DONE
            turn = job.turn = None if self._computing is None else _Turn(self._computing, job.session, job.stop,
                                                                         self.slice_seconds)
            try:
                if turn is not None:
                    turn.take()
                if self.time_limit is None and self.stop_unwatched is None and turn is None:
                    job.result = job.work()
                else:
                    with deadline(self.time_limit if self.time_limit is not None else float("inf"), job.stop, turn):
                        job.result = job.work()
            except TimeLimitExceeded as error:
                job.error, state = error, TOO_SLOW
            except Stopped as error:  # nobody waits for it any more
                job.error, state = error, CANCELLED
            except Exception as error:  # handed to the page that waits, which shows it as it would its own
                job.error, state = error, FAILED
            finally:
                if turn is not None:
                    turn.release()
            with self._lock:
                self._end(job, state)
                if state == DONE:
                    self._finished[job.key] = None
                    self._finished.move_to_end(job.key)
                    while len(self._finished) > FINISHED_KEYS:
                        self._finished.popitem(last=False)
                self._lock.notify_all()
            # the page that waited holds the job; this thread would otherwise hold its result (a long text's
            # analysis, hundreds of MiB) outside the result store's budget until its next job, and its work's closure
            # (a training's job and model)
            job.work = None
            del job

"""A fair queue of long jobs in one server process: at most one job per session running, at most one waiting (a new
one replaces it), and the sessions served in turn, the one served longest ago first. Pure Python, no Streamlit:
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
from collections import OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from typing import Any

from model.forward_guard import Stopped, TimeLimitExceeded, deadline

QUEUED, RUNNING, DONE, FAILED, TOO_SLOW, CANCELLED = "queued", "running", "done", "failed", "too_slow", "cancelled"
ENDED = (DONE, FAILED, TOO_SLOW, CANCELLED)
FORGET_SESSIONS_AFTER = 600.0  # s: a session's last turn older than this no longer decides its place
FINISHED_KEYS = 256  # the latest keys computed, for finished_lately


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

    @property
    def ended(self) -> bool:
        return self.state in ENDED


class FairQueue:
    """`workers` threads, started on the first job, run the jobs; a job's model work stops at `time_limit` seconds
    (model/forward_guard.py; None: no limit, the work bounds itself). `thread_setup` runs once in each worker."""

    def __init__(self, name: str, workers: int = 1, time_limit: float | None = None,
                 thread_setup: Callable[[], None] = lambda: None, stop_unwatched: float | None = None) -> None:
        self.name, self.workers, self.time_limit, self._setup = name, workers, time_limit, thread_setup
        self.stop_unwatched = stop_unwatched
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
            if len(self._threads) < self.workers:
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
            try:
                if self.time_limit is None and self.stop_unwatched is None:
                    job.result = job.work()
                else:
                    with deadline(self.time_limit if self.time_limit is not None else float("inf"), job.stop):
                        job.result = job.work()
            except TimeLimitExceeded as error:
                job.error, state = error, TOO_SLOW
            except Stopped as error:  # nobody waits for it any more
                job.error, state = error, CANCELLED
            except Exception as error:  # handed to the page that waits, which shows it as it would its own
                job.error, state = error, FAILED
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

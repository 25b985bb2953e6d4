"""A class's state as read at most SHARED_SECONDS ago, one read shared by every session of a process that polls it.

Why: every student at a stop follows her class: her browser asks the class's version every second
(serving/class_version.py, ui/live_class/class_watch.py), and her fragment reruns when it changed (150 asks a second
per replica for 300 students). Each would otherwise read the class (ClassStore.session: a connection and 3 queries,
longer under load); the class changes a few times a lesson, and one read per class and half second serves them all.
A teacher's write through this process (ClassTeacher._write: a move, a Reveal, a phase) forgets the class's read at
once, so her own next page and this replica's students see it without waiting; another replica's students see it
within SHARED_SECONDS. Only reads are shared: every class rule is checked by the store in the statement that stores
an answer.
"""
from __future__ import annotations

import hashlib
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NamedTuple

from classroom.records import ClassSession

# A version is a keyed hash, so that it names no stop, question or phase: this process's key (a page's version and
# the route's answer come from the same process: serve.py's HAProxy keeps a browser on its replica).
_VERSION_KEY = secrets.token_bytes(16)
ENDED = "ended"  # the version of a class that is not live (ended, or no such code)


class Seen(NamedTuple):
    """What a student's page follows of her class."""
    stop: int
    revealed: frozenset[str]  # the question ids revealed
    phases: Any  # each question's peer-instruction phase (ClassSession.phases)
    lesson: str  # the lesson id the class runs
    projected: float | None = None  # when the item on the class's projector went up (None: nothing projected)


def seen_of(session: ClassSession) -> Seen:
    """What a student's page follows: the stop, the revealed questions, and each question's peer-instruction phase,
    the class's lesson and the item on its projector."""
    return Seen(session.stop, session.revealed, session.phases, session.lesson, session.projected)


def class_version(session: ClassSession | None) -> str:
    """An opaque version of what a student's page follows (seen_of), ENDED for a class that is not live: equal
    versions, nothing for her page to redraw. Her browser compares it with the version her page was drawn at
    (serving/class_version.py, ui/live_class/class_watch.py) instead of rerunning a fragment to find out."""
    if session is None:
        return ENDED
    stop, revealed, phases, lesson, projected = seen_of(session)
    followed = repr((stop, sorted(revealed), sorted(map(repr, phases)), lesson, projected)).encode()
    return hashlib.blake2s(followed, key=_VERSION_KEY, digest_size=8).hexdigest()


# How old a shared read may be. The Reveal reaches a student within her watch's interval plus this (1 + 0.5 s) and her
# fragment's run; 150 asks a second per replica become 2 reads a second per class.
SHARED_SECONDS = 0.5


@dataclass(frozen=True)
class _Read:
    at: float  # time.monotonic() when the read began (a read that began earlier is never taken as newer)
    session: ClassSession | None


class RecentSessions:
    """Reads of the classes of one database (ClassStore.session), each kept `max_age` seconds and shared by every
    thread; `forget` drops a class's read (a write by this process), and a read that began before the forget is not
    kept. One per database and process (shared_reads): every ClassStore a process opens on it shares it."""

    def __init__(self, max_age: float = SHARED_SECONDS, clock: Callable[[], float] = time.monotonic):
        self.max_age, self._clock = max_age, clock
        self._lock = threading.Lock()  # guards the three dicts below (held for lookups only, never during a read)
        self._reads: dict[str, _Read] = {}
        self._forgets: dict[str, int] = {}  # code -> how many times it was forgotten (a read keeps only if unchanged)
        self._readers: dict[str, threading.Lock] = {}  # code -> held by the one thread reading that class now
        self._listeners: list[Callable[[str], None]] = []  # told each class forgotten (serving/class_version.py)

    def _fresh(self, code: str, max_age: float | None = None) -> _Read | None:
        kept = self._reads.get(code)
        age = self.max_age if max_age is None else min(max_age, self.max_age)
        return kept if kept is not None and self._clock() - kept.at < age else None

    def get(self, code: str, read: Callable[[str], ClassSession | None],
            max_age: float | None = None) -> ClassSession | None:
        """The class as `read` gave it at most max_age seconds ago (default: the shared age; None: no live class of
        that code). While one thread reads a class, the others that want it wait for that read (sleeping, without the
        GIL) instead of reading again."""
        with self._lock:
            kept = self._fresh(code, max_age)
            if kept is not None:
                return kept.session
            reader = self._readers.setdefault(code, threading.Lock())
        with reader:
            with self._lock:
                kept = self._fresh(code, max_age)  # the thread before us in line read it
                if kept is not None:
                    return kept.session
            began = self.began(code)
            session = read(code)
            self.keep(began, session)
        return session

    def kept(self, code: str, max_age: float | None = None) -> tuple[bool, ClassSession | None]:
        """(True, the class) when a read at most max_age old is kept, else (False, None); never reads nor waits for a
        read (the version route asks it on the server's event loop, and reads in a thread only when it misses)."""
        with self._lock:
            kept = self._fresh(code, max_age)
        return (True, kept.session) if kept is not None else (False, None)

    def began(self, code: str) -> tuple[str, int, float]:
        """Before a read of the class (this one's or another caller's, ClassStore.session): what keep() needs."""
        with self._lock:
            return code, self._forgets.get(code, 0), self._clock()

    def keep(self, began: tuple[str, int, float], session: ClassSession | None) -> None:
        """Share a read that began at `began`, unless the class was forgotten since (a write may have come after it)
        or a read that began later is kept already. A direct read (a join, a whole run) is shared too, so a poll
        never sees the class older than a read this process made before it."""
        code, forgets, at = began
        with self._lock:
            kept = self._reads.get(code)
            if self._forgets.get(code, 0) == forgets and (kept is None or kept.at <= at):
                self._reads[code] = _Read(at, session)

    def forget(self, code: str) -> None:
        """The class changed through this process: the next get reads it again, and each listener is told."""
        with self._lock:
            self._reads.pop(code, None)
            self._forgets[code] = self._forgets.get(code, 0) + 1
            listeners = list(self._listeners)
        for listener in listeners:
            listener(code)

    def listen(self, listener: Callable[[str], None]) -> Callable[[], None]:
        """Call listener(code) (in the writing thread, after the read is dropped) whenever a class is forgotten here;
        -> a function that stops it. The version route wakes the requests it holds for that class at once."""
        with self._lock:
            self._listeners.append(listener)

        def stop() -> None:
            with self._lock:
                if listener in self._listeners:
                    self._listeners.remove(listener)
        return stop


_shared: dict[str, RecentSessions] = {}  # database location -> its reads in this process
_shared_lock = threading.Lock()


def shared_reads(location: str) -> RecentSessions:
    """The reads of the database at `location` shared by this process: one however many stores open it (the app's
    store, a teacher's handle, a test's own store), so a write through any of them is seen by the others' polls."""
    with _shared_lock:
        return _shared.setdefault(location, RecentSessions())

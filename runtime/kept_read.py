"""A read kept for a few seconds, shared by every session of the process: the teachers' saved lessons, which every
student's run asks for several times, read from the class store at most once per `seconds`.

Not `st.cache_resource(ttl=…)`: in Streamlit's TTL cache the entry is found (`in`) and then fetched (`[]`), each checking
the clock, so a run that reaches it as its time runs out between the two gets a KeyError, and its page fails
(a class of 300 met it once in 1,800 clicks; bench/HISTORY.md, "A hall of 500 on two cores"). Here a value is
fetched once, under one look at the clock; an expired one is read again, by one thread while the others wait.
"""
from __future__ import annotations

import threading
import time
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

V = TypeVar("V")


class KeptRead(Generic[V]):
    """`read(key)` kept per key for `seconds` (at most `max_keys` keys: past it, the whole store is read again)."""

    def __init__(self, read: Callable[[Hashable], V], seconds: float, max_keys: int = 8,
                 clock: Callable[[], float] = time.monotonic):
        self.read, self.seconds, self.max_keys, self.clock = read, seconds, max_keys, clock
        self._kept: dict[Hashable, tuple[float, V]] = {}
        self._lock = threading.Lock()

    def get(self, key: Hashable) -> V:
        kept = self._kept.get(key)  # one lookup: the entry is there or not, whatever the clock does meanwhile
        if kept is not None and self.clock() - kept[0] < self.seconds:
            return kept[1]
        with self._lock:  # one read of the store for the threads that found it expired together
            kept = self._kept.get(key)
            if kept is not None and self.clock() - kept[0] < self.seconds:
                return kept[1]
            value = self.read(key)
            if len(self._kept) >= self.max_keys and key not in self._kept:
                self._kept.clear()
            self._kept[key] = (self.clock(), value)
            return value

    def clear(self) -> None:
        """Forget every value: the next get reads again (a save on this replica is listed at once)."""
        with self._lock:
            self._kept.clear()

"""The one place a lesson's measures keep a heavy result that the page under the stop computes too (a patching sweep:
seconds to a minute), so that a process computes it once for both.

Pure Python, no Streamlit and no ui/: the app hands in its server-wide, byte-bounded store (runtime/result_cache.RESULTS
installs itself here when it is imported), so the measure and the page read one entry under one key; without the
app (the lesson validator, the tests of classroom/) a small LRU of the process keeps the last few results.
"""
from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Protocol, TypeVar

T = TypeVar("T")
LOCAL_ENTRIES = 8  # without the app: a stop's question and claims read the same few sweeps


class ComputingStore(Protocol):
    """Computes a result once per key and keeps it: the app's runtime.result_cache.RESULTS, or LocalStore without it."""
    def get_or_compute(self, key: Hashable, compute: Callable[[], T]) -> T: ...


class LocalStore:
    """The last LOCAL_ENTRIES results, for a process without the app's store."""

    def __init__(self, entries: int = LOCAL_ENTRIES):
        self._entries: OrderedDict[Hashable, object] = OrderedDict()
        self._size = entries
        self._lock = threading.Lock()

    def get_or_compute(self, key: Hashable, compute: Callable[[], T]) -> T:
        with self._lock:
            if key in self._entries:
                self._entries.move_to_end(key)
                return self._entries[key]  # type: ignore[return-value]
        value = compute()
        with self._lock:
            self._entries[key] = value
            while len(self._entries) > self._size:
                self._entries.popitem(last=False)
        return value


_store: ComputingStore = LocalStore()


def use_store(store: ComputingStore) -> None:
    """From now on keep shared results in `store` (the app's: runtime/result_cache.RESULTS)."""
    global _store
    _store = store


def shared(key: tuple[Hashable, ...], compute: Callable[[], T]) -> T:
    """compute() once per key in the process's store; the key names everything the result depends on (the model's
    id, the texts), never a session's language or mode."""
    return _store.get_or_compute(("shared", *key), compute)

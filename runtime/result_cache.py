"""One byte-bounded, thread-safe LRU store for the results the app computes per input (analyses, explanations,
figures), shared by every session of one replica (one process).

Why not st.cache_data's `max_entries`: an entry's size depends on the input. One 512-token text on SmolLM2 is
hundreds of MB of maps, a class's translation sentence a few KiB, so a count bounds nothing. Here every entry is
weighed (`nbytes`: numpy arrays, torch tensors, strings, containers and dataclasses, followed recursively) and the
least recently used entries are dropped until the whole store is under its budget. An entry heavier than the
budget is computed and returned but not kept. Values are shared, not copied: callers must treat them as read-only
(numpy arrays in them are made read-only when stored, so a view that writes into one fails loudly).

What lives here (@memoized): every cache whose key a student's input chooses: ui.state.shared_analysis (a text's maps),
ui.attention.explain's explanations, head_importance and head_labels (per model id, a student's trained models
included), ui.charts' shared figures (a 512-token map's heatmap weighs megabytes), ui.llm_heads.view's sink, window,
induction and copy views, ui.llm.generation's first-step preview, ui.vocabulary's word vectors and
ui.positional_view's demos, the foundations pages' sweeps (residual, softmax scaling), and the lesson measures'
shared results (classroom/shared_results.py: the answer page's patching sweeps, which its stops' questions read
too). What stays in Streamlit's caches, each small and keyed by what the server or the teacher chose: example sentences, the models folder listing and the shipped models' facts (ui.models, ui.state), the loaded
models themselves (cache_resource: shared read-only weights, one per model), lesson files (ui.lessons.catalogue,
classroom), the class link's QR code (ui.live_class.teacher), the training speed probe (ui.train.view), the compare
page's held-out sentences; and model.local_models' lru_cache of tokenizer verdicts (strings).

Behind the memory, a folder (runtime/kept_results.py, where ATTENTION_LAB_RESULTS_CACHE names one: serve.py's
replicas, the test suite): a result that took KEEP_SECONDS or more is written there under its key, the weights of the
models its arguments name and the code, and a process that misses in memory reads it from there before computing.

The budget is the whole process's, for all caches together: ATTENTION_LAB_CACHE_MB (MiB), default DEFAULT_BUDGET_MB.
deploy/README.md ("Sizing") says how it relates to a replica's memory limit. Pure Python (no Streamlit), so the
stores can be tested and used anywhere.
"""
from __future__ import annotations

import dataclasses
import functools
import inspect
import sys
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any, TypeVar

import numpy as np

from classroom.shared_results import use_store
from model.memory import budget_from_environment, return_freed_memory
from runtime.kept_results import KeptResults, from_environment

ENV_VAR = "ATTENTION_LAB_CACHE_MB"
# Headroom of a replica over its idle size (deploy/README.md, "Sizing"): what the kept results may add.
DEFAULT_BUDGET_MB = 600
HEAVY_SECONDS = 0.5  # a computation this long gives its freed transients back to the OS when it is done
# The prefix of the attributes the project keeps on a plotly figure (viz/chart_data.py, ui/charts.py): weighed with it
OWN_FIGURE_ATTRIBUTES = "_attention_lab_"
KEEP_SECONDS = 0.05  # a computation this long is kept in the folder too, where there is one (runtime/kept_results.py)
# The arguments of a memoized function that name a model: its result is kept beyond the process only when the weights
# of each are known by digest (model.families.fixed_weights_digest).
MODEL_ARGUMENTS = ("model_id", "model")
T = TypeVar("T")
Weights = tuple[str, ...] | Callable[[], tuple[str, ...] | None] | None


def budget_bytes() -> int:
    """The per-replica budget from ATTENTION_LAB_CACHE_MB (MiB; 0 keeps nothing), else the default."""
    return budget_from_environment(ENV_VAR, DEFAULT_BUDGET_MB)


def nbytes(value: Any, _seen: set | None = None) -> int:
    """What holding `value` costs, roughly: the buffers of numpy arrays and torch tensors (each counted once), the
    characters of strings, and the objects inside lists, tuples, sets, dicts, dataclasses, plain objects' __dict__
    and plotly figures (their traces and layout), each container's own overhead included."""
    seen = set() if _seen is None else _seen
    if id(value) in seen:
        return 0
    seen.add(id(value))
    if isinstance(value, np.ndarray):
        base = value
        while isinstance(base.base, np.ndarray):  # a view: its buffer belongs to the array it was cut from
            base = base.base
        if base is not value:
            return nbytes(base, seen)
        if value.dtype == object:  # e.g. a heatmap's hover texts: each item's own size (strings, numbers)
            items = {id(item): item for item in value.ravel().tolist() if id(item) not in seen}
            seen.update(items)
            return value.nbytes + sum(map(sys.getsizeof, items.values()))
        return value.nbytes
    if type(value).__module__.startswith("torch") and hasattr(value, "untyped_storage"):
        storage = value.untyped_storage()
        key = ("storage", storage.data_ptr())  # views of one tensor share it: counted once
        if key in seen:
            return 0
        seen.add(key)
        return storage.nbytes()
    if isinstance(value, (str, bytes, bytearray, int, float, complex, bool)) or value is None:
        return sys.getsizeof(value)
    if isinstance(value, dict):
        return sys.getsizeof(value) + sum(nbytes(k, seen) + nbytes(v, seen) for k, v in value.items())
    if isinstance(value, (list, tuple, set, frozenset)):
        return sys.getsizeof(value) + sum(nbytes(item, seen) for item in value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return sys.getsizeof(value) + sum(nbytes(getattr(value, f.name), seen) for f in dataclasses.fields(value)) \
            + (nbytes(vars(value), seen) if hasattr(value, "__dict__") else 0)
    figure_data = getattr(value, "_data", None)
    if isinstance(figure_data, list) and hasattr(value, "_layout"):  # a plotly figure: its traces and layout
        # and what the project keeps on it: its chart data (viz/chart_data.py), its words (ui/charts.py)
        own = [kept for name, kept in vars(value).items() if name.startswith(OWN_FIGURE_ATTRIBUTES)]
        return sys.getsizeof(value) + nbytes(figure_data, seen) + nbytes(value._layout, seen) + nbytes(own, seen)
    if hasattr(value, "__dict__") and not isinstance(value, type):
        return sys.getsizeof(value) + nbytes(vars(value), seen)
    return sys.getsizeof(value)


def _freeze(value: Any, _seen: set[int] | None = None) -> None:
    """Make the numpy arrays inside value read-only (they are shared by every session from now on)."""
    seen = set() if _seen is None else _seen
    if id(value) in seen:
        return
    seen.add(id(value))
    if isinstance(value, np.ndarray):
        if value.dtype != object:
            value.flags.writeable = False
    elif isinstance(value, dict):
        for item in value.values():
            _freeze(item, seen)
    elif isinstance(value, (list, tuple)):
        for item in value:
            _freeze(item, seen)
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        for f in dataclasses.fields(value):
            _freeze(getattr(value, f.name), seen)


@dataclasses.dataclass
class _Entry:
    value: Any
    size: int


class ResultStore:
    """A least-recently-used map from keys to results whose entries together never weigh more than `budget` bytes.

    `get_or_compute(key, compute)` runs compute() at most once at a time per key: a second session asking for the
    same key waits for the first one's result instead of computing (and holding) a second copy."""

    def __init__(self, budget: int | Callable[[], int] = budget_bytes,
                 kept: KeptResults | None | Callable[[], KeptResults | None] = None):
        self._budget = budget
        self._kept = kept  # the folder tier, or what finds it (the app's store: ATTENTION_LAB_RESULTS_CACHE)
        self._entries: OrderedDict[Hashable, _Entry] = OrderedDict()
        self._total = 0
        self._lock = threading.Lock()
        self._computing: dict[Hashable, threading.Lock] = {}
        self.hits = self.misses = self.evictions = self.refused = 0
        self.kept_reads = 0  # results read from the folder instead of computed

    @property
    def budget(self) -> int:
        return self._budget() if callable(self._budget) else self._budget

    @property
    def total_bytes(self) -> int:
        with self._lock:
            return self._total

    def __len__(self) -> int:
        with self._lock:
            return len(self._entries)

    def __contains__(self, key: Hashable) -> bool:
        with self._lock:
            return key in self._entries

    def keys(self) -> list[Hashable]:
        """The keys, least recently used first."""
        with self._lock:
            return list(self._entries)

    def get(self, key: Hashable, default: Any = None) -> Any:
        with self._lock:
            entry = self._entries.get(key)
            if entry is None:
                return default
            self._entries.move_to_end(key)
            self.hits += 1
            return entry.value

    def put(self, key: Hashable, value: T, size: int | None = None) -> T:
        """Keep value under key (key and value weighed with nbytes unless size is given), evicting the least recently used entries
        until the store is within its budget; a value heavier than the whole budget is not kept. Returns value."""
        size = nbytes((key, value)) if size is None else size  # a key may hold data too (a figure's weights)
        budget = self.budget
        with self._lock:
            old = self._entries.pop(key, None)
            if old is not None:
                self._total -= old.size
            if size > budget:
                self.refused += 1
                return value
            _freeze(value)
            self._entries[key] = _Entry(value, size)
            self._total += size
            while self._total > budget:
                _, evicted = self._entries.popitem(last=False)
                self._total -= evicted.size
                self.evictions += 1
        return value

    @property
    def kept(self) -> KeptResults | None:
        return self._kept() if callable(self._kept) else self._kept

    def get_or_compute(self, key: Hashable, compute: Callable[[], T], weights: Weights = None) -> T:
        """The result under key: from memory, else from the folder tier when `weights` is given (the digests of the
        weights the result depends on besides the key, () for none, or what finds them: asked on a miss only), else
        compute() (then kept in both)."""
        missing = object()
        found = self.get(key, missing)
        if found is not missing:
            return found
        with self._lock:
            key_lock = self._computing.setdefault(key, threading.Lock())
        with key_lock:
            found = self.get(key, missing)  # computed by the session this one waited for
            if found is not missing:
                return found
            folder = self.kept if weights is not None else None
            if folder is not None and callable(weights):
                weights = weights()
            digest = folder.digest(key, weights) if folder is not None and weights is not None else None
            if digest is not None:
                was_kept, value = folder.read(digest)
                if was_kept:
                    with self._lock:
                        self.kept_reads += 1
                    return self.put(key, value)
            with self._lock:
                self.misses += 1
            started = time.perf_counter()
            try:
                value = compute()
                kept = self.put(key, value)
                seconds = time.perf_counter() - started
                if digest is not None and seconds >= KEEP_SECONDS:
                    try:
                        folder.write(digest, value)
                    except OSError:
                        pass  # a full or read-only disk: the result stays in memory only
                if seconds > HEAVY_SECONDS:
                    # a heavy computation's transients (a long text's per-layer tensors) were freed into this
                    # thread's malloc arena, which glibc keeps: without this a replica's RSS grows by them per session
                    # thread, far past the budget
                    return_freed_memory()
                return kept
            finally:
                with self._lock:
                    self._computing.pop(key, None)

    def drop(self, which: Callable[[Hashable], bool]) -> None:
        """Forget the entries whose key `which` accepts."""
        with self._lock:
            for key in [key for key in self._entries if which(key)]:
                self._total -= self._entries.pop(key).size

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self._total = 0


# Every per-input cache of the app lives in this one store, so that the budget is the replica's, not one cache's; the
# lesson measures' shared results too (a patching sweep the page draws and the stop's question reads).
RESULTS = ResultStore(kept=from_environment)
use_store(RESULTS)


def cached(name: str, key: tuple, compute: Callable[[], T], weights: Weights = ()) -> T:
    """compute() once per (name, key) in the shared store (RESULTS); key must name everything the result depends on,
    `weights` the digests of any weights it depends on besides (None: never kept beyond the process)."""
    return RESULTS.get_or_compute((name, *key), compute, weights)


def weights_of(arguments: dict[str, Any]) -> tuple[str, ...] | None:
    """The digests of the models that arguments name (MODEL_ARGUMENTS), or None when one is not known by digest."""
    from model.families import fixed_weights_digest  # torch and the model code: only once a result is asked for

    digests = []
    for argument in MODEL_ARGUMENTS:
        model_id = arguments.get(argument)
        if model_id is None:
            continue
        digest = fixed_weights_digest(model_id) if isinstance(model_id, str) else None
        if digest is None:
            return None
        digests.append(digest)
    return tuple(digests)


def memoized(function: Callable[..., T]) -> Callable[..., T]:
    """A function's results in the shared store, keyed by its name and its arguments (st.cache_data's rule:
    arguments whose name starts with "_" are not part of the key, so they must follow from the others). The
    arguments in the key must be hashable. `function.clear()` drops every result of this function."""
    signature = inspect.signature(function)
    name = f"{function.__module__}.{function.__qualname__}"

    @functools.wraps(function)
    def wrapper(*args, **kwargs):
        bound = signature.bind(*args, **kwargs)
        bound.apply_defaults()
        key = tuple(value for argument, value in bound.arguments.items() if not argument.startswith("_"))
        return cached(name, key, lambda: function(*args, **kwargs), lambda: weights_of(bound.arguments))

    def clear() -> None:
        RESULTS.drop(lambda key: key[0] == name)

    wrapper.clear = clear  # type: ignore[attr-defined]
    return wrapper

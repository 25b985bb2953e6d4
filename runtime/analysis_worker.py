"""Heavy analyses (seconds of model work: a long text through SmolLM2, head importance, rollout of a long text) run
in the process's analysis workers (half its cores compute at once; up to four analyses a core started, taking turns
a second at a time), fed by a fair queue of the sessions (runtime/fair_queue.py), never on a page's turn. No
Streamlit: ui/analysis_queue.heavy says whose turn a job takes and draws the page's note while it waits.

Why: a page body holds one of the process's page slots (runtime/page_slots.py) while it draws; a 512-token text on
the LLM heads page is many seconds of model work, and every other student's page on that replica would wait behind
it. So a page first tries the analysis in its own thread for INLINE_SECONDS (try_on_the_pages_turn): a cached value,
or light work (a sentence through a toy model), is done by then and drawn at once. Past that the try stops
(model/forward_guard.py) and the analysis is queued: the page gives its slot back (wait_off_the_slot), says
"computing…" (or its place in line) and waits, and draws the result when the worker has it. Each browser (its seat
cookie, serving/seat.py: all its tabs together; a session without one, alone) has at most one analysis running and
one waiting (a newer request replaces the waiting one), the browsers take turns, and an analysis stops at
ANALYSIS_SECONDS with a message that suggests a shorter text or a smaller setting. An analysis no page waits for any
more (a rerun asked for something else, the tab was closed or reloaded) is withdrawn if it waits, and stopped at its
model's next forward if it runs (runtime/fair_queue.py). An analysis that reports its progress (report_progress: a
patching sweep's runs) is waited for under a progress bar.

A page does not try what is known to be heavy: an input of more than INLINE_SIZE token-parameters (tokens × the
model's parameters) that the worker has not computed lately goes to the queue at once, so a student's 512-token text
never holds the page slot that every other page on the replica waits for.
"""
from __future__ import annotations

import math
import os
import threading
import weakref
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from model.forward_guard import TimeLimitExceeded, deadline
from runtime.fair_queue import FairQueue, Job
from runtime.page_slots import slot_released

INLINE_SECONDS = 0.3  # tried on the page's own turn first: long enough for a cache hit or a toy model's sentence
# A student's analysis stops after this many seconds of the worker's time (ATTENTION_LAB_ANALYSIS_SECONDS to change):
# the longest the pages' own settings ask for (a 512-token text on the LLM heads page) takes a third of it.
ANALYSIS_SECONDS = float(os.environ.get("ATTENTION_LAB_ANALYSIS_SECONDS", "45"))


def replica_cores() -> int:
    """The cores this process may use: its CPU affinity, within its cgroup's quota (a Kubernetes CPU limit)."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    try:
        quota, period = Path("/sys/fs/cgroup/cpu.max").read_text().split()[:2]
        if quota != "max":
            cores = min(cores, max(1, math.ceil(int(quota) / int(period))))
    except (OSError, ValueError):
        pass
    return cores


# Analyses computing at once per process: half the replica's cores (the other half serve the pages and their
# charts), one on a 2-core replica; ATTENTION_LAB_ANALYSIS_WORKERS to change.
ANALYSIS_WORKERS = int(os.environ.get("ATTENTION_LAB_ANALYSIS_WORKERS", "0")) or max(1, replica_cores() // 2)
# One long analysis's working peak above the replica's RSS, with headroom (a 512-token SmolLM2 text's, measured in
# deploy/README.md).
ANALYSIS_PEAK_MB = 700


def memory_room_mb() -> float:
    """MiB this process may still grow: its cgroup's memory limit (a Kubernetes limit) less its RSS, and no more than
    the machine has available."""
    def read(path: str) -> str:
        try:
            return Path(path).read_text()
        except OSError:
            return ""
    fields = {line.split(":")[0]: line.split()[1] for line in read("/proc/meminfo").splitlines() if ":" in line}
    room = int(fields.get("MemAvailable", "0")) / 1024 or float("inf")
    limit = read("/sys/fs/cgroup/memory.max").strip()
    if limit.isdigit():
        status = {line.split(":")[0]: line.split()[1] for line in read("/proc/self/status").splitlines()
                  if line.startswith("VmRSS:")}
        room = min(room, int(limit) / 2**20 - int(status.get("VmRSS", "0")) / 1024)
    return room


def room_for_another(started: int) -> bool:
    """One more analysis may start beside `started` others: the memory holds its working peak and theirs (those
    started may not have reached theirs yet)."""
    return memory_room_mb() > ANALYSIS_PEAK_MB * (started + 1)


# Analyses started at once per computing slot: they take turns at the slots (runtime/fair_queue.py's slices), so a
# fourth student's analysis starts while three others run, instead of after them; each paused one keeps its memory.
STARTED_PER_WORKER = int(os.environ.get("ATTENTION_LAB_ANALYSES_STARTED_PER_WORKER", "4"))  # 1: one at a time
TICK_SECONDS = 0.5  # the waiting page's note is redrawn this often; each redraw lets a rerun or a closed tab stop it
# A running analysis no page has waited for this long stops (a rerun that asks for the same one again within it
# watches it again): a few ticks, so that a rerun's page has reached its analysis again.
UNWATCHED_SECONDS = 2.0
# Not tried on the page's turn: inputs of more tokens × parameters than this. SmolLM2-135M reads ~30 tokens in it (a
# sink analysis of 30 tokens is three such passes, about the whole try on a 2-core machine); the toy models'
# (< 1 M parameters) longest sentences and a short sentence through MiniLM stay well under it.
INLINE_SIZE = 4e9
# Work that is known to be heavy whatever its input (a patching sweep: hundreds of runs of the model's blocks): never
# tried on the page's turn, except when the worker computed it lately (then it is most likely cached).
KNOWN_HEAVY = float("inf")


_progress: dict[Hashable, tuple[int, int]] = {}  # analysis key -> (steps done, steps in all), while it runs
_progress_lock = threading.Lock()


def report_progress(key: Hashable) -> Callable[[int, int], None]:
    """A progress callback (done, total) for the analysis `key`: the note of every page waiting for it (heavy) is a
    progress bar. Keyed by the analysis, not the page: two sessions asking for the same input share one computation
    (runtime/result_cache.py), and so its progress."""
    def report(done: int, total: int) -> None:
        with _progress_lock:
            if done < total:
                _progress[key] = (done, total)
            else:  # the last step: nothing is left to show, and no entry outlives its analysis
                _progress.pop(key, None)
    return report


def progress_of(key: Hashable) -> tuple[int, int] | None:
    """(done, total) reported for the analysis `key` since it started; None when it reports none (or has ended)."""
    with _progress_lock:
        return _progress.get(key)


def _worker_setup() -> None:
    torch.set_num_threads(1)  # as the pages' threads (ui/models.py): one core for each analysis computing


ANALYSES = FairQueue("analysis", workers=ANALYSIS_WORKERS, time_limit=ANALYSIS_SECONDS, thread_setup=_worker_setup,
                     stop_unwatched=UNWATCHED_SECONDS, running=STARTED_PER_WORKER * ANALYSIS_WORKERS,
                     room_for_another=room_for_another)

_parameters: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # model -> its parameter count


def parameters(model: torch.nn.Module) -> int:
    """How many parameters `model` has (counted once per model)."""
    count = _parameters.get(model)
    if count is None:
        count = _parameters[model] = sum(p.numel() for p in model.parameters())
    return count


def size(tokens: int, parameter_count: int) -> float:
    """tokens × parameters: the work of a forward (0 when the model's weights are unknown)."""
    return float(tokens * parameter_count)


@dataclass(frozen=True)
class ComputedHere:
    """An analysis done on the page's own turn; its result may itself be None."""
    result: Any


def try_on_the_pages_turn(key: Hashable, compute: Callable[[], Any], queue: FairQueue = ANALYSES, work: float = 0.0,
                          inline: bool = True) -> ComputedHere | None:
    """compute() in the page's own thread, stopped at INLINE_SECONDS; None when it was not done by then or not tried.
    Not tried: with inline=False, when `work` (size()) is past INLINE_SIZE and the worker has not computed `key` lately
    (when it has, it is likely cached), and while a worker computes `key` (the cache's lock would hold the page)."""
    tried = inline and (work <= INLINE_SIZE or queue.finished_lately(key))
    if tried and queue.begin_probe(key):
        try:
            with deadline(INLINE_SECONDS):
                return ComputedHere(compute())
        except TimeLimitExceeded:
            pass
        finally:
            queue.end_probe(key)
    return None


def wait_off_the_slot(job: Job, queue: FairQueue, tick: Callable[[], None]) -> None:
    """Wait for a job the page submitted watched, its page slot given back meanwhile, calling tick() (the page's note)
    every TICK_SECONDS. However the wait ends (a rerun or a closed tab raises in tick()), the page stops watching: a
    waiting job is withdrawn, a running one stops soon unless a page watches it again (runtime/fair_queue.py)."""
    try:
        with slot_released():
            while not job.done.wait(TICK_SECONDS):
                tick()
    finally:
        queue.unwatch(job)
        if job.ended:  # a running job another page still waits for keeps its progress
            with _progress_lock:
                _progress.pop(job.key, None)

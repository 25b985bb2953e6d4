"""A check before every module's forward pass in the current thread: a deadline, past which the work stops, and a
stop flag another thread may raise (the student who asked for the work left, or asked for other work instead).

Why: a thread that runs a model cannot be killed from outside, and a 512-token analysis of SmolLM2 is hundreds of
module calls long. One global forward pre-hook (installed once per process) reads this thread's deadline, so any
model, of any family, stops within one module's forward of its deadline, with TimeLimitExceeded raised in the
thread that ran it (Stopped when the flag was raised); nothing is cached half-done. Threads without a deadline (the
default) pay one attribute read per module call.

runtime/analysis_worker.py uses it twice: a page first tries an analysis in its own thread for a fraction of a second
(a cached value, or light work, is done by then), and the process's analysis worker runs the rest under the
analysis time limit, with the job's stop flag (runtime/fair_queue.py stops a job no page waits for any more), and
with its turn: the same check is where a long job gives its computing slot to another student's and waits for the
next one. A deadline counts the thread's own computing: the seconds it waited for its turn are added back.
"""
from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Protocol

import torch


class TimeLimitExceeded(Exception):
    """The thread's deadline passed during a model's forward pass."""


class Stopped(Exception):
    """The thread's stop flag was raised during a model's forward pass."""


class Turn(Protocol):
    """A thread's turn at a shared computing slot (runtime/fair_queue.py)."""

    def due(self) -> bool:
        """Give the turn up now? (Asked before every module's forward: cheap.)"""

    def pass_on(self) -> None:
        """Give the turn up and wait for the next one (Stopped when the work is no longer wanted meanwhile)."""


_local = threading.local()
_install_lock = threading.Lock()
_installed = False


def _computing_clock() -> float:
    """time.monotonic() less the seconds this thread has waited for its turn: deadlines are on this clock."""
    return time.monotonic() - getattr(_local, "waited", 0.0)


def _check(_module, _inputs) -> None:
    deadline = getattr(_local, "deadline", None)
    if deadline is not None:
        if _local.stop is not None and _local.stop.is_set():
            raise Stopped
        if _local.turn is not None and _local.turn.due():
            paused = time.monotonic()
            _local.turn.pass_on()
            _local.waited = getattr(_local, "waited", 0.0) + time.monotonic() - paused
        if _computing_clock() > deadline:
            raise TimeLimitExceeded


def install() -> None:
    """Register the check before every module's forward pass (once per process)."""
    global _installed
    with _install_lock:
        if not _installed:
            torch.nn.modules.module.register_module_forward_pre_hook(_check)
            _installed = True


@contextmanager
def deadline(seconds: float, stop: threading.Event | None = None, turn: Turn | None = None) -> Iterator[None]:
    """Model work in this thread raises TimeLimitExceeded once it has computed `seconds` (nested: the earlier wins),
    and Stopped once `stop` is set (nested: an outer block's flag still counts where the inner one names none). With
    `turn`, the thread gives its turn up at a forward when the turn says so, and waits for the next one; the wait is
    not counted."""
    install()
    outer, outer_stop, outer_turn = (getattr(_local, "deadline", None), getattr(_local, "stop", None),
                                     getattr(_local, "turn", None))
    mine = _computing_clock() + seconds
    _local.deadline = mine if outer is None else min(outer, mine)
    _local.stop = stop if stop is not None else outer_stop
    _local.turn = turn if turn is not None else outer_turn
    try:
        yield
    finally:
        _local.deadline, _local.stop, _local.turn = outer, outer_stop, outer_turn

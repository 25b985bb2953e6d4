"""A check before every module's forward pass in the current thread: a deadline, past which the work stops, and a
stop flag another thread may raise (the student who asked for the work left, or asked for other work instead).

Why: a thread that runs a model cannot be killed from outside, and a 512-token analysis of SmolLM2 is hundreds of
module calls long. One global forward pre-hook (installed once per process) reads this thread's deadline, so any
model, of any family, stops within one module's forward of its deadline, with TimeLimitExceeded raised in the
thread that ran it (Stopped when the flag was raised); nothing is cached half-done. Threads without a deadline (the
default) pay one attribute read per module call.

runtime/analysis_worker.py uses it twice: a page first tries an analysis in its own thread for a fraction of a second
(a cached value, or light work, is done by then), and the process's analysis worker runs the rest under the
analysis time limit, with the job's stop flag (runtime/fair_queue.py stops a job no page waits for any more).
"""
from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import torch


class TimeLimitExceeded(Exception):
    """The thread's deadline passed during a model's forward pass."""


class Stopped(Exception):
    """The thread's stop flag was raised during a model's forward pass."""


_local = threading.local()
_install_lock = threading.Lock()
_installed = False


def _check(_module, _inputs) -> None:
    deadline = getattr(_local, "deadline", None)
    if deadline is not None:
        if _local.stop is not None and _local.stop.is_set():
            raise Stopped
        if time.monotonic() > deadline:
            raise TimeLimitExceeded


def install() -> None:
    """Register the check before every module's forward pass (once per process)."""
    global _installed
    with _install_lock:
        if not _installed:
            torch.nn.modules.module.register_module_forward_pre_hook(_check)
            _installed = True


@contextmanager
def deadline(seconds: float, stop: threading.Event | None = None) -> Iterator[None]:
    """Model work in this thread raises TimeLimitExceeded once `seconds` have passed (nested: the earlier wins), and
    Stopped once `stop` is set (nested: an outer block's flag still counts where the inner one names none)."""
    install()
    outer, outer_stop = getattr(_local, "deadline", None), getattr(_local, "stop", None)
    mine = time.monotonic() + seconds
    _local.deadline = mine if outer is None else min(outer, mine)
    _local.stop = stop if stop is not None else outer_stop
    try:
        yield
    finally:
        _local.deadline, _local.stop = outer, outer_stop

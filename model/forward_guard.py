"""A check before every module's forward pass in the current thread: a deadline, past which the work stops.

Why: a thread that runs a model cannot be killed from outside, and a 512-token analysis of SmolLM2 is hundreds of
module calls long. One global forward pre-hook (installed once per process) reads this thread's deadline, so any
model, of any family, stops within one module's forward of its deadline, with TimeLimitExceeded raised in the
thread that ran it; nothing is cached half-done. Threads without a deadline (the default) pay one attribute read
per module call.

ui/analysis_queue.py uses it twice: a page first tries an analysis in its own thread for a fraction of a second
(a cached value, or light work, is done by then), and the process's analysis worker runs the rest under the
analysis time limit.
"""
from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import torch


class TimeLimitExceeded(Exception):
    """The thread's deadline passed during a model's forward pass."""


_local = threading.local()
_install_lock = threading.Lock()
_installed = False


def _check(_module, _inputs) -> None:
    deadline = getattr(_local, "deadline", None)
    if deadline is not None and time.monotonic() > deadline:
        raise TimeLimitExceeded


def install() -> None:
    """Register the check before every module's forward pass (once per process)."""
    global _installed
    with _install_lock:
        if not _installed:
            torch.nn.modules.module.register_module_forward_pre_hook(_check)
            _installed = True


@contextmanager
def deadline(seconds: float) -> Iterator[None]:
    """Model work in this thread raises TimeLimitExceeded once `seconds` have passed (nested: the earlier wins)."""
    install()
    outer = getattr(_local, "deadline", None)
    mine = time.monotonic() + seconds
    _local.deadline = mine if outer is None else min(outer, mine)
    try:
        yield
    finally:
        _local.deadline = outer

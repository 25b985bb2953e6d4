"""At most PAGE_SLOTS page bodies drawn at once in this server process; what comes before the body (the lesson bar,
with a student's answer confirmed in it) is never held back.

Why: one process runs every session's script on its own thread, and Python runs one thread at a time (the GIL,
handed round every few milliseconds). When a whole class answers in the same seconds, each answer reruns the page
the question had hidden (about 0.08 CPU-s of charts): 150 reruns per replica then share one core, every one
advancing at 1/150th of its speed, so every student waits for the last chart of the burst before seeing "Right"
(issue 24 measured a p95 of 13.5 s for 300 answers). Queued instead, the bodies finish one after the other at full
speed, and the short part of each run before the body (the bar that says the answer was taken) gets the GIL at
once. The total work is the same; the confirmation no longer waits for it.

The teacher's runs are never queued: she moves the class while it answers. Fragments (the teacher's live results,
a student's answer form, the class poll) do not run app.py and are not queued either. A run that has waited
WAIT_SECONDS draws anyway: a slow page must delay the others, never hide one.
"""
from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

PAGE_SLOTS = 1  # page bodies running at once per process
WAIT_SECONDS = 30.0

_slots = threading.BoundedSemaphore(PAGE_SLOTS)  # one per process: this module is imported once
_count_lock = threading.Lock()
_in_line = 0  # page bodies drawing or waiting for a slot in this process


@contextmanager
def page_slot(queued: bool = True) -> Iterator[None]:
    """Hold one of the process's page slots while the body is drawn (`queued=False`: the teacher's run, no slot).
    Waiting threads sleep without the GIL; Python's semaphore wakes them in the order they came."""
    global _in_line
    if not queued:
        yield
        return
    with _count_lock:
        _in_line += 1
    taken = _slots.acquire(timeout=WAIT_SECONDS)
    try:
        yield
    finally:
        if taken:
            _slots.release()
        with _count_lock:
            _in_line -= 1


def crowded() -> bool:
    """Every slot is taken: a page asked for now would wait (a student's answer is then confirmed by its own form,
    and her page drawn at her next class poll: ui/lessons/peer_student.py)."""
    return _in_line >= PAGE_SLOTS

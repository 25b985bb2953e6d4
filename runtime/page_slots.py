"""At most PAGE_SLOTS page bodies drawn at once in this server process; what comes before the body (the lesson bar,
with a student's answer confirmed in it) is never held back.

Why: one process runs every session's script on its own thread, and Python runs one thread at a time (the GIL,
handed round every few milliseconds). When a whole class answers in the same seconds, each answer reruns the page
the question had hidden (its charts): 150 reruns per replica then share one core, every one advancing at
1/150th of its speed, so every student waits for the last chart of the burst before seeing "Right". Queued instead, the bodies finish one after the other at full
speed, and the short part of each run before the body (the bar that says the answer was taken) gets the GIL at
once. The total work is the same; the confirmation does not wait for it. During a burst of answers the pages wait
for the burst to end (`crowded`): each answer's confirmation is a short fragment run, and the charts follow.

Turns go by student, not by arrival (issues 53, 56): a slot that frees goes to the waiting run with the earliest
deadline, its arrival plus a delay that grows with how long its student's pages (her browser's seat: all her tabs and
fragments one student) held the slot per turn lately, and with her other runs holding or waiting
(runtime/page_share.py). So a light page goes before a burst of heavy ones asked just before it, a student with three
tabs rerunning a heavy page does not hold three places in line, and a heavy page is passed by no run asked more than
page_share.MAX_DELAY after it. A view's fragment that reruns alone (the explorer's layer and head pickers) waits in
the same line.

The teacher's runs are never queued: she moves the class while it answers; and a run of hers that changed the class
(a Reveal, a move) goes first: the students' runs it causes wait for it (teacher_acts). Fragments (the teacher's live results,
a student's answer form, the class poll) do not run app.py and are not queued either. A run that has waited
WAIT_SECONDS draws anyway: a slow page must delay the others, never hide one.
"""
from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager

from runtime.page_share import ShortFirstSlots

PAGE_SLOTS = 1  # page bodies running at once per process
WAIT_SECONDS = 30.0
# A burst: answers of at least BURST_ANSWERS students stored by this process within BURST_SECONDS (3 a second). A
# class of 30 answering over half a minute is no burst, nor one student going through the stops quickly; 150 students
# of a replica answering within 5 s are.
BURST_ANSWERS = 6
BURST_SECONDS = 2.0

_slots = ShortFirstSlots(PAGE_SLOTS)  # one per process: this module is imported once
_count_lock = threading.Lock()
_in_line = 0  # page bodies drawing or waiting for a slot in this process
_holder = threading.local()  # .taken: this thread's script run holds a slot now
_answers: deque[tuple[float, str]] = deque(maxlen=4 * BURST_ANSWERS)  # (monotonic time, student) of the latest

# The teacher's run first. Her click that changes the class (a Reveal, a move, a phase: ui/live_class/refusals.
# teacher_action) wakes every student of her class at once (serving/class_version.py), and this process's 150 reruns
# would share the GIL with hers and slow the projected Reveal the whole room watches (bench/README.md). From her click until
# her run has drawn (TEACHER_FIRST_SECONDS at most: a slow page of hers delays the class, never stalls it), students'
# page bodies and live questions wait before their slot, sleeping without the GIL.
TEACHER_FIRST_SECONDS = 2.0
_teacher_first = threading.Condition()
_teacher_until = 0.0  # time.monotonic() until which students' runs wait for a teacher's run (0: none is drawing)


@contextmanager
def page_slot(queued: bool = True, owner: str = "") -> Iterator[None]:
    """Hold one of the process's page slots while the body is drawn (`queued=False`: the teacher's run, no slot), in
    the turn of `owner` (the student: her browser's seat; every run of hers takes her turn). Within a run that holds
    its slot already (a view's fragment drawn by its page's full run) it takes none again."""
    global _in_line
    if not queued or getattr(_holder, "in_line", False):
        yield
        return
    with _count_lock:
        _in_line += 1
    after_the_teacher()
    _holder.owner = owner
    _holder.taken = _slots.acquire(owner, timeout=WAIT_SECONDS)
    _holder.in_line = True
    try:
        yield
    finally:
        if getattr(_holder, "taken", False):
            _slots.release(owner)
        _holder.taken = False
        if _holder.in_line:
            with _count_lock:
                _in_line -= 1
        _holder.in_line = False


@contextmanager
def slot_released() -> Iterator[None]:
    """Give this run's page slot back while it waits for work done elsewhere, then wait in line for one again (a
    run holding none, the teacher's or a fragment's, just waits). When the wait ends in an exception (a rerun
    or a closed tab stops the run) the slot is not taken again."""
    global _in_line
    held = getattr(_holder, "in_line", False)
    if not held:
        yield
        return
    owner = getattr(_holder, "owner", "")
    if _holder.taken:
        _slots.release(owner)
    _holder.taken, _holder.in_line = False, False
    with _count_lock:
        _in_line -= 1
    yield
    with _count_lock:
        _in_line += 1
    _holder.in_line = True
    _holder.taken = _slots.acquire(owner, timeout=WAIT_SECONDS)


def teacher_acts() -> None:
    """A teacher's click changed her class, at the start of her run (its callback, on her run's thread): students'
    runs of this process wait (after_the_teacher) until that run ends (run_ended) or TEACHER_FIRST_SECONDS pass."""
    global _teacher_until
    with _teacher_first:
        _teacher_until = time.monotonic() + TEACHER_FIRST_SECONDS
    _holder.teacher_acted = True


def run_ended() -> None:
    """A script run has ended (ui/errors.page_guard, the run's outermost): if it was a teacher's that acted, the
    students' runs go on now."""
    global _teacher_until
    if getattr(_holder, "teacher_acted", False):
        _holder.teacher_acted = False
        with _teacher_first:
            _teacher_until = 0.0
            _teacher_first.notify_all()


def after_the_teacher() -> None:
    """Wait, without the GIL, while a teacher's run that changed her class is drawing (TEACHER_FIRST_SECONDS after her
    click at most). The teacher's own run never waits for itself (a run of hers that is queued: before her handle is
    back in a new session)."""
    if getattr(_holder, "teacher_acted", False):
        return
    with _teacher_first:
        while (left := _teacher_until - time.monotonic()) > 0:
            _teacher_first.wait(left)


def note_answer(student: str) -> None:
    """A student's answer was stored by this process (ui/live_class/peer_student.py)."""
    _answers.append((time.monotonic(), student))


def answer_burst() -> bool:
    """The class is answering at once: BURST_ANSWERS students answered within the last BURST_SECONDS."""
    since = time.monotonic() - BURST_SECONDS
    return len({student for when, student in tuple(_answers) if when >= since}) >= BURST_ANSWERS


def crowded() -> bool:
    """A page asked for now would wait for a slot, or would take the GIL from a burst of answers that each wait for
    their confirmation: the answer is then confirmed by its own form, and the student's page drawn at her first class
    poll after the burst (ui/live_class/peer_student.py, ui/lesson_bar/bar.py)."""
    return _in_line >= PAGE_SLOTS or answer_burst()


# A live question's runs (ui/live_class/live_question.py) at once per process. At a Reveal, every student of a replica
# whose class watch was held (serving/class_version.py) is answered in the same tenth of a second, and her question's
# fragment reruns: 150 runs sharing the GIL would each finish at the end of all of them (and starve the event loop
# that sends their messages). Two at a time (one runs while the other waits on the database), in the order they came,
# each finishes at full speed; the total is the same, and the first students see the answer first.
LIVE_SLOTS = 2
_live_slots = threading.BoundedSemaphore(LIVE_SLOTS)


@contextmanager
def live_slot() -> Iterator[None]:
    """Hold one of the process's live-question slots while a live question is drawn (WAIT_SECONDS at most: then it
    draws anyway), after a teacher's run that changed the class (after_the_teacher)."""
    after_the_teacher()
    taken = _live_slots.acquire(timeout=WAIT_SECONDS)
    try:
        yield
    finally:
        if taken:
            _live_slots.release()

"""A page's side of a heavy analysis (runtime/analysis_worker.py runs it): whose turn it takes in the worker's queue
(the browser's seat), the note the page draws while it waits off its slot (its place in line, "computing…", a progress
bar) and the message in the student's language when it ran past the time limit or another tab replaced it."""
from __future__ import annotations

import hashlib
from collections.abc import Callable, Hashable
from contextlib import AbstractContextManager
from typing import TypeVar

import streamlit as st

from i18n import tr
from runtime.analysis_worker import ANALYSES, progress_of, try_on_the_pages_turn, wait_off_the_slot
from runtime.fair_queue import CANCELLED, DONE, FAILED, FairQueue, Job
from runtime.page_slots import page_slot
from serving.internals import script_session_id
from ui.seat import browser_seat
from ui.session import lab_session

T = TypeVar("T")


def session_name() -> str:
    """Whose turn a job takes in the queues: the browser's seat (all its tabs one student), else this session."""
    seat = browser_seat()
    if seat:
        return "seat:" + hashlib.sha256(seat.encode()).hexdigest()[:16]  # the cookie itself is kept nowhere
    return script_session_id() or "no-session"


def page_turn() -> AbstractContextManager[None]:
    """A page body's (or a view fragment's own rerun's) turn at one of the process's page slots, in this student's
    turn (session_name: all the tabs of her browser one student; runtime/page_slots.py); the teacher's never waits."""
    return page_slot(queued=lab_session().teacher.handle is None, owner=session_name())


def heavy(key: Hashable, compute: Callable[[], T], where=st, queue: FairQueue = ANALYSES,
          work: float = 0.0, inline: bool = True) -> T | None:
    """compute() (a cached analysis), here when it is quick, else by the analysis worker while the page waits off
    its slot, its note in `where`; None, with a message shown there, when it ran past the time limit or another
    tab of the browser replaced it. key names what compute() computes; `work` is its size (size(): tokens ×
    parameters) where the caller knows it: past INLINE_SIZE it is not tried here unless the worker computed it
    lately (then it is likely cached). inline=False: never tried here (compute() blocks for seconds outside the
    models' forwards, where the page's deadline cannot stop it: the Train page's speed probe, in a thread of its own)."""
    computed = try_on_the_pages_turn(key, compute, queue, work, inline)
    if computed is not None:
        return computed.result
    job = queue.submit(session_name(), key, compute, watch=True)
    note = where.empty()
    wait_off_the_slot(job, queue, lambda: _draw_note(note, job, queue))
    note.empty()
    if job.state == DONE:
        return job.result
    if job.state == FAILED and job.error is not None:
        raise job.error  # as the page's own try would have
    if job.state == CANCELLED:
        where.info(tr("analysis_queue.replaced"), icon=":material/tab:")
        return None
    where.warning(tr("analysis_queue.too_slow", seconds=f"{queue.time_limit:.0f}"), icon=":material/timer_off:")
    return None


def _draw_note(note, job: Job, queue: FairQueue) -> None:
    """The waiting page's note: its place in line, else the job's progress bar, else how long it has computed."""
    place = queue.place(job)
    progress = progress_of(job.key)
    if place:
        note.info(tr("analysis_queue.waiting", place=place), icon=":material/hourglass_top:")
    elif progress is not None and progress[1] > 0:
        done, total = progress
        seconds = job.computing_seconds()  # its own computing, as the time limit counts (a sliced job takes turns)
        note.progress(min(done / total, 1.0), text=tr("analysis_queue.progress", done=done, total=total,
                                                       seconds=f"{seconds:.0f}", limit=f"{queue.time_limit:.0f}"))
    else:
        seconds = job.computing_seconds()
        note.info(tr("analysis_queue.computing", seconds=f"{seconds:.0f}", limit=f"{queue.time_limit:.0f}"),
                  icon=":material/hourglass_top:")

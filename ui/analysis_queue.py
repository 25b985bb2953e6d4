"""Heavy analyses (seconds of model work: a long text through SmolLM2, head importance, rollout of a long text) run
in the process's analysis worker, fed by a fair queue of the sessions (ui/fair_queue.py), never on a page's turn.

Why: a page body holds one of the process's page slots (ui/page_slots.py) while it draws; a 512-token text on the
LLM heads page is about 15 s of model work, and every other student's page on that replica waited behind it
(issue 36). Now a page first tries the analysis in its own thread for INLINE_SECONDS: a cached value, or light work
(a sentence through a toy model), is done by then and drawn at once. Past that the try stops (model/forward_guard.py)
and the analysis is queued: the page gives its slot back, says "computing…" (or its place in line) and waits, and
draws the result when the worker has it. Each session has at most one analysis running and one waiting (a newer
request replaces the waiting one; a rerun or a closed tab withdraws it), the sessions take turns, and an analysis
stops at ANALYSIS_SECONDS with a message that suggests a shorter text or a smaller setting.
"""
from __future__ import annotations

import os
import time
from collections.abc import Callable, Hashable
from typing import TypeVar

import streamlit as st
import torch
from streamlit.runtime.scriptrunner import get_script_run_ctx

from i18n import tr
from model.forward_guard import TimeLimitExceeded, deadline
from ui.fair_queue import DONE, FAILED, FairQueue, Job
from ui.page_slots import slot_released

T = TypeVar("T")

INLINE_SECONDS = 0.3  # tried on the page's own turn first: long enough for a cache hit or a toy model's sentence
# A student's analysis stops after this many seconds of the worker's time (ATTENTION_LAB_ANALYSIS_SECONDS to change):
# the longest the pages' own settings ask for (a 512-token text on the LLM heads page) takes a third of it.
ANALYSIS_SECONDS = float(os.environ.get("ATTENTION_LAB_ANALYSIS_SECONDS", "45"))
ANALYSIS_WORKERS = 1  # per process: the other cores serve the pages
TICK_SECONDS = 0.5  # the waiting page's note is redrawn this often; each redraw lets a rerun or a closed tab stop it


def _worker_setup() -> None:
    torch.set_num_threads(1)  # as the pages' threads (ui/models.py): one core for the worker


ANALYSES = FairQueue("analysis", workers=ANALYSIS_WORKERS, time_limit=ANALYSIS_SECONDS, thread_setup=_worker_setup)


def session_name() -> str:
    ctx = get_script_run_ctx()
    return ctx.session_id if ctx is not None else "no-session"


def heavy(key: Hashable, compute: Callable[[], T], where=st, queue: FairQueue = ANALYSES) -> T | None:
    """compute() (a cached analysis), here when it is quick, else by the analysis worker while the page waits off
    its slot, its note in `where`; None, with a message shown there, when it ran past the time limit. key names
    what compute() computes."""
    if queue.begin_probe(key):  # not when a worker computes key now: the cache's lock would hold the page
        try:
            with deadline(INLINE_SECONDS):
                return compute()
        except TimeLimitExceeded:
            pass
        finally:
            queue.end_probe(key)
    job = queue.submit(session_name(), key, compute)
    _wait(job, queue, where)
    if job.state == DONE:
        return job.result
    if job.state == FAILED and job.error is not None:
        raise job.error  # as the page's own try would have
    where.warning(tr("analysis_queue.too_slow", seconds=f"{queue.time_limit:.0f}"), icon=":material/timer_off:")
    return None


def _wait(job: Job, queue: FairQueue, where) -> None:
    note = where.empty()
    try:
        with slot_released():
            while not job.done.wait(TICK_SECONDS):
                place = queue.place(job)
                if place:
                    note.info(tr("analysis_queue.waiting", place=place), icon=":material/hourglass_top:")
                else:
                    seconds = time.monotonic() - (job.started or time.monotonic())
                    note.info(tr("analysis_queue.computing", seconds=f"{seconds:.0f}",
                                 limit=f"{queue.time_limit:.0f}"), icon=":material/hourglass_top:")
    finally:  # a rerun or a closed tab (an exception from note.info) withdraws a job still waiting
        queue.cancel(job)
    note.empty()

"""No page ever shows a Python traceback: an unexpected error becomes a clear message (and a log line)."""
from __future__ import annotations

import contextlib
import functools
import logging
import threading
from collections.abc import Callable

import streamlit as st

from i18n import DEFAULT_LANGUAGE, strings, tr
from runtime.page_slots import run_ended

# The guard's English message up to the error's name (tests look for it to fail when the guard fired).
GUARD_MESSAGE = strings(DEFAULT_LANGUAGE)["errors.guard"].split("{error}")[0].strip()
_LOG = logging.getLogger("attention_lab.errors")
_guards = threading.local()  # .depth: how many page guards this thread's run is inside now


@contextlib.contextmanager
def page_guard():
    """Catch any error of the page (not Streamlit's rerun/stop signals, which are BaseExceptions). The outermost
    guard of a run (run_app's, or a fragment's own rerun's) also ends the run's turn before the class
    (runtime/page_slots.run_ended), however it ends."""
    depth = getattr(_guards, "depth", 0)
    _guards.depth = depth + 1
    try:
        yield
    except Exception as error:  # noqa: BLE001 - the whole point is to catch anything the page raised
        _LOG.exception("page failed")
        st.error(tr("errors.guard", error=type(error).__name__) + " " + tr("errors.guard_advice"))
    finally:
        _guards.depth = depth
        if depth == 0:
            run_ended()


def lab_fragment(run_every: float | None = None) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """@st.fragment with the page guard around every run of it: a fragment's own rerun skips run_app, and with it
    the run's guard. Every fragment of the app is one of these (ui/share.view_fragment adds a view's framing)."""
    def decorate(body: Callable[..., None]) -> Callable[..., None]:
        @functools.wraps(body)
        def guarded(*args, **kwargs) -> None:
            with page_guard():
                body(*args, **kwargs)
        return st.fragment(guarded, run_every=run_every)
    return decorate

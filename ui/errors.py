"""No page ever shows a Python traceback: an unexpected error becomes a clear message (and a log line)."""
from __future__ import annotations

import contextlib
import logging

import streamlit as st

GUARD_MESSAGE = "Something went wrong while drawing this page"
_LOG = logging.getLogger("attention_lab.errors")


@contextlib.contextmanager
def page_guard():
    """Catch any error of the page (not Streamlit's rerun/stop signals, which are BaseExceptions)."""
    try:
        yield
    except Exception as error:  # noqa: BLE001 - the whole point is to catch anything the page raised
        _LOG.exception("page failed")
        st.error(f"{GUARD_MESSAGE} ({type(error).__name__}). Your inputs are kept: try another sentence, model or "
                 "setting, or reload the page. The details are in the server's log.")

"""A student's class watch: a small component (class_watch.js) in her class poll's fragment that asks the server
for her class's version (serving/class_version.py: a plain GET, no script run, held by the server until the class
changes from the version her page was drawn at) and reruns the fragment only when the class changed since the page
was drawn: a move, a Reveal, a peer-instruction phase, the end.

It replaces the fragment's run_every timer, which reran every student's fragment every 2-3 s (150 runs a second per
replica for 300 students) to find, nearly always, that nothing had changed. Where the route cannot be asked (a
proxy that blocks it), the component reruns the fragment every FALLBACK_SECONDS instead, the timer of before.
"""
from __future__ import annotations

from pathlib import Path

import streamlit as st

from classroom.recent import class_version
from classroom.records import ClassSession
from serving.class_version import version_url

# The pause after each answer before a student's browser asks again: an answer comes when the class changed, after
# serving/class_version.HOLD_SECONDS, or at once where the server holds no request (then this is a 1 s poll).
WATCH_SECONDS = 1.0
FALLBACK_SECONDS = 2.0  # the fragment's own poll where the route cannot be asked (ui/live_class/live_question.py's)

_WATCH = st.components.v2.component("attention_lab_class_watch",
                                    js=(Path(__file__).with_name("class_watch.js")).read_text(encoding="utf-8"))


def watch_class(code: str, session: ClassSession | None, key: str, line: str) -> None:
    """The class's line (`line`, a caption: "In class …") with the watch of class `code` beside it, as `session` (the
    read this run drew from) has it: the fragment this is called in reruns when the class's version differs from it.
    The watch draws nothing; in a row with the line it adds no empty row under it. `key`: unique on the page."""
    with st.container(horizontal=True, vertical_alignment="center"):
        st.caption(line)
        _WATCH(key=key, data={"key": f"{key}:{code}", "url": version_url(code), "version": class_version(session),
                              "every_ms": int(WATCH_SECONDS * 1000), "fallback_ms": int(FALLBACK_SECONDS * 1000)},
               on_changed_change=_nothing, width="content")


def _nothing() -> None:
    """The trigger's callback: the rerun it causes is what the watch is for; there is nothing more to do."""

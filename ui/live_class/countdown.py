"""A student's discussion countdown, counted in her browser (countdown.js).

Why: the countdown used to be a fragment rerun every second on every student's page (ui/live_class/peer_student.
countdown, which the teacher's projected page keeps): for a class of 300 in a two-minute discussion, 150 script runs a
second per replica, most of a core, only to redraw a clock while the class's next phase waited behind them. Here the
server draws it once, with the seconds left from the stored end (unix seconds, the same on every screen; her phone's
clock is never read), and her browser counts; the class watch brings round 2 as before.
"""
from __future__ import annotations

import time
from pathlib import Path

import streamlit as st

from i18n import tr

_COUNTDOWN = st.components.v2.component(
    "attention_lab_countdown", js=Path(__file__).with_name("countdown.js").read_text(encoding="utf-8"),
    # an h3's size and weight, in the theme's colour and heading font; "up": a caption's
    css=""".countdown { margin: 0; padding: 0.5rem 0 0.25rem; font-family: var(--st-heading-font, var(--st-font));
  font-size: 1.5rem; font-weight: 600; line-height: 1.2; color: var(--st-text-color); }
.countdown.up { padding: 0; font-family: var(--st-font); font-size: 0.875rem; font-weight: 400;
  color: var(--st-text-color); opacity: 0.75; }""")


def countdown_words(ends: float, now: float | None = None) -> dict:
    """What the browser's countdown is given: its key (the stored end), the milliseconds left now, its words (the
    template "… {time} …" and the time-up line, in the session's language)."""
    now = time.time() if now is None else now
    return {"key": f"countdown:{ends:.3f}", "left_ms": max(0, int((ends - now) * 1000)),
            "left": tr("peer.time_left", time="{time}"), "up": tr("peer.time_up")}


def student_countdown(ends: float) -> None:
    """The discussion's countdown on a student's page, to `ends` (unix seconds, as stored)."""
    _COUNTDOWN(key="discussion_countdown", data=countdown_words(ends), width="stretch")

"""A builder's sign-in and draft through a reload (issue 57): the store keeps both for her browser, by its seat cookie
(serving/seat.py: set by asgi.py, never shown to the page), until her sign-in ends (classroom/saved_lessons.py). A new
session in that browser asks the store once; a student of a class, or a browser without the cookie (plain
`streamlit run app.py`, AppTest), never does."""
from __future__ import annotations

import hashlib

from classroom.errors import ClassStoreError
from classroom.lesson_draft import Draft
from ui.lessons.catalogue import shelf
from ui.seat import browser_seat
from ui.session import BuilderState, lab_session


def restore_author(builder: BuilderState) -> None:
    """Once a session: her key (and her draft, where this session has none) where her browser is signed in."""
    if builder.author is not None or builder.seat_checked or lab_session().seat.code:
        return
    builder.seat_checked = True
    seat = browser_seat()
    if seat is None:
        return
    try:
        builder.author = shelf().author_of_seat(seat)
        kept = shelf().draft_of_seat(seat) if builder.author is not None and builder.draft is None else None
    except ClassStoreError:  # a busy store: she signs in again, as before
        return
    if kept is not None:
        builder.draft = Draft.from_source(*kept)
        builder.kept = _digest(builder.draft)


def keep_draft(builder: BuilderState) -> None:
    """After a run that changed her draft: the store keeps it for her browser (no browser seat: only this session)."""
    if builder.author is None or builder.draft is None:
        return
    digest = _digest(builder.draft)
    if digest == builder.kept:
        return
    draft = builder.draft
    try:
        shelf().keep_draft(builder.author, browser_seat(), draft.source(), draft.lesson_id, draft.version)
    except ClassStoreError:  # her key ended or the store is busy: the draft stays in this session
        return
    builder.kept = digest


def _digest(draft: Draft) -> str:
    return hashlib.sha256(f"{draft.lesson_id}\0{draft.version}\0{draft.source()}".encode()).hexdigest()

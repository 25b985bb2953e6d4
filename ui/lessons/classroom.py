"""The live class's glue: the store (one per server process and data folder), who this browser is (its seat), where
it connects from, the teacher's class in this session, the lesson a class runs on, and the limit on guessing."""
from __future__ import annotations

from collections.abc import Mapping
import hashlib
import secrets
import time

import streamlit as st

from classroom import guessing
from classroom.lessons import Lesson, LessonFileError, parse_lesson
from classroom.errors import ClassStoreError
from classroom.store import ClassSession, ClassStore, process_store
from classroom.teacher import ClassTeacher
from serving.seat import SEAT_COOKIE, valid_seat
from ui.session import TeacherHandle, lab_session

LOOPBACK = {"local", "127.0.0.1", "::1"}  # the server's own machine: benches, or a proxy that passes no address

def class_store() -> ClassStore:
    """The store of $ATTENTION_LAB_DATABASE_URL or the data folder's SQLite file, one per process
    (classroom.store.process_store). A plain dict, not st.cache_resource: a class poll asks for it every time, and the
    cache's key hashing would be a large share of a poll's CPU."""
    return process_store()


def browser_seat() -> str | None:
    """This browser's seat cookie (serving/seat.py, set by asgi.py), or None (plain `streamlit run app.py`, AppTest)."""
    try:
        return valid_seat(st.context.cookies.get(SEAT_COOKIE))
    except Exception:  # no client context (a script run outside a browser session): no seat
        return None


def client_address() -> str:
    """Where this session connects from: the address uvicorn resolved (it takes X-Forwarded-For only from the
    proxies in $FORWARDED_ALLOW_IPS, default loopback: deploy/README.md), or for a loopback peer the last entry of
    X-Forwarded-For (serve.py's HAProxy replaces whatever the client sent: deploy/haproxy.cfg.template)."""
    address = st.context.ip_address  # None for a loopback peer
    if not isinstance(address, str):  # (AppTest's runtime answers with a stand-in object: no address)
        forwarded = st.context.headers.get("X-Forwarded-For")
        return forwarded.split(",")[-1].strip() if isinstance(forwarded, str) and forwarded else "local"
    return address


def seat_address() -> str | None:
    """The address a new seat is counted against (ClassStore.join's per-address limit); None on the server's own
    machine, where every client shares one address and says nothing about who it is."""
    address = client_address()
    return None if address in LOOPBACK else address


def session_id() -> str:
    seat = lab_session().seat
    if seat.session_id is None:
        seat.session_id = secrets.token_hex(12)
    return seat.session_id


def _guessers() -> tuple[str, ...]:
    """Who made a guess: this session, and this browser (a hash of its seat cookie) when it has one."""
    seat = browser_seat()
    device = (f"device:{hashlib.sha256(f'guesser:{seat}'.encode()).hexdigest()[:24]}",) if seat else ()
    return (f"session:{session_id()}", *device)


def guess_wait(kind: str) -> int:
    """Seconds this session and browser must wait before they may try another class code or password (0: now):
    classroom/guessing.py. Read before the guess is looked at, so a refused guess costs two small queries; other
    sessions and browsers behind the same address are not slowed."""
    return guessing.guess_wait(class_store(), kind, _guessers(), f"ip:{client_address()}", time.time())


def wrong_guess(kind: str) -> None:
    class_store().record_failure(kind, (*_guessers(), f"ip:{client_address()}"))


def teacher_class() -> ClassTeacher | None:
    """The class this session teaches, as the store's teacher handle. On a session's first look, a browser that
    started a live class (its seat) takes it back by itself: a reload, a new tab or a replica's death never loses the
    class."""
    state = lab_session().teacher
    if state.handle is not None or state.seat_checked:
        return as_teacher(state.handle)
    state.seat_checked = True
    seat = browser_seat()
    code = class_store().class_of_seat(seat) if seat else None
    if code is None:
        return None
    try:
        teacher = class_store().take_back(code)
    except ClassStoreError:  # ended since
        return None
    keep_teacher(teacher)
    return teacher


def keep_teacher(teacher: ClassTeacher | None) -> None:
    """This session teaches `teacher`'s class (None: no class); the session keeps the handle's plain data."""
    lab_session().teacher.handle = None if teacher is None else TeacherHandle(teacher.code, teacher.token,
                                                                              teacher.lesson)


def as_teacher(handle: TeacherHandle | None) -> ClassTeacher | None:
    """The store's handle again from what the session keeps."""
    return None if handle is None else class_store().teacher(handle.code, handle.token, handle.lesson)


@st.cache_data(show_spinner=False, max_entries=32)
def _snapshot(lesson_id: str, source: str, pages: dict) -> Lesson | None:
    try:
        return parse_lesson(lesson_id, source, pages)
    except LessonFileError:
        return None


def class_lesson(session: ClassSession, all_lessons: Mapping[str, Lesson], pages: dict) -> tuple[Lesson | None, bool]:
    """-> (the lesson the class runs on, whether it is the copy taken when the class started). The file as it is now
    when it reads; while it does not (a typo saved during class), the copy the class started with, so the class goes
    on; None only when neither reads."""
    if session.lesson in all_lessons:
        return all_lessons[session.lesson], False
    if session.lesson_source:
        return _snapshot(session.lesson, session.lesson_source, pages), True
    return None, False

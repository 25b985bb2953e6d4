"""The live class's glue: the store (one per server process and data folder), who this browser is (its seat), where
it connects from, the teacher's class in this session, the lesson a class runs on, and the limit on guessing."""
from __future__ import annotations

from collections.abc import Mapping
import secrets
import threading

import streamlit as st

from classroom.lessons import Lesson, LessonFileError, parse_lesson
from classroom.store import ClassSession, ClassStore, store_location
from serving.seat import SEAT_COOKIE, valid_seat

TEACHER = "teacher_class"  # session_state: {"code", "token", "lesson"}; the token never leaves this session
SEAT_CHECKED = "_teacher_seat_checked"  # this session has asked the store whether its browser started a class
SESSION_ID = "_session_id"  # a random id for this session: its guesses are counted even without a seat
# Wrong class codes or teacher passwords allowed per client in GUESS_WINDOW seconds: per session (one tab) and per
# address (a script opening new sessions). A school behind one address still has 30 typos in 10 minutes.
GUESS_WINDOW = 600
GUESSES_PER_SESSION = 5
GUESSES_PER_ADDRESS = 30


_stores: dict[str, ClassStore] = {}  # location -> the process's store (this module is imported once a process)
_stores_lock = threading.Lock()


def class_store() -> ClassStore:
    """The store of $ATTENTION_LAB_DATABASE_URL or the data folder's SQLite file, one per process: it holds only the
    location, limits and (PostgreSQL) a thread-safe pool of connections, so every session shares it. A plain dict,
    not st.cache_resource: a class poll asks for it every few seconds per student, and the cache's key hashing was a
    fifth of a poll's CPU (bench/README.md, issue 24)."""
    location = store_location()
    store = _stores.get(location)
    if store is None:
        with _stores_lock:  # two sessions' first calls at once make one store
            if location not in _stores:
                _stores[location] = ClassStore(location)
            store = _stores[location]
    return store


def browser_seat() -> str | None:
    """This browser's seat cookie (serving/seat.py, set by asgi.py), or None (plain `streamlit run app.py`, AppTest)."""
    try:
        return valid_seat(st.context.cookies.get(SEAT_COOKIE))
    except Exception:  # no client context (a script run outside a browser session): no seat
        return None


def client_address() -> str:
    """Where this session connects from. Behind serve.py's HAProxy (a loopback peer) the address HAProxy wrote in
    X-Forwarded-For (it replaces whatever the client sent: deploy/haproxy.cfg.template); a direct client's own."""
    address = st.context.ip_address  # None for a loopback peer
    if address is None:
        forwarded = st.context.headers.get("X-Forwarded-For")
        return forwarded.split(",")[-1].strip() if forwarded else "local"
    return address


def session_id() -> str:
    return st.session_state.setdefault(SESSION_ID, secrets.token_hex(12))


def _guessers() -> tuple[str, ...]:
    return (f"session:{session_id()}", f"ip:{client_address()}")


def guess_wait(kind: str) -> int:
    """Seconds this session must wait before it may try another class code or password (0: it may now). Read before
    anything else is done with the guess, so a refused guess costs one small query."""
    store = class_store()
    session_count, session_wait = store.failures(kind, _guessers()[0], GUESS_WINDOW)
    address_count, address_wait = store.failures(kind, _guessers()[1], GUESS_WINDOW)
    waits = [wait for count, limit, wait in ((session_count, GUESSES_PER_SESSION, session_wait),
                                             (address_count, GUESSES_PER_ADDRESS, address_wait)) if count >= limit]
    return int(max(waits) + 1) if waits else 0


def wrong_guess(kind: str) -> None:
    class_store().record_failure(kind, _guessers())


def teacher_class() -> dict | None:
    """The class this session teaches. On a session's first look, a browser that started a live class (its seat) takes
    it back by itself: a reload, a new tab or a replica's death never loses the class."""
    teacher = st.session_state.get(TEACHER)
    if teacher is not None or st.session_state.get(SEAT_CHECKED):
        return teacher
    st.session_state[SEAT_CHECKED] = True
    seat = browser_seat()
    store = class_store()
    code = store.class_of_seat(seat) if seat else None
    session = store.session(code) if code else None
    if session is None:
        return None
    token = store.take_back(code)
    if token is None:
        return None
    st.session_state[TEACHER] = {"code": code, "token": token, "lesson": session.lesson}
    return st.session_state[TEACHER]


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

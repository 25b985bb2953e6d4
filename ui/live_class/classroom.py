"""The live class's glue: the store (one per server process and data folder), who this browser is (its seat), where
it connects from, the teacher's class in this session, the lesson a class runs on, and the limit on guessing."""
from __future__ import annotations

from collections.abc import Mapping
import hashlib
import time

import streamlit as st

from classroom import guessing
from classroom.lessons import Lesson, LessonFileError, lessons_folder, parse_lesson
from classroom.errors import ClassStoreError
from classroom.store import ClassSession
from classroom.teacher import ClassTeacher
from ui.seat import browser_seat, class_store, client_address, session_id
from ui.session import TeacherHandle, lab_session

def _guessers() -> tuple[str, ...]:
    """Who made a guess: this session, and this browser (a hash of its seat cookie) when it has one."""
    seat = browser_seat()
    device = (f"device:{hashlib.sha256(f'guesser:{seat}'.encode()).hexdigest()[:24]}",) if seat else ()
    return (f"session:{session_id()}", *device)


def session_guess_wait(kind: str) -> int:
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


@st.cache_resource(show_spinner=False, max_entries=32)  # read-only and shared: every student of a saved lesson's class
def _snapshot(lesson_id: str, source: str, pages: dict) -> Lesson | None:
    try:
        return parse_lesson(lesson_id, source, pages)
    except LessonFileError:
        return None


def class_lesson(session: ClassSession, all_lessons: Mapping[str, Lesson], pages: dict) -> tuple[Lesson | None, bool]:
    """-> (the lesson the class runs on, whether it is the copy taken when the class started)."""
    return running_lesson(session.lesson, session.lesson_source, all_lessons, pages)


def running_lesson(lesson_id: str, source: str | None, all_lessons: Mapping[str, Lesson],
                   pages: dict) -> tuple[Lesson | None, bool]:
    """-> (the lesson a class of `lesson_id` that started on `source` runs on, whether it is that copy). The file as
    it is now when it reads; while it does not (a typo saved during class), the copy the class started with, so the
    class goes on; None only when neither reads. A teacher's saved lesson: always the version the class started on
    (its text, kept with the class), never a later save."""
    current = all_lessons.get(lesson_id)
    if current is not None and current.version is not None and source:
        return _snapshot(lesson_id, source, pages), False
    if current is not None:
        return current, False
    if source:  # a copy because its file does not read; a deleted saved lesson has no file, and nothing to say
        return _snapshot(lesson_id, source, pages), (lessons_folder() / f"{lesson_id}.toml").exists()
    return None, False

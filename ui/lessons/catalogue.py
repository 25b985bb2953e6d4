"""The lessons the bar and the teacher's page offer: the lesson files, re-read when one changes, and the teachers'
saved lessons (classroom/saved_lessons.py, in the class store every replica shares), checked against the app's pages;
and the draft a teacher previews (ui/lesson_builder/), for her session alone."""
from __future__ import annotations

import functools
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType

import streamlit as st

from classroom.database import store_location
from classroom.errors import ClassStoreError
from classroom.lessons import Lesson, LessonFileError, lessons_folder, load_lessons, localized, parse_lesson
from classroom.saved_lessons import PREVIEW_LESSON, LessonShelf
from i18n import current_language
from runtime.kept_read import KeptRead
from ui.page_list import PAGE_NAMES
from ui.page_sections import section_names
from ui.seat import class_store
from ui.session import lab_session

SAVED_SECONDS = 3  # a lesson saved on another replica is listed here within this many seconds


def known_pages() -> dict[str, tuple[str, ...]]:
    """The pages a lesson stop may name, the app's pages (ui/page_list.PAGE_SECTIONS, what st.navigation serves),
    each with the sections a stop may name (ui/specs/<page>.py)."""
    return {page: section_names(page) for page in PAGE_NAMES}


def shelf() -> LessonShelf:
    """The teachers' lessons in this process's class store."""
    return LessonShelf(class_store())


def _read_saved_versions(location: str) -> Mapping[str, int]:
    """{saved lesson id: its latest version}, read from the store at most once per SAVED_SECONDS (every student's
    run asks for the lessons several times; runtime/kept_read.py says why not st.cache_resource's ttl). A store out of
    reach lists none for that while: every page still opens (the lesson files need no store)."""
    try:
        return MappingProxyType(shelf().versions())
    except ClassStoreError:
        return MappingProxyType({})


_SAVED_VERSIONS = KeptRead(_read_saved_versions, SAVED_SECONDS)


def _saved_versions(location: str) -> Mapping[str, int]:
    return _SAVED_VERSIONS.get(location)


@st.cache_resource(show_spinner=False, max_entries=256)
def _saved_source(location: str, lesson_id: str, version: int) -> str | None:
    """A version's TOML (a version never changes once saved)."""
    found = shelf().lesson(lesson_id, version)
    return None if found is None else found.source


def saved_changed() -> None:
    """A save on this replica: listed at once here (other replicas within SAVED_SECONDS)."""
    _SAVED_VERSIONS.clear()


def saved_source(lesson_id: str, version: int) -> str | None:
    """A saved version's TOML (None: no such version, or the store out of reach now: asked again next time, as
    st.cache_resource keeps no exception)."""
    try:
        return _saved_source(store_location(), lesson_id, version)
    except ClassStoreError:
        return None


@st.cache_resource(show_spinner=False, max_entries=64)
def _load(folder: str, signature: tuple, saved: tuple[tuple[str, int], ...]) -> tuple[Mapping[str, Lesson], tuple[LessonFileError, ...]]:
    """Read-only and shared by every session (lessons are frozen dataclasses): st.cache_data would unpickle the whole
    catalogue on each of a run's several calls."""
    sources = {lesson_id: (version, saved_source(lesson_id, version)) for lesson_id, version in saved}
    found, errors = load_lessons(known_pages(), Path(folder), {lesson_id: (version, source) for lesson_id, (version, source)
                                                                in sources.items() if source is not None})
    return MappingProxyType(found), tuple(errors)


def lessons() -> tuple[Mapping[str, Lesson], tuple[LessonFileError, ...]]:
    """Every lesson file, read again when a file is added, changed or removed (the key is names and mtimes), then the
    teachers' saved lessons (their latest versions)."""
    folder = lessons_folder()
    saved = tuple((lesson_id, version) for lesson_id, version in _saved_versions(store_location()).items()
                  if saved_source(lesson_id, version) is not None)  # read once per version; kept for the process
    return _load(str(folder), tuple((p.name, _modified(p)) for p in sorted(folder.glob("*.toml"))), saved)


def saved_lesson_titles() -> dict[str, str]:
    """{id: title in this session's language} of the teachers' saved lessons that open now (Home lists them)."""
    language = current_language()
    return {lesson_id: localized(lesson.title, language) for lesson_id, lesson in lessons()[0].items()
            if lesson.version is not None}


@functools.lru_cache(maxsize=16)
def _preview(source: str) -> Lesson | None:
    try:
        return parse_lesson(PREVIEW_LESSON, source, known_pages())
    except LessonFileError:
        return None


def preview_lesson() -> Lesson | None:
    """The draft this session's teacher is building, as the lesson bar opens it (ui/lesson_builder: Preview)."""
    draft = lab_session().builder.draft
    return None if draft is None or not draft.stops else _preview(draft.source())


def _modified(path: Path) -> int | None:
    try:
        return path.stat().st_mtime_ns
    except OSError:  # removed since the folder was listed (load_lessons then lists what it finds)
        return None

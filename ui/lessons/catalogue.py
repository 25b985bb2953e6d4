"""The lesson files the bar and the teacher's page offer, re-read when one changes, checked against the app's pages."""
from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType

import streamlit as st

from classroom.lessons import Lesson, LessonFileError, lessons_folder, load_lessons
from ui.page_list import PAGE_NAMES
from ui.page_sections import section_names


def known_pages() -> dict[str, tuple[str, ...]]:
    """The pages a lesson stop may name, the app's pages (ui/page_list.PAGE_SECTIONS, what st.navigation serves),
    each with the sections a stop may name (ui/specs/<page>.py)."""
    return {page: section_names(page) for page in PAGE_NAMES}


@st.cache_resource(show_spinner=False, max_entries=64)
def _load(folder: str, signature: tuple) -> tuple[Mapping[str, Lesson], tuple[LessonFileError, ...]]:
    """Read-only and shared by every session (lessons are frozen dataclasses): st.cache_data would unpickle the whole
    catalogue on each of a run's several calls."""
    found, errors = load_lessons(known_pages(), Path(folder))
    return MappingProxyType(found), tuple(errors)


def lessons() -> tuple[Mapping[str, Lesson], tuple[LessonFileError, ...]]:
    """Every lesson file, read again when a file is added, changed or removed (the key is names and mtimes)."""
    folder = lessons_folder()
    return _load(str(folder), tuple((p.name, _modified(p)) for p in sorted(folder.glob("*.toml"))))


def _modified(path: Path) -> int | None:
    try:
        return path.stat().st_mtime_ns
    except OSError:  # removed since the folder was listed (load_lessons then lists what it finds)
        return None

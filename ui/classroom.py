"""The live class's store for the app (one per server process and data folder) and the teacher's class."""
from __future__ import annotations

import streamlit as st

from classroom.store import DB_NAME, ClassStore, data_folder

TEACHER = "teacher_class"  # session_state: {"code", "token", "lesson"}; the token never leaves this session


@st.cache_resource(show_spinner=False)
def _store(path: str) -> ClassStore:
    return ClassStore(path)


def class_store() -> ClassStore:
    """Holds only the database path and limits (each call opens its own connection): safe to share."""
    return _store(str(data_folder() / DB_NAME))


def teacher_class() -> dict | None:
    return st.session_state.get(TEACHER)

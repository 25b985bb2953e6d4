"""The live class's store for the app (one per server process) and the teacher's class in this session."""
from __future__ import annotations

import streamlit as st

from classroom.store import ClassStore

TEACHER = "teacher_class"  # session_state: {"code", "token", "lesson"}; the token never leaves this session


@st.cache_resource(show_spinner=False)
def class_store() -> ClassStore:
    """Holds only the database path and limits (each call opens its own connection): safe to share."""
    return ClassStore()


def teacher_class() -> dict | None:
    return st.session_state.get(TEACHER)

"""The builder's refusals and notices in words: a refused lesson names its stop and field (classroom/errors.
LessonRefused), the other refusals of the store as ui/live_class/refusals.py words them."""
from __future__ import annotations

import streamlit as st

from classroom.errors import ClassStoreError, LessonRefused, NotAnAuthor, StoreBusy, TooManyLessons
from i18n import tr
from ui.live_class.refusals import TEACHER, message
from ui.session import BuilderState
from ui.text import escape_markdown

FIELDS = ("title", "text", "page", "section", "state", "question", "claim", "check", "stop", "id")
BUILDER = {**TEACHER, NotAnAuthor: "lesson_builder.not_author", TooManyLessons: "lesson_builder.too_many",
           StoreBusy: "lesson_builder.busy"}


def field_words(field: str) -> str:
    """A field of a lesson file in words (one no lesson has, as it is written: escaped)."""
    return tr(f"lesson_builder.field_{field}") if field in FIELDS else f"`{escape_markdown(field)}`"


def refusal_words(error: ClassStoreError) -> str:
    """Markdown: a refused lesson's stop, field and the validator's reason (escaped: it may quote what she typed)."""
    if isinstance(error, LessonRefused):
        key = "lesson_builder.refused_stop" if error.stop else "lesson_builder.refused_lesson"
        return tr(key, stop=error.stop or "", field=field_words(error.field), reason=escape_markdown(error.reason))
    return message(error, BUILDER)


def say_notice(builder: BuilderState) -> None:
    """Her last add or save, said once."""
    notice, builder.said = builder.said, None
    if notice is None:
        return
    kind, text = notice
    (st.success if kind == "success" else st.error)(text)

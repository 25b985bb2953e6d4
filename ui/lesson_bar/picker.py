"""Where a lesson is opened from: the sidebar's picker (a lesson, or a class by its code; bad lesson files listed with
their line) and a button that opens a lesson at its first stop (Home). The lesson itself is ui/lesson_bar/bar.py."""
from __future__ import annotations

import streamlit as st

from classroom.lessons import localized
from i18n import current_language, tr
from ui.lessons.catalogue import lessons
from ui.session import JoinClass, OpenLesson, lab_session
from ui.text import escape_markdown


def open_lesson_button(lesson_id: str, label: str) -> None:
    """A button (e.g. on Home) that opens a lesson at its first stop, as the sidebar's picker does."""
    if lesson_id in lessons()[0] and st.button(label, key=f"open_lesson_{lesson_id}", icon=":material/route:",
                                               type="tertiary"):
        lab_session().lesson.pending = OpenLesson(lesson_id, 1)
        st.rerun()


def lesson_picker() -> None:
    """Sidebar: open a lesson, join a class; bad lesson files are listed with their line."""
    all_lessons, errors = lessons()
    language = current_language()
    with st.sidebar.expander(tr("lessons.sidebar"), icon=":material/school:"):
        if all_lessons:
            chosen = st.selectbox(tr("lessons.pick"), list(all_lessons), key="lesson_pick",
                                  format_func=lambda i: localized(all_lessons[i].title, language))
            if st.button(tr("lessons.open"), key="lesson_open"):
                lab_session().lesson.pending = OpenLesson(chosen, 1)  # the sidebar's widgets are drawn: apply next run
                st.rerun()
        for error in errors:
            st.warning(tr("lessons.bad_file", file=escape_markdown(error.file), line=error.line or "?",
                          reason=escape_markdown(error.reason)))
        with st.form("join_class", border=False):
            code = st.text_input(tr("lessons.code"), key="class_code_input", max_chars=12,
                                 placeholder="ABC123")
            if st.form_submit_button(tr("lessons.join")):
                lab_session().lesson.pending = JoinClass(code or "")
                st.rerun()

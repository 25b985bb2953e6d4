"""The teacher's private view: the answer of the class's stop before its Reveal, what each wrong answer tells her and
the answers judged as they come, on a screen the room does not see (a peek that opened on the
projected page would show the answer to the room on a mirrored laptop).

It is the Teacher page at /teacher?private=true, on her phone or in a second window: the browser that runs the class
takes it back by itself (its seat), another device with the class code and her password ("Take back a class"); a
student who opens the link gets no class and no answer (the page asks for the teacher's token first). The projected
page shows no answer: only a link that opens the private view in a new window.
"""
from __future__ import annotations

import streamlit as st

from classroom.lessons import Stop, localized
from i18n import current_language, tr
from classroom.measures import Expected
from ui.lessons.measured import worded
from ui.lessons.questions import answer_label
from ui.specs.teacher import PRIVATE
from ui.text import escape_markdown
from ui.widget_spec import spec_toggle

PRIVATE_LINK = "teacher?private=true"  # relative: the Teacher page of the same app, wherever it is served


def private_switch() -> bool:
    """The Teacher page's switch (on from the private link): True where this screen is her private view."""
    private = spec_toggle(PRIVATE, tr("class_teacher.private"), help=tr("class_teacher.private_help"))
    if private:
        st.warning(tr("class_teacher.private_banner"), icon=":material/visibility:")
    return private


def is_private() -> bool:
    """Whether this screen is her private view (read in the live fragments, which do not draw the switch)."""
    return bool(PRIVATE.get())


def private_link(where=st) -> None:
    """On the projected screen: where the answer is, a new window of the private view (no answer here)."""
    where.link_button(tr("class_teacher.private_open"), PRIVATE_LINK, icon=":material/open_in_new:",
                      help=tr("class_teacher.private_open_help"))


def stop_notes(stop: Stop, expected: Expected | None, right_answer: str | None) -> None:
    """The class's stop as only she sees it: the answer with its measured value, and the idea each wrong answer that
    the lesson names catches (its misconceptions)."""
    question = stop.question
    if question is None:
        return
    language = current_language()
    with st.container(border=True, key="teacher_private_notes"):
        st.markdown(f"**{tr('class_teacher.private_title')}**")
        if right_answer:
            st.markdown(right_answer)
        if expected is not None and expected.measured:
            st.caption(tr("class_teacher.private_measured", measured=escape_markdown(worded(expected.measured))))
        for wrong, idea in question.misconceptions.items():
            st.markdown(tr("class_teacher.private_misconception", answer=escape_markdown(answer_label(question, wrong)),
                           idea=escape_markdown(localized(idea, language))))


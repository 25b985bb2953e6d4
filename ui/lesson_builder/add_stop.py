"""'Add this view as a stop': in the sidebar of every page (the Teacher page's own builder aside) for a teacher signed
in to build lessons (ui/lesson_builder/builder.py signs her in). The stop gets the page, its view as the share link
holds it (ui/share.py: layer and head 1-based, her language and presenter mode left out), a section of that page
(its SECTIONS), a title and a text in English and/or Korean, and optionally a question: a fixed answer (choice,
number, text) or a measure that fits the page (classroom/lesson_draft.fitting_measures) with its arguments filled from
the view. The stop is checked alone by the lesson validator before it joins her draft: a refusal names the field and
keeps everything she typed. Everything she types is text in a field (max_chars), shown back escaped; none of it is
ever HTML."""
from __future__ import annotations

from collections.abc import Mapping

import streamlit as st

from classroom.errors import LessonRefused
from classroom.lesson_draft import (FIXED_KINDS, Draft, fitting_measures, fixed_question, lines, measure_args,
                                    measured_question, texts, view_stop)
from classroom.measures import MEASURES
from classroom.saved_lessons import MAX_STOPS, MAX_TEXT_CHARS, MAX_TITLE_CHARS, checked_lesson
from classroom.showcase import SHARED_ONLY
from i18n import current_language, tr
from ui.lesson_builder.kept import keep_draft, restore_author
from ui.lesson_builder.words import refusal_words, say_notice
from ui.lessons.catalogue import known_pages
from ui.lessons.view_question import app_views
from ui.live_class.classroom import teacher_class
from ui.page_sections import section_names
from ui.session import WidgetKey, lab_session
from ui.view import current_view

NO_QUESTION, MEASURED = "none", "measured"
QUESTION_CHOICES = (NO_QUESTION, *FIXED_KINDS, MEASURED)
_FIELDS = ("title_en", "title_ko", "text_en", "text_ko", "prompt_en", "prompt_ko", "options_en", "options_ko",
           "accepted_en", "accepted_ko")
KEYS = {name: WidgetKey(f"builder_stop_{name}") for name in (*_FIELDS, "answer", "number", "tolerance")}


def _kind_key() -> WidgetKey:
    """The question's kind: a pick whose options are words, one per language (a switch starts it afresh, as a
    relabelled widget does)."""
    return WidgetKey(f"builder_stop_kind_{current_language()}")


def _of_page(name: str, page: str) -> WidgetKey:
    """A field whose options are the page's (its sections, the measures that fit it): one per page and language."""
    return WidgetKey(f"builder_stop_{name}_{page}_{current_language()}")


def _arg_key(measure: str, arg: str) -> WidgetKey:
    return WidgetKey(f"builder_stop_arg_{measure}_{arg}")


def stop_state(page: str) -> dict[str, str]:
    """The view of `page` on screen as a stop's state: its link's values (1-based layer and head, as lesson files
    write them), without the reader's own language, presenter mode and training, or the link's version."""
    return {name: value for name, value in current_view(page).query().items() if name not in (*SHARED_ONLY, "v")}


def add_view_control(url_path: str) -> None:
    """The sidebar's 'Add this view as a stop', for a teacher signed in to build lessons (no one else sees it; the
    store refuses anyone else's save in any case)."""
    page = url_path or "home"
    builder = lab_session().builder
    restore_author(builder)  # a reload in her browser keeps her signed in, and her draft
    if builder.author is None or page == "teacher" or teacher_class() is not None:
        return  # while she leads a class, the sidebar is the class's: she builds before or after it
    say_notice(builder)
    with st.popover(tr("lesson_builder.add_view"), icon=":material/add_location_alt:", width="stretch"):
        _form(page, stop_state(page))
    keep_draft(builder)


def _text_pair(name: str, label: str, area: bool = False, limit: int = MAX_TITLE_CHARS) -> None:
    for language in ("en", "ko"):
        widget = st.text_area if area else st.text_input
        widget(tr(f"lesson_builder.{label}_{language}"), key=KEYS[f"{name}_{language}"].key, max_chars=limit)


def _form(page: str, state: Mapping[str, str]) -> None:
    draft = lab_session().builder.draft
    st.caption(tr("lesson_builder.add_help", stops=len(draft.stops) if draft else 0, limit=MAX_STOPS))
    sections = (None, *section_names(page))
    st.selectbox(tr("lesson_builder.section"), sections, key=_of_page("section", page).key,
                 format_func=lambda name: tr("lesson_builder.whole_page") if name is None else name,
                 help=tr("lesson_builder.section_help"))
    _text_pair("title", "stop_title")
    _text_pair("text", "stop_text", area=True, limit=MAX_TEXT_CHARS)
    kind = st.selectbox(tr("lesson_builder.question"), QUESTION_CHOICES, key=_kind_key().key,
                        format_func=lambda k: tr(f"lesson_builder.kind_{k}"))
    measures = fitting_measures(None, app_views().get(page, ()))
    if kind != NO_QUESTION:
        _text_pair("prompt", "prompt")
    if kind == MEASURED:
        if not measures:
            st.info(tr("lesson_builder.no_measures"))
            return
        name = st.selectbox(tr("lesson_builder.measure"), list(measures), key=_of_page("measure", page).key,
                            format_func=lambda n: tr("lesson_builder.measure_option", name=n,
                                                     kind=tr(f"lesson_builder.kind_{measures[n].answers}")),
                            help=tr("lesson_builder.measure_help"))
        st.caption(tr("lesson_builder.args_help"))
        for arg in measures[name].args:  # filled from the view where it has a value of that name
            st.text_input(tr("lesson_builder.arg", name=arg.name), key=_arg_key(name, arg.name).key,
                          max_chars=MAX_TITLE_CHARS, placeholder=state.get(arg.name, ""),
                          help=tr("lesson_builder.arg_help", what=arg.what))
        if measures[name].answers == "choice":
            _text_pair("options", "options", area=True, limit=MAX_TEXT_CHARS)
    elif kind == "choice":
        _text_pair("options", "options", area=True, limit=MAX_TEXT_CHARS)
        st.number_input(tr("lesson_builder.right_option"), min_value=1, max_value=20, step=1, key=KEYS["answer"].key)
    elif kind == "number":
        left, right = st.columns(2)
        left.number_input(tr("lesson_builder.number_answer"), key=KEYS["number"].key, value=0.0, format="%g",
                          min_value=-1e9, max_value=1e9)
        right.number_input(tr("lesson_builder.tolerance"), key=KEYS["tolerance"].key, min_value=0.0, value=0.0,
                           max_value=1e9, format="%g")
    elif kind == "text":
        _text_pair("accepted", "accepted", area=True, limit=MAX_TITLE_CHARS * 5)
    st.button(tr("lesson_builder.add_stop"), key="builder_add_stop", type="primary", icon=":material/add:",
              on_click=_add, args=(page, dict(state)))


def _typed(name: str) -> dict[str, str]:
    return texts(en=KEYS[f"{name}_en"].get() or "", ko=KEYS[f"{name}_ko"].get() or "")


def _options() -> dict[str, list[str]]:
    return {language: lines(KEYS[f"options_{language}"].get() or "") for language in ("en", "ko")
            if lines(KEYS[f"options_{language}"].get() or "")}


def _question(page: str, state: Mapping[str, str]) -> dict | None:
    """The question her fields describe, in the lesson file's shape (ValueError: an argument that does not fit)."""
    kind, prompt = _kind_key().get() or NO_QUESTION, _typed("prompt")
    if kind == NO_QUESTION:
        return None
    if kind == MEASURED:
        measure = MEASURES[_of_page("measure", page).get()]
        options = _options() if measure.answers == "choice" else {}
        typed = {arg.name: _arg_key(measure.name, arg.name).get() or "" for arg in measure.args}
        count = len(next(iter(options.values()))) if options else 0
        return measured_question(measure, prompt, measure_args(measure, typed, state, count), options)
    if kind == "choice":
        return fixed_question("choice", prompt, options=_options(), answer=int(KEYS["answer"].get() or 1))
    if kind == "number":
        return fixed_question("number", prompt, answer=float(KEYS["number"].get() or 0.0),
                              tolerance=float(KEYS["tolerance"].get() or 0.0))
    accepted = {language: lines(KEYS[f"accepted_{language}"].get() or "") for language in ("en", "ko")}
    return fixed_question("text", prompt, answer={k: v for k, v in accepted.items() if v} or None)


def _add(page: str, state: Mapping[str, str]) -> None:
    """The button's callback: the stop, checked alone by the validator, joins the draft; a refusal is said with its
    field, and every field keeps what she typed."""
    builder = lab_session().builder
    draft = builder.draft or Draft()
    try:
        question = _question(page, state)
    except ValueError as error:
        builder.said = ("error", refusal_words(LessonRefused(len(draft.stops) + 1, "question", str(error))))
        return
    stop = view_stop(page, state, _of_page("section", page).get(), _typed("title") or {"en": page}, _typed("text"), question)
    try:  # alone, as the lesson's next stop: the validator's words, with the field
        checked_lesson("draft", Draft({"en": "draft"}, [stop]).source(), known_pages())
        draft.add(stop)
    except LessonRefused as refused:
        builder.said = ("error", refusal_words(LessonRefused(len(draft.stops) + 1, refused.field, refused.reason)))
        return
    except ValueError:  # past MAX_STOPS
        builder.said = ("error", tr("lesson_builder.full", limit=MAX_STOPS))
        return
    builder.draft = draft
    builder.said = ("success", tr("lesson_builder.added", number=len(draft.stops)))
    for name in _FIELDS:  # the next stop starts blank; the section, question kind and measure stay
        KEYS[name].set("")

"""The lesson builder on the Teacher page: sign in to build lessons, the draft's title and stops (up, down, remove,
preview), save and download, and a lesson to start from.

Who builds: a teacher signed in with the teacher password here (with the same guessing limit as the class's start), or
the teacher of the live class this session holds; her key lives in her session (ui/session.BuilderState) and the store
checks it at every save (classroom/saved_lessons.LessonShelf.save), so a student, who has none, cannot save whatever
her page shows. Projected (presenter mode), the builder is not drawn: the room does not watch her write.
Preview opens a stop through the lesson bar, by the path every lesson's stop opens (ui/lesson_bar/bar.open_lesson,
the draft under classroom/saved_lessons.PREVIEW_LESSON): students see it so. Save writes the draft's TOML
(classroom/lesson_draft.Draft.source) as a new version; a refusal names the stop and field and changes nothing.
"""
from __future__ import annotations

import streamlit as st

from classroom.errors import ClassStoreError
from classroom.lesson_draft import Draft, texts
from classroom.lessons import lessons_folder, localized
from classroom.saved_lessons import (MAX_SAVED_LESSONS, MAX_STOPS, MAX_TEXT_CHARS, MAX_TITLE_CHARS, PREVIEW_LESSON)
from i18n import current_language, tr
from ui.lesson_builder.kept import keep_draft, restore_author
from ui.lesson_builder.words import BUILDER, refusal_words, say_notice
from ui.lessons.catalogue import known_pages, lessons, saved_changed, saved_source, shelf
from ui.live_class.classroom import session_guess_wait, teacher_class, wrong_guess
from ui.live_class.refusals import said
from ui.page_list import PAGE_SECTIONS
from ui.presenter import presenting
from ui.seat import browser_seat
from ui.session import OpenLesson, WidgetKey, lab_session
from ui.text import escape_markdown

TITLE = {language: WidgetKey(f"builder_title_{language}") for language in ("en", "ko")}
START_FROM = WidgetKey("builder_start_from")
PASSWORD = WidgetKey("builder_password")


def lesson_builder() -> None:
    """The Teacher page's builder section (nothing for a student of a class, nor on the projected page)."""
    session = lab_session()
    if presenting() or (session.seat.code and session.builder.author is None):
        return
    restore_author(session.builder)  # a reload in her browser keeps her signed in, and her draft
    with st.expander(tr("lesson_builder.title"), icon=":material/edit_note:",
                     expanded=bool(session.builder.draft and session.builder.draft.stops)), said(BUILDER):
        if _author_here():  # a busy store is said here, and the draft waits in her session
            _builder()
            keep_draft(session.builder)


def _author_here() -> bool:
    """Whether this session may build lessons: signed in before, the teacher of a live class, or by the password now
    (its form otherwise)."""
    builder = lab_session().builder
    if builder.author is not None:
        return True
    teacher = teacher_class()
    if teacher is not None:
        try:
            builder.author = shelf().author_of_class(teacher, seat=browser_seat())
            return True
        except ClassStoreError:
            pass
    st.caption(tr("lesson_builder.sign_in_help"))
    with st.form("builder_sign_in", border=False):
        st.text_input(tr("class_teacher.password"), type="password", key=PASSWORD.key, max_chars=200)
        if not st.form_submit_button(tr("lesson_builder.sign_in")):
            return False
    wait = session_guess_wait("password")
    if wait:
        st.warning(tr("class_teacher.too_many_tries", seconds=wait))
        return False
    try:
        builder.author = shelf().sign_in(PASSWORD.get() or "", seat=browser_seat())
    except ClassStoreError as refused:
        wrong_guess("password")
        st.warning(refusal_words(refused))
        return False
    return True


def _builder() -> None:
    builder = lab_session().builder
    draft = builder.draft = builder.draft or Draft()
    st.caption(tr("lesson_builder.limits", stops=MAX_STOPS, chars=MAX_TEXT_CHARS, lessons=MAX_SAVED_LESSONS,
                  saved=len(shelf().versions())))
    _start_from()
    for language in ("en", "ko"):
        TITLE[language].setdefault(draft.title.get(language, ""))
        st.text_input(tr(f"lesson_builder.lesson_title_{language}"), key=TITLE[language].key,
                      max_chars=MAX_TITLE_CHARS, on_change=_keep_title)
    if draft.lesson_id:
        st.caption(tr("lesson_builder.saved_as", lesson=draft.lesson_id, version=draft.version or 0))  # [a-z0-9-]
    say_notice(builder)
    if not draft.stops:
        st.info(tr("lesson_builder.empty"))
    for index, stop in enumerate(draft.stops):
        _stop_row(index, stop, len(draft.stops))
    save, download, clear = st.columns(3)
    save.button(tr("lesson_builder.save"), key="builder_save", type="primary", icon=":material/save:",
                disabled=not draft.stops, on_click=_save, width="stretch")
    download.download_button(tr("lesson_builder.download"), draft.source().encode("utf-8"),
                             file_name=f"{draft.lesson_id or 'lesson'}.toml", mime="application/toml",
                             key="builder_download", icon=":material/download:", disabled=not draft.stops,
                             width="stretch", on_click="ignore")
    clear.button(tr("lesson_builder.new"), key="builder_new", icon=":material/note_add:", on_click=_new,
                 width="stretch")


def _page_title(page: str) -> str:
    return next((tr(p.title_key) for _, pages in PAGE_SECTIONS for p in pages if p.name == page), page)


def _stop_row(index: int, stop: dict, count: int) -> None:
    """One stop, in a box: its number and title, its page and section, its question's kind; up, down, remove,
    preview."""
    language = current_language()
    title = localized(stop.get("title"), language) or stop.get("page", "")
    where = " · ".join([_page_title(str(stop.get("page"))), *([str(stop["section"])] if stop.get("section") else [])])
    question = stop.get("question") or {}
    asked = tr("lesson_builder.asks", kind=tr(f"lesson_builder.kind_{question.get('kind', 'none')}"),
               measure=question.get("compute") or "") if question else ""
    with st.container(border=True):
        st.markdown(f"**{index + 1}. {escape_markdown(title)}**  \n{escape_markdown(where)} {escape_markdown(asked)}")
        up, down, remove, preview = st.columns(4)
        up.button(tr("lesson_builder.up"), key=f"builder_up_{index}", icon=":material/arrow_upward:",
                  disabled=index == 0, on_click=_move, args=(index, -1), width="stretch")
        down.button(tr("lesson_builder.down"), key=f"builder_down_{index}", icon=":material/arrow_downward:",
                    disabled=index == count - 1, on_click=_move, args=(index, 1), width="stretch")
        remove.button(tr("lesson_builder.remove"), key=f"builder_remove_{index}", icon=":material/delete:",
                      on_click=_remove, args=(index,), width="stretch")
        preview.button(tr("lesson_builder.preview"), key=f"builder_preview_{index}", icon=":material/visibility:",
                       on_click=_preview, args=(index,), width="stretch")


def _start_from() -> None:
    """Open a lesson in the builder: a saved one (its next save is its next version) or a lesson file (a copy)."""
    all_lessons = {lesson_id: lesson for lesson_id, lesson in lessons()[0].items() if lesson_id != PREVIEW_LESSON}
    if not all_lessons:
        return
    language = current_language()
    pick, button = st.columns([3, 1], vertical_alignment="bottom")
    pick.selectbox(tr("lesson_builder.start_from"), list(all_lessons), key=START_FROM.key,
                   format_func=lambda i: localized(all_lessons[i].title, language) + (
                       tr("lesson_builder.saved_version", version=all_lessons[i].version)
                       if all_lessons[i].version else ""))
    button.button(tr("lesson_builder.open"), key="builder_open", on_click=_open, width="stretch")
    chosen = all_lessons.get(START_FROM.get() or "")
    if chosen is not None and chosen.version is not None:  # a saved lesson: hers to delete, after a confirmation
        with st.popover(tr("lesson_builder.delete"), icon=":material/delete_forever:"):
            st.warning(tr("lesson_builder.delete_warning", title=escape_markdown(localized(chosen.title, language))))
            st.button(tr("lesson_builder.delete_confirm"), key="builder_delete", type="primary", on_click=_delete,
                      args=(chosen.id,))


def _delete(lesson_id: str) -> None:
    """Delete every version of a saved lesson (the store checks her key); a draft of it becomes a new lesson."""
    builder = lab_session().builder
    try:
        shelf().delete(builder.author, lesson_id)
    except ClassStoreError as refused:
        builder.said = ("error", refusal_words(refused))
        return
    saved_changed()
    if builder.draft is not None and builder.draft.lesson_id == lesson_id:
        builder.draft.lesson_id, builder.draft.version = None, None
    START_FROM.forget()
    builder.said = ("success", tr("lesson_builder.deleted", lesson=lesson_id))  # [a-z0-9-]


def _open() -> None:
    lesson = lessons()[0].get(START_FROM.get() or "")
    if lesson is None:
        return
    if lesson.version is not None:
        source, lesson_id = saved_source(lesson.id, lesson.version), lesson.id
    else:  # a lesson file: a copy, saved under an id of its own
        try:
            source, lesson_id = (lessons_folder() / f"{lesson.id}.toml").read_text(encoding="utf-8"), None
        except (OSError, UnicodeDecodeError):
            return
    if source is None:
        return
    draft = Draft.from_source(source, lesson_id, lesson.version)
    lab_session().builder.draft = draft
    for language in ("en", "ko"):
        TITLE[language].set(draft.title.get(language, ""))


def _keep_title() -> None:
    builder = lab_session().builder
    builder.draft = builder.draft or Draft()
    builder.draft.title = texts(en=TITLE["en"].get() or "", ko=TITLE["ko"].get() or "")


def _move(index: int, by: int) -> None:
    lab_session().builder.draft.move(index, by)


def _remove(index: int) -> None:
    lab_session().builder.draft.remove(index)


def _new() -> None:
    lab_session().builder.draft = Draft()
    for key in TITLE.values():
        key.set("")


def _preview(index: int) -> None:
    """Open stop `index` of the draft as students see it: the lesson bar's own path (a pending OpenLesson); her
    answers of an earlier preview are forgotten, so each preview asks its questions again."""
    position = lab_session().lesson
    for answers in (position.answers, position.second_answers, position.check_answers):
        for key in [key for key in answers if key.startswith(f"{PREVIEW_LESSON}:")]:
            del answers[key]
    position.pending = OpenLesson(PREVIEW_LESSON, index + 1)


def _save() -> None:
    """Save the draft as a new version (the store checks her key, the validator, the bounds); a refusal changes
    nothing, the draft stays as it is."""
    builder = lab_session().builder
    draft = builder.draft
    _keep_title()
    try:
        saved = shelf().save(builder.author, draft.source(), known_pages(), draft.lesson_id)
    except ClassStoreError as refused:
        builder.said = ("error", refusal_words(refused))
        return
    draft.lesson_id, draft.version = saved.id, saved.version
    saved_changed()
    builder.said = ("success", tr("lesson_builder.saved", lesson=saved.id, version=saved.version))  # [a-z0-9-]

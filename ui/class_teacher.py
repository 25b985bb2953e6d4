"""The teacher's page of a live class: start it (code and QR code), watch the answers arrive, reveal, move on.

Every control needs the teacher token that create_class returned; it lives only in this session's state
(ui/classroom.TEACHER), so a student who opens this page, with or without the class code in the URL, sees only
"start a class". An operator can require a password to start classes: $ATTENTION_LAB_TEACHER_PASSWORD.
"""
from __future__ import annotations

import hmac
import io
import os

import pandas as pd
import segno
import streamlit as st

from classroom.lessons import Lesson, localized
from i18n import current_language, tr
from ui.classroom import TEACHER, class_store, teacher_class
from ui.errors import page_guard
from ui.lesson_bar import PENDING, lessons, question_id
from ui.lesson_questions import QuestionError, answer_label, expected_answer
from ui.text import escape_markdown
from viz.classroom import answer_chart

PASSWORD_ENV = "ATTENTION_LAB_TEACHER_PASSWORD"
RESULTS_SECONDS = 2  # the answer chart refreshes this often


def join_url(code: str) -> str | None:
    """The app's address with ?class=CODE (st.context.url is this page's address; the app's root is its folder)."""
    url = st.context.url
    if not url:
        return None
    root = url.split("?", 1)[0].rstrip("/")
    if root.endswith("/teacher"):
        root = root[: -len("/teacher")]
    return f"{root}/?class={code}"


@st.cache_data(show_spinner=False, max_entries=256)
def qr_png(text: str) -> bytes:
    buffer = io.BytesIO()
    segno.make(text, error="m").save(buffer, kind="png", scale=8, border=2)
    return buffer.getvalue()


def teacher_page() -> None:
    teacher = teacher_class()
    all_lessons, _ = lessons()
    session = class_store().session(teacher["code"]) if teacher else None
    if teacher and (session is None or session.lesson not in all_lessons):
        st.warning(tr("class_teacher.expired", code=teacher["code"]))
        st.session_state.pop(TEACHER, None)
        teacher = None
    if teacher is None:
        _start(all_lessons)
        return
    # Results first (what the teacher projects), the code and QR code beside them.
    results, joining = st.columns([3, 1])
    with joining:
        _header(teacher["code"])
    with results:
        _live(teacher["code"], teacher["token"], all_lessons[teacher["lesson"]])
    if st.button(tr("class_teacher.end"), key="class_end"):
        st.session_state.pop(TEACHER, None)
        st.rerun()


def _start(all_lessons: dict[str, Lesson]) -> None:
    if not all_lessons:
        st.info(tr("class_teacher.no_lessons"))
        return
    language = current_language()
    with st.form("class_start"):
        lesson_id = st.selectbox(tr("class_teacher.lesson"), list(all_lessons),
                                 format_func=lambda i: localized(all_lessons[i].title, language))
        required = os.environ.get(PASSWORD_ENV)
        password = st.text_input(tr("class_teacher.password"), type="password") if required else ""
        if not st.form_submit_button(tr("class_teacher.start"), type="primary"):
            return
    if required and not hmac.compare_digest(password.encode(), required.encode()):
        st.warning(tr("class_teacher.wrong_password"))
        return
    code, token = class_store().create_class(lesson_id)
    st.session_state[TEACHER] = {"code": code, "token": token, "lesson": lesson_id}
    st.rerun()


def _header(code: str) -> None:
    st.metric(tr("class_teacher.code"), code)
    url = join_url(code)
    if url:
        st.image(qr_png(url), caption=tr("class_teacher.qr_caption"), width=220)
        st.code(url, language=None, wrap_lines=True)
        st.caption(tr("class_teacher.join_help"))


@st.fragment(run_every=RESULTS_SECONDS)
def _live(code: str, token: str, lesson: Lesson) -> None:
    """Refreshes itself every few seconds: the class's stop, its question's answers, reveal and move.
    (A fragment's own rerun is not inside app.py's page guard: it has its own.)"""
    with page_guard():
        _results(code, token, lesson)


def _results(code: str, token: str, lesson: Lesson) -> None:
    store = class_store()
    session = store.session(code)
    if session is None:
        st.rerun(scope="app")  # expired: the full page says so
    number = session.stop
    stop = lesson.stops[number - 1]
    language = current_language()
    st.subheader(tr("class_teacher.stop", stop=number, stops=len(lesson.stops), title=localized(stop.title, language)))
    back, forward, here = st.columns(3)
    # Callbacks: the store changes before this fragment (or the page) draws again.
    back.button(tr("class_teacher.previous"), key="class_previous", disabled=number == 1, width="stretch",
                on_click=store.move, args=(code, token, number - 1), help=tr("class_teacher.move_help"))
    forward.button(tr("class_teacher.next"), key="class_next", disabled=number == len(lesson.stops),
                   type="primary", width="stretch", on_click=store.move, args=(code, token, number + 1),
                   help=tr("class_teacher.move_help"))
    if here.button(tr("class_teacher.open_stop"), key="class_open_stop", width="stretch"):
        st.session_state[PENDING] = ("open", lesson.id, number)
        st.rerun(scope="app")
    if stop.question is None:
        st.info(tr("class_teacher.no_question"))
        _earlier(store, code, token, lesson, number)
        return
    qid = question_id(lesson.id, stop)
    st.markdown(f"**{localized(stop.question.prompt, language)}**")
    results = store.results(code, token, qid)
    if results is None:
        return
    try:
        expected = expected_answer(stop)
    except QuestionError as error:
        expected = None
        st.warning(tr("lessons.no_answer", line=stop.line or "?", reason=str(error)))
    columns = st.columns(2)
    columns[0].metric(tr("class_teacher.answered"), results.answered)
    share = f"{results.correct / results.answered:.0%}" if results.answered and results.correct is not None else "–"
    columns[1].metric(tr("class_teacher.correct"), share)
    revealed = qid in session.revealed
    if expected is not None:
        st.caption(tr("class_teacher.right_answer", answer=escape_markdown(answer_label(stop.question,
                                                                                         expected.shown))))
    rows = pd.DataFrame({
        "answer": [answer_label(stop.question, a) for a in results.counts],
        "students": list(results.counts.values()),
        "right": [None if expected is None else expected.is_right(a) for a in results.counts]})
    if results.answered:
        st.altair_chart(answer_chart(rows, tr("class_teacher.chart_students"), tr("class_teacher.chart_right"),
                                     tr("class_teacher.chart_wrong")), key="class_answers")
    else:
        st.caption(tr("class_teacher.waiting"))
    _earlier(store, code, token, lesson, number)
    if revealed:
        st.success(tr("class_teacher.revealed"))
    else:
        st.button(tr("class_teacher.reveal"), key="class_reveal", on_click=store.reveal, args=(code, token, qid))


def _earlier(store, code: str, token: str, lesson: Lesson, number: int) -> None:
    """Every question of the stops before this one: how many answered, the share right, the most common answer."""
    rows = []
    language = current_language()
    for stop in lesson.stops[: number - 1]:
        if stop.question is None:
            continue
        results = store.results(code, token, question_id(lesson.id, stop))
        if results is None or not results.answered:
            continue
        top = max(results.counts, key=results.counts.get)
        rows.append({tr("class_teacher.table_stop"): stop.number,
                     tr("class_teacher.table_question"): localized(stop.question.prompt, language),
                     tr("class_teacher.answered"): results.answered,
                     tr("class_teacher.correct"): None if results.correct is None
                     else f"{results.correct / results.answered:.0%}",
                     tr("class_teacher.table_top"): answer_label(stop.question, top)})
    if rows:
        with st.expander(tr("class_teacher.earlier", count=len(rows))):
            st.dataframe(pd.DataFrame(rows), hide_index=True)  # cells are plain text

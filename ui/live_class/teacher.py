"""The teacher's page of a live class: start it (code and QR code), watch the answers arrive, reveal, move on.

Every control is a method of the store's teacher handle (classroom/teacher.ClassTeacher), whose token lives only in
this session's object (ui.session.TeacherState), so a student who opens this page, with or without the class code in
the URL, gets no control. The store's refusals (the class ended on another device, a busy database) are said in one
place (ui/live_class/refusals.py).
Starting a class and taking one back from another device need the teacher password (classroom/teacher_password.py: the
operator's, or one the server generated and printed at start); the browser that started a class takes it back by itself
after a reload (ui/live_class/classroom.teacher_class). Before Reveal the page shows only how many gave each answer, in one
neutral colour: the projector never gives the answer away; the answer is in her private view
(ui/live_class/private_view.py), on her phone or a second window. A question in peer instruction
(ui/live_class/peer_teacher.py) has its rounds there instead; the class report is ui/live_class/report.py.
"""
from __future__ import annotations

from collections.abc import Mapping
import io
import os

import segno
import streamlit as st

from classroom.errors import ClassStoreError, NoSuchClass, NotTheTeacher
from classroom.lessons import OWN_WORK_KINDS, Lesson, lessons_folder, localized, question_id
from classroom.store import DEFAULT_CLASS_SIZE, MAX_CLASS_SIZE, normalise_code
from classroom.teacher import ClassTeacher
from classroom.teacher_password import PASSWORD_ENV, is_teacher_password, password_file
from classroom.measures import MeasureError
from i18n import current_language, tr
from runtime.training_jobs import active_trainings, stop_trainings
from ui.live_class.classroom import as_teacher, class_lesson, session_guess_wait, keep_teacher, teacher_class, wrong_guess
from ui.seat import browser_seat, class_store
from ui.charts import folded_section
from ui.presenter import presenting
from ui.errors import lab_fragment
from ui.live_class.cell_results import class_taps
from ui.live_class.class_seats import live_joins, seat_controls
from ui.live_class.earlier import earlier_questions
from ui.live_class.homework_teacher import deadline_fields, deadline_of, homework_panel
from ui.lessons.catalogue import known_pages, lessons, saved_source
from ui.lessons.measured import worded
from ui.lessons.questions import answer_shown, expected_answer
from ui.live_class.private_view import is_private, private_link, private_switch, stop_notes
from ui.lessons.questions import right_answer as right_answer_line
from ui.live_class.report import class_report
from ui.live_class.peer_teacher import answer_rows, check_count, mode_picker, peer_controls, peer_results
from ui.live_class.refusals import TEACHER, message, said, teacher_action
from ui.live_class.text_moderation import moderation_list, text_results
from ui.live_class.showcase import projected_item, showcase_picker, view_results
from ui.session import OpenLesson, WidgetKey, lab_session
from ui.text import escape_markdown
from viz.classroom import answer_chart, readable

RESULTS_SECONDS = 2  # the answer chart refreshes this often
UPLOADS = WidgetKey("class_uploads")
REPORT_OPEN = "report_open"  # the class report's section (ui/charts.folded_section): open while true  # the teacher's switch: students of the class may upload models


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
    with said(TEACHER) as outcome:
        _teacher_page()
    if isinstance(outcome.refused, (NoSuchClass, NotTheTeacher)):  # ended on another device, or no longer hers
        keep_teacher(None)


def _teacher_page() -> None:
    teacher = teacher_class()
    all_lessons, errors = lessons()
    session = teacher.session() if teacher else None
    lesson, from_copy = class_lesson(session, all_lessons, known_pages()) if session else (None, False)
    if teacher and lesson is None:
        st.warning(tr("class_teacher.expired", code=teacher.code))
        keep_teacher(None)
        teacher = None
    if teacher is None:
        if lab_session().seat.code:  # a student of a class: no start form, no answers of any class here
            st.info(tr("class_teacher.student_here", code=lab_session().seat.code))
            return
        ended = as_teacher(lab_session().teacher.ended)
        ran_on = lab_session().teacher.ended_lesson or (all_lessons.get(ended.lesson) if ended else None)
        if ended and ran_on is not None:  # the class she just ended: its report stays hers to read
            # open at first: she has just ended the class, and the report now holds its check questions too
            section, is_open = folded_section(tr("report.ended", code=ended.code), REPORT_OPEN, ":material/insights:",
                                              expanded=True)
            if is_open:  # read from the store at every run while open
                with section:
                    class_report(ended, ran_on)
        start, take_back = st.tabs([tr("class_teacher.start_tab"), tr("class_teacher.take_back_tab")])
        with start:  # the lesson she last ran here, else the one open in her browser
            _start(all_lessons, ended.lesson if ended else lab_session().lesson.lesson_id)
        with take_back:
            _take_back()
        return
    if from_copy:  # the lesson file does not read now: the class goes on with the copy taken at its start
        reasons = "; ".join(tr("class_teacher.lesson_copy_line", line=e.line or "?", reason=e.reason) for e in errors
                            if e.file == f"{lesson.id}.toml")
        st.warning(tr("class_teacher.lesson_copy", lesson=escape_markdown(f"{lesson.id}.toml"),
                      reason=escape_markdown(reasons or "?")))
    # Results first (what the teacher projects), the code and QR code beside them.
    results, joining = st.columns([3, 1])
    with joining:
        # her phone or a second window: the answers before Reveal (ui/live_class/private_view); beside the results, so
        # that projected at 1280×720 the answers' chart starts on the first screen
        private = private_switch()
        seats = teacher.seats()
        live_joins(teacher, len(seats.waiting))  # beside the results: the answers' chart starts higher
        _header(teacher.code)
        if not private:
            private_link()
        seat_controls(teacher, seats)
    with results:  # a self-paced class (homework): its progress, in place of the stop and its controls
        (_panel if session.deadline is None else homework_panel)(teacher, lesson)
    # teacher-only (it needs her handle); drawn, and read from the store, only while open: opening it reruns the page
    section, is_open = folded_section(tr("report.open"), REPORT_OPEN, ":material/insights:")
    if is_open:
        with section:
            class_report(teacher, lesson)
    st.toggle(tr("class_teacher.uploads"), value=session.uploads, key=UPLOADS.key,
              help=tr("class_teacher.uploads_help"), on_change=_set_uploads, args=(teacher,))
    _trainings()
    if st.button(tr("class_teacher.end"), key="class_end", help=tr("class_teacher.end_help")):
        teacher.end()
        state = lab_session().teacher
        state.ended, state.handle, state.ended_lesson = state.handle, None, lesson
        st.rerun()


def _trainings() -> None:
    """The trainings running or waiting on this replica (the students' Train page), and the teacher's stop: all of
    them, or the longest (runtime/training_jobs.py). Drawn only for the teacher who holds the class."""
    jobs = active_trainings()
    with st.expander(tr("class_teacher.trainings", count=len(jobs)), icon=":material/model_training:"):
        if not jobs:
            st.caption(tr("class_teacher.no_trainings"))
            return
        st.dataframe([{tr("class_teacher.training_model"): job.model_id,
                       tr("class_teacher.training_state"): tr(f"class_teacher.training_{job.state}"),
                       tr("class_teacher.training_steps"): f"{job.steps_done} / {job.config.steps}",
                       tr("class_teacher.training_seconds"): round(job.elapsed_s)} for job in jobs],
                     hide_index=True, width="stretch")
        left, right = st.columns(2)
        if left.button(tr("class_teacher.stop_longest"), key="class_stop_longest"):
            st.toast(tr("class_teacher.stopped_trainings", count=stop_trainings(longest_only=True)))
        if right.button(tr("class_teacher.stop_trainings"), key="class_stop_trainings"):
            st.toast(tr("class_teacher.stopped_trainings", count=stop_trainings()))


def _set_uploads(teacher: ClassTeacher) -> None:
    teacher_action(teacher.set_uploads, bool(UPLOADS.get()))


def _password_ok(password: str) -> bool:
    """The teacher password, with the guessing limit: past it the password is not even compared."""
    wait = session_guess_wait("password")
    if wait:
        st.warning(tr("class_teacher.too_many_tries", seconds=wait))
        return False
    if not is_teacher_password(password):
        wrong_guess("password")
        st.warning(tr("class_teacher.wrong_password"))
        return False
    return True


def _password_field(key: str) -> str:
    where = PASSWORD_ENV if os.environ.get(PASSWORD_ENV) else str(password_file())
    return st.text_input(tr("class_teacher.password"), type="password", key=key,
                         help=tr("class_teacher.password_help", where=where), max_chars=200)


def _start(all_lessons: Mapping[str, Lesson], preferred: str | None = None) -> None:
    """The form that starts a class, on `preferred` (the lesson she last ran or has open) where it still exists."""
    if not all_lessons:
        st.info(tr("class_teacher.no_lessons"))
        return
    language = current_language()
    ids = list(all_lessons)
    with st.form("class_start"):
        lesson_id = st.selectbox(tr("class_teacher.lesson"), ids, index=ids.index(preferred) if preferred in ids else 0,
                                 format_func=lambda i: localized(all_lessons[i].title, language))
        size = st.number_input(tr("class_teacher.class_size"), min_value=1, max_value=MAX_CLASS_SIZE,
                               value=DEFAULT_CLASS_SIZE, step=1, key="class_start_size",
                               help=tr("class_teacher.class_size_help"))
        paced = deadline_fields()  # self-paced (homework), with a deadline: ui/live_class/homework_teacher.py
        password = _password_field("class_start_password")
        if not st.form_submit_button(tr("class_teacher.start"), type="primary"):
            return
    deadline, refused = deadline_of(paced)
    if refused:  # the form keeps what she typed: she corrects the date and sends it again
        st.warning(refused, icon=":material/event_busy:")
        return
    if not _password_ok(password):
        return
    try:  # the copy the class runs on while its file does not read (ui/live_class/classroom.class_lesson)
        source = (lessons_folder() / f"{lesson_id}.toml").read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        source = None
    saved = all_lessons[lesson_id].version
    if saved is not None:  # a teacher's saved lesson: the class runs on this version's text, whatever is saved later
        source = saved_source(lesson_id, saved)
    keep_teacher(class_store().create_class(lesson_id, teacher_seat=browser_seat(), lesson_source=source,
                                            class_size=int(size), deadline=deadline))
    st.rerun()


def _take_back() -> None:
    """Another device (or this one after its browser forgot the class): the class code and the teacher password."""
    st.caption(tr("class_teacher.take_back_help"))
    with st.form("class_take_back"):
        typed = st.text_input(tr("class_teacher.code"), max_chars=12, placeholder="ABC123", key="class_take_back_code")
        password = _password_field("class_take_back_password")
        if not st.form_submit_button(tr("class_teacher.take_back"), type="primary"):
            return
    if not _password_ok(password):
        return
    code = normalise_code(typed)
    if not code:
        st.warning(tr("class_teacher.no_such_class"))
        return
    try:
        keep_teacher(class_store().take_back(code, seat=browser_seat()))
    except ClassStoreError as error:
        st.warning(message(error, TEACHER))
        return
    st.rerun()


def _header(code: str) -> None:
    st.metric(tr("class_teacher.code"), code)
    url = join_url(code)
    if url:
        st.image(qr_png(url), caption=tr("class_teacher.qr_caption"), width=220, alt=tr("class_teacher.qr_alt"))
        st.code(url, language=None, wrap_lines=True)
        st.caption(tr("class_teacher.join_help"))


def _panel(teacher: ClassTeacher, lesson: Lesson) -> None:
    """The class's stop, its question, and the teacher's controls around the live read-outs.

    The controls (move, mode, show, discussion, reveal) are drawn at the page's full run, outside the fragment that
    refreshes itself every few seconds: a click that lands while that fragment reruns replaces nothing it clicked
    (inside it, such a click was seen lost), and a click reruns the whole page, read-outs included. What the controls
    show depends on the class's state (stop, mode, phase, reveal); the read-outs rerun the page when another device
    of the teacher changes it."""
    session = teacher.session()
    if session is None:
        st.rerun(scope="app")  # expired: the full page says so
    number = session.stop
    stop = lesson.stops[number - 1]
    qid = None if stop.question is None else question_id(lesson.id, stop)
    revealed = qid in session.revealed
    phase = None if qid is None else session.phase_of(qid, "peer" if stop.question.peer else "one")
    # Three containers: the live fragment keeps one place on the page whatever the controls above it are (a
    # fragment whose place moves between full runs is drawn twice). The question's mode and Reveal under the
    # answers: projected at 1280×720, the answers' chart starts on the first screen, and her controls sit where she
    # looks before revealing.
    own = qid is not None and stop.question.kind in OWN_WORK_KINDS  # one round; a text moderated in her private view
    with st.container():
        _stop_controls(teacher, lesson, number)
        if qid is None:
            st.info(tr("class_teacher.no_question"))
        else:
            st.markdown(f"**{localized(stop.question.prompt, current_language())}**")
        projected_item(teacher.code, session, stop, teacher)  # a student's work, without a name (ui/live_class/showcase)
    seen = teacher.results(qid).answered if own and is_private() else None  # a new text or view redraws her lists
    _live(teacher, lesson, _drawn_state(session, lesson), seen)
    if qid is None:
        return
    with st.container():
        if stop.question.kind == "text" and is_private():
            moderation_list(teacher, qid)
        if is_private():
            showcase_picker(teacher, stop, qid, session)
        if not revealed and not own:
            mode_picker(teacher, qid, phase)
        if phase.mode == "peer":
            peer_controls(teacher, qid, phase, revealed)
        elif revealed:
            st.success(tr("class_teacher.revealed"))
        else:
            st.button(tr("class_teacher.reveal"), key="class_reveal", on_click=teacher_action,
                      args=(teacher.reveal, qid))


def _stop_controls(teacher: ClassTeacher, lesson: Lesson, number: int) -> None:
    """The class's stop and the buttons that move it (callbacks: the store changes before the page draws again)."""
    stop = lesson.stops[number - 1]
    st.subheader(tr("class_teacher.stop", stop=number, stops=len(lesson.stops),
                    title=localized(stop.title, current_language())))
    back, forward, here = st.columns(3)
    # No tooltip: after a click the pointer stays on the button and a tooltip covered the stop's title above
    back.button(tr("class_teacher.previous"), key="class_previous", disabled=number == 1, width="stretch",
                on_click=teacher_action, args=(teacher.move, number - 1))
    forward.button(tr("class_teacher.next"), key="class_next", disabled=number == len(lesson.stops),
                   type="primary", width="stretch", on_click=teacher_action, args=(teacher.move, number + 1))
    if here.button(tr("class_teacher.open_stop"), key="class_open_stop", width="stretch"):
        lab_session().lesson.pending = OpenLesson(lesson.id, number)
        st.rerun()
    if not presenting():  # projected, the room needs no help text; the chart gets its lines
        st.caption(tr("class_teacher.move_help"))


def _drawn_state(session, lesson: Lesson) -> tuple:
    """What the controls depend on: the stop, the item projected, and its question's reveal, mode, phase, shown flag
    and groups."""
    stop = lesson.stops[session.stop - 1]
    if stop.question is None:
        return (session.stop, session.projected)
    qid = question_id(lesson.id, stop)
    phase = session.phase_of(qid, "peer" if stop.question.peer else "one")
    return (session.stop, qid in session.revealed, phase.mode, phase.phase, phase.shown, phase.group_size,
            phase.group_seed, session.projected)


@lab_fragment(run_every=RESULTS_SECONDS)
def _live(teacher: ClassTeacher, lesson: Lesson, drawn: tuple, texts_seen: int | None = None) -> None:
    """Refreshes itself every few seconds: read-outs only (answer counts, charts, the countdown); no control.
    `texts_seen`: the text answers her private view's moderation list was drawn with (a new one redraws it)."""
    with said(TEACHER):
        session = teacher.session()
        if session is None or _drawn_state(session, lesson) != drawn:
            st.rerun(scope="app")  # expired, or moved on from another device: the controls follow
        _results(teacher, lesson, session, texts_seen)


def _results(teacher: ClassTeacher, lesson: Lesson, session, texts_seen: int | None = None) -> None:
    number = session.stop
    stop = lesson.stops[number - 1]
    if stop.checks:
        check_count(teacher, stop)
    if stop.question is None:
        earlier_questions(teacher, lesson, number, session.revealed)
        return
    qid = question_id(lesson.id, stop)
    results = teacher.results(qid)
    try:
        expected = expected_answer(stop)
    except MeasureError as error:
        expected = None
        st.warning(tr("lessons.no_answer", line=stop.line or "?", reason=worded(error)))
    revealed = qid in session.revealed
    phase = session.phase_of(qid, "peer" if stop.question.peer else "one")
    right_answer = None if expected is None else right_answer_line(stop.question, expected)
    private = is_private()
    if private and not revealed:
        stop_notes(stop, expected, right_answer)
    if stop.question.kind in OWN_WORK_KINDS:
        if stop.question.kind == "text":
            text_results(teacher, qid, results, revealed, private, right_answer, texts_seen)
        else:
            view_results(results, texts_seen)
        earlier_questions(teacher, lesson, number, session.revealed)
        return
    if phase.mode == "peer":
        peer_results(teacher, stop, qid, phase, expected, revealed, right_answer, private)
        class_taps(stop, (results, teacher.results(qid, round=2)), expected, answer_shown(revealed, private))
        earlier_questions(teacher, lesson, number, session.revealed)
        return
    columns = st.columns(3 if results.late else 2)
    columns[0].metric(tr("class_teacher.answered"), results.answered)
    # Before the reveal the share right would give the answer away on the projector (0% after one answer...).
    judged = answer_shown(revealed, private)  # her private view judges the answers as they come; the room after Reveal
    share = (f"{results.correct / results.answered:.0%}" if judged and results.answered
             and results.correct is not None else "–")
    columns[1].metric(tr("class_teacher.correct"), share, help=None if judged else tr("class_teacher.after_reveal"))
    if results.late:
        columns[2].metric(tr("class_teacher.late"), results.late, help=tr("class_teacher.late_help"))
    if right_answer and answer_shown(revealed):  # her private view has it in its notes above
        st.caption(right_answer)
    rows = answer_rows(stop, results, judged)
    if results.answered:
        chart = answer_chart(rows, tr("class_teacher.chart_students"), tr("class_teacher.chart_right"),
                             tr("class_teacher.chart_wrong"))
        st.altair_chart(readable(chart), key="class_answers")
        class_taps(stop, (results,), expected, judged)  # after Reveal (or on her private screen): over the real map
    else:
        st.caption(tr("class_teacher.waiting"))
    earlier_questions(teacher, lesson, number, session.revealed)


"""The lesson bar (on every page while a lesson is open), the lesson picker, and a student's side of a live class.

app.py calls lesson_bar() after st.navigation and before the sidebar and the page, so a stop's view state is put into
the widgets' values before any widget of this run is drawn. It keeps the session object's (ui/session.py) `lesson`
(the open lesson, its stop, 1-based, the answers {question id: canonical answer}), a student's `seat` in a class (the
code and her id, from the browser's seat cookie: a reload or a replica's death keeps her answers) and `teacher`
(ui/live_class/classroom). The address keeps ?lesson=ID&stop=K (opens the lesson there) and ?class=CODE (joins).
"""
from __future__ import annotations

from collections.abc import Mapping
import secrets

import streamlit as st

from classroom.lessons import Lesson, Stop, localized, question_id
from classroom.lesson_questions import shows_page_while_asked
from classroom.errors import ClassStoreError
from classroom.partners import seat_label_of
from classroom.saved_lessons import PREVIEW_LESSON
from classroom.store import ADMITTED, WAITING, normalise_code, phase_in
from classroom.measures import Expected, MeasureError
from classroom.teacher import ClassTeacher
from i18n import current_language, tr
from serving.seat import seat_student
from ui.live_class.classroom import class_lesson, session_guess_wait, teacher_class, wrong_guess
from ui.seat import browser_seat, class_store, seat_address
from ui.presenter import presenting
from ui.errors import lab_fragment
from ui.live_class.answers_held import held_back_here, page_not_held
from ui.live_class.cell_results import class_taps
from ui.lessons.catalogue import known_pages, lessons, preview_lesson
from ui.lessons.claims import show_claims
from ui.lessons.measured import worded
from ui.lessons.questions import answer_shown, expected_answer, right_answer
from ui.live_class.class_watch import watch_class
from ui.live_class.homework import next_held, paced_class, paced_question
from ui.live_class.live_question import LiveQuestion, live_question, polls_itself, seen_of
from ui.live_class.peer_groups import class_line
from ui.live_class.peer_student import check_questions, class_question, earlier_answers, solo_question
from ui.live_class.private_view import private_link
from ui.live_class.refusals import JOIN, message, teacher_action
from ui.live_class.showcase import projected_item
from ui.text import escape_markdown
from ui.session import JoinClass, OpenLesson, lab_session
from ui.share import opened_link, report_unfit_link_value, switch_page
from ui.lesson_bar.stops import furthest_stop, go_to, leave, stop_number, url_extra
from ui.view import Source

FOLLOW_SECONDS = 3  # how often a waiting student's page asks whether the teacher admitted her


def _from_url() -> None:
    """On a session's first run: ?class=CODE joins a class, ?lesson=ID&stop=K opens a lesson at stop K.
    On Back or Forward (ui/share.opened_link): the address's stop, bar and view together (_history)."""
    link = opened_link()
    if link is None:
        return
    position = lab_session().lesson
    if position.url_read:
        _history(link)
        return
    position.url_read = True
    if "class" in st.query_params:
        join(st.query_params["class"], link)  # a reload keeps its view when the class is still at its stop
        return
    lesson_id = st.query_params.get("lesson")
    if lesson_id is None:
        return
    all_lessons, _ = lessons()
    if lesson_id not in all_lessons:
        shown = lesson_id if len(lesson_id) <= 80 else lesson_id[:80] + "…"
        position.problem = tr("lessons.unknown_lesson", lesson=escape_markdown(shown))
        return
    lesson = all_lessons[lesson_id]
    number = stop_number(st.query_params.get("stop", "1"))  # a stop of this lesson; anything else: the first
    if not 1 <= number <= len(lesson.stops):
        report_unfit_link_value("stop")
        number = 1
    go_to(lesson, number, move_class=False, link=link, source=Source.LINK)


def _history(link: dict[str, str]) -> None:
    """Back or Forward (or an address edited by hand) inside the app: the stop the address names opens, its bar and
    its view together, as Next does; an address without a lesson leaves the open one. The address of the open stop
    itself (a menu link to another page carries it) changes nothing: its own view stands."""
    lesson_id, number = link.get("lesson"), stop_number(link.get("stop"))
    position = lab_session().lesson
    if lesson_id == position.lesson_id and number == position.stop:
        return
    code = lab_session().seat.code
    if code:  # a student follows the class: Back may show an earlier stop of its lesson, never a later one
        session = class_store().session(code)
        lesson = class_lesson(session, lessons()[0], known_pages())[0] if session else None
        if lesson is not None:
            furthest = furthest_stop(lesson) or session.stop  # the class's stop, or her own in a self-paced class
            back = lesson_id == session.lesson and 1 <= number <= furthest
            go_to(lesson, number if back else furthest, move_class=False, link=link, source=Source.LINK)
        return
    lesson = open_lesson(lessons()[0], lesson_id) if lesson_id else None
    if lesson is None or not 1 <= number <= len(lesson.stops):
        if position.lesson_id:
            leave()
        return
    go_to(lesson, number, link=link, source=Source.LINK)  # the teacher's Back moves her class, as her Previous does


def student_id() -> str:
    """Anonymous and stable: a hash of the browser's seat cookie (the same after a reload, in a new tab, on another
    replica), or a random id for this session where there is no seat. The seat itself is never stored."""
    seat = browser_seat()
    if seat:
        return seat_student(seat)
    return lab_session().seat.student_id or secrets.token_hex(12)


def join(text: str, link: Mapping[str, str] | None = None) -> None:
    """A student joins the class a code names. A browser with a seat in that class gets it back at once (a reload,
    a new tab); otherwise a guesser who is waiting after wrong codes (ui/live_class/classroom.session_guess_wait) is refused
    before the code is looked up, and a well-formed code that names no class counts as a wrong guess. The class then
    admits the seat, or it waits for the teacher (the class is full: ClassStore.join)."""
    code = normalise_code(text)
    seat_state = lab_session().seat
    student = student_id()
    store = class_store()
    if not (code and store.seat_status(code, student)):
        wait = session_guess_wait("code") if code else 0
        if wait:
            seat_state.notice = tr("lessons.too_many_codes", seconds=wait)
            seat_state.guess_limited = True  # lesson_bar draws the notice and nothing else: a cheap refusal
            return
    session = store.session(code) if code else None
    if session is None and code:
        wrong_guess("code")
    lesson = class_lesson(session, lessons()[0], known_pages())[0] if session else None
    if lesson is None:
        seat_state.notice = tr("lessons.bad_code")
        return
    try:
        seat = store.join(code, student, seat_address())
    except ClassStoreError as error:  # busy, or ended between the two reads
        seat_state.notice = message(error, JOIN)
        return
    seat_state.student_id = student
    if seat != ADMITTED:  # waiting: lesson_bar says so and asks again every few seconds (_waiting_poll)
        seat_state.waiting_for = code if seat == WAITING else None
        if seat != WAITING:
            seat_state.notice = tr("lessons.class_full")
        lab_session().address.extra = url_extra()
        return
    seat_state.waiting_for = None
    seat_state.code = code
    seat_state.label = seat_label_of(store, code, student)
    seat_state.seen = seen_of(session)
    # a self-paced class: her own stop (go_to holds her there), found again after a reload or on another day
    go_to(lesson, session.stop if session.deadline is None else len(lesson.stops), move_class=False, link=link,
          source=Source.TEACHER)


@lab_fragment(run_every=FOLLOW_SECONDS)
def _waiting_poll(code: str) -> None:
    """A join that waits for the teacher: asks every few seconds whether she admitted it, then joins."""
    session = lab_session()
    status = class_store().seat_status(code, session.seat.student_id or "")
    if status != WAITING:  # admitted (or the class ended): the join is done, or says why not
        session.seat.waiting_for = None
        session.lesson.pending = JoinClass(code)
        st.rerun(scope="app")
    st.info(tr("lessons.class_full_wait"), icon=":material/hourglass_top:")


def _class_code() -> str | None:
    """The class this session is in, as a student or as its teacher."""
    teacher = teacher_class()
    return lab_session().seat.code or (teacher.code if teacher else None)


def open_lesson(all_lessons: Mapping[str, Lesson], lesson_id: str) -> Lesson | None:
    """The lesson `lesson_id`: from its file, or, in a class whose lesson file does not read now, the copy the class
    started with (a typo saved during class never stops the class); a teacher's saved lesson in its class, the version
    the class started on (a later save never changes a running class); the draft this session's teacher previews."""
    found = all_lessons.get(lesson_id)
    if lesson_id == PREVIEW_LESSON and found is None:
        return preview_lesson()
    if not lesson_id or (found is not None and found.version is None):
        return found
    code = _class_code()
    session = class_store().shared_session(code) if code else None
    if session is None or session.lesson != lesson_id:
        return found
    return class_lesson(session, all_lessons, known_pages())[0]


def _follow_class() -> None:
    """A student in a class: when the teacher has moved the class since we last looked, go to its stop."""
    seat = lab_session().seat
    code = seat.code
    if not code:
        return
    session = class_store().shared_session(code)  # the read the polls share (classroom/recent.py)
    if session is None:
        seat.code = None
        seat.notice = tr("lessons.class_ended")
        lab_session().address.extra = url_extra()
        return
    seen = seat.seen
    seat.seen = seen_of(session)
    lesson = class_lesson(session, lessons()[0], known_pages())[0]
    if (seen is None or seen.stop != session.stop) and lesson is not None:
        go_to(lesson, session.stop, move_class=False, source=Source.TEACHER)


@lab_fragment()
def _class_poll() -> None:
    """On a student's page without her live question (another stop, another page): rerun by her class watch when
    the class changed, a full rerun when it moved or an answer was revealed."""
    code, seen = lab_session().seat.code, lab_session().seat.seen
    session = class_store().shared_session(code) if code else None  # one read a process and half second
    if session is None or seen is None or seen_of(session) != seen:
        st.rerun(scope="app")
    projected_item(code, session)  # a student's work the teacher projects, without a name
    watch_class(code, session, key="class_poll_watch", line=class_line(code))


def lesson_bar(url_path: str) -> bool:
    """Draw the bar of the open lesson; -> False when the page must stay hidden (a question not answered yet)."""
    current_page = url_path or "home"
    _from_url()
    session = lab_session()
    position, seat = session.lesson, session.seat
    pending, position.pending = position.pending, None
    if isinstance(pending, JoinClass):
        join(pending.code)
    elif isinstance(pending, OpenLesson) and (opened := open_lesson(lessons()[0], pending.lesson_id)) is not None:
        go_to(opened, pending.stop, move_class=False)
    _follow_class()
    target, position.switch_to = position.switch_to or current_page, None
    if target != current_page:
        # with the stop's address: a switch without it leaves the browser's history an entry with no stop, where
        # Back would show one stop's bar over another stop's view
        switch_page(current_page, target)
    notice, seat.notice = seat.notice, None
    if notice:
        st.warning(notice)
    limited, seat.guess_limited = seat.guess_limited, False
    if limited:
        st.stop()  # a guesser past the limit gets this line and no page run
    if seat.waiting_for and not seat.code:
        _waiting_poll(seat.waiting_for)
    lesson = open_lesson(lessons()[0], position.lesson_id or "")
    position.titled_by_lesson, position.stop_section, position.stop_asks = False, None, False
    number = None if lesson is None else min(max(1, position.stop or 1), len(lesson.stops))  # the file may shrink
    position.held_sections = held_back_here(current_page, lesson, number)
    if lesson is None:
        if position.problem:
            st.warning(position.problem)
            position.problem = None
        return page_not_held(position.held_sections)
    stop = lesson.stops[number - 1]
    language = current_language()
    # Projected at 1280×720, the bar is one line (the stop's title and the buttons) and the stop's text, and it
    # names the view, so the page leaves out its own title (ui/presenter.page_title): the main chart starts above
    # the fold. The lesson's name stays in the sidebar's lesson picker.
    presenter = presenting()
    on_its_page = stop.page == current_page and not stop.problem
    # a stop about one section of its page names that view too (ui/page_sections), projected or not
    position.titled_by_lesson = on_its_page and (presenter or stop.section is not None)
    position.stop_section = stop.section if on_its_page else None  # shown first (ui/page_sections)
    position.stop_asks = on_its_page and stop.question is not None
    with st.container(border=True, key="lesson_bar"):
        head, buttons = st.columns([3, 2], vertical_alignment="center")
        # the buttons at their own width, right-aligned, wrapping onto a second line where the bar is narrow (a
        # tablet beside the sidebar) rather than cut to "Pr…" and "Le…"
        previous = following = leaving = buttons.container(horizontal=True, horizontal_alignment="right")
        if presenter:
            head.markdown(tr("projected_lesson.bar_title", stop=number, stops=len(lesson.stops),
                             title=localized(stop.title, language)))
        else:
            head.markdown(tr("lessons.bar_title", lesson=localized(lesson.title, language), stop=number,
                             stops=len(lesson.stops), title=localized(stop.title, language)))
        # Callbacks: the stop's state is set before this run draws any widget.
        previous.button(tr("lessons.previous"), key="lesson_previous", disabled=number == 1, width="content",
                        on_click=go_to, args=(lesson, number - 1))
        # a student in a class looks back, not ahead: Next stops at the class's stop (go_to holds it there too), or
        # in a self-paced class at her own until she has answered its questions (ui/live_class/homework.py)
        held = next_held(lesson, number)
        following.button(tr("lessons.next"), key="lesson_next", disabled=number == len(lesson.stops) or bool(held),
                         type="primary", width="content", on_click=go_to, args=(lesson, number + 1), help=held)
        leaving.button(tr("lessons.leave"), key="lesson_leave", width="content", on_click=leave)
        poll = st.container()  # the class poll's line: the live question's own, or _class_poll's
        if stop.page != current_page and not stop.problem:  # a stop with a problem may name no page at all
            st.page_link(f"app_pages/{stop.page}.py", label=tr("lessons.back_to_stop"), icon=":material/undo:")
        problem = position.problem
        if problem:
            st.warning(tr("lessons.stop_problem", stop=number, file=escape_markdown(f"{lesson.id}.toml"),
                          line=stop.line or "?", problem=problem))
        text = st.container()  # the stop's text, drawn once the question's state is known
        shown, live = (True, False) if stop.question is None or not on_its_page else _question(lesson, stop)
        if seat.code and not live:  # the live question polls for the class itself
            with poll:
                _class_poll()
        # the lecture's check questions, under the stop's own question (its form stays the first one on the page);
        # before the lecture, the stop's text waits for them: it would answer them
        checks_first = bool(stop.checks and seat.code and on_its_page) and check_questions(
            lesson.id, stop, seat.code, seat.student_id)
        if checks_first:
            text.info(tr("peer.checks_first"), icon=":material/quiz:")
        elif presenter and shown and stop.question is not None and on_its_page:
            # Projected, once answered: the text folds (it was read before the prediction), so the chart that
            # gives the answer starts on the first screen (tests/test_browser_projected_stops.py).
            text.expander(tr("projected_lesson.stop_text"), icon=":material/notes:").markdown(
                localized(stop.text, language))
        else:
            text.markdown(localized(stop.text, language))
        if shown and on_its_page:  # the claims' figures once the page shows them (after the prediction)
            show_claims(stop)
        return shown and page_not_held(position.held_sections)


def _question(lesson: Lesson, stop: Stop) -> tuple[bool, bool]:
    """Predict, then reveal: the page (whose chart gives the answer away) shows once the student has answered
    or the teacher has revealed the answer to the class. -> (whether the page shows, whether the question is a
    student's live question: ui/live_class/live_question.py, her class poll while it is drawn)."""
    qid = question_id(lesson.id, stop)
    if lab_session().seat.code and getattr(paced_class(), "lesson", None) == lesson.id:  # homework: her own pace
        return paced_question(lesson, stop, qid), False
    try:
        expected: Expected | None = expected_answer(stop)
    except MeasureError as error:
        st.warning(tr("lessons.no_answer", line=stop.line or "?", reason=worded(error)))
        return True, False
    teacher = teacher_class()
    if teacher and teacher.lesson == lesson.id:  # the teacher projects the page; the question is the class's
        return _teachers_question(teacher, stop, qid, expected), False
    seat = lab_session().seat
    code, seen = seat.code, seat.seen
    key = f"q_{lesson.id}_{stop.number}"
    if not code or seen is None or seen.lesson != lesson.id:  # outside a class (or in another lesson than the class's)
        held_back = class_store().live_unrevealed(lesson.id, stop.number, qid)
        return solo_question(stop, qid, key, expected, held_back), False
    earlier_answers(qid, code, seat.student_id)
    revealed = qid in seen.revealed  # as _follow_class read the class this run: revealed now, the page shows below
    if not polls_itself(stop):  # a head grid: its phase as the class poll last saw it (untouched: the lesson's mode)
        phase = phase_in(seen.phases, qid, "peer" if stop.question.peer else "one")
        return class_question(stop, qid, key, code, seat.student_id, expected, phase, revealed, live=False), False
    shown = revealed or shows_page_while_asked(stop.question)  # a view question: she sets the page, then sends it
    live_question(LiveQuestion(stop, qid, key, expected, page_below=shown))
    return shown, True


def _teachers_question(teacher: ClassTeacher, stop: Stop, qid: str, expected: Expected | None) -> bool:
    """The class's question on the teacher's (projected) screen: the prompt; until she reveals it, neither the answer
    nor the page that gives it away, only her Reveal button and the link to her private view (ui/live_class/private_view)."""
    session = teacher.session()
    st.markdown(f"**{localized(stop.question.prompt, current_language())}**")
    if session is not None and session.self_paced:  # homework: no Reveal, each student reads hers at once
        if expected is not None:
            st.caption(right_answer(stop.question, expected))
        st.caption(tr("homework.teacher_preview"))
        return True
    if answer_shown(session is None or qid in session.revealed):  # no class any more: her page is a lesson alone
        if expected is not None:  # (an open text question has no right answer)
            st.caption(right_answer(stop.question, expected))
        if session is not None and stop.question.kind == "cell":  # the class's taps over the real map, projected
            class_taps(stop, (teacher.results(qid), teacher.results(qid, round=2)), expected, True)
        return True
    reveal, peek = st.columns([1, 1], vertical_alignment="center")
    reveal.button(tr("class_teacher.reveal"), key="stop_reveal", type="primary",
                  on_click=teacher_action, args=(teacher.reveal, qid))
    private_link(peek)  # the answer: in her private view, a new window the room does not see
    if shows_page_while_asked(stop.question):  # nothing to give away: the room sees the page it sets its views on
        return True
    st.info(tr("class_teacher.hidden_until_reveal"))
    return False

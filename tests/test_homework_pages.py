"""A self-paced class (homework) in AppTest: the teacher starts one with a deadline, a student goes through its stops
at her own pace (Next is hers, once she has answered; right or wrong at once), leaves and comes back on the same seat
at the same stop; the teacher's progress counts her, and the report section offers the gradebook's three CSV files.
The store's rules are tested on both engines in tests/test_self_paced.py; the gradebook's CSV in
tests/test_gradebook.py."""
import datetime as dt
import time

import pytest

from classroom.store import DATABASE_URL_ENV, ClassStore
from classroom.teacher_password import teacher_password
from tests.app_links import assert_healthy, go_to, lab_session_of, open_from_link
from tests.test_class_pages import _metric, _texts
from ui.lessons.catalogue import known_pages, shelf
from ui.session import JoinClass

# Three stops on a page without a model, one fixed choice each (the browser walk serves the same lesson)
LESSON = """title = { en = "Homework", ko = "숙제" }
""" + "".join(f"""
[[stop]]
page = "softmax_scaling"
title = {{ en = "Stop {n}", ko = "{n}단계" }}
state = {{ dk = {2 ** (n + 2)} }}
text = {{ en = "Read stop {n}.", ko = "{n}단계를 읽으세요." }}
[stop.question]
kind = "choice"
prompt = {{ en = "Question {n}: which is right?", ko = "질문 {n}: 어느 것이 맞나요?" }}
options = {{ en = ["left {n}", "right {n}"], ko = ["왼쪽 {n}", "오른쪽 {n}"] }}
answer = 2
""" for n in (1, 2, 3))


def write_lesson(folder) -> None:
    """The three-stop lesson `hw` in a lessons folder."""
    folder.mkdir(exist_ok=True)
    (folder / "hw.toml").write_text(LESSON, encoding="utf-8")


@pytest.fixture(autouse=True)
def homework_lesson(tmp_path, monkeypatch):
    monkeypatch.setenv("ATTENTION_LAB_DATA", str(tmp_path))
    monkeypatch.delenv("ATTENTION_LAB_TEACHER_PASSWORD", raising=False)
    monkeypatch.delenv(DATABASE_URL_ENV, raising=False)
    write_lesson(tmp_path / "lessons")
    monkeypatch.setenv("ATTENTION_LAB_LESSONS", str(tmp_path / "lessons"))


def _answer(student, stop: int, option: int, lesson: str = "hw") -> None:
    student.radio(key=f"q_{lesson}_{stop}_choice").set_value(option)
    next(b for b in student.form_submit_button if b.label == "Answer").click().run()
    assert_healthy(student)


def _next(student):
    return student.button(key="lesson_next")


def test_the_teacher_starts_homework_a_student_goes_at_her_pace_and_the_teacher_follows_and_downloads():
    teacher, _ = open_from_link("teacher")
    teacher.checkbox(key="class_start_paced").check()
    # no browser here, so no time zone: the fields are in UTC and say so; three hours on, at a quarter hour
    due = dt.datetime.fromtimestamp((time.time() + 3 * 3600) // 900 * 900, dt.UTC)
    assert "(UTC)" in teacher.time_input(key="class_start_due_time").label
    teacher.date_input(key="class_start_due_date").set_value(due.date())
    teacher.time_input(key="class_start_due_time").set_value(due.time())
    teacher.text_input(key="class_start_password").input(teacher_password())
    next(b for b in teacher.form_submit_button if b.label == "Start a class").click().run()
    assert_healthy(teacher)
    code = _metric(teacher, "Class code")
    session = ClassStore().session(code)
    assert session.deadline == due.timestamp()  # the instant she picked; the server's clock decides when it passed
    assert any(s.value == "Homework: Homework" for s in teacher.subheader)
    assert "Self-paced, due" in _texts(teacher) and _metric(teacher, "Students") == "0"
    assert not [b for b in teacher.button if b.key in ("class_next", "class_reveal")]  # she moves no stop, reveals nothing

    student, _ = open_from_link(None, {"class": code})
    assert_healthy(student)
    assert "stop 1 of 3" in student.markdown[0].value and "Homework: at your own pace, due" in _texts(student)
    assert _next(student).disabled and "Answer this stop's questions first" in _next(student).help
    _answer(student, 1, 2)
    assert "Right" in _texts(student)  # at once: no Reveal in a self-paced class
    assert not _next(student).disabled
    _next(student).click().run()
    assert_healthy(student)
    assert "stop 2 of 3" in student.markdown[0].value and _next(student).disabled
    _answer(student, 2, 1)
    assert "Right" not in _texts(student) and "right 2" in _texts(student)  # wrong: the right option is named
    assert "A class on this server" not in _texts(student)  # her class holds no page back: she answered, it shows
    assert "In homework" in _texts(student) and "follows the teacher" not in _texts(student)

    # she leaves and comes back (a new session on the same seat, as a reload or another day): her stop, her answers
    again, _ = open_from_link(None)
    lab = lab_session_of(again)
    lab.seat.student_id, lab.lesson.pending = lab_session_of(student).seat.student_id, JoinClass(code)
    again.run()
    assert_healthy(again)
    assert "stop 2 of 3" in again.markdown[0].value and "right 2" in _texts(again)
    assert not [r for r in again.radio if r.key == "q_hw_2_choice"]  # answered once: no form again

    teacher.run()
    assert_healthy(teacher)
    assert _metric(teacher, "Students") == "1"
    stops = teacher.dataframe[0].value
    assert list(stops.iloc[:, 2]) == [0, 1, 0]  # one student, at stop 2
    questions = teacher.dataframe[1].value
    assert list(questions.iloc[:, 2]) == [1, 1, 0] and list(questions.iloc[:, 3]) == ["100%", "0%", "–"]
    teacher.session_state["report_open"] = True  # she opens the report (its expander reruns the page)
    teacher.run()
    assert_healthy(teacher)
    labels = {d.label for d in teacher.get("download_button")}
    assert {"Gradebook (CSV)", "Every answer (CSV)", "Summary per question (CSV)"} <= labels, labels

    # she opens the lesson herself (the sidebar's picker): each stop's question with its answer, and no Reveal, which
    # a self-paced class has nothing for
    teacher.selectbox(key="lesson_pick").set_value("hw")
    teacher.button(key="lesson_open").click().run()
    assert_healthy(teacher)
    assert "stop 1 of 3" in teacher.markdown[0].value
    assert not [b for b in teacher.button if b.key == "stop_reveal"]
    assert "does this stop as homework" in _texts(teacher) and "right 1" in _texts(teacher)
    teacher.button(key="lesson_next").click().run()  # her Next turns her own page; the class has no stop to move
    go_to(teacher, "softmax_scaling")  # AppTest runs the page it was opened on again; the browser stays on the stop's
    assert "stop 2 of 3" in teacher.markdown[0].value and ClassStore().session(code).stop == 1


def test_a_deadline_minutes_away_is_refused_in_words_and_no_class_starts():
    """Two minutes on is a slip (no student could answer): the form says so and keeps what she typed."""
    teacher, _ = open_from_link("teacher")
    teacher.checkbox(key="class_start_paced").check()
    soon = dt.datetime.fromtimestamp(time.time() + 120, dt.UTC).replace(second=0, microsecond=0)
    teacher.date_input(key="class_start_due_date").set_value(soon.date())
    teacher.time_input(key="class_start_due_time").set_value(soon.time())
    teacher.text_input(key="class_start_password").input(teacher_password())
    next(b for b in teacher.form_submit_button if b.label == "Start a class").click().run()
    assert_healthy(teacher)
    assert any("less than 5 minutes away" in w.value for w in teacher.warning), [w.value for w in teacher.warning]
    assert not [m for m in teacher.metric if m.label == "Class code"]
    assert teacher.time_input(key="class_start_due_time").value == soon.time()


def test_a_self_paced_class_on_a_saved_lesson_keeps_the_version_it_started_on():
    author = shelf().sign_in(teacher_password())
    source = LESSON.replace('en = "Homework"', 'en = "Saved homework"')
    saved = shelf().save(author, source, known_pages())
    teacher, _ = open_from_link("teacher")
    next(s for s in teacher.selectbox if s.label == "Lesson").set_value(saved.id)
    teacher.checkbox(key="class_start_paced").check()
    teacher.text_input(key="class_start_password").input(teacher_password())
    next(b for b in teacher.form_submit_button if b.label == "Start a class").click().run()
    assert_healthy(teacher)
    code = _metric(teacher, "Class code")
    assert ClassStore().session(code).lesson == saved.id
    shorter = source[:source.index("[[stop]]", source.index("Stop 2"))]  # version 2: two stops
    assert shelf().save(author, shorter, known_pages(), lesson_id=saved.id).version == 2
    student, _ = open_from_link(None, {"class": code})
    assert_healthy(student)
    assert "stop 1 of 3" in student.markdown[0].value  # the version the class started on
    _answer(student, 1, 2, saved.id)
    _next(student).click().run()
    assert "stop 2 of 3" in student.markdown[0].value
    teacher.run()
    assert list(teacher.dataframe[0].value.iloc[:, 2]) == [0, 1, 0]


def test_a_view_question_sent_turns_her_next_on(tmp_path):
    """A view question's page shows while she sets it; once sent, her Next is on at once (the page reruns whole)."""
    (tmp_path / "lessons" / "hwview.toml").write_text(
        'title = "v"\n[[stop]]\npage = "softmax_scaling"\ntext = "Show it."\n[stop.question]\nkind = "view"\n'
        'prompt = "Why?"\n[[stop]]\npage = "softmax_scaling"\ntext = "b"\n', encoding="utf-8")
    teacher = ClassStore().create_class("hwview", deadline=time.time() + 3600)
    student, _ = open_from_link(None, {"class": teacher.code})
    assert_healthy(student)
    assert _next(student).disabled
    student.button(key="q_hwview_1_send_view").click().run()
    assert_healthy(student)
    assert not _next(student).disabled
    _next(student).click().run()
    assert "stop 2 of 2" in student.markdown[0].value

"""The live class in AppTest: a teacher starts a class, a student joins by link, answers, follows the teacher."""
import pytest

from classroom.store import normalise_code
from tests.app_links import assert_healthy, chart_specs, open_from_link
from tests.bad_inputs import load_bad_inputs


@pytest.fixture(autouse=True)
def data_folder(tmp_path, monkeypatch):
    monkeypatch.setenv("ATTENTION_LAB_DATA", str(tmp_path))
    monkeypatch.delenv("ATTENTION_LAB_TEACHER_PASSWORD", raising=False)


def _metric(at, label: str) -> str:
    return next(m.value for m in at.metric if m.label == label)


def test_teacher_sees_a_student_answer_reveals_and_moves_the_class():
    teacher, _ = open_from_link("teacher")
    assert not teacher.metric  # nothing to see before a class exists
    next(
        b for b in teacher.form_submit_button if b.label == "Start a class").click().run()
    assert_healthy(teacher)
    code = _metric(teacher, "Class code")
    assert len(code) == 6 and _metric(teacher, "Answered") == "0"

    student, _ = open_from_link(None, {"class": code})
    assert_healthy(student)
    # stop 1 is about the compare page's accuracy-by-length section, shown first under the bar (no page title)
    assert "stop 1 of" in student.markdown[0].value and not chart_specs(student)  # predict first
    student.radio(key="q_intro_1_choice").set_value(1)
    next(b for b in student.form_submit_button if b.label == "Answer").click().run()
    assert_healthy(student)
    assert chart_specs(student)  # answered: the page shows

    teacher.run()
    assert _metric(teacher, "Answered") == "1" and _metric(teacher, "Share correct") == "0%"  # option 1 is wrong
    # the same student answering again changes nothing (the widget is gone; the store refuses a second row)
    teacher.button(key="class_reveal").click().run()
    assert any("revealed" in s.value for s in teacher.success)

    other, _ = open_from_link(None, {"class": code})
    assert chart_specs(other) and any("revealed the answer" in i.value for i in other.info)  # revealed: page shown

    teacher.button(key="class_next").click().run()
    assert "stop 2 of" in teacher.subheader[0].value
    earlier = teacher.dataframe[0].value  # stop 1's question stays readable after moving on
    assert earlier.iloc[0].tolist() == [1, "Which model will translate sentences of 20 words or more worst?", 1,
                                        "0%", "Transformer"]
    student.run()  # the polling fragment would trigger this rerun within a few seconds
    assert_healthy(student)
    assert "stop 2 of" in student.markdown[0].value


def test_a_student_cannot_reach_the_teacher_controls():
    teacher, _ = open_from_link("teacher")
    next(b for b in teacher.form_submit_button if b.label == "Start a class").click().run()
    code = _metric(teacher, "Class code")
    student, _ = open_from_link("teacher", {"class": code})
    assert_healthy(student)
    keys = {b.key for b in student.button}
    assert not keys & {"class_reveal", "class_next", "class_previous"}
    assert code not in " ".join(m.value for m in student.metric)
    assert "stop 1 of" in student.markdown[0].value  # the student joined the class, as a student


def test_wrong_code_and_operator_password(monkeypatch):
    student, _ = open_from_link(None, {"class": "ZZZZZZ"})
    assert "unknown or the class has ended" in " ".join(w.value for w in student.warning)
    student.sidebar.text_input(key="class_code_input").input("<b>x</b>")
    next(b for b in student.sidebar.form_submit_button if b.label == "Join the class").click().run()
    assert_healthy(student)
    assert "unknown or the class has ended" in " ".join(w.value for w in student.warning)
    monkeypatch.setenv("ATTENTION_LAB_TEACHER_PASSWORD", "s3cret")
    teacher, _ = open_from_link("teacher")
    teacher.text_input[0].input("guess")
    next(b for b in teacher.form_submit_button if b.label == "Start a class").click().run()
    assert "not right" in " ".join(w.value for w in teacher.warning) and not teacher.metric
    teacher.text_input[0].input("s3cret")
    next(b for b in teacher.form_submit_button if b.label == "Start a class").click().run()
    assert len(_metric(teacher, "Class code")) == 6


def test_bad_class_codes_and_passwords(monkeypatch):
    """Every hostile input as a class code (sidebar) and as the teacher password: a clear message, no traceback."""
    bad_inputs = load_bad_inputs()
    assert all(normalise_code(text) == "" for text in bad_inputs)
    student, _ = open_from_link(None)
    for text in bad_inputs:
        student.sidebar.text_input(key="class_code_input").input(text[:12])
        next(b for b in student.sidebar.form_submit_button if b.label == "Join the class").click().run()
        assert_healthy(student)
        assert "unknown or the class has ended" in " ".join(w.value for w in student.warning), repr(text)
    monkeypatch.setenv("ATTENTION_LAB_TEACHER_PASSWORD", "s3cret")
    teacher, _ = open_from_link("teacher")
    for text in bad_inputs:
        teacher.text_input[0].input(text)
        next(b for b in teacher.form_submit_button if b.label == "Start a class").click().run()
        assert_healthy(teacher)
        assert "not right" in " ".join(w.value for w in teacher.warning) and not teacher.metric, repr(text)


def test_the_teachers_lesson_bar_moves_the_class():
    teacher, _ = open_from_link("teacher")
    next(b for b in teacher.form_submit_button if b.label == "Start a class").click().run()
    code = _metric(teacher, "Class code")
    student, _ = open_from_link(None, {"class": code})
    teacher.button(key="class_open_stop").click().run()  # the teacher projects the stop itself
    assert_healthy(teacher)
    assert "stop 1 of" in teacher.markdown[0].value  # the bar names the view; the stop's section is shown first
    assert teacher.subheader[0].value == "Accuracy against sentence length"
    teacher.button(key="lesson_next").click().run()
    assert "stop 2 of" in teacher.markdown[0].value
    student.run()
    assert_healthy(student)
    assert "stop 2 of" in student.markdown[0].value  # the class followed the teacher's Next

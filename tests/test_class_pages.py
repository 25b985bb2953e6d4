"""The live class in AppTest: a teacher starts a class, a student joins by link, answers, follows the teacher; the
teacher keeps control (password take-back, a broken lesson file), the projector shows no answer before Reveal, and
guesses of codes and passwords are limited."""
import json

import pytest

from classroom.store import DATABASE_URL_ENV, ClassStore, is_postgres, normalise_code
from classroom.teacher_password import teacher_password
from tests.app_links import ROOT, assert_healthy, chart_specs, go_to, open_from_link
from tests.bad_inputs import load_bad_inputs


@pytest.fixture(autouse=True)
def data_folder(tmp_path, monkeypatch):
    monkeypatch.setenv("ATTENTION_LAB_DATA", str(tmp_path))
    monkeypatch.delenv("ATTENTION_LAB_TEACHER_PASSWORD", raising=False)
    monkeypatch.delenv(DATABASE_URL_ENV, raising=False)  # the SQLite file in tmp_path, unless a test names a DSN


def _metric(at, label: str) -> str:
    return next(m.value for m in at.metric if m.label == label)


def _start_class(teacher, password: str | None = None) -> str:
    """Start a class on the Teacher page with the teacher password (by default the one the server generated)."""
    teacher.text_input(key="class_start_password").input(teacher_password() if password is None else password)
    next(b for b in teacher.form_submit_button if b.label == "Start a class").click().run()
    assert_healthy(teacher)
    return _metric(teacher, "Class code")


def _answer_choice(student, option: int) -> None:
    student.radio(key="q_intro_1_choice").set_value(option)
    next(b for b in student.form_submit_button if b.label == "Answer").click().run()
    assert_healthy(student)


def _texts(at) -> str:
    """Every text the page shows outside popovers (what the projector shows until the teacher opens one)."""
    inside = {id(node) for popover in at.get("popover") for node in _walk(popover)}
    return " ".join(str(getattr(node, "value", "")) for node in _walk(at._tree) if id(node) not in inside
                    and isinstance(getattr(node, "value", None), str))


def _walk(node):
    yield node
    for child in getattr(node, "children", {}).values():
        yield from _walk(child)


def test_teacher_sees_a_student_answer_reveals_and_moves_the_class(store_location, monkeypatch, tmp_path):
    if is_postgres(store_location):  # the same class through the app, with the store on PostgreSQL
        monkeypatch.setenv(DATABASE_URL_ENV, store_location)
    teacher, _ = open_from_link("teacher")
    assert not teacher.metric  # nothing to see before a class exists
    code = _start_class(teacher)
    assert len(code) == 6 and _metric(teacher, "Answered") == "0"

    student, _ = open_from_link(None, {"class": code})
    assert_healthy(student)
    # stop 1 is about the compare page's accuracy-by-length section, shown first under the bar (no page title)
    assert "stop 1 of" in student.markdown[0].value and not chart_specs(student)  # predict first
    student.radio(key="q_intro_1_choice").set_value(1)
    next(b for b in student.form_submit_button if b.label == "Answer").click().run()
    assert_healthy(student)
    # answered: taken, but neither right or wrong nor the page (whose chart gives the answer) before the Reveal
    assert not chart_specs(student) and "Your answer is taken: Transformer" in _texts(student)
    assert "The model's answer" not in _texts(student) and not student.success

    teacher.run()
    # Before the reveal: how many answered, no share right (it would give the answer away), no answer on the page
    # (nor a peek: the answer is in her private view, a screen the room does not see), bars of one neutral colour.
    assert _metric(teacher, "Answered") == "1" and _metric(teacher, "Share correct") == "–"
    assert "The model's answer" not in _texts(teacher)
    assert not any("The model's answer" in str(getattr(n, "value", "")) for p in teacher.get("popover") for n in _walk(p))
    bars = json.loads(teacher.get("vega_lite_chart")[0].proto.spec)
    assert "color" not in bars["encoding"] and bars["mark"]["color"] == "#0072B2"
    teacher.toggle(key="teacher_private").set_value(True).run()  # her phone or a second window
    assert "The model's answer: GRU without attention" in _texts(teacher) and _metric(teacher, "Share correct") == "0%"
    assert '"color": {"field": "verdict"' in teacher.get("vega_lite_chart")[0].proto.spec  # judged as they come
    teacher.toggle(key="teacher_private").set_value(False).run()
    assert "The model's answer" not in _texts(teacher) and _metric(teacher, "Share correct") == "–"
    teacher.button(key="class_reveal").click().run()
    assert any("revealed" in s.value for s in teacher.success)
    assert _metric(teacher, "Share correct") == "0%"  # option 1 is wrong
    assert "The model's answer: GRU without attention" in _texts(teacher)

    student.run()  # the class poll's rerun after the Reveal: now right or wrong, and the page
    assert chart_specs(student) and "The model's answer: GRU without attention" in _texts(student)
    other, _ = open_from_link(None, {"class": code})
    assert chart_specs(other) and any("revealed the answer" in i.value for i in other.info)  # revealed: page shown
    assert not [r for r in other.get("radio") if r.key == "q_intro_1_choice"]  # after the reveal the question is not asked: an answer now would not count

    teacher.button(key="class_next").click().run()
    assert "stop 2 of" in teacher.subheader[0].value
    # no tooltip on Previous/Next (it covered the stop's title after each click); the explanation is a caption
    assert not teacher.button(key="class_next").help and not teacher.button(key="class_previous").help
    assert "Previous and Next move every student in the class to that stop." in [c.value for c in teacher.caption]
    earlier = teacher.dataframe[0].value  # stop 1's question stays readable after moving on
    assert earlier.iloc[0].tolist() == [1, "Which model will translate sentences of 20 words or more worst?", 1,
                                        "0%", "Transformer"]
    student.run()  # the polling fragment would trigger this rerun within a few seconds
    assert_healthy(student)
    assert "stop 2 of" in student.markdown[0].value
    if is_postgres(store_location):  # the class lives in the database the DSN names, not in a file
        assert ClassStore(store_location).session(code).stop == 2
        assert not (tmp_path / "classroom.sqlite3").exists()


def test_a_student_cannot_reach_the_teacher_controls():
    teacher, _ = open_from_link("teacher")
    code = _start_class(teacher)
    student, _ = open_from_link("teacher", {"class": code})
    assert_healthy(student)
    keys = {b.key for b in student.button}
    assert not keys & {"class_reveal", "class_next", "class_previous", "stop_reveal"}
    assert code not in " ".join(m.value for m in student.metric)
    assert "stop 1 of" in student.markdown[0].value  # the student joined the class, as a student
    # A student of a class gets no start form either: no class of her own whose answers she could read.
    student.switch_page("app_pages/teacher.py").run()
    assert_healthy(student)
    assert not student.main.form_submit_button and not student.metric
    assert any("is a student in class" in i.value for i in student.info)


def test_starting_a_class_needs_the_generated_password(tmp_path):
    """No password set by the operator: the server generated one in the data folder (mode 600) and only it works."""
    teacher, _ = open_from_link("teacher")
    teacher.text_input(key="class_start_password").input("guess")
    next(b for b in teacher.form_submit_button if b.label == "Start a class").click().run()
    assert "not right" in " ".join(w.value for w in teacher.warning) and not teacher.metric
    password_file = tmp_path / "teacher-password"
    assert password_file.stat().st_mode & 0o777 == 0o600
    assert len(_start_class(teacher, password_file.read_text().strip())) == 6


def test_the_teacher_takes_her_class_back_from_another_session_a_student_cannot():
    """A reload (a new session) loses the teacher's session_state: the class code and the teacher password give the
    class back, with every control; the class code alone (what students have) does not."""
    teacher, _ = open_from_link("teacher")
    code = _start_class(teacher)
    student, _ = open_from_link(None, {"class": code})
    _answer_choice(student, 3)

    intruder, _ = open_from_link("teacher")
    intruder.text_input(key="class_take_back_code").input(code)
    intruder.text_input(key="class_take_back_password").input("guess")
    next(b for b in intruder.form_submit_button if b.label == "Take back the class").click().run()
    assert "not right" in " ".join(w.value for w in intruder.warning) and not intruder.metric

    reloaded, _ = open_from_link("teacher")
    reloaded.text_input(key="class_take_back_code").input(code.lower())
    reloaded.text_input(key="class_take_back_password").input(teacher_password())
    next(b for b in reloaded.form_submit_button if b.label == "Take back the class").click().run()
    assert_healthy(reloaded)
    assert _metric(reloaded, "Class code") == code and _metric(reloaded, "Answered") == "1"
    reloaded.button(key="class_next").click().run()
    student.run()
    assert "stop 2 of" in student.markdown[0].value  # the students' next move arrives
    teacher.run()  # the first device keeps its control too (projector and phone)
    assert "stop 2 of" in teacher.subheader[0].value
    reloaded.button(key="class_end").click().run()
    student.run()
    assert "has ended" in " ".join(w.value for w in student.warning)


def test_a_lesson_file_broken_during_class_keeps_the_class_going(tmp_path, monkeypatch):
    """A typo saved in the lesson file mid-class: the teacher keeps control on the copy taken at the start, is told
    why, and students still follow; a fixed file is taken up again."""
    lessons = tmp_path / "lessons"
    lessons.mkdir()

    source = (ROOT / "lessons" / "intro.toml").read_text(encoding="utf-8")
    (lessons / "intro.toml").write_text(source, encoding="utf-8")
    monkeypatch.setenv("ATTENTION_LAB_LESSONS", str(lessons))
    teacher, _ = open_from_link("teacher")
    code = _start_class(teacher)
    student, _ = open_from_link(None, {"class": code})
    (lessons / "intro.toml").write_text(source.replace("[[stop]]", "[[stop]\n", 1), encoding="utf-8")
    teacher.run()
    assert_healthy(teacher)
    assert "does not read now" in " ".join(w.value for w in teacher.warning)
    teacher.button(key="class_next").click().run()
    assert "stop 2 of" in teacher.subheader[0].value
    student.run()
    assert_healthy(student)
    assert "stop 2 of" in student.markdown[0].value
    (lessons / "intro.toml").write_text(source, encoding="utf-8")
    teacher.run()
    assert "does not read now" not in " ".join(w.value for w in teacher.warning)


def test_answers_after_the_reveal_are_late_and_never_right(store_location):
    store = ClassStore(store_location)
    teacher = store.create_class("intro")
    code = teacher.code
    store.join(code, "early")
    store.join(code, "late")
    store.answer(code, "early", "q", "right", True, stop=1)
    teacher.reveal("q")
    store.answer(code, "late", "q", "right", True, stop=1)  # stored, as late
    results = teacher.results("q")
    assert (results.answered, results.correct, results.late, results.counts) == (1, 1, 1, {"right": 1})
    assert store.student_answer(code, "late", "q") == "right"


def test_guessing_codes_and_passwords_is_limited():
    """Past 3 wrong codes a session waits (2 s, then longer: classroom/guessing.py) and its next guess is refused
    before any lookup, even a real code; another session at the same address joins at once. The same for
    passwords: the guesser waits, the teacher in another session takes her class back."""
    teacher, _ = open_from_link("teacher")
    code = _start_class(teacher)
    student, _ = open_from_link(None)
    for guess in ("AAAAAA", "BBBBBB", "CCCCCC", code):
        student.sidebar.text_input(key="class_code_input").input(guess)
        next(b for b in student.sidebar.form_submit_button if b.label == "Join the class").click().run()
        assert_healthy(student)
    warnings = " ".join(w.value for w in student.warning)
    assert "Too many wrong class codes" in warnings
    assert not any("stop 1 of" in m.value for m in student.markdown)  # not joined, though the code is real
    assert not student.title and not chart_specs(student)  # refused before the page ran: a guess costs little
    other, _ = open_from_link(None, {"class": code})  # another student behind the same address is not slowed
    assert any("stop 1 of" in m.value for m in other.markdown)
    guesser, _ = open_from_link("teacher")
    for guess in ("a", "b", "c", teacher_password()):
        guesser.text_input(key="class_take_back_code").input(code)
        guesser.text_input(key="class_take_back_password").input(guess)
        next(b for b in guesser.form_submit_button if b.label == "Take back the class").click().run()
        assert_healthy(guesser)
    assert "Too many wrong passwords" in " ".join(w.value for w in guesser.warning) and not guesser.metric
    device, _ = open_from_link("teacher")
    device.text_input(key="class_take_back_code").input(code)
    device.text_input(key="class_take_back_password").input(teacher_password())
    next(b for b in device.form_submit_button if b.label == "Take back the class").click().run()
    assert _metric(device, "Class code") == code


def test_wrong_code_and_operator_password(monkeypatch):
    student, _ = open_from_link(None, {"class": "ZZZZZZ"})
    assert "unknown or the class has ended" in " ".join(w.value for w in student.warning)
    student.sidebar.text_input(key="class_code_input").input("<b>x</b>")
    next(b for b in student.sidebar.form_submit_button if b.label == "Join the class").click().run()
    assert_healthy(student)
    assert "unknown or the class has ended" in " ".join(w.value for w in student.warning)
    monkeypatch.setenv("ATTENTION_LAB_TEACHER_PASSWORD", "s3cret")
    teacher, _ = open_from_link("teacher")
    teacher.text_input(key="class_start_password").input("guess")
    next(b for b in teacher.form_submit_button if b.label == "Start a class").click().run()
    assert "not right" in " ".join(w.value for w in teacher.warning) and not teacher.metric
    assert len(_start_class(teacher, "s3cret")) == 6


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
    for start in range(0, len(bad_inputs), 3):  # a new session every 3 tries: past that the session waits
        teacher, _ = open_from_link("teacher")
        for text in bad_inputs[start:start + 3]:
            teacher.text_input(key="class_start_password").input(text[:200])
            next(b for b in teacher.form_submit_button if b.label == "Start a class").click().run()
            assert_healthy(teacher)
            assert "not right" in " ".join(w.value for w in teacher.warning) and not teacher.metric, repr(text)


def test_the_teachers_lesson_bar_moves_the_class():
    teacher, _ = open_from_link("teacher")
    code = _start_class(teacher)
    student, _ = open_from_link(None, {"class": code})
    teacher.button(key="class_open_stop").click().run()  # the teacher projects the stop itself
    assert_healthy(teacher)
    assert "stop 1 of" in teacher.markdown[0].value  # the bar names the view; the stop's section is shown first
    # Before the reveal the projected stop hides the chart that answers its question, and says so.
    assert not chart_specs(teacher) and "The model's answer" not in _texts(teacher)
    assert any("hidden until you reveal" in i.value for i in teacher.info)
    teacher.button(key="stop_reveal").click().run()
    go_to(teacher, "compare")  # AppTest runs the page it was opened on again; the browser stays on the stop's page
    assert teacher.subheader[0].value == "Accuracy against sentence length"
    teacher.button(key="lesson_next").click().run()
    assert "stop 2 of" in teacher.markdown[0].value
    student.run()
    assert_healthy(student)
    assert "stop 2 of" in student.markdown[0].value  # the class followed the teacher's Next


def test_the_teacher_turns_uploads_off_for_her_students():
    teacher, _ = open_from_link("teacher")
    code = _start_class(teacher)
    student, _ = open_from_link(None, {"class": code})
    go_to(student, "train")
    assert any(u for u in student.get("file_uploader"))  # on by default
    teacher.toggle(key="class_uploads").set_value(False).run()
    assert_healthy(teacher)
    student.run()
    assert_healthy(student)
    assert not student.get("file_uploader")
    assert any("Your teacher turned uploads off" in i.value for i in student.info)
    outsider, _ = open_from_link("train")  # not in the class: the operator's setting alone
    assert outsider.get("file_uploader")


def test_a_refused_teacher_action_is_said_on_her_page_never_raised():
    """The store's refusals reach the teacher as words (ui/live_class/refusals.py): a click on an ended class (ended on
    her other device) says so, and a session whose token the class does not know says it no longer holds the class
    and offers the start and take-back forms again; neither is an exception."""
    from tests.app_links import lab_session_of
    from ui.session import TeacherHandle

    teacher, _ = open_from_link("teacher")
    code = _start_class(teacher)
    handle = lab_session_of(teacher).teacher.handle
    ClassStore().teacher(handle.code, handle.token, handle.lesson).end()  # her phone ends it
    teacher.button(key="class_next").click().run()  # the projector's Next, drawn before the end
    assert_healthy(teacher)
    assert f"Class {code} has ended" in " ".join(w.value for w in teacher.warning)
    assert lab_session_of(teacher).teacher.handle is None and teacher.text_input(key="class_take_back_code")

    forged, _ = open_from_link("teacher")
    other = _start_class(forged)
    lab_session_of(forged).teacher.handle = TeacherHandle(other, "not-a-teacher-key", "intro")
    forged.run()
    assert_healthy(forged)
    assert f"no longer holds the class {other}" in " ".join(w.value for w in forged.warning)
    assert lab_session_of(forged).teacher.handle is None

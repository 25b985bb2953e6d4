"""Peer instruction in AppTest: the teacher switches a question to vote-discuss-vote, three students answer alone
(no right/wrong, no page, no distribution), discuss with the countdown, answer again; the teacher's projected screen
hides round 1 until she shows it, then shows both rounds, the shares before/after and the switch matrix."""
import json

import pytest

from tests.app_links import assert_healthy, chart_specs, open_from_link
from tests.test_class_pages import _metric, _start_class, _texts

QID = "intro:1"  # stop 1: which model translates long sentences worst (right: option 3, GRU without attention)


@pytest.fixture(autouse=True)
def data_folder(tmp_path, monkeypatch):
    monkeypatch.setenv("ATTENTION_LAB_DATA", str(tmp_path))
    monkeypatch.delenv("ATTENTION_LAB_TEACHER_PASSWORD", raising=False)


def _send(student, key: str, option: int) -> None:
    """Choose `option` in the radio `key` and send its own form (stop 1 also holds the check questions' forms)."""
    student.radio(key=key).set_value(option)
    form = key.removesuffix("_choice") + "_form"
    next(b for b in student.form_submit_button if b.form_id == form).click().run()
    assert_healthy(student)


def _infos(at) -> str:
    return " ".join(i.value for i in at.info)


def test_two_rounds_with_three_students_and_the_teacher():
    teacher, _ = open_from_link("teacher")
    code = _start_class(teacher)
    teacher.button_group(key=f"peer_mode_{QID}").set_value("peer").run()
    assert_healthy(teacher)
    students = [open_from_link(None, {"class": code})[0] for _ in range(3)]
    for student, option in zip(students, (3, 1, 2), strict=True):  # one right alone, two wrong
        _send(student, "q_intro_1_choice", option)
        assert "Wait: the class discusses next" in _infos(student)
        assert not chart_specs(student)  # the page stays hidden until the reveal
        assert not student.success and not [w for w in student.warning if "model's answer" in w.value]

    teacher.run()
    assert _metric(teacher, "Answered") == "3" and not teacher.get("vega_lite_chart")  # hidden from the room
    assert "hidden from the room until you show them: 3 answered" in _texts(teacher)
    assert "33% right alone" not in _texts(teacher)  # the rule of thumb only in her peek until she shows round 1
    teacher.toggle(key=f"peer_shown_{QID}").set_value(True).run()
    bars = json.loads(teacher.get("vega_lite_chart")[0].proto.spec)
    assert bars["mark"]["color"] == "#0072B2"  # neutral: showing round 1 does not reveal the answer
    # the rule of thumb is a share right: beside the bars it points at the right one, so it stays on her private screen
    assert "33% right alone" not in _texts(teacher) and "Crouch & Mazur 2001" not in _texts(teacher)

    teacher.number_input(key=f"peer_seconds_{QID}").set_value(60)
    teacher.button(key="peer_discuss").click().run()
    assert_healthy(teacher)
    assert any("left" in m.value for m in teacher.markdown)  # the countdown on the projector
    for student in students:
        student.run()  # the class poll reruns a student's page when the phase changes
        assert "Discuss with your neighbour" in _infos(student)
        # the teacher's countdown (60 s, stored: the same end on every screen), a few seconds gone on this box,
        # counted in her browser (ui/live_class/countdown.js): her page gets the milliseconds left and the words once
        (counted,) = [json.loads(c.proto.json) for c in student.get("bidi_component")
                      if "countdown" in json.loads(c.proto.json).get("key", "")]
        assert 50_000 < counted["left_ms"] <= 60_000 and counted["left"] == "Discussion: {time} left", counted
        assert not [m.value for m in student.markdown if "left" in m.value]  # no clock redrawn by the server
        assert not [r for r in student.get("radio") if r.key.startswith("q_")]  # no vote during the discussion
    late = open_from_link(None, {"class": code})[0]  # joins during the discussion: nothing to vote on now
    assert not [r for r in late.get("radio") if r.key.startswith("q_")] and "Discuss with your neighbour" in _infos(late)

    # Peers paired by disagreement (pairs, the size control's default): three different answers make one group of
    # three; each student's screen names the others by their seat labels (A2, C2, E2: the order they joined), never
    # an answer; the late joiner did not vote, so she joins any group.
    teacher.button(key="peer_pair").click().run()
    assert "Discussion groups: 1 (pairs), from 3 round-1 votes." in _texts(teacher)
    assert "Groups with a right answer" not in _texts(teacher)  # a share right in disguise: not on the projector
    assert "Discuss in your group: your screen names whom" in _infos(teacher)  # what the room reads
    for student, me, others in zip(students, ("A2", "C2", "E2"), ("C2 and E2", "A2 and E2", "A2 and C2"), strict=True):
        student.run()  # her class watch reruns her question: the class's version changed
        assert f"You are {me}. Talk with {others}: why" in _infos(student)
        assert f"In class {code}, you are {me}:" in " ".join(c.value for c in student.caption)
    late.run()
    assert "You are F2. You are in no group" in _infos(late)
    # her private view (the rule of thumb, and how many groups have a right answer) and the groups turned off
    teacher.toggle(key="teacher_private").set_value(True).run()
    assert "33% right alone: between about 30% and 70%" in _texts(teacher) and "Crouch & Mazur 2001" in _texts(teacher)
    assert "Groups with a right answer in them: 1 of 1." in _texts(teacher)
    teacher.toggle(key="teacher_private").set_value(False).run()
    teacher.button(key="peer_ungroup").click().run()
    students[0].run()
    assert "Discuss with your neighbour" in _infos(students[0]) and "Talk with" not in _infos(students[0])
    teacher.button(key="peer_pair").click().run()  # on again: the report keeps that this discussion had groups

    teacher.button(key="peer_round2").click().run()
    for student, option in zip(students, (3, 3, 1), strict=True):  # one wrong→right, one wrong→wrong, right→right
        student.run()
        assert "Your first answer" in " ".join(c.value for c in student.caption)
        _send(student, "q_intro_1_round2_choice", option)
        assert "Your second answer" in _infos(student) and not chart_specs(student)

    teacher.run()
    charts = teacher.get("vega_lite_chart")  # both rounds side by side, per answer, in one chart (tests/
    assert len(charts) == 1  # test_class_report.py checks its data); two blues, no colour of a verdict
    two = json.loads(charts[0].proto.spec)
    assert two["layer"][0]["encoding"]["color"]["scale"]["range"] == ["#0072B2", "#56B4E9"]
    assert _metric(teacher, "Round 2 (after the discussion): Answered") == "3"
    assert "Share correct" not in _texts(teacher) and "Right before" not in _texts(teacher)  # nothing given away yet
    teacher.button(key="class_reveal").click().run()
    assert _metric(teacher, "Right before") == "33%" and _metric(teacher, "Right after") == "67%"
    matrix = teacher.table[0].value
    assert matrix.to_numpy().tolist() == [[1, 0], [1, 1]]  # right→right 1, right→wrong 0, wrong→right 1, wrong→wrong 1

    students[1].run()  # revealed: her last answer (GRU without attention) is right, and the page shows
    assert students[1].success and chart_specs(students[1])
    assert "Your first answer was Transformer" in " ".join(c.value for c in students[1].caption)
    # The class report (teacher-only) has the question's two rounds and switch matrix
    teacher.run()
    assert any("Class report" in e.label for e in teacher.expander)
    teacher.session_state["report_open"] = True  # she opens it: read from the store now, what she has revealed
    teacher.run()
    questions = next(d.value for d in teacher.dataframe if "wrong→right" in d.value.columns)
    row = questions[questions["Stop"] == 1].iloc[0]
    assert (row["Round 1 answered"], row["Round 2 answered"], row["wrong→right"], row["right→wrong"]) == (3, 3, 1, 0)
    assert row["Groups by disagreement"] == "yes"
    discussions = next(d.value for d in teacher.dataframe if "Discussion" in d.value.columns)
    assert discussions.iloc[0][["Discussion", "Questions", "Answers in both rounds"]].tolist() == [
        "in groups formed by disagreement", 1, 3]
    assert any("deleted 7 days" in c.value for c in teacher.caption)  # the retention rule, said
    assert not [e for e in students[0].expander if "Class report" in e.label]  # never on a student's screen


def test_check_questions_at_the_first_stop_are_taken_not_graded():
    teacher, _ = open_from_link("teacher")
    code = _start_class(teacher)
    student, _ = open_from_link(None, {"class": code})
    assert any("Before the lecture: 3 quick questions" in e.label for e in student.expander)
    stop_text = "squeezes the whole English sentence"  # would answer a check: it waits for the three
    assert stop_text not in _texts(student) and "opens once you have answered the check questions" in _infos(student)
    _send(student, "check_pre_weight_choice", 1)  # "attention weight = importance"
    assert "Answer taken: that word matters most" in _infos(student)
    assert not student.success and not [w for w in student.warning if "weight" in w.value]  # not graded on screen
    assert not chart_specs(student)  # the stop's own question still hides the page
    assert stop_text not in _texts(student)
    teacher.run()
    assert "Check questions: 1 answers from 1 students" in _texts(teacher)
    _send(student, "check_pre_scale_choice", 2)
    _send(student, "check_pre_order_choice", 2)
    assert stop_text in _texts(student) and "opens once you have answered" not in _infos(student)
    assert not chart_specs(student)  # the text, not the page: the stop's own question still hides it


def test_the_report_stays_after_the_class_ends():
    teacher, _ = open_from_link("teacher")
    code = _start_class(teacher)
    student, _ = open_from_link(None, {"class": code})
    _send(student, "check_pre_scale_choice", 1)  # "the scale is there to make training faster"
    teacher.button(key="class_end").click().run()
    assert_healthy(teacher)
    assert any(f"Class report of class {code} (ended)" in e.label for e in teacher.expander)
    # the class has ended: its report opens by itself, read now, with the check questions in it
    picked = next(d.value for d in teacher.dataframe if "Misconception" in d.value.columns)
    assert picked.iloc[0][["Misconception", "Round or check", "Picked", "Answered"]].tolist() == [
        "the scale is there to make training faster", "before", 1, 1]

"""The class report (classroom/report.py, ui/live_class/report.py): both rounds, the switch matrix, Hake's gain over the
students who answered both, misconception pick rates; its CSV and its offline HTML; teacher-only."""
import csv
import io
import re

import pytest

from classroom.lessons import load_lessons
from classroom.peer import normalized_gain, rule_of_thumb
from classroom.report import build_report
from classroom.errors import NotTheTeacher
from classroom.store import ClassStore
from ui.live_class.report import report_csv, report_figures, report_tables
from ui.lessons.catalogue import known_pages
from viz.class_report import report_html


@pytest.fixture(scope="module")
def lesson():
    return load_lessons(known_pages())[0]["intro"]


def _class(tmp_path):
    store = ClassStore(tmp_path / "db")
    teacher = store.create_class("intro")
    code = teacher.code
    for student in ("a", "b", "c", "d", "late"):  # the students of these tests, admitted (ClassStore.join)
        store.join(code, student)
    return store, teacher


def test_gain_rule_of_thumb_and_the_report_from_a_small_class(tmp_path, lesson):
    assert normalized_gain(0.25, 0.75) == pytest.approx(2 / 3) and normalized_gain(1.0, 1.0) is None
    assert [rule_of_thumb(x) for x in (0.2, 0.3, 0.7, 0.71)] == ["reteach", "discuss", "discuss", "move_on"]
    store, teacher = _class(tmp_path)
    code = teacher.code
    # check question "weight" (right: option 2): 4 students before, 3 of them after; 1 of 4 right before
    for student, before in zip("abcd", ("2", "1", "1", "3"), strict=True):
        store.answer(code, student, "intro:pre:weight", before, before == "2", stop=1)
    # stop 8 (right: option 2) in peer instruction
    teacher.move(8)
    teacher.set_phase("intro:8", "peer")
    for student, first in zip("abc", ("2", "3", "1"), strict=True):
        store.answer(code, student, "intro:8", first, first == "2", stop=8)
    teacher.set_phase("intro:8", "peer", "round2")
    for student, second in zip("abc", ("2", "2", "3"), strict=True):
        store.answer(code, student, "intro:8", second, second == "2", round=2, stop=8)
    store.answer(code, "late", "intro:8", "3", False, stop=8)  # round 1 after it closed: not in the report
    teacher.move(18)
    for student, after in zip("abc", ("2", "2", "1"), strict=True):
        store.answer(code, student, "intro:post:weight", after, after == "2", stop=18)
    report = build_report(lesson, teacher.answer_rows())
    question = next(q for q in report.questions if q.question_id == "intro:8")
    assert (question.first.answered, question.first.right, question.second.right) == (3, 1, 2)
    assert (question.switches.right_right, question.switches.wrong_right, question.switches.wrong_wrong) == (1, 1, 1)
    weight = next(c for c in report.checks if c.check_id == "weight")
    # the pairs: a (right→right), b (wrong→right), c (wrong→wrong); d has no post answer
    assert weight.students == 3 and weight.pre == pytest.approx(1 / 3) and weight.post == pytest.approx(2 / 3)
    assert weight.gain == pytest.approx((2 / 3 - 1 / 3) / (1 - 1 / 3))
    assert report.lecture.gain == pytest.approx(weight.gain) and report.lecture.students == 3
    picks = {(p.idea["en"], p.when): (p.picks, p.answered) for p in report.misconceptions}
    assert picks[("attention weight = importance", "pre")] == (2, 4)  # option 1 before: b and c, of 4
    assert picks[("every head works in the full d_model", "1")] == (1, 3)  # stop 8 option 3 in round 1
    assert picks[("d_k is the number of heads", "1")] == (1, 3)

    tables = report_tables(report, "en")
    rows = list(csv.DictReader(io.StringIO(report_csv(tables).decode())))
    lecture_row = next(r for r in rows if r["table"] == "checks" and r["check"] == "lecture")
    assert float(lecture_row["gain"]) == pytest.approx(0.5) and lecture_row["students_both"] == "3"
    q8 = next(r for r in rows if r["table"] == "questions" and r["stop"] == "8")
    assert (q8["right_right"], q8["wrong_right"], q8["right_wrong"], q8["wrong_wrong"]) == ("1", "1", "0", "1")

    page = report_html("Report <x>", ["kept 7 days"], report_figures(report, "en"),
                       [("checks", tables["checks"].to_html())])
    # opens offline: no script loaded from anywhere, plotly.js itself inline (once)
    assert not re.search(r"<script[^>]*\bsrc=", page) and page.count("plotly.js v") == 1
    assert page.count("Plotly.newPlot") == 3 and "Report &lt;x&gt;" in page and "kept 7 days" in page


def test_only_the_teacher_reads_the_answers(tmp_path):
    store, teacher = _class(tmp_path)
    code = teacher.code
    teacher.move(8)
    store.answer(code, "a", "intro:8", "2", True, stop=8)
    with pytest.raises(NotTheTeacher):
        store.teacher(code, "not-the-token", "intro").answer_rows()
    assert [r.student for r in teacher.answer_rows()] == ["a"]


def test_two_rounds_chart_gives_no_answer_away_before_the_reveal():
    import pandas as pd

    from viz.class_report import two_rounds_chart

    def data(right):
        rows = pd.DataFrame({"answer": ["<b>4</b>", "8", "4"], "round": ["Round 1", "Round 1", "Round 2"],
                             "students": [1, 2, 3], "right": right})
        spec = two_rounds_chart(rows, "students", "right", "wrong").to_dict()
        return spec, next(iter(spec["datasets"].values()))

    before, rows = data([None, None, None])
    assert {(d["round"], d["answer"], d["students"], d["mark"]) for d in rows} == {
        ("Round 1", "<b>4</b>", 1, ""), ("Round 1", "8", 2, ""), ("Round 2", "4", 3, "")}  # text stays data
    assert before["layer"][0]["encoding"]["color"]["scale"]["range"] == ["#0072B2", "#56B4E9"]
    after, rows = data([True, False, True])
    assert [d["mark"] for d in rows] == ["✓ right", "✗ wrong", "✓ right"]  # said in words beside each bar
    assert after["layer"][1]["encoding"]["text"]["field"] == "mark"


def test_the_report_files_hold_the_answers_stored_when_they_are_downloaded(tmp_path, lesson):
    """Issue 38 item 1: the files are made on their click from the store, not from the report the page built: the
    answers and the reveals stored after the files were offered are in them (revealed questions only, as on the page)."""
    from ui.live_class.report import report_files

    store, teacher = _class(tmp_path)
    code = teacher.code
    teacher.move(8)
    store.answer(code, "a", "intro:8", "2", True, stop=8)
    csv_file, html_file = report_files(teacher, lesson, "en", None, "Report", ["kept"])

    def questions() -> list[dict]:
        return [r for r in csv.DictReader(io.StringIO(csv_file().decode())) if r["table"] == "questions"]

    assert questions() == []  # not revealed yet: no share right of it in any file
    store.answer(code, "b", "intro:8", "3", False, stop=8)  # after the files were offered
    teacher.reveal("intro:8")
    [stop8] = questions()
    assert (stop8["stop"], stop8["round1_answered"], stop8["round1_right"]) == ("8", "2", str(1 / 2))
    assert "Plotly.newPlot" in html_file().decode()


def test_the_report_compares_discussions_in_groups_with_those_among_neighbours(lesson):
    """Per question, whether its discussion had groups formed by disagreement (classroom/grouping.py); and round 1 to
    round 2 pooled over the questions of each kind that occurred, so the gains with and without groups compare."""
    from classroom.records import AnswerRow
    from classroom.report import DiscussionGain

    grouped, among_neighbours = [f"intro:{s.number}" for s in lesson.stops if s.question is not None][:2]
    rights = {grouped: ((True, False, False, False), (True, True, True, False)),  # 1 of 4 right alone, 3 after
              among_neighbours: ((True, False, False, False), (True, True, False, False))}  # 1, then 2
    rows = [AnswerRow(question, student, round, "x", right, False) for question, rounds in rights.items()
            for round, answers in enumerate(rounds, start=1) for student, right in zip("abcd", answers, strict=True)]
    report = build_report(lesson, rows, grouped={grouped})
    assert [q.grouped for q in report.questions] == [True, False]
    assert report.discussions == [DiscussionGain(True, 1, 0.25, 0.75, 4, pytest.approx(2 / 3)),
                                  DiscussionGain(False, 1, 0.25, 0.5, 4, pytest.approx(1 / 3))]
    csv_rows = list(csv.DictReader(io.StringIO(report_csv(report_tables(report, "en")).decode())))
    assert [r["grouped"] for r in csv_rows if r["table"] == "questions"] == ["1", "0"]
    kinds = {r["discussion"]: (r["questions"], r["pairs"], float(r["gain"])) for r in csv_rows
             if r["table"] == "discussions"}
    assert kinds == {"groups": ("1", "4", pytest.approx(2 / 3)), "neighbours": ("1", "4", pytest.approx(1 / 3))}
    assert build_report(lesson, rows).discussions[0].questions == 2  # no groups anywhere: one kind, both questions


def test_a_cell_questions_taps_are_counted_per_cell_in_the_report_and_its_csv(tmp_path, lesson):
    """Issue 55: per cell question its taps per cell and round with the judgement stored with them, beside the
    question's share right; the CSV carries them as a table of their own."""
    stop = next(s for s in lesson.stops if s.question is not None and s.question.kind == "cell")
    qid = f"intro:{stop.number}"
    store, teacher = _class(tmp_path)
    code = teacher.code
    teacher.move(stop.number)
    for student, cell in zip("abcd", ("6,5", "6,2", "6,5", "6,5"), strict=True):
        store.answer(code, student, qid, cell, cell == "6,5", stop=stop.number)
    teacher.reveal(qid)
    report = build_report(lesson, teacher.answer_rows())
    question = next(q for q in report.questions if q.question_id == qid)
    assert question.first.share == pytest.approx(0.75)
    assert [(t.round, t.cell, t.taps, t.right) for t in question.taps] == [(1, "6,5", 3, True), (1, "6,2", 1, False)]
    assert all(not q.taps for q in report.questions if q.question_id != qid)  # other kinds have none
    rows = list(csv.DictReader(io.StringIO(report_csv(report_tables(report, "ko")).decode())))
    cells = [(r["stop"], r["round"], r["cell"], r["taps"], r["right"]) for r in rows if r["table"] == "cells"]
    assert cells == [(str(stop.number), "1", "6,5", "3", "True"), (str(stop.number), "1", "6,2", "1", "False")]

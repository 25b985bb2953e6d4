"""The gradebook export (ui/live_class/gradebook.py over classroom/gradebook.py): its CSV files hold exactly the answers
the students gave (a live class and a self-paced one, on SQLite and PostgreSQL), in the layout a learning management
system imports, with times in ISO 8601 UTC, and no cell a spreadsheet would run as a formula."""
import csv
import io

import pytest

from classroom.gradebook import GradedAnswer, Gradebook
from classroom.lessons import parse_lesson
from classroom.store import ClassStore
from tests.bad_inputs import load_bad_inputs
from tests.test_homework_pages import LESSON
from ui.lessons.catalogue import known_pages
from ui.live_class.gradebook import answers_csv, gradebook_csv, iso_utc, lesson_questions, summary_csv

T0 = 1_800_000_000.0  # 2027-01-15T08:00:00Z


def _rows(data: bytes) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(data.decode("utf-8"))))


@pytest.fixture()
def store(store_location):
    store = ClassStore(store_location)
    yield store
    store.close()


@pytest.mark.parametrize("paced", [False, True], ids=["live", "self-paced"])
def test_the_csv_files_hold_exactly_the_answers_given(store, paced):
    lesson = parse_lesson("hw", LESSON, known_pages())
    questions = lesson_questions(lesson)
    assert questions == ["hw:1", "hw:2", "hw:3"]
    teacher = store.create_class("hw", now=T0, deadline=T0 + 86400 if paced else None)
    code = teacher.code
    for n, student in enumerate(("ana", "bo", "cy")):
        store.join(code, student, now=T0 + n)
    given = [("ana", "hw:1", "2", True, 10), ("bo", "hw:1", "1", False, 20), ("ana", "hw:2", "1", False, 30)]
    for student, question, answer, right, seconds in given:
        if paced and question == "hw:2":
            store.advance(code, student, 2, ("hw:1",), last=3, now=T0 + seconds)
        store.answer(code, student, question, answer, right, T0 + seconds, stop=int(question[-1]))
        if not paced and question == "hw:1" and student == "bo":
            teacher.move(2, now=T0 + 25)
    book = teacher.gradebook(now=T0 + 60)
    labels = dict(zip(("ana", "bo", "cy"), book.seats, strict=True))  # the seats' labels, in the order they joined
    long = _rows(answers_csv(book))
    assert [(r["seat"], r["question"], r["round"], r["answer"], r["right"], r["late"], r["answered_at"])
            for r in long] == [(labels[s], q, "1", a, str(int(right)), "0", iso_utc(T0 + t))
                               for s, q, a, right, t in given]
    assert long[0]["answered_at"] == "2027-01-15T08:00:10Z"
    wide = _rows(gradebook_csv(book, questions))
    assert list(wide[0]) == ["seat", "hw:1", "hw:2", "hw:3", "total"]
    assert [list(row.values()) for row in wide] == [[labels["ana"], "1", "0", "", "1"],
                                                    [labels["bo"], "0", "", "", "0"],
                                                    [labels["cy"], "", "", "", "0"]]  # joined, answered nothing
    summary = _rows(summary_csv(book, questions))
    assert [(r["question"], r["answered"], r["right"], r["share_right"]) for r in summary] == [
        ("hw:1", "2", "1", "0.5"), ("hw:2", "1", "0", "0.0"), ("hw:3", "0", "0", "")]


def test_a_late_answer_and_round_two_count_as_a_teacher_expects():
    book = Gradebook(("A1", "B1"), (GradedAnswer("A1", "q:1", 1, "x", False, False, T0),
                                    GradedAnswer("A1", "q:1", 2, "y", True, False, T0 + 5),  # round 2 counts
                                    GradedAnswer("B1", "q:1", 1, "y", True, True, T0 + 9)))  # late: never counted
    wide = _rows(gradebook_csv(book, ["q:1"]))
    assert [(r["seat"], r["q:1"], r["total"]) for r in wide] == [("A1", "1", "1"), ("B1", "", "0")]
    assert [r["late"] for r in _rows(answers_csv(book))] == ["0", "0", "1"]  # the long file keeps every answer


def test_no_cell_runs_as_a_formula_whatever_the_seat_names_and_answers():
    names = [*load_bad_inputs(), "=1+1", "+SUM(A1)", "-2+3", "@cmd", "=HYPERLINK(\"http://x\")"]
    book = Gradebook(tuple(names), tuple(GradedAnswer(name, "q:1", 1, name, None, False, T0) for name in names))
    for data in (gradebook_csv(book, ["q:1"]), answers_csv(book), summary_csv(book, ["q:1"])):
        for row in csv.reader(io.StringIO(data.decode("utf-8"))):
            for cell in row:
                assert cell[:1] not in ("=", "+", "-", "@"), cell
    wide = _rows(gradebook_csv(book, ["q:1"]))
    assert [row["seat"] for row in wide] == [("'" + n if n[:1] in "=+-@\t\r" and n else n) for n in names]
    assert [row["answer"] for row in _rows(answers_csv(book))] == [row["seat"] for row in wide]  # the words kept

"""Anonymous student work on the projector (issue 55, part 4; classroom/showcase.py): the store's rules, on SQLite and
PostgreSQL (tests/conftest.py's store_location): only the teacher's key projects, one item per class, one click takes
it down, a hidden or waiting text is refused, another class's answer and another stop's question are refused, moving
the class takes it down; a view's link is a view of this app or nothing; the report records kind and time, no name.
The teacher's screens (pick, project, take down; English and Korean) are AppTests at the end."""
import csv
import io
import time

import pytest

from classroom.errors import ClassElsewhere, NoSuchAnswer, NotApproved, NotAView, NotTheTeacher
from classroom.lessons import parse_lesson
from classroom.recent import class_version
from classroom.report import build_report, reportable
from classroom.showcase import VIEW_LINK_CHARS, view_link
from classroom.store import ClassStore
from ui.lessons.catalogue import known_pages
from ui.lessons.view_question import app_views
from ui.live_class.report import report_csv, report_tables

Q, STOP = "intro:16", 16  # a question of the class's stop (the store does not read the lesson)
VIEWS = {"attention": {"model", "sentence", "kind", "layer", "head", "v", "lang", "presenter"}, "decoding": {"step"}}


@pytest.fixture()
def store(store_location):
    store = ClassStore(store_location)
    yield store
    store.close()


def _class(store: ClassStore, students: int = 3):
    teacher = store.create_class("intro", stop=STOP, class_size=students)
    for n in range(students):
        store.join(teacher.code, f"s{n}")
    return teacher


def test_a_view_link_is_a_page_of_this_app_with_its_own_parameters_or_nothing():
    assert view_link("attention?model=bert&layer=2&head=4&v=2", VIEWS) == "attention?model=bert&layer=2&head=4&v=2"
    # the reader's language and presenter mode are dropped (each reader opens it in her own)
    assert view_link("attention?layer=2&lang=ko&presenter=true", VIEWS) == "attention?layer=2"
    assert view_link("decoding", VIEWS) == "decoding"
    assert view_link("attention?sentence=%3Cb%3Eevil+%F0%9F%98%80", VIEWS) == "attention?sentence=%3Cb%3Eevil+%F0%9F%98%80"
    for bad, reason in [("javascript:alert(1)", "elsewhere"), ("//evil.example/attention", "elsewhere"),
                        ("https://lab.school.kr/attention?layer=2", "elsewhere"), ("/attention", "elsewhere"),
                        ("\\\\evil\\attention", "elsewhere"), ("ftp://lab/attention", "elsewhere"),
                        ("../attention?layer=2", "page"), ("a/attention", "page"), ("attention/", "page"),
                        ("attention#x", "fragment"), ("admin?x=1", "page"), ("attention?step=1", "parameter"),
                        ("attention?layer=1&layer=2", "repeated"), ("attention?onload=x", "parameter"),
                        ("attention?sentence=a%0Ab", "value"), ("attention?sentence=%E2%80%AEevil", "value"),
                        ("attention?" + "&".join(f"x{n}=1" for n in range(30)), "parameter"), ("attention?sentence=" + "a" * 700, "value"),
                        ("attention?sentence=" + "a" * VIEW_LINK_CHARS, "length"), ("", "length")]:
        with pytest.raises(NotAView) as refused:
            view_link(bad, VIEWS)
        assert refused.value.reason == reason, bad
    # the app's pages and parameters: every page knows the model and the language, only the attention page its head
    views = app_views()
    assert {"attention", "decoding", "llm_answer", "home"} <= set(views) and "head" in views["attention"]
    assert "model" in views["decoding"] and "head" not in views["home"] and "v" in views["home"]


def test_only_the_teacher_projects_one_item_and_one_click_takes_it_down(store):
    teacher = _class(store)
    code = teacher.code
    store.answer(code, "s0", Q, "3,1", None, stop=STOP)
    store.answer(code, "s1", Q, "2,2", None, stop=STOP)
    session = store.session(code)
    assert store.projected(code) is None and session.projected is None
    with pytest.raises(NotTheTeacher):  # a student's forged handle, or a token of nobody
        store.teacher(code, "not-the-token", "intro").project(Q, "cell", "3,1")
    teacher.project(Q, "cell", "3,1", now=100.0)
    item = store.projected(code)
    assert (item.question, item.stop, item.kind, item.shown, item.at) == (Q, STOP, "cell", "3,1", 100.0)
    assert not {"s0", "s1"} & set(map(str, vars(item).values()))  # no student goes with it
    assert class_version(store.session(code)) != class_version(session)  # every student's page follows it
    teacher.project(Q, "cell", "2,2", now=110.0)  # one item: the new one replaces the old
    assert store.projected(code).shown == "2,2"
    other_device = store.take_back(code)  # the projector and her phone each hold a key
    with pytest.raises(NotTheTeacher):
        store.teacher(code, "x" + teacher.token, "intro").take_down()
    assert other_device.take_down(now=120.0) and store.projected(code) is None and store.session(code).projected is None
    assert not teacher.take_down(now=121.0)  # nothing up
    assert teacher.report_answers().projections == ((Q, "cell", 100.0, 110.0), (Q, "cell", 110.0, 120.0))


def test_a_hidden_or_waiting_text_is_never_projected_and_hiding_takes_it_down(store):
    teacher = _class(store)
    code = teacher.code
    store.answer_text(code, "s0", Q, "Keys 🔑", None, stop=STOP)
    store.answer_text(code, "s1", Q, "\u202eevil <b>x</b>", None, stop=STOP)
    with pytest.raises(NotApproved):  # waiting for her
        teacher.project(Q, "text", "keys 🔑")
    teacher.hide_texts(Q, ["evil <b>x</b>"])
    with pytest.raises(NotApproved):  # hidden
        teacher.project(Q, "text", "evil <b>x</b>")
    assert store.projected(code) is None
    teacher.approve_texts(Q, ["keys 🔑"])
    teacher.project(Q, "text", "keys 🔑")
    assert store.projected(code).shown == "Keys 🔑"  # the text she approved, as she approved it
    teacher.hide_texts(Q, ["keys 🔑"])  # hiding it takes it down at once
    assert store.projected(code) is None and store.session(code).projected is None
    with pytest.raises(NotApproved):
        teacher.project(Q, "text", "keys 🔑")


def test_another_class_answer_and_another_stop_are_refused_and_a_move_takes_it_down(store):
    ours, theirs = _class(store), _class(store)
    store.answer(theirs.code, "s0", Q, "4,4", None, stop=STOP)
    store.answer(ours.code, "s0", Q, "1,1", None, stop=STOP)
    with pytest.raises(NoSuchAnswer):  # their answer is not an answer of our class
        ours.project(Q, "cell", "4,4")
    with pytest.raises(NoSuchAnswer):  # nor a view nobody sent
        ours.project(Q, "view", "attention?layer=2")
    with pytest.raises(NotTheTeacher):  # their teacher's key does nothing in our class
        store.teacher(ours.code, theirs.token, "intro").project(Q, "cell", "1,1")
    with pytest.raises(ClassElsewhere):  # a question of a stop the class is not on
        ours.project("intro:15", "cell", "1,1")
    ours.project(Q, "cell", "1,1")
    assert store.projected(theirs.code) is None and store.projected(ours.code).shown == "1,1"
    ours.move(STOP + 1)  # the class moves on: the item answered the stop it left
    assert store.projected(ours.code) is None
    ours.move(STOP)
    assert store.projected(ours.code) is None  # and it does not come back
    ours.end()
    assert store.projected(ours.code) is None


def test_a_student_sends_a_view_of_this_app_and_the_teacher_projects_it(store):
    teacher = _class(store)
    code = teacher.code
    sent = store.answer_view(code, "s0", Q, "attention?layer=2&head=4&v=2&lang=ko", VIEWS, stop=STOP)
    assert sent == "attention?layer=2&head=4&v=2" == store.student_answer(code, "s0", Q)
    with pytest.raises(NotAView):
        store.answer_view(code, "s1", Q, "https://evil.example/phish?layer=2", VIEWS, stop=STOP)
    assert store.student_answer(code, "s1", Q) is None  # nothing stored
    teacher.project(Q, "view", sent)
    assert (store.projected(code).kind, store.projected(code).shown) == ("view", sent)


def test_the_report_records_what_was_projected_by_kind_and_time_without_names(store):
    source = ('title = "t"\n[[stop]]\npage = "attention"\ntext = "a"\n'
              '[[stop]]\npage = "attention"\ntext = "Show it."\n[stop.question]\nkind = "view"\nprompt = "Why?"\n')
    lesson = parse_lesson("tv", source, known_pages())
    assert lesson.stops[1].question.kind == "view" and lesson.stops[1].problem is None
    teacher = store.create_class("tv", stop=2, class_size=2)
    store.join(teacher.code, "s0")
    link = store.answer_view(teacher.code, "s0", "tv:2", "attention?sentence=Alice+was+here", VIEWS, stop=2)
    teacher.project("tv:2", "view", link, now=time.time())
    teacher.take_down()
    read = teacher.report_answers()
    report = build_report(lesson, reportable(read), projections=read.projections)
    assert [(p.stop, p.kind) for p in report.projected] == [(2, "view")] and report.projected[0].seconds >= 0
    rows = [row for row in csv.DictReader(io.StringIO(report_csv(report_tables(report, "en")).decode()))
            if row["table"] == "projected"]
    assert [(row["stop"], row["question"], row["kind"]) for row in rows] == [("2", "Why?", "view")] and rows[0]["at"]
    assert "Alice" not in report_csv(report_tables(report, "en")).decode()  # which answer it was is not in it


@pytest.mark.parametrize("fields, problem", [
    ('prompt = "Why?"\nanswer = "attention"', "takes a prompt only, not answer"),
    ('prompt = "Why?"\npeer = true', "not peer"),
    ('prompt = "Why?"\ncompute = "attention_cell"', "not compute"),
    ('prompt = 3', "prompt must be a text"),
])
def test_a_malformed_view_question_is_a_problem_at_its_stop_with_its_line(fields, problem):
    source = ('title = "t"\n[[stop]]\npage = "attention"\ntext = "a"\n\n'
              '[[stop]]\npage = "attention"\ntext = "b"\n[stop.question]\nkind = "view"\n' + fields + "\n")
    first, second = parse_lesson("views", source, known_pages()).stops
    assert first.problem is None and second.question is None and problem in second.problem, second.problem
    assert second.line == 6  # the lesson bar says "lesson file line 6"

"""Anonymous student work on the projector (issue 55, part 4; classroom/showcase.py): the store's rules, on SQLite and
PostgreSQL (tests/conftest.py's store_location): only the teacher's key projects, one item per class, one click takes
it down, a hidden or waiting text is refused, another class's answer and another stop's question are refused, moving
the class takes it down; a view's link is a view of this app or nothing; the report records kind and time, no name.
The teacher's screens (pick, project, take down; English and Korean) are AppTests at the end."""
import csv
import hashlib
import io
import time

import numpy as np
import pytest

from classroom.errors import ClassElsewhere, NoSuchAnswer, NotApproved, NotAView, NotTheTeacher
from classroom.lessons import parse_lesson
from classroom.recent import class_version
from classroom.report import build_report, reportable
from classroom.showcase import VIEW_LINK_CHARS, view_link
from classroom.store import ClassStore
from classroom.text_answers import text_key
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
        ours.project(Q, "view", "attention?layer=2", views=VIEWS)
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
    with pytest.raises(NotAView):  # checked again when projected
        teacher.project(Q, "view", sent)
    teacher.project(Q, "view", sent, views=VIEWS)
    assert (store.projected(code).kind, store.projected(code).shown) == ("view", sent)


def test_a_hidden_text_passed_off_as_a_cell_or_a_view_is_refused(store):
    """The store does not read the lesson: an item is held to its kind's shape, and a text she hid is refused under
    any kind (her key cannot put hidden words up by calling them a cell or a view)."""
    teacher = _class(store)
    code = teacher.code
    store.answer_text(code, "s0", Q, "attention?sentence=rude+words", None, stop=STOP)  # a text shaped as a view
    store.answer_text(code, "s1", Q, "3,1", None, stop=STOP)  # a text shaped as a cell
    store.answer_text(code, "s2", Q, "attention", None, stop=STOP)
    teacher.hide_texts(Q, ["attention?sentence=rude+words", "3,1"])
    with pytest.raises(NotApproved):
        teacher.project(Q, "view", "attention?sentence=rude+words", views=VIEWS)
    with pytest.raises(NotApproved):
        teacher.project(Q, "cell", "3,1")
    with pytest.raises(NoSuchAnswer):  # not a cell's shape
        teacher.project(Q, "cell", "attention")
    with pytest.raises(NotAView):  # not a view of these pages
        teacher.project(Q, "view", "attention?onload=1", views=VIEWS)
    assert store.projected(code) is None


def test_the_report_records_what_was_projected_by_kind_and_time_without_names(store):
    source = ('title = "t"\n[[stop]]\npage = "attention"\ntext = "a"\n'
              '[[stop]]\npage = "attention"\ntext = "Show it."\n[stop.question]\nkind = "view"\nprompt = "Why?"\n')
    lesson = parse_lesson("tv", source, known_pages())
    assert lesson.stops[1].question.kind == "view" and lesson.stops[1].problem is None
    teacher = store.create_class("tv", stop=2, class_size=2)
    store.join(teacher.code, "s0")
    link = store.answer_view(teacher.code, "s0", "tv:2", "attention?sentence=Alice+was+here", VIEWS, stop=2)
    teacher.project("tv:2", "view", link, now=time.time(), views=VIEWS)
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
    assert second.line == 6  # the lesson bar says "lesson file views.toml, line 6" (below)


def test_the_lesson_bar_names_the_file_and_the_line_of_a_malformed_view_question(tmp_path, monkeypatch):
    from tests.app_links import open_from_link

    (tmp_path / "views.toml").write_text('title = "t"\n[[stop]]\npage = "attention"\ntext = "a"\n\n[[stop]]\n'
                                         'page = "attention"\n[stop.question]\nkind = "view"\nprompt = 3\n')
    monkeypatch.setenv("ATTENTION_LAB_LESSONS", str(tmp_path))
    at, _ = open_from_link(None, {"lesson": "views", "stop": "2"})
    warnings = " ".join(w.value for w in at.warning).replace("\\", "")  # the file's name escaped as Markdown
    assert "Stop 2 (lesson file views.toml, line 6)" in warnings and "prompt must be a text" in warnings


SHOW_LESSON = """title = { en = "Show", ko = "보여 주기" }

[[stop]]
page = "softmax_scaling"
state = { dk = 16 }
text = { en = "Look.", ko = "보세요." }
[stop.question]
kind = "text"
prompt = { en = "In one word: what does a query ask for?", ko = "한 단어로: 쿼리는 무엇을 묻나요?" }

[[stop]]
page = "softmax_scaling"
state = { dk = 32 }
text = { en = "Find it.", ko = "찾아보세요." }
[stop.question]
kind = "view"
prompt = { en = "Set the page to the d_k where softmax saturates, and send it.", ko = "softmax가 포화되는 d_k로 맞춰 보내세요." }
"""


@pytest.fixture()
def show_lesson(tmp_path, monkeypatch):
    monkeypatch.setenv("ATTENTION_LAB_DATA", str(tmp_path))
    monkeypatch.delenv("ATTENTION_LAB_TEACHER_PASSWORD", raising=False)
    (tmp_path / "lessons").mkdir()
    (tmp_path / "lessons" / "show.toml").write_text(SHOW_LESSON, encoding="utf-8")
    monkeypatch.setenv("ATTENTION_LAB_LESSONS", str(tmp_path / "lessons"))


def _key(item: str) -> str:
    return "showcase_" + hashlib.sha256(item.encode("utf-8")).hexdigest()[:16]


@pytest.mark.usefixtures("show_lesson")
@pytest.mark.parametrize("language", ["en", "ko"])
def test_the_teacher_picks_an_answer_in_her_private_view_projects_it_without_a_name_and_takes_it_down(language):
    from i18n import translate
    from tests.app_links import assert_healthy, lab_session_of, open_from_link
    from tests.test_class_pages import _texts
    from tests.test_hidden_answers import _start
    from ui.text import escape_markdown, isolated_markdown

    def says(key: str, **values) -> str:
        return translate(language, f"showcase.{key}", **values)

    teacher, code = _start("show", language)
    store = ClassStore()
    texts = ["Keys 🔑", "\u202eevil <b>x</b>\u200b", "keys 🔑"]
    for n, text in enumerate(texts):
        store.join(code, f"s{n}")
        store.answer_text(code, f"s{n}", "show:1", text, None, stop=1)
    teacher.toggle(key="teacher_private").set_value(True).run()  # her phone or a second window
    assert says("nothing_yet") in _texts(teacher)  # nothing approved: nothing to project
    keys, evil = text_key(texts[0]), text_key(texts[1])
    teacher.button(key=f"text_approve_{hashlib.sha256(keys.encode()).hexdigest()[:16]}").click().run()
    teacher.button(key=f"text_hide_{hashlib.sha256(evil.encode()).hexdigest()[:16]}").click().run()
    with pytest.raises(KeyError):  # a hidden text is not offered (and the store refuses it: the tests above)
        teacher.button(key=_key(evil))
    teacher.button(key=_key(keys)).click().run()
    assert_healthy(teacher)
    assert store.projected(code).shown == "Keys 🔑" and teacher.button(key=_key(keys)).disabled  # on now
    teacher.toggle(key="teacher_private").set_value(False).run()  # the projector
    room = _texts(teacher)
    assert says("title") in room and isolated_markdown("Keys 🔑") in room and "<b>" not in room and "\u202e" not in room
    labels = {row[0] for row in _seat_labels(store, code)}
    assert labels and not any(f" {label} " in f" {room} " for label in labels)  # no seat label beside it
    student, _ = open_from_link(None, {"class": code, "lang": language})  # a student's screen shows it too
    assert isolated_markdown("Keys 🔑") in _texts(student) and says("title") in _texts(student)
    teacher.button(key="showcase_take_down").click().run()  # one click takes it down
    assert store.projected(code) is None and says("title") not in _texts(teacher)

    # the view question: the page shows while she sets it, "Send this view" sends its link
    teacher.button(key="class_next").click().run()
    student.run()
    assert_healthy(student)
    student.select_slider(key="scaling_dk").set_value(256).run()  # the page shows before she answers: she sets it
    assert escape_markdown("dk = 256") in _texts(student)  # "Your view now: ..."
    student.button(key="q_show_2_send_view").click().run()
    assert_healthy(student)
    sent = store.student_answer(code, lab_session_of(student).seat.student_id, "show:2")
    assert sent is not None and sent.startswith("softmax_scaling?") and "dk=256" in sent and "lang" not in sent
    teacher.toggle(key="teacher_private").set_value(True).run()
    teacher.button(key=_key(sent)).click().run()
    teacher.toggle(key="teacher_private").set_value(False).run()
    opened = [b for b in teacher.get("link_button") if b.proto.label == says("open_view")]
    assert len(opened) == 1 and opened[0].proto.url.startswith(sent)
    assert ("lang=ko" in opened[0].proto.url) == (language == "ko")
    student.run()
    assert says("title") in _texts(student) and says("kind_view") in _texts(student)
    teacher.session_state["report_open"] = True  # her report: what was projected, kind and time, no answer
    teacher.run()
    kinds = next(d.value for d in teacher.dataframe if translate(language, "report.col_kind") in d.value.columns)
    assert kinds[translate(language, "report.col_kind")].tolist() == [says("kind_text"), says("kind_view")]


def _seat_labels(store: ClassStore, code: str) -> list[tuple[str]]:
    with store.connect() as db:
        return db.execute("SELECT label FROM seats WHERE code = ?", (code,)).fetchall()


@pytest.fixture()
def own_data(tmp_path, monkeypatch):
    """The class store in this test's folder: a class left at a stop would hold the pages of that stop's questions in
    every later test of the worker (the decoding page waited for stop 12's Reveal)."""
    from classroom.database import DATABASE_URL_ENV

    monkeypatch.setenv("ATTENTION_LAB_DATA", str(tmp_path))
    monkeypatch.delenv("ATTENTION_LAB_TEACHER_PASSWORD", raising=False)
    monkeypatch.delenv(DATABASE_URL_ENV, raising=False)


@pytest.mark.usefixtures("own_data")
def test_a_projected_tap_shows_its_tokens_and_the_map_with_its_weights_hidden():
    """Intro stop 12's cell question: the teacher projects one student's tap from her private view; the projector says
    it as tokens and draws the map with that cell marked and no weight on it (a tap, not the answer); a student on
    another page reads the same tokens, not the tap's numbers."""
    from classroom.measures import cell_of
    from tests.app_links import assert_healthy, chart_figures, chart_titles, go_to, open_from_link, trace_values
    from tests.test_class_pages import _texts
    from tests.test_hidden_answers import _start
    from tests.test_lessons import CELL_STOP
    from ui.lessons.catalogue import lessons
    from ui.lessons.questions import expected_answer

    stop = lessons()[0]["intro"].stops[CELL_STOP - 1]
    cells = expected_answer(stop).cells
    teacher, code = _start("intro", "en")
    store = ClassStore()
    store.take_back(code).move(CELL_STOP)
    wrong = next(answer for answer in sorted(cells.answers()) if answer not in expected_answer(stop).accepted)
    store.join(code, "s0")
    store.answer(code, "s0", f"intro:{CELL_STOP}", wrong, False, stop=CELL_STOP, valid=cells.answers())
    teacher.toggle(key="teacher_private").set_value(True).run()
    teacher.button(key=_key(wrong)).click().run()
    teacher.toggle(key="teacher_private").set_value(False).run()
    assert_healthy(teacher)
    title = translate_en("showcase.tap_title")
    assert cells.label(wrong) in _texts(teacher).replace("\\", "") and title in chart_titles(teacher)
    tapped = next(f for f in chart_figures(teacher) if f.layout.title.text == title)
    (row, column), shade = cell_of(wrong), np.asarray(trace_values(tapped.data[0].z))
    assert shade[row][column] == 2 and {float(v) for line in shade for v in line} <= {0.0, 1.0, 2.0}  # no weights
    assert "right" not in " ".join(chart_titles(teacher))  # no share right, no verdict: the class still answers
    student, _ = open_from_link(None, {"class": code, "lang": "en"})
    go_to(student, "home")  # a page without the live question: the class poll draws the item, without the stop
    assert cells.label(wrong) in _texts(student).replace("\\", "") and wrong not in _texts(student)


def translate_en(key: str) -> str:
    from i18n import translate

    return translate("en", key)

"""Issue 36, items 3 and 9: a student answers only at the class's stop and learns no answer before the Reveal (in the
class, or by opening the same stop outside it while a class runs it); the class report is read from the store when
it is opened and on each of the teacher's moves, holds nothing of an unrevealed question, and its files are served to
her browser only."""
import csv
import io

import pytest
from starlette.applications import Starlette
from starlette.responses import Response
from starlette.routing import Route
from starlette.testclient import TestClient
from streamlit.runtime.media_file_storage import MediaFileKind
from streamlit.runtime.memory_media_file_storage import MemoryFile

from classroom.lessons import load_lessons
from classroom.report import build_report, reportable
from classroom.database import store_location
from classroom.store import ClassElsewhere, ClassStore
from serving import private_media
from serving.private_media import PrivateMediaMiddleware, keep_private, private_file_name
from serving.seat import SEAT_COOKIE
from tests.app_links import assert_healthy, chart_specs, open_from_link
from tests.test_class_pages import _metric, _start_class, _texts
from ui.lessons.catalogue import known_pages, lessons
from ui.live_class.report import report_csv, report_tables

WRONG, RIGHT = "1", "2"  # answer texts; whether each is right is the flag passed with it, as the page computes it


@pytest.fixture(autouse=True)
def data_folder(tmp_path, monkeypatch):
    monkeypatch.setenv("ATTENTION_LAB_DATA", str(tmp_path))
    monkeypatch.delenv("ATTENTION_LAB_TEACHER_PASSWORD", raising=False)
    monkeypatch.delenv("ATTENTION_LAB_DATABASE_URL", raising=False)


@pytest.fixture(scope="module")
def lesson():
    return load_lessons(known_pages())[0]["intro"]


def test_ten_students_cannot_answer_ahead_or_fake_the_gain(store_location, lesson):
    """The replay of the issue: ten students answer the "before" checks wrong, then answer every later stop's
    question and the "after" checks right while the class is on stop 1. Nothing of it is stored; the gain stays."""
    store = ClassStore(store_location)
    teacher = store.create_class("intro")
    code = teacher.code
    last = len(lesson.stops)
    pre = [c for c in lesson.stops[0].checks if c.when == "pre"]
    post = [c for c in lesson.stops[-1].checks if c.when == "post"]
    assert pre and post and last == 18
    for student in (f"s{i}" for i in range(10)):
        store.join(code, student)
        for check in pre:
            store.answer(code, student, f"intro:pre:{check.id}", WRONG, False, stop=1)
    before = store.stored_answers(code)
    refused = 0
    for student in (f"s{i}" for i in range(10)):
        for stop in lesson.stops[1:]:  # what 16 presses of Next would have opened
            if stop.question is not None:
                with pytest.raises(ClassElsewhere):
                    store.answer(code, student, f"intro:{stop.number}", RIGHT, True, stop=stop.number)
                refused += 1
        for check in post:
            with pytest.raises(ClassElsewhere):
                store.answer(code, student, f"intro:post:{check.id}", RIGHT, True, stop=last)
            refused += 1
    assert refused > 10 * len(post) and store.stored_answers(code) == before == 10 * len(pre)
    teacher.end()
    report = build_report(lesson, reportable(teacher.report_answers()))
    assert report.lecture.gain is None and report.lecture.students == 0  # no "after" answer: no gain to fake
    assert all(q.stop == 1 for q in report.questions)
    store.close()


def test_a_student_in_a_class_looks_back_but_not_ahead():
    teacher, _ = open_from_link("teacher")
    code = _start_class(teacher)
    student, _ = open_from_link(None, {"class": code})
    assert student.button(key="lesson_next").disabled  # the class is on stop 1: Next waits for the teacher
    for _ in range(3):  # pressed anyway (a client that sends the disabled button's click): the stop stays the class's
        forged = student.button(key="lesson_next")
        forged.proto.disabled = False  # what AppTest refuses to click, a scripted client sends
        forged.click().run()
        assert_healthy(student)
        assert "stop 1 of" in student.markdown[0].value
    teacher.button(key="class_next").click().run()
    teacher.button(key="class_next").click().run()
    student.run()  # the class poll: the class is on stop 3
    assert "stop 3 of" in student.markdown[0].value and student.button(key="lesson_next").disabled
    student.button(key="lesson_previous").click().run()  # looking back is allowed
    assert "stop 2 of" in student.markdown[0].value and not student.button(key="lesson_next").disabled
    student.button(key="lesson_next").click().run()
    assert "stop 3 of" in student.markdown[0].value and student.button(key="lesson_next").disabled
    forged = student.button(key="lesson_next")
    forged.proto.disabled = False
    forged.click().run()
    assert "stop 3 of" in student.markdown[0].value  # up to the class's stop, no further


def test_no_answer_before_the_reveal_in_the_class_or_outside_it():
    """One-round question at stop 1 (right: GRU without attention): the student's answer is taken and nothing else;
    a new student (a private window) and the same stop opened outside the class get no answer either, until the
    teacher reveals; outside a class that runs no such stop, the answer shows after answering, as before."""
    teacher, _ = open_from_link("teacher")
    code = _start_class(teacher)
    student, _ = open_from_link(None, {"class": code})
    student.radio(key="q_intro_1_choice").set_value(1)
    next(b for b in student.form_submit_button if b.form_id == "q_intro_1_form").click().run()
    assert_healthy(student)
    assert "Your answer is taken: Transformer" in _texts(student)
    assert "GRU without attention" not in _texts(student) and not chart_specs(student)
    private_window, _ = open_from_link(None, {"class": code})
    assert not chart_specs(private_window) and "The model's answer" not in _texts(private_window)

    outside, _ = open_from_link(None, {"lesson": "intro", "stop": "1"})  # the same stop, outside the class
    outside.radio(key="q_intro_1_choice").set_value(1)
    next(b for b in outside.form_submit_button if b.form_id == "q_intro_1_form").click().run()
    assert_healthy(outside)
    assert "A class on this server is on this stop now" in _texts(outside)
    assert "The model's answer" not in _texts(outside) and not chart_specs(outside)
    outside.run()
    assert not chart_specs(outside)  # a rerun gives nothing away either

    teacher.button(key="class_reveal").click().run()
    assert _metric(teacher, "Share correct") == "0%"
    for after in (student, outside):
        after.run()
        assert_healthy(after)
        assert "The model's answer: GRU without attention" in _texts(after) and chart_specs(after)

    alone, _ = open_from_link(None, {"lesson": "intro", "stop": "2"})  # no class on stop 2 unrevealed: as before
    assert not [i for i in alone.info if "A class on this server" in i.value]


# ---- the class report (item 9)
def test_the_report_and_its_csv_hold_nothing_of_an_unrevealed_question(store_location, lesson):
    store = ClassStore(store_location)
    teacher = store.create_class("intro")
    code = teacher.code
    for student, answer in (("a", WRONG), ("b", WRONG), ("c", RIGHT)):
        store.join(code, student)
        store.answer(code, student, "intro:pre:weight", answer, answer == RIGHT, stop=1)
        store.answer(code, student, "intro:1", answer, False, stop=1)  # stop 1's own question: option 3 is right

    def report_text():
        read = teacher.report_answers()
        report = build_report(lesson, reportable(read))
        return report, report_csv(report_tables(report, "en")).decode()

    report, text = report_text()
    assert not report.questions and not report.misconceptions and not report.checks[0].students
    rows = list(csv.DictReader(io.StringIO(text)))
    assert {r["table"] for r in rows} == {"checks"} and all(r["students_both"] == "0" for r in rows)
    assert "Transformer" not in text and "importance" not in text  # no option, no misconception named
    teacher.reveal("intro:1")
    report, text = report_text()
    assert [q.question_id for q in report.questions] == ["intro:1"]  # revealed: in the report
    assert not [p for p in report.misconceptions if p.when == "pre"]  # the check questions wait for the class's end
    teacher.end()
    report, text = report_text()
    assert [p for p in report.misconceptions if p.when == "pre"] and "importance" in text
    store.close()


def test_the_teachers_report_is_current_when_opened_and_after_each_move_of_hers():
    """Issue 38 item 1: no button builds the report. Closed, it is not drawn; opened, it holds the answers stored
    then; a reveal and the class's end (her clicks, which rerun the page) bring what they let in at once: three
    students who answered the checks before and after give gain 1.00 and "Students counted" 3 with no other click."""
    from classroom.lessons import check_question_id

    teacher, _ = open_from_link("teacher")
    code = _start_class(teacher)
    store = ClassStore(store_location())  # the page's store (the data_folder fixture's folder)
    phone = store.take_back(code)  # her second device: moves the class while the projector's page stays open
    students = ("s1", "s2", "s3")
    for student in students:
        store.join(code, student)
        store.answer(code, student, "intro:1", "1", False, stop=1)
        store.answer(code, student, check_question_id("intro", "pre", "scale"), "1", False, stop=1)
    teacher.run()
    assert not [d for d in teacher.dataframe if "wrong→right" in d.value.columns]  # closed: not drawn, not read
    assert not [b for b in teacher.button if b.key == "report_update"]  # no button builds it
    teacher.session_state["report_open"] = True  # she opens it (its expander reruns the page)
    teacher.run()
    assert "Questions left out until you reveal them (or, for the check questions, until the class ends): 2." in \
        _texts(teacher)
    questions = next(d.value for d in teacher.dataframe if "wrong→right" in d.value.columns)
    assert questions.empty  # stop 1 not revealed: not in it
    teacher.button(key="class_reveal").click().run()  # her click: the page, and the open report, read again
    questions = next(d.value for d in teacher.dataframe if "wrong→right" in d.value.columns)
    assert questions["Round 1 answered"].tolist() == [3]
    assert _metric(teacher, "Students counted before and after") == "0"  # the checks wait for the class's end
    last = len(lessons()[0]["intro"].stops)  # the post checks' stop: the lesson's last
    phone.move(last)
    for student in students:
        store.answer(code, student, check_question_id("intro", "post", "scale"), "2", True, stop=last)
    teacher.button(key="class_end").click().run()  # the report of the ended class, still open: read now
    assert_healthy(teacher)
    assert _metric(teacher, "Students counted before and after") == "3"
    assert _metric(teacher, "Normalized gain ⟨g⟩ of the lecture") == "1.00"
    assert _metric(teacher, "Right before → after (check questions)") == "0% → 100%"
    assert {d.label for d in teacher.get("download_button")} >= {"Download the report (CSV)"}


def _media_client(files: dict[str, MemoryFile]) -> TestClient:
    def media(request):
        return Response(files[request.path_params["name"].split(".")[0]].content)

    app = Starlette(routes=[Route("/media/{name}", media)])
    return TestClient(PrivateMediaMiddleware(app, lookup=files.get))


def test_the_report_files_are_served_to_the_teachers_browser_only(monkeypatch):
    monkeypatch.setattr(private_media, "_owners", type(private_media._owners)())
    seat, other = "a" * 32, "b" * 32
    csv_bytes = keep_private(b"table,stop\nquestions,1\n", seat)
    files = {"c5": MemoryFile(csv_bytes, "text/csv", MediaFileKind.DOWNLOADABLE, private_file_name("ABC234", "csv")),
             "d1": MemoryFile(b"never registered", "text/html", MediaFileKind.DOWNLOADABLE,
                              private_file_name("ABC234", "html")),
             "e2": MemoryFile(b"png", "image/png", MediaFileKind.MEDIA, None),
             "f3": MemoryFile(b"x,y\n", "text/csv", MediaFileKind.DOWNLOADABLE, "attention.csv")}
    client = _media_client(files)
    assert client.get("/media/c5.csv").status_code == 403  # no cookie: refused
    assert client.get("/media/c5.csv", headers={"cookie": f"{SEAT_COOKIE}={other}"}).status_code == 403
    assert client.get("/media/c5.csv", headers={"cookie": f"{SEAT_COOKIE}=forged"}).status_code == 403
    mine = client.get("/media/c5.csv", headers={"cookie": f"{SEAT_COOKIE}={seat}"})
    assert mine.status_code == 200 and mine.content == csv_bytes
    assert client.get("/media/c5.csv", headers={"cookie": f"{SEAT_COOKIE}={seat}", "range": "bytes=0-4"}).status_code == 200
    assert client.get("/media/c5.csv", headers={"range": "bytes=0-4"}).status_code == 403  # no part either
    assert client.get("/media/d1.html", headers={"cookie": f"{SEAT_COOKIE}={seat}"}).status_code == 403  # unknown bytes
    assert client.get("/media/e2.png").status_code == 200 and client.get("/media/f3.csv").status_code == 200
    with pytest.raises(ValueError):
        private_file_name("../x", "csv")
    # the gradebook's three files (ui/live_class/gradebook.py) are hers alike
    for n, kind in enumerate(("gradebook", "answers", "summary")):
        data = keep_private(f"seat,total\nA{n},1\n".encode(), seat)
        client = _media_client({"g4": MemoryFile(data, "text/csv", MediaFileKind.DOWNLOADABLE,
                                                 private_file_name("ABC234", "csv", kind))})
        assert client.get("/media/g4.csv", headers={"cookie": f"{SEAT_COOKIE}={other}"}).status_code == 403
        assert client.get("/media/g4.csv", headers={"cookie": f"{SEAT_COOKIE}={seat}"}).content == data
    with pytest.raises(ValueError):
        private_file_name("ABC234", "csv", "anything")


def test_every_spelling_streamlit_serves_the_report_at_is_refused_to_another_browser(monkeypatch):
    """Streamlit's own media route (its handler, its storage) serves a file at `/media/<id>` followed by any
    extension, or a bare dot: each spelling it answers with the report's bytes is refused without the teacher's
    cookie, and served with it."""
    from streamlit.runtime.media_file_storage import MediaFileStorageError
    from streamlit.runtime.memory_media_file_storage import MemoryMediaFileStorage
    from streamlit.web.server.starlette.starlette_routes import create_media_routes

    monkeypatch.setattr(private_media, "_owners", type(private_media._owners)())
    seat, other = "a" * 32, "b" * 32
    storage = MemoryMediaFileStorage("/media")
    data = keep_private(b"table,stop\nquestions,1\n", seat)
    file_id = storage.load_and_get_id(data, "text/csv", MediaFileKind.DOWNLOADABLE, private_file_name("ABC234", "csv"))

    def lookup(name):
        try:
            return storage.get_file(name)
        except MediaFileStorageError:
            return None
    streamlit_alone = TestClient(Starlette(routes=create_media_routes(storage, "")))
    guarded = TestClient(PrivateMediaMiddleware(Starlette(routes=create_media_routes(storage, "")), lookup=lookup))
    spellings = [f"/media/{file_id}{tail}" for tail in
                 (".csv", ".", ".-", "", ".CSV", ".html", ".csv?download=1", "%2Ecsv", ".%2D", "%2E", ".x.y", "/")]
    spellings += [f"/media/{file_id.upper()}.csv", f"/media//{file_id}.csv", "/media/" + "".join(
        f"%{ord(ch):02x}" for ch in file_id) + ".csv"]
    served = [path for path in spellings if streamlit_alone.get(path).content == data]
    assert {f"/media/{file_id}.", f"/media/{file_id}.-", f"/media/{file_id}%2Ecsv"} <= set(served)  # the bug's spellings
    for path in spellings:
        assert guarded.get(path).status_code != 200, path  # no cookie
        assert guarded.get(path, headers={"cookie": f"{SEAT_COOKIE}={other}"}).status_code != 200, path
        mine = guarded.get(path, headers={"cookie": f"{SEAT_COOKIE}={seat}"})
        assert (mine.status_code == 200 and mine.content == data) == (path in served), path

"""Homework in real browsers (issue 57): a teacher builds a three-stop lesson from the views she opens, saves it and
starts it self-paced; two students go through it at their own pace (one in Korean in her own time zone, one on a
phone), the deadline refuses the phone's late answer, and the teacher's gradebook holds exactly their answers. A
server of its own (tests/class_servers.py): the walk starts no class of the other live-class files' servers."""
import csv
import datetime as dt
import io
import re
import sqlite3
import time
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from playwright.sync_api import Page, expect

from classroom.store import DB_NAME
from tests.class_servers import password as _password, serve
from tests.conftest import SCREENSHOTS
from tests.browser_steps import no_exception, wait_idle
from tests.test_phone import IPHONE


# How long a page's run may take to show what it drew: the walk is the suite's first on its worker, beside
# test_serve's replicas warming on the other core (its one rerun in 4 runs: a 15 s wait ran out there).
RUN_MS = 30000


@pytest.fixture(scope="module")
def class_data(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("homework_data")


@pytest.fixture(scope="module")
def class_app_url(class_data):
    """A server of its own, with its class database and lessons folder in a fresh folder."""
    yield from serve(class_data)


def _pick(page: Page, label: str, option: str, where=None) -> None:
    """Streamlit's select box called `label` (in `where`, else the page): open it and take `option`."""
    box = (where or page).get_by_role("combobox", name=label, exact=True)
    box.click()
    box.fill(option)  # the combobox filters its list to the option, which Enter takes
    box.press("Enter")
    expect(box).to_have_value(option)


def _add_view_as_stop(teacher: Page, nav: str, title: str, section: str, question: dict) -> int:
    """On the page called `nav` in the sidebar (a click: the same session, so she stays signed in), the sidebar's
    'Add this view as a stop' with a title in English, a section and a question; -> the stop's number said."""
    teacher.get_by_test_id("stSidebar").get_by_role("link", name=nav, exact=True).click()
    wait_idle(teacher)
    if question.get("before"):
        question["before"](teacher)
    teacher.get_by_test_id("stSidebar").get_by_role("button", name="Add this view as a stop").click()
    form = teacher.get_by_test_id("stPopoverBody")
    form.get_by_label("Stop title (English)").fill(title)
    _pick(teacher, "Section of the page", section, form)
    _pick(teacher, "Question", question["kind"], form)
    for label, value in question["fields"].items():
        field = form.get_by_role("spinbutton" if label.startswith("Number") else "textbox", name=label, exact=True)
        field.fill(value)
        field.press("Tab")  # the value is sent before Add stop reads it
    if question.get("measure"):
        _pick(teacher, "Measure", question["measure"], form)
        form.get_by_role("textbox", name="Argument query").fill("3")
        form.get_by_role("textbox", name="Argument query").press("Tab")
    form.get_by_role("button", name="Add stop").click()
    said = teacher.get_by_text(re.compile(r"Added as stop \d")).first
    expect(said).to_be_visible(timeout=RUN_MS)
    return int(re.search(r"stop (\d)", said.inner_text()).group(1))


def test_homework_built_from_views_two_students_at_their_own_pace_one_refused_after_the_deadline_and_the_gradebook(
        browser, class_app_url, class_data):
    """Issue 57 in one story: the teacher signs in on the Teacher page and builds a three-stop lesson from the views
    she opens (the sidebar's Add this view as a stop: a choice, an answer measured on the page's view, a choice),
    saves it, and starts a self-paced class on it; a student in Korean goes through all three stops, one on a phone
    answers the first (wrong) and moves on, the deadline passes (moved in the store: the server's clock is the
    store's), her next answer is refused in words, and the teacher's gradebook CSV holds exactly their answers."""
    contexts = [browser.new_context(viewport={"width": 1280, "height": 900}, timezone_id="America/New_York"),
                browser.new_context(viewport={"width": 1000, "height": 900}, timezone_id="Asia/Seoul"),
                browser.new_context(viewport={"width": 390, "height": 844}, user_agent=IPHONE, is_mobile=True,
                                    has_touch=True)]
    try:
        teacher, korean, phone = (context.new_page() for context in contexts)
        teacher.goto(f"{class_app_url}/teacher")
        wait_idle(teacher)
        teacher.get_by_text("Build your own lesson").click()
        teacher.locator(".st-key-builder_password input").fill(_password(class_data))
        teacher.get_by_role("button", name="Sign in to build lessons").click()
        expect(teacher.get_by_text(re.compile("^No stops yet"))).to_be_visible(timeout=RUN_MS)

        def choice(n: int) -> dict:
            return {"kind": "Multiple choice", "fields": {
                "Question (English)": f"Question {n}: which is right?", "Question (Korean)": f"질문 {n}: 어느 것이 맞나요?",
                "Options (English, one per line)": f"left {n}\nright {n}",
                "Options (Korean, one per line)": f"왼쪽 {n}\n오른쪽 {n}", "Number of the right option": "2"}}

        def causal(page: Page) -> None:  # the view the measured stop keeps: the causal mask
            _pick(page, "Mask", "causal (j ≤ i)", page.get_by_test_id("stMain"))
            wait_idle(page)

        measured = {"kind": "Answer measured on the model", "before": causal, "measure": "causal_visible_keys (A number)",
                    "fields": {"Question (English)": "Question 2: how many keys may query 3 see?"}}
        for n, (nav, section, question) in enumerate((("Positional encoding", "curves", choice(1)),
                                                        ("Attention step by step", "steps", measured),
                                                        ("Softmax scaling (√d_k)", "saturation", choice(3))), 1):
            assert _add_view_as_stop(teacher, nav, f"Stop {n}", section, question) == n
            if n == 2:  # a reload (a new session) keeps her signed in, with her draft: her browser's, in the store
                teacher.reload()
                wait_idle(teacher)
                expect(teacher.get_by_test_id("stSidebar").get_by_role(
                    "button", name="Add this view as a stop")).to_be_visible(timeout=RUN_MS)
        teacher.get_by_test_id("stSidebar").get_by_role("link", name="Teacher", exact=True).click()
        wait_idle(teacher)
        teacher.get_by_label("Lesson title (English)").fill("Homework")
        teacher.get_by_label("Lesson title (English)").press("Tab")
        teacher.get_by_role("button", name="Save lesson").click()
        expect(teacher.get_by_text(re.compile("^Saved “homework”, version 1"))).to_be_visible(timeout=RUN_MS)
        teacher.screenshot(path=SCREENSHOTS / "homework_builder_saved.png", full_page=True)

        _pick(teacher, "Lesson", "Homework", teacher.get_by_test_id("stForm"))
        teacher.get_by_text("Self-paced (homework)").click()
        teacher.locator(".st-key-class_start_password input").fill(_password(class_data))
        form = teacher.get_by_role("tabpanel", name="Start a class")
        form.screenshot(path=SCREENSHOTS / "homework_start_form.png")
        # the deadline in her own time zone, named beside its time: what the fields show is the instant kept
        expect(form.get_by_text("Deadline: time (America/New_York)")).to_be_visible()
        shown = (form.locator(".st-key-class_start_due_date input").input_value(),
                 form.locator(".st-key-class_start_due_time input").input_value())
        teacher.get_by_role("button", name="Start a class").click()
        wait_idle(teacher)
        code = teacher.get_by_test_id("stMetric").filter(has_text="Class code").get_by_test_id("stMetricValue")
        expect(code).to_have_text(re.compile(r"^[A-Z2-9]{6}$"))
        code = code.inner_text()
        with sqlite3.connect(class_data / DB_NAME) as db:
            (kept,) = db.execute("SELECT deadline FROM classes WHERE code = ?", (code,)).fetchone()
        at = dt.datetime.fromtimestamp(kept, ZoneInfo("America/New_York"))
        assert shown == (at.date().isoformat(), at.time().isoformat()), (shown, at)
        expect(teacher.get_by_text("Homework: Homework")).to_be_visible()

        def answer(student: Page, option: str, submit: str) -> None:
            main = student.get_by_test_id("stMain")
            main.get_by_text(option, exact=True).click()
            main.get_by_role("button", name=submit).click()
            wait_idle(student)

        korean.goto(f"{class_app_url}/?class={code}&lang=ko")
        wait_idle(korean)
        expect(korean.get_by_text(re.compile(r"Asia/Seoul \(.* UTC\)")).first).to_be_visible()  # her zone, UTC beside
        for stop in (1, 2, 3):  # the quick one: every stop, each answered right, her Next after each answer
            expect(korean.get_by_text(f"3개 중 {stop}번째", exact=False).first).to_be_visible(timeout=RUN_MS)
            if stop == 2:  # measured on the stop's view: under the causal mask query 3 sees 3 keys
                korean.get_by_test_id("stMain").get_by_test_id("stNumberInput").locator("input").first.fill("3")
                korean.get_by_test_id("stMain").get_by_role("button", name="답하기").click()
                wait_idle(korean)
                expect(korean.get_by_text(re.compile(r"^맞았습니다: 3"))).to_be_visible(timeout=RUN_MS)
            else:
                answer(korean, f"오른쪽 {stop}", "답하기")
                expect(korean.get_by_text(re.compile(rf"^맞았습니다: 오른쪽 {stop}"))).to_be_visible(timeout=RUN_MS)
            if stop < 3:
                korean.get_by_role("button", name="다음").click()
                wait_idle(korean)
        expect(korean.get_by_text(re.compile("^이 서버의 한 수업이"))).to_have_count(0)  # her class holds nothing back
        korean.screenshot(path=SCREENSHOTS / "homework_student_ko.png")

        phone.goto(f"{class_app_url}/?class={code}")
        wait_idle(phone)
        answer(phone, "left 1", "Answer")  # wrong: the right option is named at once
        expect(phone.get_by_text(re.compile(r"^Your answer: left 1"))).to_be_visible(timeout=RUN_MS)
        phone.get_by_role("button", name="Next").click()
        wait_idle(phone)
        expect(phone.get_by_text("Question 2: how many keys may query 3 see?")).to_be_visible(timeout=RUN_MS)
        with sqlite3.connect(class_data / DB_NAME) as db:  # the deadline passes (the store's clock is the server's)
            db.execute("UPDATE classes SET deadline = ? WHERE code = ?", (time.time() - 60, code))
        phone.get_by_test_id("stMain").get_by_test_id("stNumberInput").locator("input").first.fill("3")
        phone.get_by_test_id("stMain").get_by_role("button", name="Answer").click()
        wait_idle(phone)
        expect(phone.get_by_text(re.compile(r"^Not taken: the deadline \(.* UTC\) has passed"))).to_be_visible(
            timeout=RUN_MS)
        phone.screenshot(path=SCREENSHOTS / "homework_phone_refused.png", full_page=True)

        # the teacher's progress (it refreshes itself), then her gradebook: exactly the four answers given
        expect(teacher.get_by_text(re.compile(r"The deadline \(.* America/New_York \(.* UTC\)\) has passed"))).to_be_visible(
            timeout=RUN_MS)  # in her zone, UTC beside
        expect(teacher.get_by_test_id("stMetric").filter(has_text="At the last stop")
               .get_by_test_id("stMetricValue")).to_have_text("1")
        teacher.screenshot(path=SCREENSHOTS / "homework_teacher_progress.png", full_page=True)
        teacher.get_by_text("Class report: what the class learned").click()
        wait_idle(teacher)
        gradebook = teacher.get_by_role("button", name="Gradebook (CSV)")
        gradebook.scroll_into_view_if_needed()
        teacher.screenshot(path=SCREENSHOTS / "homework_gradebook.png")
        files = {}
        for label in ("Gradebook (CSV)", "Every answer (CSV)"):
            with teacher.expect_download() as info:
                teacher.get_by_role("button", name=label).click()
            files[label] = list(csv.DictReader(io.StringIO(Path(info.value.path()).read_text(encoding="utf-8"))))
            assert info.value.suggested_filename.startswith(f"class-{code}-")
        book = {row["seat"]: row for row in files["Gradebook (CSV)"]}
        assert sorted((r["homework:1"], r["homework:2"], r["homework:3"], r["total"]) for r in book.values()) == [
            ("0", "", "", "0"), ("1", "1", "1", "3")]
        given = sorted((r["question"], r["answer"], r["right"]) for r in files["Every answer (CSV)"])
        assert given == [("homework:1", "1", "0"), ("homework:1", "2", "1"), ("homework:2", "3", "1"),
                         ("homework:3", "2", "1")]
        for page in (teacher, korean, phone):
            no_exception(page)
    finally:
        for context in contexts:
            context.close()

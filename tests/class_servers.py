"""The live class's browser tests' own servers: `streamlit run asgi.py` with a class database and a copy of the
shipped lessons in a folder of the test's (tests/test_browser_lessons.py, test_browser_homework.py,
test_browser_peer.py), the teacher password it generated, and a class started from the Teacher page."""
import os
import re
import shutil
from pathlib import Path

from playwright.sync_api import Page, expect

from tests.browser_steps import wait_idle
from tests.conftest import streamlit_server


def serve(data: Path):
    """`streamlit run asgi.py` with its class database in `data` and its lessons in `data/lessons` (a copy of the
    shipped ones, so a test can break a file during class); yields its URL."""
    lessons = data / "lessons"
    if not lessons.exists():
        shutil.copytree(Path(__file__).resolve().parents[1] / "lessons", lessons)
    env = {**os.environ, "ATTENTION_LAB_DATA": str(data), "ATTENTION_LAB_LESSONS": str(lessons)}
    env.pop("ATTENTION_LAB_TEACHER_PASSWORD", None)
    with streamlit_server(env=env) as url:
        yield url


def password(data: Path) -> str:
    """The teacher password the server generated at start (asgi.py printed it; the data folder keeps it)."""
    return (data / "teacher-password").read_text().strip()


def start_class(teacher: Page, url: str, data: Path, query: str = "") -> str:
    teacher.goto(f"{url}/teacher{query}")
    wait_idle(teacher)
    # The start form's field by its key: the "Take back a class" tab has a field of the same label, hidden, and the
    # first of the two in the page was now and then that one (a fill then waited 30 s for it to show)
    teacher.locator(".st-key-class_start_password input").fill(password(data))
    teacher.get_by_role("button", name="Start a class").click()
    wait_idle(teacher)
    code = teacher.get_by_test_id("stMetric").filter(has_text="Class code").get_by_test_id("stMetricValue")
    expect(code).to_have_text(re.compile(r"^[A-Z2-9]{6}$"))
    return code.inner_text()

"""Keyboard only (issue 31, WCAG 2.1.1 and 2.4.7): a student answers a lesson question and moves to the next stop
with Tab, the arrow keys, Space and Enter; a teacher starts a class, reveals the answer and moves the class (her
student's page follows) the same way; every control they reach shows where the focus is."""
import os
import re

import pytest
from playwright.sync_api import Locator, Page, expect

from tests.browser_steps import checked_screenshot, wait_idle
from tests.conftest import streamlit_server

MAX_TABS = 120  # the sidebar's controls come first; a few dozen in all


def _focused(target: Locator) -> bool:
    return target.evaluate("el => el === document.activeElement || el.contains(document.activeElement)")


def tab_to(page: Page, target: Locator) -> None:
    """Press Tab until the focus is on `target` (or inside it), and check that the focus can be seen there."""
    for _ in range(MAX_TABS):
        page.keyboard.press("Tab")
        if _focused(target):
            break
    else:
        raise AssertionError(f"Tab never reached {target}")
    ring = page.evaluate("""() => { const el = document.activeElement, s = getComputedStyle(el);
        return {outline: s.outlineStyle !== 'none' && parseFloat(s.outlineWidth) >= 2, shadow: s.boxShadow};}""")
    assert ring["outline"] or ring["shadow"] != "none", f"no visible focus on {target}: {ring}"


def test_a_student_answers_and_goes_on_with_the_keyboard_alone(page: Page, app_url):
    page.goto(f"{app_url}/?lesson=intro&stop=1")
    bar = page.locator(".st-key-lesson_bar")
    expect(bar.get_by_text(re.compile("stop 1 of"))).to_be_visible()
    wait_idle(page)
    page.evaluate("() => document.activeElement && document.activeElement.blur()")  # focus on the page itself
    first_option = bar.get_by_role("radio").first
    tab_to(page, first_option)
    page.keyboard.press("ArrowDown")  # the radio group: arrows move and choose
    page.keyboard.press("ArrowDown")
    page.keyboard.press("Space")
    expect(bar.get_by_role("radio").nth(2)).to_be_checked()
    tab_to(page, bar.get_by_role("button", name="Answer"))
    page.keyboard.press("Enter")
    wait_idle(page)
    expect(bar.get_by_text(re.compile(r"^(Right|Your answer):"))).to_be_visible()  # the answer was taken
    tab_to(page, bar.get_by_role("button", name="Next"))
    page.keyboard.press("Enter")
    expect(bar.get_by_text(re.compile("stop 2 of"))).to_be_visible()
    wait_idle(page)
    checked_screenshot(page, "keyboard_next_stop.png")


@pytest.fixture(scope="module")
def class_server(tmp_path_factory):
    """A server of its own with a fresh class database: (its URL, the teacher password it generated)."""
    data = tmp_path_factory.mktemp("keyboard_class")
    env = {**os.environ, "ATTENTION_LAB_DATA": str(data)}
    env.pop("ATTENTION_LAB_TEACHER_PASSWORD", None)
    with streamlit_server(env=env) as url:
        yield url, (data / "teacher-password").read_text().strip()


def test_a_teacher_starts_reveals_and_moves_the_class_with_the_keyboard_alone(browser, class_server):
    url, password = class_server
    teacher_context, student_context = browser.new_context(), browser.new_context()
    try:
        teacher = teacher_context.new_page()
        teacher.goto(f"{url}/teacher")
        wait_idle(teacher)
        teacher.evaluate("() => document.activeElement && document.activeElement.blur()")
        tab_to(teacher, teacher.locator(".st-key-class_start_password input"))
        teacher.keyboard.type(password)
        tab_to(teacher, teacher.get_by_role("button", name="Start a class"))
        teacher.keyboard.press("Enter")
        code = teacher.get_by_test_id("stMetric").filter(has_text="Class code").get_by_test_id("stMetricValue")
        expect(code).to_have_text(re.compile(r"^[A-Z2-9]{6}$"))
        wait_idle(teacher)

        student = student_context.new_page()
        student.goto(f"{url}/?class={code.inner_text()}")
        expect(student.get_by_text("stop 1 of")).to_be_visible()

        tab_to(teacher, teacher.get_by_role("button", name="Reveal the answer to everyone"))
        teacher.keyboard.press("Enter")
        wait_idle(teacher)
        expect(teacher.get_by_role("button", name="Reveal the answer to everyone")).to_have_count(0)
        tab_to(teacher, teacher.get_by_role("button", name="Next stop"))
        teacher.keyboard.press("Enter")
        expect(student.get_by_text("stop 2 of")).to_be_visible(timeout=15000)  # the class moved
        checked_screenshot(teacher, "keyboard_teacher_next.png")
    finally:
        teacher_context.close()
        student_context.close()

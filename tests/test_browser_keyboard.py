"""Keyboard only (issue 31, WCAG 2.1.1 and 2.4.7): a student answers a lesson question and moves to the next stop
with Tab, the arrow keys, Space and Enter, and every control she reaches shows where the focus is."""
import re

from playwright.sync_api import Locator, Page, expect

from tests.browser_steps import checked_screenshot, wait_idle

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

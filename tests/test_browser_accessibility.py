"""WCAG 2.1 AA in the browser (issue 31): axe-core finds no violation of its WCAG 2.0/2.1 A and AA rules on every
page in English at the desk and in Korean projected (presenter mode, where text is also held to AAA's 7:1
contrast); the page's <html lang> is the interface language on each.

Every stop of every shipped lesson is checked on the walk that opens each projected stop in both languages
(tests/test_browser_projected_stops.py): a stop draws its page's widgets, checked here, and one walk of the stops
instead of three keeps the suite short (a view costs seconds on CI's 2 cores).
"""

import pytest
from playwright.sync_api import Page, expect

from tests.browser_steps import axe_violations, wait_idle
from ui.page_list import PAGE_NAMES

MODES = {("en", False), ("ko", True)}  # (language, presenter)
PAGES = ["/" if name == "home" else f"/{name}" for name in PAGE_NAMES]


def _finished(page: Page, language: str) -> None:
    """The run has drawn everything: app.py's last element (the <html lang> script) has set the language."""
    page.locator(".st-key-page_language").wait_for(state="attached", timeout=90000)
    expect(page.locator("html")).to_have_attribute("lang", language)
    wait_idle(page)
    # Elements of the previous run are drawn faded (data-stale) until the new run replaces them: a slow stop (the
    # real encoder's) can still show some after the status widget is gone, and axe would read their faded text.
    expect(page.locator('[data-stale="true"]')).to_have_count(0, timeout=90000)


def _check(page: Page, found: dict, view: str, presenter: bool) -> None:
    violations = axe_violations(page, enhanced_contrast=presenter)
    if violations:
        found[view] = violations


# Both languages and both modes, each pair walking every page: English at the desk's contrast, Korean on the projector
# at enhanced contrast (the other two pairs add no text or colour these two lack).
@pytest.mark.parametrize(("language", "presenter"), sorted(MODES), ids=lambda value: {
    False: "normal", True: "presenter"}.get(value, value))
def test_every_page_and_lesson_stop_has_no_wcag_aa_violation(page: Page, app_url, language, presenter):
    found = {}
    settings = f"lang={language}&presenter={str(presenter).lower()}"
    for view in PAGES:
        page.goto(f"{app_url}{view}?{settings}")
        _finished(page, language)
        _check(page, found, view, presenter)
    assert not found, "\n".join(f"{view}: {line}" for view, lines in found.items() for line in lines)

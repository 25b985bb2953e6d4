"""WCAG 2.1 AA in the browser (issue 31): axe-core finds no violation of its WCAG 2.0/2.1 A and AA rules on every
page in English and in Korean, normal and projected (presenter mode, where text is also held to AAA's 7:1
contrast), and on every stop of every shipped lesson in English (normal) and in Korean (projected); the page's
<html lang> is the interface language on each.

Why every stop in one language per mode: a view is a page load and a Streamlit run (about 3.5 s on CI's 2 cores);
all four combinations of the 17 stops would add 2 minutes to the 4 this test takes. A stop draws its page's widgets,
which the page views already check in both languages and modes."""
import pytest
from playwright.sync_api import Page

from classroom.lessons import load_lessons
from tests.browser_steps import axe_violations, wait_idle
from ui.lesson_bar import known_pages
from ui.page_menu import PAGE_NAMES


STOPS_IN = {("en", False), ("ko", True)}  # (language, presenter) where every lesson stop is checked too


def _views(with_stops: bool) -> list[str]:
    """Every page, then every stop of every shipped lesson (a stop opens by its link, on its own page)."""
    pages = ["/" if name == "home" else f"/{name}" for name in PAGE_NAMES]
    if not with_stops:
        return pages
    lessons = load_lessons(known_pages())[0]
    stops = [f"/?lesson={lesson_id}&stop={stop.number}" for lesson_id, lesson in sorted(lessons.items())
             for stop in lesson.stops]
    return pages + stops


def _open(page: Page, url: str) -> None:
    page.goto(url)
    # the sidebar's last caption: the page's script has drawn the sidebar (wait_idle then waits out the run)
    # (attached, not visible: presenter mode folds the sidebar away)
    page.get_by_test_id("stSidebar").get_by_test_id("stCaptionContainer").last.wait_for(state="attached",
                                                                                          timeout=90000)
    wait_idle(page)


@pytest.mark.parametrize("presenter", [False, True], ids=["normal", "presenter"])
@pytest.mark.parametrize("language", ["en", "ko"])
def test_every_page_and_lesson_stop_has_no_wcag_aa_violation(page: Page, app_url, language, presenter):
    found = {}
    for view in _views((language, presenter) in STOPS_IN):
        url = f"{app_url}{view}{'&' if '?' in view else '?'}lang={language}&presenter={str(presenter).lower()}"
        _open(page, url)
        lang = page.evaluate("() => document.documentElement.lang")
        violations = axe_violations(page, enhanced_contrast=presenter)
        if lang != language:
            violations.append(f"<html lang={lang!r}>, not {language!r}")
        if violations:
            found[view] = violations
    assert not found, "\n".join(f"{view}: {line}" for view, lines in found.items() for line in lines)

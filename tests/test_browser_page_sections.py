"""A projected lesson stop about a later section of its page (Chromium, 1280×720, presenter mode): the section's
chart starts on the first screen, under the stop's text, and the rest of the page is still there below it."""
from playwright.sync_api import Page, expect

from classroom.lessons import load_lessons
from i18n import translate
from tests.browser_steps import no_exception, wait_idle
from tests.conftest import SCREENSHOTS
from ui.lessons.catalogue import known_pages

FOLD = 720
SEEN = 150  # px of the section's chart on the first screen at least: its title and the top of the plot
BOXES = """section => { const box = sel => { const el = document.querySelector(sel);
  return el ? el.getBoundingClientRect().toJSON() : null; };
  return {bar: box('.st-key-lesson_bar'), section: box(`.st-key-section_${section}`),
          chart: box(`.st-key-section_${section} .js-plotly-plot`),
          sections: [...document.querySelectorAll('[class*="st-key-section_"]')].map(el => el.className.match(
            /st-key-section_(\\w+)/)[1])}; }"""
ANSWER = {"en": "Answer", "ko": "답하기"}


def _open_stop(page: Page, app_url: str, number: int, language: str) -> None:
    page.set_viewport_size({"width": 1280, "height": FOLD})
    page.goto(f"{app_url}/?lesson=intro&stop={number}&lang={language}&presenter=true")
    wait_idle(page)


def _answer_first_option(page: Page, language: str) -> None:
    """A stop's question hides its page until answered (any answer will do here)."""
    main = page.get_by_test_id("stMain")
    main.get_by_role("radio").first.check(force=True)
    main.get_by_role("button", name=ANSWER[language]).click()
    wait_idle(page)


def _assert_section_first_and_its_chart_on_screen(page: Page, number: int, section: str, language: str) -> None:
    stop = load_lessons(known_pages())[0]["intro"].stops[number - 1]
    assert stop.section == section
    expect(page.locator(f".st-key-section_{section} .js-plotly-plot").first).to_be_visible()
    wait_idle(page)
    page.screenshot(path=SCREENSHOTS / f"projected_section_stop_{number}_{language}.png")
    boxes = page.evaluate(BOXES, section)
    assert boxes["sections"][0] == section, boxes
    # the others below it, or (a page whose other sections are drawn when asked) the switch that draws them
    assert len(boxes["sections"]) > 1 or page.locator(f".st-key-sections_rest_{stop.page}_{section}").count(), boxes
    assert boxes["bar"]["bottom"] <= boxes["section"]["top"], boxes
    assert boxes["chart"]["top"] <= FOLD - SEEN, boxes
    expect(page.locator(".st-key-lesson_bar").get_by_text(stop.title[language], exact=True)).to_be_visible()
    no_exception(page)


def test_the_saturation_stop_shows_its_row_of_scores_above_the_fold_in_korean(page: Page, app_url):
    _open_stop(page, app_url, 6, "ko")
    _assert_section_first_and_its_chart_on_screen(page, 6, "row", "ko")
    # the page's other two sections (four more charts) under it, once asked for
    page.locator(".st-key-sections_rest_softmax_scaling_row").get_by_text(translate("ko", "page_sections.show_rest")).click()
    wait_idle(page)
    expect(page.locator(".st-key-section_dot_products .js-plotly-plot")).to_be_visible()
    assert page.evaluate(BOXES, "row")["sections"] == ["row", "dot_products", "saturation"]
    no_exception(page)


def test_the_compare_stop_shows_accuracy_by_length_above_the_fold_then_next_the_growing_sentence(page: Page, app_url):
    _open_stop(page, app_url, 1, "en")
    _answer_first_option(page, "en")
    _assert_section_first_and_its_chart_on_screen(page, 1, "length", "en")
    page.get_by_role("button", name="Next").click()  # stop 2: the growing sentence (its length slider, no chart)
    wait_idle(page)
    expect(page.locator(".st-key-lesson_bar").get_by_text("Stop 2 of")).to_be_visible()
    growing = page.locator(".st-key-section_growing")
    expect(growing.get_by_role("slider")).to_be_visible()
    assert growing.bounding_box()["y"] < page.locator(".st-key-section_side_by_side").bounding_box()["y"]
    assert growing.get_by_role("slider").bounding_box()["y"] < FOLD
    no_exception(page)

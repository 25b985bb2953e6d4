"""A lesson projected at 1280×720 in presenter mode (Chromium): the stop's title and text are on the first screen,
below Streamlit's header strip, and the page's main chart starts above the fold under them."""
import pytest
from playwright.sync_api import Page, expect

from classroom.lessons import load_lessons
from i18n import translate
from tests.browser_steps import no_exception, wait_idle
from tests.conftest import SCREENSHOTS
from tests.test_browser_projected_stops import predict
from ui.lessons.catalogue import known_pages

FOLD = 720
SEEN = 150  # px of the main chart on the first screen at least: its title and its first row of maps
BOXES = """() => { const box = sel => { const el = document.querySelector(sel);
  return el ? el.getBoundingClientRect().toJSON() : null; };
  return {header: box('header[data-testid="stHeader"]'), bar: box('.st-key-lesson_bar'),
          chart: box('.js-plotly-plot'), title: box('.js-plotly-plot .gtitle')}; }"""


@pytest.mark.parametrize("stop_number, language", [(9, "ko"), (12, "en")])  # the attention page, the decoding page
def test_a_projected_stop_shows_its_text_and_the_main_chart_above_the_fold(page: Page, app_url, stop_number,
                                                                           language):
    stop = load_lessons(known_pages())[0]["intro"].stops[stop_number - 1]
    page.set_viewport_size({"width": 1280, "height": FOLD})
    page.goto(f"{app_url}/?lesson=intro&stop={stop_number}&lang={language}&presenter=true")
    expect(page.locator(".js-plotly-plot").first).to_be_visible()
    wait_idle(page)
    if stop.question is not None:  # stop 12's cell question: its map of hidden weights until it is answered
        predict(page, stop, language)
    page.screenshot(path=SCREENSHOTS / f"projected_stop_{stop_number}_{language}.png")
    bar = page.locator(".st-key-lesson_bar")
    first_words = stop.text[language].strip().split("**")[0].strip()  # the text up to its first bold part
    # answered, a question's stop shows the answer and its chart first, its text one click away (folded)
    text = bar.get_by_text(first_words) if stop.question is None else bar.get_by_text(
        translate(language, "projected_lesson.stop_text"), exact=True)
    expect(text).to_be_visible()
    expect(bar.get_by_text(stop.title[language], exact=True)).to_be_visible()
    text_box = text.bounding_box()
    assert text_box["y"] + text_box["height"] <= FOLD
    assert float(text.evaluate("el => parseFloat(getComputedStyle(el).fontSize)")) >= 20  # presenter size
    boxes = page.evaluate(BOXES)
    assert boxes["bar"]["top"] >= boxes["header"]["bottom"], boxes  # its top border is not under the header strip
    assert boxes["bar"]["bottom"] <= boxes["chart"]["top"] <= FOLD - SEEN, boxes
    if stop.page == "attention":  # the all-heads grid is as wide as the page: its title is one line, not wrapped
        assert boxes["title"]["height"] < 40, boxes  # 22 px text: one line is 29 px high, two were 58
    no_exception(page)


@pytest.mark.parametrize("language", ["en", "ko"])
def test_stop_2_projected_opens_on_the_three_translations(page: Page, app_url, language):
    """Stop 2's point is the three models' translations of a 40-word sentence, their differences marked: projected,
    they come right under the length slider the stop asks to move, above the sentence and its reference (which fill
    a screen)."""
    from i18n import translate

    page.set_viewport_size({"width": 1280, "height": FOLD})
    page.goto(f"{app_url}/?lesson=intro&stop=2&lang={language}&presenter=true")
    main = page.get_by_test_id("stMain")
    first_output = main.get_by_text(translate(language, "models.family_no_attention"), exact=True).first
    expect(first_output).to_be_visible(timeout=60000)
    wait_idle(page)
    english = main.get_by_text(translate(language, "compare.english"), exact=True).first
    for _ in range(20):  # the page's last rerun (presenter sizes) can still move it after the run looks idle
        output_box, english_box = first_output.bounding_box(), english.bounding_box()
        if output_box["y"] <= FOLD - 220:
            break
        page.wait_for_timeout(500)
    assert output_box["y"] <= FOLD - 220, output_box  # their labels and first six lines on the first screen
    assert output_box["y"] < english_box["y"], (output_box, english_box)
    no_exception(page)

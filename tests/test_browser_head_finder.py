"""Real browser, 1280×720: the head finder, two texts side by side and a head across many texts (issue 41), in English
and Korean, one walk on one server. all-MiniLM-L6-v2 on the attention page: the finder ranks L4 H2 and L6 H12 first
for "it" → "animal", a head button opens L6 H12 and a click on the first bar opens L4 H2 in the Head view; the
two-texts view draws both maps and their difference; the LLM heads page finds SmolLM2's head and draws its queries
and keys over the fixed texts. Screenshots of the first screen go to tests/screenshots/ (head_finder_*.png)."""
import re
from urllib.parse import quote

from playwright.sync_api import Page, expect

from i18n import translate
from model.bert import MINILM_NAME
from tests.browser_steps import no_exception, wait_idle
from tests.conftest import SCREENSHOTS

FIRST_VISIT_MS = 180_000  # a model's load and first analyses on a loaded 2-core machine
SCREEN = {"width": 1280, "height": 720}
COREFERENCE = "The animal didn't cross the street because it was too tired."


def _attention(app_url: str, language: str, view: str, extra: str = "") -> str:
    return (f"{app_url}/attention?model={MINILM_NAME}&sentence={quote(COREFERENCE)}&view={quote(view)}"
            f"&find_q=it&find_k=animal&lang={language}&presenter=true{extra}")  # presenter mode: as projected


def _first_screen(page: Page, name: str) -> None:
    no_exception(page)
    page.screenshot(path=SCREENSHOTS / name)  # the first screen only: what a projector shows before scrolling


def _ticks_top_down(chart) -> list[str]:
    """The bar chart's head labels as the eye reads them, top to bottom (the DOM keeps another order)."""
    return chart.evaluate("""plot => [...plot.querySelectorAll('.ytick text')]
        .map(t => [t.getBoundingClientRect().top, t.textContent]).sort((a, b) => a[0] - b[0]).map(p => p[1])""")


def _top_on_screen(locator) -> None:
    """The chart starts on the first 1280×720 screen (its title and the top of its plot)."""
    box = locator.bounding_box()
    assert box is not None and box["y"] + 150 < SCREEN["height"], box


def _finder_bars(page: Page, app_url: str, language: str):
    """The attention page's finder on the coreference sentence, drawn: its chart of ranked heads."""
    page.goto(_attention(app_url, language, "Find heads"))
    bars = page.locator(".js-plotly-plot").filter(has=page.locator(".barlayer")).first
    expect(bars).to_be_visible(timeout=FIRST_VISIT_MS)
    wait_idle(page)
    return bars


def test_finder_two_texts_and_a_head_across_texts_in_english_and_korean(page: Page, app_url):
    page.set_viewport_size(SCREEN)
    for language in ("en", "ko"):
        bars = _finder_bars(page, app_url, language)
        expect(bars.locator(".ytick text").filter(has_text=re.compile(r"^L4 H2$"))).to_have_count(1)
        assert _ticks_top_down(bars)[:2] == ["L4 H2", "L6 H12"]  # the first ranked on top
        _first_screen(page, f"head_finder_attention_{language}.png")
        _top_on_screen(bars)
        if language == "en":  # a head button opens the head in the Head view
            page.get_by_test_id("stButtonGroup").get_by_text("L6 H12", exact=True).click()
            wait_idle(page)
            expect(page).to_have_url(re.compile(r"view=Head.*layer=6|layer=6.*view=Head"))
            assert "head=12" in page.url

        page.goto(_attention(app_url, language, "Two texts", "&layer=4&head=2&v=2"))
        maps = page.locator(".js-plotly-plot").filter(has=page.locator(".heatmaplayer"))
        expect(maps).to_have_count(3, timeout=FIRST_VISIT_MS)  # A, B and B − A
        wait_idle(page)
        second = page.locator(".st-key-text_b input")
        expect(second).to_have_value(COREFERENCE.replace("tired", "wide"))
        expect(page.locator(".st-key-text_b label")).to_contain_text(translate(language, "head_finder.text_b"))
        _first_screen(page, f"head_finder_two_texts_{language}.png")
        _top_on_screen(maps.first)

        page.goto(f"{app_url}/llm_heads?find_q=it&find_k=animal&lang={language}")
        across = page.locator(".st-key-section_across")
        picture = across.locator(".js-plotly-plot").filter(has=page.locator(".scatterlayer")).first
        expect(picture).to_be_visible(timeout=FIRST_VISIT_MS)
        wait_idle(page)
        picture.scroll_into_view_if_needed()
        expect(picture.locator(".legendtext").first).to_have_text(translate(language, "head_finder.chart.queries"))
        expect(across.get_by_role("link", name=translate(language, "head_finder.rope_link"))).to_be_visible()
        page.locator(".st-key-section_finder").scroll_into_view_if_needed()
        _first_screen(page, f"head_finder_llm_{language}.png")
        picture.scroll_into_view_if_needed()
        _first_screen(page, f"head_finder_across_{language}.png")


def _bar_centre(chart, rank: int) -> tuple[float, float]:
    """The viewport centre of the bar of the `rank`-th head (0: the first ranked): plotly draws a bar trace's points
    in its data's order, the first ranked first (ranking_bars), whatever the axis' direction."""
    bar = chart.locator(".barlayer .point path").nth(rank)
    bar.scroll_into_view_if_needed()
    box = bar.bounding_box()
    assert box is not None and box["width"] > 0, box
    return box["x"] + box["width"] / 2, box["y"] + box["height"] / 2


def test_a_click_on_a_bar_opens_that_head_in_english_and_korean(page: Page, app_url):
    page.set_viewport_size(SCREEN)
    for language in ("en", "ko"):
        bars = _finder_bars(page, app_url, language)
        x, y = _bar_centre(bars, 0)
        page.mouse.move(x, y)  # the hover names the bar's head before the click opens it
        expect(bars.locator(".hoverlayer .hovertext")).to_contain_text("L4 H2")
        page.mouse.click(x, y)
        wait_idle(page)
        expect(page).to_have_url(re.compile(r"view=Head"))
        assert "layer=4" in page.url and "head=2" in page.url, page.url
        # the Head view's pickers show the clicked head (their options are 1-based numbers)
        expect(page.locator(".st-key-attn_view").get_by_role(
            "radio", name=translate(language, "attention.views.head"), exact=True)).to_be_checked()
        expect(page.locator(".st-key-attn_layer input[role=combobox]")).to_have_value("4")
        expect(page.locator(".st-key-attn_head input[role=combobox]")).to_have_value("2")
        no_exception(page)
        page.screenshot(path=SCREENSHOTS / f"head_finder_bar_click_{language}.png")

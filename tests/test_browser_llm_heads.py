"""Real browser: the LLM heads page draws the 30 × 9 sink heatmap and names the top induction head on its map, in
English and in Korean (SmolLM2 loads on the first visit: the first waits are long, not speed assertions)."""
import re

from playwright.sync_api import Page, expect

from i18n import translate
from tests.browser_steps import checked_screenshot, wait_idle

FIRST_VISIT_MS = 180_000  # model load and the first analyses on a loaded 2-core machine


def _top_head_metric(page: Page, language: str):
    label = translate(language, "llm_heads.top_head")
    return page.get_by_test_id("stMetric").filter(has_text=label).get_by_test_id("stMetricValue")


def test_sinks_heatmap_and_top_induction_head_in_english_and_korean(page: Page, app_url):
    page.set_viewport_size({"width": 1280, "height": 900})
    for language in ("en", "ko"):
        page.goto(f"{app_url}/llm_heads?lang={language}")
        expect(page.get_by_role("heading", name=translate(language, "llm_heads.title"))).to_be_visible(
            timeout=FIRST_VISIT_MS)
        sinks = page.locator(".st-key-section_sinks .js-plotly-plot").first
        expect(sinks).to_be_visible(timeout=FIRST_VISIT_MS)
        expect(sinks.locator(".heatmaplayer")).to_have_count(1)
        expect(sinks.locator(".ytick").filter(has_text=re.compile(r"^L30$"))).to_have_count(1)  # 30 layers
        expect(sinks.locator(".xtick").filter(has_text=re.compile(r"^H9$"))).to_have_count(1)  # 9 heads
        top = _top_head_metric(page, language)
        expect(top).to_have_text(re.compile(r"^L\d+ H\d$"), timeout=FIRST_VISIT_MS)
        name = top.inner_text()
        induction = page.locator(".st-key-section_induction .js-plotly-plot").first
        expect(induction.locator(".annotation-text").filter(has_text=name).first).to_be_visible()
        wait_idle(page)
        checked_screenshot(page, f"llm_heads_{language}.png")

"""A student's phone: the app knows it from the browser's headers, and each chart is drawn for the phone's width:
its title wrapped to fit and plotly's tool bar left out (on a touch screen it stays over the title)."""
import pytest
from playwright.sync_api import expect

from tests.browser_steps import wait_drawn, wait_idle
from tests.chart_text import clipped_titles, open_folded_sections
from tests.conftest import SCREENSHOTS
from ui.screen import is_phone

IPHONE = ("Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) "
          "Version/17.5 Mobile/15E148 Safari/604.1")
ANDROID = ("Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 "
           "Mobile Safari/537.36")
IPAD = ("Mozilla/5.0 (iPad; CPU OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 "
        "Safari/604.1")
DESKTOP = ("Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36")


def test_a_phone_is_told_by_its_user_agent_or_its_client_hint():
    assert is_phone({"User-Agent": IPHONE}) and is_phone({"User-Agent": ANDROID})
    assert not is_phone({"User-Agent": IPAD}) and not is_phone({"User-Agent": DESKTOP}) and not is_phone({})
    assert is_phone({"User-Agent": DESKTOP, "Sec-CH-UA-Mobile": "?1"})  # Chromium's hint (a secure context)
    assert not is_phone({"User-Agent": DESKTOP, "Sec-CH-UA-Mobile": "?0"})


# The LLM pages' later sections (issue 56) on a phone: the answer page opens the lens, attribution, influence and
# the flow graph without a click (its short prompt, the flow's own text); the LLM page its writing, branches and
# heads-off controls, each a section of its own.
LLM_ANSWER = ("llm_answer?lang=ko&clean=The+capital+of+France+is&corrupt=The+capital+of+Italy+is&answer=+Paris"
              "&wrong=+Rome&flow_text=When+Mary+and+John+went+to+the+store%2C+John+gave+a+drink+to")
PHONE_SECTIONS = {"llm_answer": ("lens", "attribution", "influence", "flow"), "llm": ("branches", "switch_off")}
# Wider than the phone's screen: an element of a section whose right edge passes it (a chart, a table, a row of
# buttons), so that the student would scroll sideways
WIDER_THAN_SCREEN = """(selector) => { const section = document.querySelector(selector); if (!section) return null;
  const limit = window.innerWidth + 1;
  return [...section.querySelectorAll('*')].filter(e => e.getBoundingClientRect().right > limit
    && getComputedStyle(e).overflowX !== 'hidden' && !e.closest('[data-testid=stDataFrame]')).length; }"""


@pytest.mark.parametrize("path", ["compare?lang=en", "residual?lang=ko", LLM_ANSWER, "llm?lang=en"])
def test_on_a_phone_every_chart_title_fits_and_no_tool_bar_covers_it(browser, app_url, path):
    context = browser.new_context(viewport={"width": 390, "height": 844}, user_agent=IPHONE, is_mobile=True,
                                  has_touch=True, device_scale_factor=2)
    try:
        page = context.new_page()
        page.goto(f"{app_url}/{path}")
        expect(page.locator(".js-plotly-plot").first).to_be_attached(timeout=180000)  # SmolLM2 may load first
        wait_idle(page)
        page_name = path.split("?")[0]
        for section in PHONE_SECTIONS.get(page_name, ()):
            where = f".st-key-section_{section}"
            expect(page.locator(where)).to_be_attached(timeout=180000)
            assert page.evaluate(WIDER_THAN_SCREEN, where) == 0, (section, "wider than a 390 px screen")
        if page_name == "llm_answer":  # the flow graph is the last section the page draws without a click
            expect(page.locator(".st-key-section_flow .js-plotly-plot .scatterlayer")).to_have_count(1, timeout=180000)
            wait_idle(page)
        open_folded_sections(page)
        assert not clipped_titles(page)
        assert page.locator(".js-plotly-plot .gtitle").count() >= 1
        expect(page.locator(".js-plotly-plot .modebar")).to_have_count(0)  # destroyed: its container stays
        if page_name in PHONE_SECTIONS:  # the page scrolls inside Streamlit's main part: a tall window shows it all
            page.set_viewport_size({"width": 390, "height": 9000})
            wait_drawn(page)
            for section in PHONE_SECTIONS[page_name]:
                page.locator(f".st-key-section_{section}").screenshot(path=SCREENSHOTS / f"phone_{section}.png")
    finally:
        context.close()

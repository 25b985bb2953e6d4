"""A student's phone: the app knows it from the browser's headers, and each chart is drawn for the phone's width:
its title wrapped to fit and plotly's tool bar left out (on a touch screen it stays over the title)."""
import pytest
from playwright.sync_api import expect

from tests.browser_steps import wait_idle
from tests.chart_text import clipped_titles, open_folded_sections
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


@pytest.mark.parametrize("path", ["compare?lang=en", "residual?lang=ko"])
def test_on_a_phone_every_chart_title_fits_and_no_tool_bar_covers_it(browser, app_url, path):
    context = browser.new_context(viewport={"width": 390, "height": 844}, user_agent=IPHONE, is_mobile=True,
                                  has_touch=True, device_scale_factor=2)
    try:
        page = context.new_page()
        page.goto(f"{app_url}/{path}")
        expect(page.locator(".js-plotly-plot").first).to_be_attached(timeout=90000)
        wait_idle(page)
        open_folded_sections(page)
        assert not clipped_titles(page)
        assert page.locator(".js-plotly-plot .gtitle").count() >= 1
        expect(page.locator(".js-plotly-plot .modebar")).to_have_count(0)  # destroyed: its container stays
    finally:
        context.close()

"""A lecture in a real browser (Chromium), second part: a click on a grid thumbnail opens that head."""
import re

from playwright.sync_api import Page, expect

from tests.conftest import SCREENSHOTS
from tests.test_browser import no_exception, wait_idle


def _thumbnail(page: Page, number: int):
    """The drag layer of the number-th subplot (0-based, row by row) of the first chart: what a click lands on."""
    return page.locator(".js-plotly-plot").first.locator(".draglayer .nsewdrag").nth(number)


def test_a_click_on_a_grid_thumbnail_opens_that_head(page: Page, app_url):
    page.goto(f"{app_url}/attention?sentence=i+am+a+student&kind=cross&view=All+heads")
    wait_idle(page)
    expect(page.get_by_role("radio", name="All heads", exact=True)).to_be_checked()
    thumbnail = _thumbnail(page, 6)  # the toy model's grid is 2 layers × 4 heads: the 7th is layer 2, head 3
    thumbnail.hover()  # the hover still names the tokens (the click targets carry the heatmap's hover)
    expect(page.locator(".hovertext").first).to_contain_text(re.compile(r"layer 2\W*head 3.*query .+ → key .+"))
    page.screenshot(path=SCREENSHOTS / "grid_hover.png")
    thumbnail.click()
    wait_idle(page)
    expect(page.get_by_role("radio", name="Head", exact=True)).to_be_checked()
    expect(page.get_by_text("Encoder–decoder (cross) attention · layer 2 · head 3").first).to_be_visible()
    expect(page).to_have_url(re.compile(r"layer=2.*head=3.*view=Head"))
    page.go_back()  # Back returns to the grid the head was picked from
    wait_idle(page)
    expect(page).to_have_url(re.compile(r"view=All"))
    _thumbnail(page, 1).click()  # and a second click, on layer 1 head 2, opens that one
    wait_idle(page)
    expect(page.get_by_text("Encoder–decoder (cross) attention · layer 1 · head 2").first).to_be_visible()
    no_exception(page)

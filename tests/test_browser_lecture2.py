"""A lecture in a real browser (Chromium), second part: a click on a grid thumbnail opens that head."""
import re

from playwright.sync_api import Page, expect

from tests.browser_steps import grid_thumbnail, open_grid_thumbnail
from tests.conftest import SCREENSHOTS
from tests.test_browser import no_exception, wait_idle


def test_a_click_on_a_grid_thumbnail_opens_that_head(page: Page, app_url):
    page.goto(f"{app_url}/attention?sentence=i+am+a+student&kind=cross&view=All+heads")
    wait_idle(page)
    expect(page.get_by_role("radio", name="All heads", exact=True)).to_be_checked()
    plot = page.locator(".js-plotly-plot").first
    expect(plot.locator(".annotation-text-g")).to_have_count(8)  # all 8 thumbnails' titles drawn
    # no thumbnail's title sits on a thumbnail: each lies above its own map, below the one above it (the one heatmap's
    # maps are where the row and column tick labels cross)
    boxes = page.evaluate("""() => {
      const plot = document.querySelector('.js-plotly-plot'), box = el => el.getBoundingClientRect();
      return {titles: [...plot.querySelectorAll('.annotation-text-g')].map(box).map(b => [b.top, b.bottom]),
              rows: [...plot.querySelectorAll('g.ytick text')].map(box).map(b => (b.top + b.bottom) / 2)}; }""")
    for number, (top, bottom) in enumerate(boxes["titles"]):  # 2 layers × 4 heads, row by row
        assert bottom < boxes["rows"][number // 4], (number, top, bottom, boxes["rows"])
        assert number < 4 or top > boxes["rows"][number // 4 - 1], (number, top, bottom, boxes["rows"])
    page.mouse.move(*grid_thumbnail(page, 2, 3))  # the toy model's grid is 2 layers × 4 heads: layer 2, head 3
    # the hover names the head and the tokens (the click targets carry the heatmap's hover)
    expect(page.locator(".hovertext").first).to_contain_text(re.compile(r"layer 2\W*head 3.*query .+ → key .+"))
    page.screenshot(path=SCREENSHOTS / "grid_hover.png")
    open_grid_thumbnail(page, 2, 3)
    expect(page.get_by_role("radio", name="Head", exact=True)).to_be_checked()
    expect(page.get_by_text("Encoder–decoder (cross) attention · layer 2 · head 3").first).to_be_visible()
    expect(page).to_have_url(re.compile(r"layer=2.*head=3.*view=Head"))
    page.go_back()  # Back returns to the grid the head was picked from
    wait_idle(page)
    expect(page).to_have_url(re.compile(r"view=All"))
    open_grid_thumbnail(page, 1, 2)  # and a second click, on layer 1 head 2, opens that one
    expect(page.get_by_text("Encoder–decoder (cross) attention · layer 1 · head 2").first).to_be_visible()
    no_exception(page)


# --- suggestions for a word the model does not know -----------------------------------------------------------

def test_typing_an_unknown_word_offers_known_words_and_a_click_puts_one_in(page: Page, app_url):
    page.goto(f"{app_url}/attention?sentence=i+am+a+student")
    wait_idle(page)
    sidebar = page.get_by_test_id("stSidebar")
    box = sidebar.get_by_label("Sentence", exact=True)
    box.fill("I am a Stud")  # half a word, as a teacher types it
    box.press("Enter")
    wait_idle(page)
    offer = sidebar.get_by_text("The model does not know stud. Words it knows:")
    offer.scroll_into_view_if_needed()
    expect(offer).to_be_visible()
    expect(page.get_by_text(re.compile(r"^Unreliable:"))).to_be_visible()  # the translation read <unk>
    page.screenshot(path=SCREENSHOTS / "suggestions.png")
    sidebar.get_by_role("button", name="student", exact=True).click()
    wait_idle(page)
    expect(box).to_have_value("I am a student")  # the word replaced, the rest as typed
    expect(sidebar.get_by_text(re.compile("does not know"))).to_have_count(0)
    expect(page.get_by_text(re.compile(r"^Unreliable:"))).to_have_count(0)
    expect(page).to_have_url(re.compile(r"sentence=I(\+|%20)am(\+|%20)a(\+|%20)student"))
    no_exception(page)


def test_a_click_on_a_thumbnail_of_the_real_encoders_6x12_grid_opens_that_head(page: Page, app_url):
    """72 thumbnails in one heatmap: the click targets are blocks of cells there (viz.attention.CLICK_TARGETS_MAX)."""
    page.goto(f"{app_url}/attention?model=all-MiniLM-L6-v2&sentence=My+grandmother+baked+bread+because+the+kitchen"
              "+was+cold.&kind=encoder_self&view=All+heads")
    wait_idle(page)
    expect(page.locator(".js-plotly-plot").first.locator(".annotation-text-g")).to_have_count(72)  # their titles
    open_grid_thumbnail(page, 2, 5)
    expect(page.get_by_role("radio", name="Head", exact=True)).to_be_checked()
    expect(page.get_by_text("Encoder self-attention · layer 2 · head 5").first).to_be_visible()
    no_exception(page)

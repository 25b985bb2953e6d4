"""A lecture in a real browser (Chromium), second part: a click on a grid thumbnail opens that head."""
import re

import pytest

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


# --- chart titles are never clipped (outside presenter mode) ------------------------------------------------------

PAGES = ["", "positional", "softmax_scaling", "attention_steps", "normalization", "residual", "attention",
         "decoding", "compare", "train"]  # every page of the sidebar, in its default view

# Per chart: its svg's box, and the boxes of its title and of the other titles it could run into (subplot titles,
# axis titles, colour-bar titles, a legend's entries).
TITLE_BOXES = """() => [...document.querySelectorAll('.js-plotly-plot')].map(plot => {
  const box = el => { const r = el.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; };
  const svg = box(plot.querySelector('svg.main-svg'));
  const texts = kind => [...plot.querySelectorAll(kind)].filter(el => el.getBoundingClientRect().width > 0)
    .map(el => [kind, (el.textContent || '').slice(0, 60), ...box(el)]);
  return {svg, titles: texts('.gtitle'), others: [...texts('.annotation-text-g'), ...texts('.xtitle'),
          ...texts('.ytitle'), ...texts('.cbtitle'), ...texts('.legendtext')]}; })"""


def _overlap(a: list, b: list) -> bool:
    return min(a[4], b[4]) - max(a[2], b[2]) > 1 and min(a[5], b[5]) - max(a[3], b[3]) > 1


def clipped_titles(page: Page) -> list[str]:
    """Titles of the page's charts that stick out of their chart or overlap another text of it. Folded sections are
    opened first: a teacher opens them, and a chart in a closed one has no real layout to check."""
    for section in page.get_by_test_id("stMain").get_by_test_id("stExpander").locator("summary").all():
        section.click()
        page.wait_for_timeout(300)
    page.mouse.move(640, 400)
    for _ in range(25):  # charts are drawn as they scroll into view
        page.mouse.wheel(0, 600)
        page.wait_for_timeout(80)
    wait_idle(page)
    found = []
    for chart in page.evaluate(TITLE_BOXES):
        left, top, right, bottom = chart["svg"]
        for title in chart["titles"]:
            if title[2] < left - 1 or title[3] < top - 1 or title[4] > right + 1 or title[5] > bottom + 1:
                found.append(f"outside its chart: {title[1]!r}")
            found += [f"{title[1]!r} overlaps {other[0]} {other[1]!r}" for other in chart["titles"] + chart["others"]
                      if other is not title and _overlap(title, other)]
    return found


@pytest.mark.slow
@pytest.mark.parametrize("width, height", [(1280, 720)])  # the projector's; a wider screen has more room
def test_no_chart_title_is_clipped_or_overlapped_on_any_page(page: Page, app_url, width, height):
    page.set_viewport_size({"width": width, "height": height})
    problems = {}
    for path in PAGES:
        page.goto(f"{app_url}/{path}")
        if path not in ("", "train"):  # the pages that open on a chart: it is there before anything is measured
            expect(page.locator(".js-plotly-plot").first).to_be_attached()
        wait_idle(page)
        expect(page.get_by_test_id("stMain")).to_be_visible()
        if found := clipped_titles(page):
            problems[path or "home"] = found
            page.screenshot(path=f"/tmp/clipped_{path or 'home'}_{width}.png", full_page=True)
    assert not problems, problems
    no_exception(page)


# --- presenter mode at a projector's 1280 × 720: the main chart starts on the first screen ----------------------

@pytest.mark.parametrize("path", ["compare?sentence=i+am+a+student", "decoding?sentence=i+am+a+student",
                                  "positional", "attention?sentence=i+am+a+student"])
def test_presenter_mode_shows_the_main_chart_on_the_first_screen(page: Page, app_url, path):
    page.set_viewport_size({"width": 1280, "height": 720})
    page.goto(f"{app_url}/{path}{'&' if '?' in path else '?'}presenter=true")
    chart = page.locator(".js-plotly-plot").first
    expect(chart).to_be_visible()
    wait_idle(page)
    box = chart.bounding_box()
    visible = min(box["y"] + box["height"], 720) - max(box["y"], 0)
    page.screenshot(path=f"/tmp/presenter_{path.split('?')[0]}_1280x720.png")
    # its title and a good part of the map on the projected screen: 200 px, or all of a smaller chart
    assert 0 < box["y"] and visible >= min(200, box["height"]), (path, box)
    expect(page.get_by_text("How to read these maps")).to_be_visible()  # the explanation is one click away
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

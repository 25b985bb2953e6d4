"""A lecture in a real browser (Chromium): pages keep their view, Back and Forward move between views."""
import re

import pytest
from playwright.sync_api import Page, expect

from tests.conftest import SCREENSHOTS
from tests.browser_steps import grid_thumbnail, no_exception, wait_idle


def _sidebar_page(page: Page, title: str) -> None:
    page.locator(".st-key-page_menu").get_by_text(title, exact=True).click()
    wait_idle(page)


def _pick(page: Page, label: str, option: str) -> None:
    page.get_by_label(label, exact=True).click()
    page.get_by_role("option", name=option, exact=True).click()
    wait_idle(page)


def _press(page: Page, button: str, until: str, presses: int = 2) -> None:
    """Back or Forward until the address matches `until`. Streamlit adds a history entry of its own when a page
    opens (its path with no query string), so the view a person expects can be two presses away."""
    for _ in range(presses):
        getattr(page, f"go_{button}")()
        wait_idle(page)
        # Streamlit's own entry for a page change has no query string; the run it starts writes the view there
        # (replaceState). Pressing again before that write lands would let it overwrite the next entry.
        expect(page).to_have_url(re.compile(r"\?"))
        if re.search(until, page.url):
            return


def test_a_page_keeps_its_view_and_back_returns_to_it(page: Page, app_url):
    page.goto(f"{app_url}/attention?sentence=i+am+a+student&kind=encoder_self&layer=1&head=1&v=2")
    wait_idle(page)
    head_1 = page.get_by_text("Encoder self-attention · layer 1 · head 1").first
    head_3 = page.get_by_text("Encoder self-attention · layer 1 · head 3").first
    expect(head_1).to_be_visible()
    _pick(page, "Head", "3")
    expect(head_3).to_be_visible()
    _sidebar_page(page, "Positional encoding")
    expect(page).to_have_url(re.compile(r"/positional\?.*pe_d=64"))
    _press(page, "back", r"/attention\?")  # the browser's Back: the attention page, on the head it showed
    expect(page).to_have_url(re.compile(r"/attention\?.*head=3"))
    expect(head_3).to_be_visible()
    _press(page, "back", r"head=1(&|$)")  # further back: the view before it
    expect(head_1).to_be_visible()
    _press(page, "forward", r"head=3(&|$)")
    expect(head_3).to_be_visible()
    _press(page, "forward", r"/positional\?", presses=3)
    expect(page.get_by_role("heading", name="Positional encoding").first).to_be_visible()
    _sidebar_page(page, "Transformer attention")  # away and back through the sidebar: the same head
    expect(head_3).to_be_visible()
    no_exception(page)


def test_a_page_link_carries_its_view_so_back_takes_one_press(page: Page, app_url):
    page.goto(f"{app_url}/attention?sentence=i+am+a+student&kind=encoder_self&layer=1&head=1&v=2")
    wait_idle(page)
    _pick(page, "Head", "3")
    _sidebar_page(page, "Positional encoding")  # a first visit: the link has the page's defaults
    expect(page).to_have_url(re.compile(r"/positional\?.*pe_d=64"))
    page.go_back()
    wait_idle(page)
    expect(page).to_have_url(re.compile(r"/attention\?.*head=3"))
    _sidebar_page(page, "Positional encoding")
    menu_link = page.locator(".st-key-page_menu").get_by_role("link", name="Transformer attention")
    expect(menu_link).to_have_attribute("href", re.compile(r"attention\?.*head=3"))  # the menu keeps the view
    _sidebar_page(page, "Transformer attention")
    expect(page).to_have_url(re.compile(r"/attention\?.*head=3"))
    _sidebar_page(page, "Positional encoding")  # a second visit: the link has the page's whole address
    expect(page).to_have_url(re.compile(r"/positional\?.*pe_d=64"))
    page.go_back()  # one press: no half-written or bare address in between
    wait_idle(page)
    expect(page).to_have_url(re.compile(r"/attention\?.*head=3"))
    expect(page.get_by_text("Encoder self-attention · layer 1 · head 3").first).to_be_visible()
    no_exception(page)


def test_the_attention_page_opens_on_cross_attention_and_the_grid_opens_a_head(page: Page, app_url):
    page.goto(f"{app_url}/attention?sentence=i+am+a+student")
    wait_idle(page)
    expect(page.get_by_text(re.compile(r"^Why this head")).first).to_be_visible()
    expect(page.get_by_text(re.compile(r"Encoder–decoder \(cross\) attention · layer \d · head \d")).first) \
        .to_be_visible()
    page.get_by_role("radio", name="All heads", exact=True).click()
    wait_idle(page)
    page.mouse.move(*grid_thumbnail(page, 1, 1))  # a thumbnail names its tokens on hover
    expect(page.locator(".hovertext").first).to_contain_text(re.compile(r"query .+ → key .+"))
    page.get_by_role("radio", name="L2 H3", exact=True).click()
    wait_idle(page)
    expect(page.get_by_role("radio", name="Head", exact=True)).to_be_checked()
    expect(page.get_by_text("Encoder–decoder (cross) attention · layer 2 · head 3").first).to_be_visible()
    expect(page).to_have_url(re.compile(r"layer=2.*head=3.*view=Head"))
    no_exception(page)


# --- presenter mode at a projector's 1280 × 720 -------------------------------------------------------------------

# Text boxes of every plotly chart: titles, subplot titles, axis titles, colour-bar titles and numbers, cell numbers,
# legend entries.
TEXT_BOXES = """() => [...document.querySelectorAll('.js-plotly-plot')].map(plot => {
  const kinds = ['.gtitle', '.annotation-text-g', 'g[class^="g-x"]', 'g[class^="g-y"]', '.cbtitle',
                 '.colorbar .cbaxis text', '.heatmaplayer text', '.textpoint', 'g.xtick text', 'g.ytick text',
                 '.legendtext'];
  const boxes = [];
  for (const kind of kinds) for (const el of plot.querySelectorAll(kind)) {
    const r = el.getBoundingClientRect();
    if (r.width && r.height) boxes.push([kind, (el.textContent || '').slice(0, 40), r.left, r.top, r.right, r.bottom]);
  }
  return boxes; })"""


def _overlaps(boxes: list) -> list[tuple[str, str]]:
    """Pairs of text boxes that cover each other by more than a pixel each way (ticks of one axis are not compared:
    plotly spaces them itself)."""
    found = []
    for i, a in enumerate(boxes):
        for b in boxes[i + 1:]:
            if a[0] == b[0] and a[0] in ("g.xtick text", "g.ytick text"):
                continue
            if min(a[4], b[4]) - max(a[2], b[2]) > 1 and min(a[5], b[5]) - max(a[3], b[3]) > 1:
                found.append((f"{a[0]} {a[1]!r}", f"{b[0]} {b[1]!r}"))
    return found


def _open_presenting(page: Page, url: str) -> None:
    page.set_viewport_size({"width": 1280, "height": 720})
    page.goto(url)
    wait_idle(page)
    expect(page.locator(".js-plotly-plot").first).to_be_visible()


def test_presenter_mode_collapses_the_sidebar_and_shows_the_chart_above_the_fold(page: Page, app_url):
    _open_presenting(page, f"{app_url}/attention?sentence=i+am+a+student&presenter=true")
    expect(page.get_by_test_id("stSidebar")).to_have_attribute("data-collapsed", "true")
    chart_top = page.locator(".js-plotly-plot").first.bounding_box()["y"]
    assert 0 < chart_top < 720 - 100, chart_top  # the map's title and its first rows are on the projected screen
    expect(page.get_by_text(re.compile(r"brightest \(yellow\) cell"))).to_be_attached()  # Cividis is bright-high
    page.screenshot(path=SCREENSHOTS / "presenter_attention_1280x720.png")


@pytest.mark.slow
def test_presenter_mode_titles_and_numbers_never_overlap(page: Page, app_url):
    pages = ["attention?sentence=i+am+a+student&view=All+heads", "attention?sentence=i+am+a+student",
             "softmax_scaling", "normalization", "positional", "decoding?sentence=i+am+a+student",
             "compare?sentence=i+am+a+student", "attention_steps", "residual"]
    for path in pages:
        _open_presenting(page, f"{app_url}/{path}{'&' if '?' in path else '?'}presenter=true")
        for section in page.get_by_test_id("stMain").get_by_test_id("stExpander").locator("summary").all():
            section.click()  # folded sections too: a chart in a closed one has no real layout to check
            page.wait_for_timeout(300)
        wait_idle(page)
        page.mouse.move(640, 400)
        for _ in range(30):  # charts are drawn as they scroll into view
            page.mouse.wheel(0, 600)
            page.wait_for_timeout(100)
        wait_idle(page)
        for number, boxes in enumerate(page.evaluate(TEXT_BOXES)):
            assert boxes, (path, number)
            assert not _overlaps(boxes), (path, number, _overlaps(boxes))
    no_exception(page)

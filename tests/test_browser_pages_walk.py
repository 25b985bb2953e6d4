"""Every page opened once per language and mode, and every check of a page run on that one opening (issue 52: the
accessibility walk, the chart-title walk, the projected overlap walk and the first-screen tests each opened the same
pages again, at 3-5 s of CPU a page on CI's 2 cores).

At each page, in this order:
1. As it opens, every element drawn (no skeleton left): <html lang> is the interface language; no traceback; and on
   the walks that cover every page, at the page fixture's 1400 × 1000, axe-core finds no violation of its WCAG
   2.0/2.1 A and AA rules (issue 31, docs/classroom.md), projected none of AAA's 7:1 contrast either.
2. At a projector's 1280 × 720, before anything is scrolled or opened, projected: the sidebar is folded, and on the
   pages a lecture projects for their map (FIRST_SCREEN) the map starts on the first screen, its explanation one
   click away.
3. Its folded sections opened and every chart drawn: no chart title sticks out of its chart or covers another of
   its texts; projected, no two texts of a chart cover each other and every chart has text.
4. At the desk in English, what the page opens on (WHAT_IT_SHOWS: Home's table of models, the compare page's chart
   of accuracy against length), with a screenshot of it kept in tests/screenshots/.
5. On each walk's last page, the sidebar open (projected, one click opens it): no page name in its menu is cut short.
And over each walk: every request the pages made went to the app's own origin (or data:/blob:), nothing outside.

The walks (WALKS): every page of ui.page_list in English at the desk and in Korean projected, and the links a
lecture projects in English. Every stop of every shipped lesson is checked on the walk that opens each projected
stop in both languages (tests/test_browser_projected_stops.py).
"""
import pytest
from playwright.sync_api import Page, expect

from i18n import translate
from tests.browser_steps import axe_violations, no_exception, wait_drawn, wait_run_over
from tests.chart_text import clipped_titles, open_folded_sections, text_overlaps
from tests.conftest import SCREENSHOTS
from ui.page_list import PAGE_NAMES

DESK, PROJECTOR = {"width": 1400, "height": 1000}, {"width": 1280, "height": 720}
PAGES = ["" if name == "home" else name for name in PAGE_NAMES]  # the url path of each; "" is Home
# The links a lecture projects in English: the attention page's grid of heads, then each page's opening view.
LECTURE_LINKS = ["attention?sentence=i+am+a+student&view=All+heads", "attention?sentence=i+am+a+student",
                 "softmax_scaling", "normalization", "positional", "decoding?sentence=i+am+a+student",
                 "compare?sentence=i+am+a+student", "attention_steps", "residual"]
# (language, presenter) -> (the links walked, whether axe checks them). English at the desk and Korean projected
# cover every page, axe included (the other two pairs add no text or colour these lack; axe checks every lesson stop
# projected in English on tests/test_browser_projected_stops.py's walk); English projected, the lecture's links.
WALKS = {("en", False): (PAGES, True), ("ko", True): (PAGES, True), ("en", True): (LECTURE_LINKS, False)}
NO_CHART = {"home", "train", "teacher"}  # pages whose opening view draws no chart
# Pages a lecture projects for their map, its explanation folded above it ("How to read these maps"): at 1280 × 720
# the map's title and 200 px of it (or all of a smaller map) on the first screen.
FIRST_SCREEN = {"compare", "decoding", "positional", "attention"}
SEEN = 200
# At the desk in English: the text each page opens on (its first element of that text visible) and the screenshot
# kept of it (tests/screenshots/, for people to look at).
WHAT_IT_SHOWS = {"home": ("transformer_en-fr", "home.png"),
                 "compare": ("accuracy against sentence length", "compare.png")}


# The sidebar menu's page names wider than their place (Streamlit ends them with an ellipsis: "Inside an LLM: sinks,
# induction hea…"); a folded sidebar has no width to measure.
CLIPPED_PAGE_NAMES = """() => [...document.querySelectorAll('[data-testid="stSidebar"] .st-key-page_menu a')]
  .filter(link => [...link.querySelectorAll('*')].some(e => e.clientWidth > 0 && e.scrollWidth > e.clientWidth))
  .map(link => (link.querySelector('p') || link).textContent.trim())"""
_SIDEBAR_STILL = """() => document.querySelector('[data-testid="stSidebar"]').getAnimations({subtree: true}).length === 0"""


def _page_name(link: str) -> str:
    return link.split("?")[0] or "home"


def _opened(page: Page, url: str, language: str, window: dict) -> None:
    """Open url in a window of that size and wait until everything is drawn: the run over (its last element, which
    sets <html lang>), no element left faded, every skeleton replaced (a chart, presenter mode's CSS)."""
    page.set_viewport_size(window)
    page.goto(url)
    wait_run_over(page, timeout=90000)
    expect(page.locator("html")).to_have_attribute("lang", language)
    wait_drawn(page)
    no_exception(page)


def _clipped_page_names(page: Page) -> list[str]:
    """The sidebar's page names cut short at its width (a folded sidebar is opened first, as a click would)."""
    sidebar = page.get_by_test_id("stSidebar")
    if sidebar.get_attribute("data-collapsed") == "true":
        page.get_by_test_id("stExpandSidebarButton").click()
        expect(sidebar).to_have_attribute("data-collapsed", "false")
        page.wait_for_function(_SIDEBAR_STILL)  # its names measured at their width, not halfway through its opening
    expect(page.locator(".st-key-page_menu a").last).to_be_visible()
    return [f"the sidebar cuts the page name {name!r} short" for name in page.evaluate(CLIPPED_PAGE_NAMES)]


def _first_screen(page: Page, link: str, language: str) -> list[str]:
    """Projected at 1280 × 720, before anything is scrolled or opened: where the first chart lies."""
    name = _page_name(link)
    chart = page.locator(".js-plotly-plot").first
    expect(chart).to_be_visible()
    box = chart.bounding_box()
    visible = min(box["y"] + box["height"], PROJECTOR["height"]) - max(box["y"], 0)
    page.screenshot(path=f"/tmp/presenter_{name}_1280x720{'' if language == 'en' else '_' + language}.png")
    found = []
    if not (0 < box["y"] and visible >= min(SEEN, box["height"])):  # its title and a good part of the map
        found.append(f"the map is not on the first screen: {box}")
    if name == "attention":
        if not box["y"] < PROJECTOR["height"] - 100:  # the map's title and its first rows
            found.append(f"the attention map starts at {box['y']} px")
        # Cividis (presenter mode's scale) is bright where the weight is high, and the explanation says so ("look for
        # the brightest (yellow) cell in each row"), folded above the map
        shade = translate(language, "lecture.shade_bright")
        expect(page.get_by_text(translate(language, "attention.intro", shade=shade))).to_be_attached()
        if language == "en":
            page.screenshot(path=SCREENSHOTS / "presenter_attention_1280x720.png")
    expect(page.get_by_text(translate(language, "lecture.how_to_read"))).to_be_visible()  # one click away
    return found


# The Korean projected walk is tests/test_browser_pages_walk_ko.py's: one file held all three (about 150 s on a fast
# day of these 2 cores, 290 s on a slow one: over the 4-minute limit a file has, issue 52); both use the worker's server.
WALK_IDS = {("en", False): "en-desk", ("ko", True): "ko-projected", ("en", True): "en-projected"}
HERE = [("en", False), ("en", True)]


@pytest.mark.slow
@pytest.mark.parametrize(("language", "presenter"), HERE, ids=[WALK_IDS[walk] for walk in HERE])
def test_every_page_is_accessible_and_its_charts_text_fits(page: Page, app_url, language, presenter):
    walk_every_page(page, app_url, language, presenter)


def walk_every_page(page: Page, app_url: str, language: str, presenter: bool) -> None:
    """One walk of WALKS: each of its links opened once, every check of the module's docstring at each."""
    problems = {}
    links, axe = WALKS[language, presenter]
    requests: list[str] = []
    page.on("request", lambda request: requests.append(request.url))
    for link in links:
        name, found = _page_name(link), []
        settings = f"lang={language}&presenter={str(presenter).lower()}"
        _opened(page, f"{app_url}/{link}{'&' if '?' in link else '?'}{settings}", language, DESK if axe else PROJECTOR)
        if language == "en" and not presenter and name in WHAT_IT_SHOWS:  # at the desk's width
            text, screenshot = WHAT_IT_SHOWS[name]
            expect(page.get_by_test_id("stMain").get_by_text(text, exact=False).first).to_be_visible()
            page.screenshot(path=SCREENSHOTS / screenshot, full_page=True)
        if axe:
            found += [f"axe: {line}" for line in axe_violations(page, enhanced_contrast=presenter)]
            page.set_viewport_size(PROJECTOR)
            wait_drawn(page)  # plotly lays every chart out again at its new width
        expect(page.get_by_test_id("stMain")).to_be_visible()
        if name not in NO_CHART:  # the pages that open on a chart: it is there before it is measured
            expect(page.locator(".js-plotly-plot").first).to_be_attached()
        if presenter:
            expect(page.get_by_test_id("stSidebar")).to_have_attribute("data-collapsed", "true")
            if name in FIRST_SCREEN and "view=" not in link:  # the page's opening view (not the grid of heads)
                found += _first_screen(page, link, language)
        open_folded_sections(page)
        layout = clipped_titles(page) + (text_overlaps(page) if presenter else [])
        if link == links[-1]:  # the menu is the same on every page: once a walk, last (opening it moves the page)
            layout += _clipped_page_names(page)
        if layout:
            page.screenshot(path=f"/tmp/clipped_{name}_1280{'_presenter' if presenter else ''}.png", full_page=True)
        if found := found + layout:
            problems[link or "home"] = found
    foreign = [url for url in requests if not url.startswith((app_url, "data:", "blob:"))]
    assert requests and not foreign, foreign[:5]
    assert not problems, "\n".join(f"{link}: {line}" for link, lines in problems.items() for line in lines)

"""What the browser tests do between clicks: wait for Streamlit's run to finish, check that no traceback is shown,
type a sentence into the sidebar (Playwright against a real `streamlit run app.py`)."""
from playwright.sync_api import Page, expect

from tests.conftest import SCREENSHOTS

expect.set_options(timeout=30000)  # first renders load models; generous, not a speed assertion


def wait_idle(page: Page) -> None:
    """Wait until Streamlit has finished the current run: a moment for a run the caller's action starts to begin, then
    the conditions of its end (no status widget, stApp's script state "notRunning", no element of the run left faded)
    instead of a second fixed pause (issue 52: 300 ms at every call, about 1,500 calls a run)."""
    page.wait_for_timeout(300)
    expect(page.get_by_test_id("stStatusWidget")).to_have_count(0, timeout=60000)
    expect(page.get_by_test_id("stApp")).to_have_attribute("data-test-script-state", "notRunning", timeout=60000)
    expect(page.locator('[data-stale="true"]')).to_have_count(0, timeout=60000)


def wait_run_over(page: Page, timeout: float = 60000) -> None:
    """Wait until the run that the caller saw start (a page just opened, a stop's bar drawn) is over, read from the
    app's own record instead of wait_idle's fixed pauses: its last element drawn (ui/run.py's page_language, or the
    guard's message or a traceback where the run broke), stApp's data-test-script-state "notRunning", no status widget,
    and no element of an earlier run left faded (data-stale: a run that switched page or asked for a rerun leaves
    them until the run after it ends)."""
    from ui.errors import GUARD_MESSAGE

    end = page.locator(".st-key-page_language").or_(page.get_by_test_id("stException")).or_(
        page.get_by_text(GUARD_MESSAGE[:40]))
    expect(end.first).to_be_attached(timeout=timeout)
    expect(page.get_by_test_id("stApp")).to_have_attribute("data-test-script-state", "notRunning", timeout=timeout)
    expect(page.get_by_test_id("stStatusWidget")).to_have_count(0, timeout=timeout)
    expect(page.locator('[data-stale="true"]')).to_have_count(0, timeout=timeout)


# Streamlit draws a skeleton where an element's code is still loading (a Plotly chart, an st.html, KaTeX: up to a few
# seconds after the run is over); a Plotly chart is drawn at its container's width once plotly has laid it out, and
# again after the window changes size.
_DRAWN = """() => !document.querySelector('[data-testid="stSkeleton"]')
  && [...document.querySelectorAll('[data-testid="stPlotlyChart"]')].every(chart => {
    const plot = chart.querySelector('.js-plotly-plot'), width = plot && plot.getBoundingClientRect().width;
    return plot && plot._fullLayout && plot.querySelector('svg.main-svg')
      && (width === 0 || Math.abs(plot._fullLayout.width - width) < 1); })"""


def wait_drawn(page: Page, timeout: float = 60000) -> None:
    """Wait until every element of the page is drawn (no skeleton left) and every Plotly chart is laid out at its
    present width: after wait_run_over, or after the window was resized or a folded section opened."""
    page.wait_for_function(_DRAWN, timeout=timeout)


def no_exception(page: Page) -> None:
    expect(page.get_by_test_id("stException")).to_have_count(0)


def set_sentence(page: Page, text: str) -> None:
    """Type a sentence into the sidebar's box and submit it; once more if a rerun that was under way when it was typed
    put the old sentence back (the box then no longer holds the text)."""
    box = page.get_by_test_id("stSidebar").get_by_label("Sentence", exact=True)
    for _ in range(2):
        box.fill(text)
        box.press("Enter")
        wait_idle(page)
        if box.input_value() == text:
            return
    expect(box).to_have_value(text)


# The all-heads grid is one heatmap of tiled maps (viz.attention.head_grid): a thumbnail is where its column's tick
# label ("head 5") and its row's ("layer 2") cross. Scrolled into view first: the point is in viewport pixels.
_THUMBNAIL = """([layer, head]) => {
  const plot = document.querySelector('[data-testid="stMain"] .js-plotly-plot');
  const row = plot.querySelectorAll('g.ytick text')[layer - 1];
  const column = plot.querySelectorAll('g.xtick text')[head - 1];
  row.scrollIntoView({block: 'center'});
  const x = column.getBoundingClientRect(), y = row.getBoundingClientRect();
  return [(x.left + x.right) / 2, (y.top + y.bottom) / 2]; }"""


def grid_thumbnail(page: Page, layer: int, head: int) -> tuple[float, float]:
    """The viewport point of the all-heads grid's thumbnail of layer/head (1-based), scrolled into view."""
    expect(page.get_by_test_id("stMain").locator(".js-plotly-plot g.xtick text").nth(head - 1)).to_be_attached()
    x, y = page.evaluate(_THUMBNAIL, [layer, head])
    return x, y


def open_grid_thumbnail(page: Page, layer: int, head: int) -> None:
    """Click the all-heads grid's thumbnail of layer/head (1-based); wait for the run it starts."""
    page.mouse.click(*grid_thumbnail(page, layer, head))
    wait_idle(page)


def open_url(page: Page, url: str, heading: str) -> None:
    """Go to a page of the app; wait until its title is shown and its run has finished."""
    page.goto(url)
    expect(page.get_by_role("heading", name=heading)).to_be_visible()
    wait_idle(page)


def checked_screenshot(page: Page, name: str) -> None:
    """No traceback on the page, and a full-page screenshot kept in tests/screenshots/ for people to look at."""
    no_exception(page)
    page.screenshot(path=SCREENSHOTS / name, full_page=True)


# WCAG 2.0 and 2.1, levels A and AA: the rules axe-core tags so (docs/classroom.md, Accessibility).
WCAG_AA_TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]
_AXE_RUN = """([tags, enhanced]) => axe.run(document, {runOnly: {type: "tag", values: tags},
  rules: enhanced ? {"color-contrast-enhanced": {enabled: true}} : {}, resultTypes: ["violations"]})"""


def axe_violations(page: Page, enhanced_contrast: bool = False) -> list[str]:
    """axe-core's WCAG 2.1 A/AA violations on the page as shown now, one line each (rule, count, first element and
    why). enhanced_contrast: also the AAA contrast rule (7:1; presenter mode). axe.min.js is the copy pinned in the
    lock (the axe-playwright-python wheel), put into the page here: nothing is fetched."""
    from axe_playwright_python.base import AXE_SCRIPT

    if not page.evaluate("() => typeof window.axe === 'object'"):
        page.evaluate(AXE_SCRIPT)
    results = page.evaluate(_AXE_RUN, [WCAG_AA_TAGS, enhanced_contrast])
    return [f"{v['id']} ×{len(v['nodes'])}: {v['nodes'][0]['target']} "
            f"{(v['nodes'][0].get('any') or v['nodes'][0].get('all') or [{'message': v['help']}])[0]['message']}"
            for v in results["violations"]]

"""What the browser tests do between clicks: wait for Streamlit's run to finish, check that no traceback is shown,
type a sentence into the sidebar (Playwright against a real `streamlit run app.py`)."""
from playwright.sync_api import Page, expect
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from tests.conftest import SCREENSHOTS

expect.set_options(timeout=30000)  # first renders load models; generous, not a speed assertion


# A watch on the page, set up by the first wait on it: the count of changes of stApp's script state ("running",
# "notRunning", ...; a MutationObserver sees each one, however short the run), and that count at the last thing a
# user does that may start a run (a click, a key, a typed or changed value, a pointer let go), so that a run a
# fragment's timer started before the caller's action is not taken for the action's.
# -> [whether the watch was there before this call, whether a run has begun since the caller's action].
_RUN_BEGUN = """() => {
  const app = document.querySelector('[data-testid="stApp"]');
  if (!app) return [false, false];
  if (window.__labWatch !== app) {
    window.__labWatch = app; window.__labChanges = 0; window.__labTaken = 0; window.__labActed = null;
    new MutationObserver(records => { window.__labChanges += records.length; })
      .observe(app, {attributes: true, attributeFilter: ['data-test-script-state']});
    for (const kind of ['click', 'keydown', 'keyup', 'input', 'change', 'pointerup'])
      document.addEventListener(kind, () => { window.__labActed = window.__labChanges; }, true);
    return [false, false];
  }
  const since = window.__labActed === null ? window.__labTaken : window.__labActed;
  window.__labSince = since;
  return [true, window.__labChanges > since]; }"""
_BEGUN = "() => window.__labChanges > window.__labSince"
_TAKE = "() => { window.__labTaken = window.__labChanges || 0; window.__labActed = null; }"
START_WAIT_MS = 300  # how long a run the caller's action starts may take to begin (the server's answer to the click)


def wait_idle(page: Page) -> None:
    """Wait until Streamlit has finished the current run: until the run the caller's action starts has begun (stApp's
    script state seen changing since the action, or since the last wait where no action was seen) or START_WAIT_MS
    without one, then the conditions of its end (no status widget, script state "notRunning", no element of the run
    left faded). The first wait on a page (or after it was loaded again) sets the watch up and pauses START_WAIT_MS."""
    watched, begun = page.evaluate(_RUN_BEGUN)
    if not watched:
        page.wait_for_timeout(START_WAIT_MS)
    elif not begun:
        try:
            page.wait_for_function(_BEGUN, timeout=START_WAIT_MS, polling=20)
        except PlaywrightTimeout:  # the action started no run: nothing to wait for beyond the end conditions
            pass
    expect(page.get_by_test_id("stStatusWidget")).to_have_count(0, timeout=60000)
    expect(page.get_by_test_id("stApp")).to_have_attribute("data-test-script-state", "notRunning", timeout=60000)
    expect(page.locator('[data-stale="true"]')).to_have_count(0, timeout=60000)
    page.evaluate(_TAKE)


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
    page.evaluate(_RUN_BEGUN)  # the watch set up: the next wait_idle on this page knows when its run begins
    page.evaluate(_TAKE)


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

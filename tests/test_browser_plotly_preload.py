"""plotly.js starts loading with the page itself (serving/plotly_preload: a modulepreload in the HTML of a Plotly page's
address) and is imported with the page's first element (ui/plotly_loader.preload_plotly), in a new tab, before the
page's first Plotly chart arrives: stop 17 (the real encoder's grid) asks for Streamlit's Plotly chunk once, before its
first delta is drawn, and its chart is then drawn from that one module. Home, which draws no Plotly chart, loads it once
its own page is drawn and the browser is idle (ui/plotly_loader.preload_plotly_when_idle), so that the lesson its button
opens in the same tab finds it evaluated. The hidden elements take no room."""
import json

from playwright.sync_api import Page, expect

from tests.browser_steps import no_exception, wait_idle

CHUNKS = """() => performance.getEntriesByType('resource').filter(e => /\\/PlotlyChart\\.[^/]*\\.js$/.test(e.name))
  .map(e => e.startTime)"""
# the page's modulepreload links to that chunk (serving/plotly_preload)
PRELOAD_LINKS = """() => [...document.querySelectorAll('link[rel=modulepreload]')]
  .filter(link => /\\/PlotlyChart\\.[^/]*\\.js$/.test(link.href)).length"""


def drawn_at(selector: str) -> str:
    """An init script that keeps in window.__drawnAt the time (performance.now()) `selector` is first drawn."""
    return (f"window.__drawnAt = null; const tick = () => {{ if (document.querySelector({json.dumps(selector)})) "
            "{ window.__drawnAt = performance.now(); return; } requestAnimationFrame(tick); }; "
            "requestAnimationFrame(tick);")


def test_a_new_tab_on_stop_17_loads_plotly_with_its_first_element(page: Page, app_url):
    page.add_init_script(drawn_at(".st-key-lesson_bar"))  # the run's first visible part
    page.goto(f"{app_url}/attention?lesson=intro&stop=17")
    expect(page.locator(".js-plotly-plot").first).to_be_visible(timeout=60000)
    wait_idle(page)
    no_exception(page)
    requested = page.evaluate(CHUNKS)
    assert len(requested) == 1, requested  # one module: the chart's own import found the preloaded one
    assert page.evaluate(PRELOAD_LINKS) == 1  # named by the page's HTML
    bar_at = page.evaluate("() => window.__drawnAt")
    assert bar_at is not None
    # asked for by the page's HTML, before the run's first element (the lesson bar) is drawn, not by the chart at the
    # end (without the preloads: about a second after the bar, when the grid arrived)
    assert requested[0] < bar_at, (requested[0], bar_at)
    assert page.evaluate("() => window.__plotlyPreload !== undefined")
    box = page.locator(".st-key-plotly_preload")
    expect(box).to_have_count(1)
    expect(box).to_be_hidden()  # display: none, so it moves nothing on the page


def test_home_loads_plotly_after_its_page_is_drawn_and_its_lesson_button_uses_it(page: Page, app_url):
    page.add_init_script(drawn_at('[data-testid="stMarkdownContainer"]'))  # Home's text
    page.goto(f"{app_url}/?lang=en")
    expect(page.get_by_test_id("stSidebar")).to_be_visible()
    wait_idle(page)
    no_exception(page)
    page.wait_for_function("() => window.__plotlyPreload !== undefined", timeout=15000)
    assert page.evaluate("async () => (await window.__plotlyPreload) !== null")  # fetched and evaluated
    requested = page.evaluate(CHUNKS)
    assert len(requested) == 1, requested
    home_at = page.evaluate("() => window.__drawnAt")
    assert home_at is not None and requested[0] > home_at, (requested[0], home_at)  # never before Home's own text
    assert page.evaluate(PRELOAD_LINKS) == 0  # Home's HTML names no chunk: its own load is not slowed
    for key in ("plotly_preload", "plotly_when_idle"):
        expect(page.locator(f".st-key-{key}")).to_be_hidden()
    page.get_by_role("button", name="Follow the guided lesson", exact=False).click()  # the same tab
    expect(page.get_by_text("stop 1 of 18", exact=False)).to_be_visible(timeout=60000)
    main = page.get_by_test_id("stMain")  # the stop asks its question first; its chart comes with the answer
    main.get_by_text("GRU without attention (one context vector)", exact=True).click()
    main.get_by_role("button", name="Answer").click()
    expect(page.locator(".js-plotly-plot .main-svg").first).to_be_visible(timeout=60000)
    wait_idle(page)
    no_exception(page)
    assert len(page.evaluate(CHUNKS)) == 1  # the stop's charts were drawn from the module Home loaded

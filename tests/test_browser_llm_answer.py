"""Real browser: the page "How an LLM finds its answer" projected (presenter mode, 1280×720), in English and Korean:
the logit lens's map starts above the fold on arrival, and with each other section's heading at the top of the
screen its map starts above the fold too (a 5-token pair: a sweep of seconds, run by the Run button; attribution is
drawn before it, from the clean prompt alone; the influence section's three panels, from the lens's prompt). Viewport
screenshots are kept in tests/screenshots/ for people to look at (SmolLM2 loads on the first visit: the first waits are long, not speed
assertions)."""
import re
from urllib.parse import urlencode

from playwright.sync_api import Page, expect

from i18n import translate
from tests.browser_steps import no_exception, wait_idle
from tests.conftest import SCREENSHOTS

FIRST_VISIT_MS = 180_000  # model load, the lens and a sweep on a loaded 2-core machine
FOLD = 720
SHORT = {"clean": "The capital of France is", "corrupt": "The capital of Italy is", "answer": " Paris",
         "wrong": " Rome"}
# A heatmap "starts above the fold" when this much of it shows on the first screen: its title and its top rows.
SHOWN_PX = 200
# The flow graph's prompt: 61 tokens, near its 64-token bound, as a projector must show it
FLOW_TEXT = ("When Mary and John went to the store, John gave a drink to Mary. Later that day the two friends walked "
             "along the river and talked about the books they had read, the places they wanted to visit next summer "
             "and the people they had met at the old market. Then John gave the last book to")
# The viewport point of a graph point (x, y), the plot scrolled to the middle of the screen (plotly's own axes)
POINT_AT = """([selector, x, y]) => { const gd = document.querySelector(selector);
  gd.scrollIntoView({block: 'center'});
  const layout = gd._fullLayout, box = gd.getBoundingClientRect();
  return [box.left + layout._size.l + layout.xaxis.l2p(x), box.top + layout._size.t + layout.yaxis.l2p(y)]; }"""


def test_both_maps_start_above_the_fold_projected_in_english_and_korean(page: Page, app_url):
    page.set_viewport_size({"width": 1280, "height": FOLD})
    for language in ("en", "ko"):
        query = {"lang": language, "presenter": "true", **SHORT, "flow_text": FLOW_TEXT}
        page.goto(f"{app_url}/llm_answer?{urlencode(query)}")
        lens = page.locator(".st-key-section_lens .js-plotly-plot").first
        expect(lens).to_be_visible(timeout=FIRST_VISIT_MS)
        expect(lens.locator(".heatmaplayer")).to_have_count(1)
        expect(lens.locator(".ytick").filter(has_text=re.compile(r"^L30$"))).to_have_count(1)  # 30 blocks
        expect(lens.locator(".xtick").filter(has_text="France")).to_have_count(1)
        expect(page.locator(".st-key-section_lens h2")).to_have_text(translate(language, "llm_answer.lens_title"))
        # attribution reads the clean prompt alone: drawn before any sweep; the sweeps wait for Run
        attribution = page.locator(".st-key-section_attribution .js-plotly-plot").first
        expect(attribution.locator(".barlayer")).to_have_count(1, timeout=FIRST_VISIT_MS)
        wait_idle(page)
        no_exception(page)
        assert 0 <= lens.bounding_box()["y"] and lens.bounding_box()["y"] + SHOWN_PX < FOLD, lens.bounding_box()
        page.screenshot(path=SCREENSHOTS / f"llm_answer_lens_{language}.png")  # the first screen, as projected
        heads = page.locator(".st-key-section_heads .js-plotly-plot")
        expect(heads).to_have_count(0)
        page.locator(".st-key-answer_patching_run").get_by_role(
            "button", name=translate(language, "llm_answer.run_patching")).click()
        expect(heads.first.locator(".heatmaplayer")).to_have_count(1, timeout=FIRST_VISIT_MS)  # both sweeps done
        wait_idle(page)
        no_exception(page)
        if language == "en":  # a click on a cell (row 12, position 3 " France") lists that cell's top tokens
            row = lens.locator(".ytick").filter(has_text=re.compile(r"^L12$"))
            row.scroll_into_view_if_needed()
            x, y = lens.locator(".xtick").filter(has_text="France").bounding_box(), row.bounding_box()
            page.mouse.move(x["x"] + x["width"] / 2, y["y"] + y["height"] / 2)
            page.mouse.click(x["x"] + x["width"] / 2, y["y"] + y["height"] / 2)
            expect(page.locator(".st-key-section_lens").get_by_text("Row L12, position 3 (' France')")).to_be_visible()
            assert "lens_row=12" in page.url and "lens_position=3" in page.url
            no_exception(page)

        for section, layer, title in (("patching", ".heatmaplayer", "llm_answer.patching_title"),
                                      ("heads", ".heatmaplayer", "llm_answer.heads_title"),
                                      ("attribution", ".barlayer", "llm_answer.attribution_title"),
                                      ("influence", ".barlayer", "llm_influence.title")):  # the lens's prompt
            chart = page.locator(f".st-key-section_{section} .js-plotly-plot").first
            expect(chart.locator(layer)).to_have_count(3 if section == "influence" else 1)  # three methods' panels
            heading = page.locator(f".st-key-section_{section} h2")
            expect(heading).to_have_text(translate(language, title))
            heading.evaluate("element => element.scrollIntoView({block: 'start'})")
            page.wait_for_timeout(300)
            top = heading.bounding_box()["y"]
            assert 0 <= top < 100, (section, top)
            assert chart.bounding_box()["y"] + SHOWN_PX < FOLD, (section, chart.bounding_box())
            page.screenshot(path=SCREENSHOTS / f"llm_answer_{section}_{language}.png")

        # the flow graph of 61 tokens, projected: its heading at the top, the graph under it, every row named; a click
        # on a node (block 18's output at ' John', position 3) shows that node
        flow = page.locator(".st-key-section_flow .js-plotly-plot").first
        expect(flow.locator(".scatterlayer")).to_have_count(1, timeout=FIRST_VISIT_MS)
        expect(flow.locator(".ytick").filter(has_text=re.compile(r"^L30$"))).to_have_count(1)
        heading = page.locator(".st-key-section_flow h2")
        expect(heading).to_have_text(translate(language, "llm_flow.title"))
        heading.evaluate("element => element.scrollIntoView({block: 'start'})")
        page.wait_for_timeout(300)
        assert 0 <= heading.bounding_box()["y"] < 100 and flow.bounding_box()["y"] + SHOWN_PX < FOLD
        page.screenshot(path=SCREENSHOTS / f"llm_answer_flow_{language}.png")
        page.set_viewport_size({"width": 1280, "height": 1200})  # the whole graph in one picture, to read
        flow.screenshot(path=SCREENSHOTS / f"llm_answer_flow_graph_{language}.png")
        page.set_viewport_size({"width": 1280, "height": FOLD})
        x, y = page.evaluate(POINT_AT, [".st-key-section_flow .js-plotly-plot", 3, 18])
        page.mouse.move(x, y)  # the hover names the node before the click chooses it
        expect(flow.locator(".hoverlayer .hovertext")).to_contain_text("L18")
        page.mouse.click(x, y)
        node = page.locator(".st-key-section_flow h3").filter(has_text="L18")
        expect(node).to_have_count(1, timeout=FIRST_VISIT_MS)
        expect(node).to_contain_text("John")
        wait_idle(page)
        no_exception(page)
        node.evaluate("element => element.scrollIntoView({block: 'start'})")
        page.wait_for_timeout(300)
        page.screenshot(path=SCREENSHOTS / f"llm_answer_flow_node_{language}.png")

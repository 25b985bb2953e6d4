"""The Explain view in a real browser: raw weights, rollout and norms of the same head, one click apart."""
import re

from playwright.sync_api import Page, expect

from tests.conftest import SCREENSHOTS
from tests.browser_steps import no_exception, wait_idle

SENTENCE = "i%20am%20not%20a%20student%20because%20my%20cat%20is%20big"


def test_explain_view_toggles_raw_rollout_and_norms(page: Page, app_url):
    page.goto(f"{app_url}/attention?sentence={SENTENCE}&view=Explain&layer=1&head=2")
    wait_idle(page)
    expect(page.get_by_text("Encoder self-attention · layer 2 · head 3").first).to_be_visible()
    page.get_by_role("radio", name="Norms", exact=True).click()
    wait_idle(page)
    expect(page.get_by_text("Encoder self-attention · layer 2 · head 3 · ‖α·f(x)‖").first).to_be_visible()
    expect(page.get_by_text("Survival (norm ÷ weight)")).to_be_visible()
    assert "explain_mode=norms" in page.url
    page.get_by_role("radio", name="Rollout", exact=True).click()
    wait_idle(page)
    expect(page.get_by_text("Encoder self-attention · rollout after layer 2").first).to_be_visible()
    expect(page.get_by_text("‖α·f(x)‖")).to_have_count(0)
    page.get_by_role("radio", name="Raw weights", exact=True).click()
    wait_idle(page)
    expect(page.get_by_text("rollout after layer 2")).to_have_count(0)
    expect(page.get_by_text("Encoder self-attention · layer 2 · head 3").first).to_be_visible()
    no_exception(page)
    page.screenshot(path=SCREENSHOTS / "explain.png", full_page=True)


COREFERENCE = "The+animal+didn%27t+cross+the+street+because+it+was+too+tired."


def test_explain_view_of_the_real_encoder_shows_a_cls_sep_sink_that_moves_little(page: Page, app_url):
    """all-MiniLM-L6-v2, layer 4 head 2: about half its weight on [CLS]/[SEP], under a tenth of its norm."""
    page.goto(f"{app_url}/attention?model=all-MiniLM-L6-v2&sentence={COREFERENCE}&view=Explain&explain_mode=norms"
              "&v=2&layer=4&head=2")  # v=2: 1-based layer and head
    wait_idle(page)
    expect(page.get_by_text("Encoder self-attention · layer 4 · head 2 · ‖α·f(x)‖").first).to_be_visible()
    # the survival chart; its title may be wrapped onto two lines (separate text lines in the SVG)
    expect(page.locator(".gtitle").filter(has_text=re.compile(r"attention\s*on\s*\[CLS\]/\[SEP\],\s*as\s*weight"))
           .first).to_be_visible()
    survival = page.get_by_test_id("stMetric").filter(has_text="Survival (norm ÷ weight)")
    assert float(survival.get_by_test_id("stMetricValue").inner_text()) < 0.5
    no_exception(page)
    page.screenshot(path=SCREENSHOTS / "explain_encoder.png", full_page=True)

"""Real browser (Chromium): the attention explorer with SmolLM2, Ablation view (issue 26): switching the top induction
head off changes the next-token table and the KL divergence, and the address keeps the switched-off head."""
import pytest
from playwright.sync_api import Page, expect

from model.explain.next_token import kl_divergence
from model.families import open_model
from model.gguf_weights import SMOLLM2_NAME
from tests.browser_steps import no_exception, wait_idle
from tests.conftest import SCREENSHOTS

TEXT = "The cat sat on the mat. The cat sat on the"


@pytest.fixture(scope="module")
def expected() -> tuple[str, float]:
    """(the KL divergence with L19 H7 off, as the metric shows it; the top token with it off), from the model."""
    lab = open_model(SMOLLM2_NAME)
    on, off = lab.analyse(TEXT).next_token, lab.analyse(TEXT, (("decoder_self", 18, 6),)).next_token
    return f"{kl_divergence(on.log_probs, off.log_probs):.4f}", off.top_probs[0]


def _metric(page: Page, label: str):
    metric = page.get_by_test_id("stMetric").filter(has_text=label).first
    return metric.get_by_test_id("stMetricValue")


def test_switching_a_head_off_changes_the_next_token(page: Page, app_url, expected):
    kl, top_off = expected
    page.set_viewport_size({"width": 1280, "height": 900})
    page.goto(f"{app_url}/attention?model={SMOLLM2_NAME}&view=Ablation&sentence={TEXT.replace(' ', '+')}")
    label = "KL(all heads ‖ heads off), next token"
    expect(_metric(page, label)).to_have_text("0.0000", timeout=120000)
    wait_idle(page)
    page.get_by_test_id("stMultiSelect").filter(has_text="Heads to switch off").click()
    page.keyboard.type("L19 H7")
    page.get_by_role("option", name="L19 H7", exact=True).click()
    page.keyboard.press("Escape")
    wait_idle(page)
    expect(_metric(page, label)).to_have_text(kl, timeout=60000)
    assert float(kl) > 0.01
    expect(page.get_by_text("With 1 head(s) switched off").first).to_be_visible()
    assert "heads_off=decoder_self.19.7" in page.url
    no_exception(page)
    page.screenshot(path=SCREENSHOTS / "llm_ablation.png", full_page=True)

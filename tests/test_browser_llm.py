"""Real browser (Chromium): on the LLM page each Next token ▸ writes the model's next token and the KV-cache count grows by
one position, in English, and in Korean presenter mode at 1280×720 with the text and the next-token chart on the
first screen; then Branch ▸ forks at step 1 into the top 3 tokens, the first branch the greedy text itself; then section
5's one click switches the induction heads off, both texts show, and the second copy's loss rises (issue 56)."""
import re

import pytest
from playwright.sync_api import Page, expect

from model.generation import generate
from model.llama import load_smollm2
from tests.browser_steps import no_exception, wait_drawn, wait_idle
from tests.conftest import SCREENSHOTS
from ui.llm.specs import DEFAULT_PROMPT

WORDS = {"en": {"next": "Next token ▸", "chose": r"^Step {step} chose ", "cached": "Cached positions",
                "branch": "Branch ▸", "make_main": "Make this the text",
                "induction": "Induction heads (top 5)", "intact": "Second copy, intact (nats)",
                "switched": "Second copy, 5 heads off (nats)"},
         "ko": {"next": "다음 토큰 ▸", "chose": r"^단계 {step}에서 ", "cached": "캐시된 위치", "branch": "분기 ▸",
                "make_main": "이 분기를 텍스트로",
                "induction": "인덕션 헤드 (상위 5개)", "intact": "두 번째 복사본, 온전한 모델 (nats)",
                "switched": "두 번째 복사본, 헤드 5개 끔 (nats)"}}


@pytest.fixture(scope="module")
def expected() -> tuple[int, str]:
    """(the default prompt's token count, the text of its first 3 greedy tokens), from the model itself."""
    loaded = load_smollm2()
    prompt = loaded.encode(DEFAULT_PROMPT)
    return len(prompt), loaded.decode(generate(loaded.model, prompt, 3).new_ids)


def _press_next(page: Page, language: str, step: int) -> None:
    """Next token ▸ once, then wait (up to 45 s on a loaded machine) until the page says step `step` chose a token. Only a
    click that was lost (the page still at the step before) is clicked again: clicking again while a slow run is
    still on its way would count twice (CI once saw step 3 after three quick clicks for step 1)."""
    words = WORDS[language]
    said = page.get_by_text(re.compile(words["chose"].format(step=step)))
    before = page.get_by_text(re.compile(words["chose"].format(step=step - 1))) if step > 1 else None
    any_step = page.get_by_text(re.compile(words["chose"].format(step=r"\d+")))
    for attempt in range(2):
        page.get_by_role("button", name=words["next"], exact=True).click()
        try:
            expect(said).to_be_visible(timeout=45000)
            return
        except AssertionError:
            still_before = before.count() > 0 if before is not None else any_step.count() == 0
            if attempt or not still_before:
                raise
    expect(said).to_be_visible()


def _metric(page: Page, label: str):
    """A metric's value (a locator: the step's text shows before the metrics under it)."""
    return page.get_by_test_id("stMetric").filter(has_text=label).first.get_by_test_id("stMetricValue")


def _cached(page: Page, language: str):
    return _metric(page, WORDS[language]["cached"])


def _switch_the_induction_heads_off(page: Page, language: str) -> None:
    """Section 5: the one click fills the heads, both texts show, and the repeated half's loss rises by nats."""
    words = WORDS[language]
    page.get_by_role("button", name=words["induction"], exact=True).click()
    intact, switched = _metric(page, words["intact"]), _metric(page, words["switched"])
    expect(switched).to_have_text(re.compile(r"^\d+\.\d\d$"), timeout=180000)  # its own induction scores, then both runs
    assert float(switched.inner_text()) > float(intact.inner_text()) + 3.0  # the copy is broken, measured
    expect(page.locator(".st-key-llm_off_texts")).to_contain_text("L18 H4")  # the heads' names over their text
    wait_idle(page)
    no_exception(page)
    # the page scrolls inside Streamlit's main container: a window as tall as the section shows all of it drawn
    page.set_viewport_size({"width": 1280, "height": 2600})
    wait_drawn(page)
    page.mouse.move(0, 0)  # no button's tooltip over the section (hover, or the focus the click left)
    page.evaluate("document.activeElement && document.activeElement.blur()")
    page.locator(".st-key-section_switch_off").screenshot(path=SCREENSHOTS / f"llm_switch_off_{language}.png")


@pytest.mark.parametrize("language", ["en", "ko"])
def test_next_writes_the_models_tokens_and_the_cache_count_follows(page: Page, app_url, expected, language):
    prompt_tokens, three_tokens = expected
    page.set_viewport_size({"width": 1280, "height": 720})
    presenter = "&presenter=true" if language == "ko" else ""
    page.goto(f"{app_url}/llm?lang={language}{presenter}")
    expect(page.get_by_role("button", name=WORDS[language]["next"], exact=True)).to_be_visible(timeout=120000)
    wait_idle(page)
    for step in (1, 2, 3):
        _press_next(page, language, step)
        expect(_cached(page, language)).to_have_text(str(prompt_tokens + step - 1))
        wait_idle(page)
    expect(page.locator(".st-key-llm_text")).to_contain_text(three_tokens.strip())
    no_exception(page)
    if presenter:  # projected: the text and the next-token chart start on the first screen
        page.evaluate("window.scrollTo(0, 0)")
        for box in (page.locator(".st-key-llm_text").bounding_box(),
                    page.locator(".js-plotly-plot").first.bounding_box()):
            assert box is not None and box["y"] < 720 - 150, box
    # section 4: the fork at step 1 into the top 3 (greedy after), side by side; branch 1 is the greedy text
    page.get_by_role("button", name=WORDS[language]["branch"], exact=True).click()
    branches = page.locator(".st-key-llm_branches")
    expect(branches).to_contain_text(three_tokens.strip(), timeout=60000)
    expect(branches.get_by_role("button", name=WORDS[language]["make_main"])).to_have_count(3)
    wait_idle(page)
    no_exception(page)
    branches.screenshot(path=SCREENSHOTS / f"llm_branches_{language}.png")
    page.screenshot(path=SCREENSHOTS / f"llm_three_steps_{language}.png", full_page=True)
    _switch_the_induction_heads_off(page, language)

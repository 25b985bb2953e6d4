"""Real-browser tests: Debian's Chromium driven by Playwright against `streamlit run app.py`."""
import re

import pytest

from playwright.sync_api import Page, expect

from tests.browser_steps import checked_screenshot, no_exception, open_url, set_sentence, wait_idle
from tests.conftest import SCREENSHOTS




def test_attention_page_pick_head_and_grid(page: Page, app_url):
    open_url(page, f"{app_url}/attention", "Transformer attention")
    expect(page.get_by_text("je suis étudiant").first).to_be_visible()
    expect(page.locator(".js-plotly-plot").first).to_be_visible()
    page.get_by_role("radio", name="All heads", exact=True).click()
    wait_idle(page)
    page.get_by_role("radio", name="L2 H3", exact=True).click()  # the grid's row of heads for layer 2
    wait_idle(page)
    page.get_by_role("radio", name="Head", exact=True).click()
    wait_idle(page)
    expect(page.get_by_text("layer 2 · head 3").first).to_be_visible()
    checked_screenshot(page, "attention.png")


def test_hostile_input_is_shown_as_text(page: Page, app_url):
    dialogs: list[str] = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    page.goto(f"{app_url}/attention")
    wait_idle(page)
    set_sentence(page, "<img src=x onerror=alert(1)> **bold** <script>alert(1)</script>")
    expect(page.get_by_text(re.compile("not in this model's vocabulary"))).to_be_visible()
    assert page.locator("img[src='x']").count() == 0
    # the page's own scripts (ui/plotly_loader.preload_plotly) are there; none holds the typed text, and nothing ran it
    assert not [text for text in page.locator("main script").all_inner_texts() if "alert" in text]
    assert dialogs == []
    assert page.locator("main strong", has_text="bold").count() == 0
    no_exception(page)
    set_sentence(page, "   ")
    expect(page.get_by_text("Type a sentence")).to_be_visible()
    page.screenshot(path=SCREENSHOTS / "attention_bad_input.png", full_page=True)


def test_decoding_steps(page: Page, app_url):
    page.goto(f"{app_url}/decoding")
    wait_idle(page)
    set_sentence(page, "i am a student")
    expect(page.get_by_text("Step 1 of 4")).to_be_visible()
    page.get_by_role("button", name="Next token ▶").click()
    wait_idle(page)
    expect(page.get_by_text("Step 2 of 4")).to_be_visible()
    expect(page.get_by_text(re.compile(r"→\s+suis"))).to_be_visible()
    checked_screenshot(page, "decoding.png")


def test_decoding_in_korean_from_a_link(page: Page, app_url):
    page.goto(f"{app_url}/decoding?lang=ko&sentence=i+am+a+student&step=2&dec_head=all")
    wait_idle(page)
    expect(page.get_by_role("heading", name="디코딩, 한 번에 토큰 하나씩")).to_be_visible()
    expect(page.get_by_text("단계 2 / 4")).to_be_visible()
    page.get_by_role("button", name="다음 토큰 ▶").click()
    wait_idle(page)
    expect(page.get_by_text("단계 3 / 4")).to_be_visible()
    expect(page).to_have_url(re.compile(r"step=3"))
    no_exception(page)


def test_foundation_pages_respond(page: Page, app_url):
    open_url(page, f"{app_url}/softmax_scaling", "Softmax scaling: why divide by √d_k")
    expect(page.get_by_test_id("stMetricValue").nth(1)).to_have_text("20")  # [2,2,2,2,2]·[2,2,2,2,2]
    page.screenshot(path=SCREENSHOTS / "softmax_scaling.png", full_page=True)
    page.goto(f"{app_url}/attention_steps")
    wait_idle(page)
    page.get_by_label("Mask", exact=True).click()
    page.get_by_role("option", name="causal").click()
    wait_idle(page)
    expect(page.get_by_text("3 · mask (causal)", exact=True)).to_be_visible()  # the title (not its summary)
    checked_screenshot(page, "attention_steps.png")




def test_train_stop_and_open_new_model(page: Page, app_url):
    open_url(page, f"{app_url}/train", "Train your own model")
    page.get_by_role("button", name="Start training").click()
    progress = page.get_by_text(re.compile(r"step \d+ / 1000"))
    expect(progress).to_be_visible()
    expect(page.get_by_text(re.compile(r"step ([2-9]\d|\d{3}) / 1000"))).to_be_visible(timeout=60000)  # it grows
    page.get_by_role("button", name="Stop training").click()
    expect(page.get_by_text(re.compile("now in the sidebar"))).to_be_visible(timeout=60000)
    page.screenshot(path=SCREENSHOTS / "train.png", full_page=True)
    sidebar = page.get_by_test_id("stSidebar")
    model_box = sidebar.get_by_label("Model", exact=True)
    model_box.scroll_into_view_if_needed()  # at the sidebar's bottom edge the click lands while it scrolls
    model_box.click()
    page.get_by_role("option", name=re.compile("my-transformer_en-fr")).click()
    wait_idle(page)
    sidebar.get_by_role("link", name="Transformer attention").click()
    wait_idle(page)
    expect(page.get_by_role("heading", name="Transformer attention")).to_be_visible()
    expect(page.locator(".js-plotly-plot").first).to_be_visible()
    expect(sidebar.get_by_text(re.compile("my-transformer_en-fr"))).to_be_visible()
    no_exception(page)


def _set_slider(page: Page, label: str, target: int) -> None:
    """Move a slider to `target` with the keyboard, one press at a time: each press reruns the app, and a press
    that lands during the rerun can be lost, so read the slider's value back before each press."""
    for _ in range(64):
        slider = page.get_by_role("slider", name=label).first
        value = int(float(slider.input_value()))
        if value == target:
            return
        slider.focus()
        slider.press("ArrowLeft" if value > target else "ArrowRight")
        wait_idle(page)
    pytest.fail(f"the slider {label!r} did not reach {target}")


def _slider_to_end(page: Page, label: str, end: str = "min") -> int:
    """The slider to its lowest ("min") or highest ("max") value with one press of Home or End (one rerun, where step
    by step took one per value); returns that value."""
    slider = page.get_by_role("slider", name=label).first
    slider.focus()
    slider.press("Home" if end == "min" else "End")
    wait_idle(page)
    expect(slider).to_have_value(slider.get_attribute(end))
    return int(float(slider.input_value()))


def test_positional_normalization_residual_pages(page: Page, app_url):
    open_url(page, f"{app_url}/positional", "Positional encoding")
    expect(page.get_by_text("PE for 64 positions × d_model = 64", exact=True)).to_be_visible()  # the chart title
    _set_slider(page, "d_model", 60)
    expect(page.get_by_text("PE for 64 positions × d_model = 60", exact=True)).to_be_visible()
    expect(page.get_by_test_id("stMetric")).to_have_count(0)  # the folded sections are not built yet
    page.get_by_text("A shift by k is a rotation", exact=True).click()  # opening one builds it
    wait_idle(page)
    expect(page.get_by_text(re.compile(r"^Largest \|PE\(p \+ 5\)")).first).to_be_visible()
    checked_screenshot(page, "positional.png")

    page.goto(f"{app_url}/normalization")
    wait_idle(page)
    assert _slider_to_end(page, "Batch size (sentences)") == 1
    assert _slider_to_end(page, "Longest sentence (tokens)") == 1
    expect(page.get_by_text("BatchNorm fails").first).to_be_visible()
    checked_screenshot(page, "normalization_batch1.png")

    page.goto(f"{app_url}/residual")
    wait_idle(page)
    before = page.get_by_test_id("stMetricValue").first.inner_text()
    depth = int(float(page.get_by_role("slider", name="Depth (layers)").first.input_value()))
    assert _slider_to_end(page, "Depth (layers)", "max") > depth  # the deepest: the gradient vanishes plainly
    expect(page.get_by_test_id("stMetricValue").first).not_to_have_text(before)
    checked_screenshot(page, "residual.png")


def test_foundation_link_in_korean(page: Page, app_url):
    open_url(page, f"{app_url}/positional?lang=ko&pe_d=16&pe_len=32&pe_pos=10", "위치 인코딩 (positional encoding)")
    expect(page.get_by_text("위치 32개 × d_model = 16의 PE", exact=True)).to_be_visible()
    page.goto(f"{app_url}/attention_steps?lang=ko&mask=causal&tokens=5")
    wait_idle(page)
    expect(page.get_by_text("3 · 마스크 (인과)", exact=True)).to_be_visible()  # the chart title, not its summary
    checked_screenshot(page, "attention_steps_ko.png")




def test_shared_link_opens_the_same_head(page: Page, app_url):
    page.goto(f"{app_url}/attention?model=transformer_en-fr&sentence=she+is+a+student&kind=cross&layer=1&head=3")
    wait_idle(page)
    expect(page.get_by_text("elle est étudiante").first).to_be_visible()
    expect(page.get_by_text("Encoder–decoder (cross) attention · layer 2 · head 4").first).to_be_visible()
    page.get_by_label("Head", exact=True).click()
    page.get_by_role("option", name="2", exact=True).click()
    wait_idle(page)
    expect(page).to_have_url(re.compile(r"head=2&|head=2$"))
    page.goto(f"{app_url}/attention?model=nope&layer=99")
    wait_idle(page)
    expect(page.get_by_text(re.compile("do not fit this app"))).to_be_visible()
    no_exception(page)

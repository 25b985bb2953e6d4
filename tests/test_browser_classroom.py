"""Real-browser tests of the classroom features: Korean, presenter mode, chart export, links to foundation views."""
import csv
import io
import re

from playwright.sync_api import Page, expect

from i18n import translate
from tests.conftest import SCREENSHOTS
from tests.browser_steps import no_exception, wait_idle


def test_switch_to_korean_and_back(page: Page, app_url):
    page.goto(f"{app_url}/attention?kind=cross")  # a chosen (not default) option: its label must follow the switch
    wait_idle(page)
    page.get_by_test_id("stSidebar").get_by_role("radio", name="한국어").click()
    wait_idle(page)
    expect(page.get_by_role("heading", name=translate("ko", "attention.title"))).to_be_visible()
    expect(page.get_by_test_id("stSidebar").get_by_label(translate("ko", "sidebar.sentence"), exact=True)).to_be_visible()
    expect(page).to_have_url(re.compile(r"lang=ko"))
    # A selectbox shows its chosen option's label from before the switch unless the app redraws it.
    kind_box = page.get_by_test_id("stMain").get_by_role("combobox").first
    expect(kind_box).to_have_value(translate("ko", "attention.kinds.cross"))
    no_exception(page)
    page.screenshot(path=SCREENSHOTS / "attention_ko.png", full_page=True)
    page.goto(f"{app_url}/positional?lang=ko")  # the language travels in a link
    wait_idle(page)
    expect(page.get_by_role("heading", name=translate("ko", "positional.title"))).to_be_visible()
    page.screenshot(path=SCREENSHOTS / "positional_ko.png", full_page=True)
    page.get_by_test_id("stSidebar").get_by_role("radio", name="English").click()
    wait_idle(page)
    expect(page.get_by_role("heading", name=translate("en", "positional.title"))).to_be_visible()


def test_head_csv_download_has_token_labels(page: Page, app_url):
    page.goto(f"{app_url}/attention?sentence=i+am+a+student&kind=encoder_self")
    wait_idle(page)
    button = page.get_by_role("button", name=re.compile(r"^(download\s*)?CSV$", re.I)).first
    with page.expect_download() as info:
        button.click()
    download = info.value
    assert download.suggested_filename.startswith("attention-lab_") and download.suggested_filename.endswith(".csv")
    rows = list(csv.reader(io.StringIO(open(download.path(), encoding="utf-8-sig").read())))
    assert rows[0][1:] == [f"{j}: {t}" for j, t in enumerate(["i", "am", "a", "student", "<eos>"])], rows[0]
    assert len(rows) == 6 and abs(sum(float(v) for v in rows[1][1:]) - 1) < 1e-3  # each query row sums to 1
    no_exception(page)


def test_presenter_mode_is_larger_and_has_fewer_controls(page: Page, app_url):
    page.goto(f"{app_url}/softmax_scaling")
    wait_idle(page)
    expect(page.get_by_test_id("stDownloadButton").first).to_be_visible()
    downloads_before = page.get_by_test_id("stDownloadButton").count()
    size_before = page.locator(".stApp p").first.evaluate("e => parseFloat(getComputedStyle(e).fontSize)")
    metric_font = "e => parseFloat(getComputedStyle(e.querySelector('p') || e).fontSize)"
    metric_before = page.get_by_test_id("stMetricValue").first.evaluate(metric_font)
    page.get_by_test_id("stSidebar").get_by_text(translate("en", "display.presenter")).click()
    wait_idle(page)
    expect(page).to_have_url(re.compile(r"presenter=true"))
    size_after = page.locator(".stApp p").first.evaluate("e => parseFloat(getComputedStyle(e).fontSize)")
    assert size_after > size_before * 1.15, (size_before, size_after)
    # Big numbers stay bigger than the (now larger) text: the paragraph rule must not shrink them.
    assert page.get_by_test_id("stMetricValue").first.evaluate(metric_font) > metric_before
    assert downloads_before > 0 and page.get_by_test_id("stDownloadButton").count() == 0
    no_exception(page)
    page.screenshot(path=SCREENSHOTS / "softmax_scaling_presenter.png", full_page=True)


def test_foundation_link_reproduces_slider_positions(page: Page, app_url):
    page.goto(f"{app_url}/residual?depth=48&act=relu&ln=true")
    wait_idle(page)
    expect(page.get_by_text(re.compile(r"48"))).not_to_have_count(0)
    expect(page.get_by_role("slider").first).to_have_value("48")
    expect(page).to_have_url(re.compile(r"depth=48"))
    no_exception(page)

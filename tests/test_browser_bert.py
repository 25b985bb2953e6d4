"""Real browser: pick all-MiniLM-L6-v2 in the sidebar, type ordinary English, see its 6 × 12 grid, switch a head
off and see the sentence similarity change."""
import re

from playwright.sync_api import Page, expect

from tests.conftest import SCREENSHOTS
from tests.browser_steps import no_exception, set_sentence, wait_idle


def _metric_value(page: Page, label: str) -> str:
    metric = page.get_by_test_id("stMetric").filter(has_text=label).first
    return metric.get_by_test_id("stMetricValue").inner_text()


def test_pick_minilm_type_english_see_the_grid_and_switch_a_head_off(page: Page, app_url):
    page.set_viewport_size({"width": 1280, "height": 720})
    page.goto(f"{app_url}/attention")
    wait_idle(page)
    sidebar = page.get_by_test_id("stSidebar")
    model_box = sidebar.get_by_label("Model", exact=True)
    model_box.scroll_into_view_if_needed()  # the sidebar is taller than 720 px: the box may start below its edge
    model_box.click()
    page.get_by_role("option", name="all-MiniLM-L6-v2").click()
    wait_idle(page)
    set_sentence(page, "My grandmother baked bread because the kitchen was cold.")
    no_exception(page)
    expect(page.get_by_text(re.compile(r"\[UNK\]"))).to_have_count(0)
    expect(page.get_by_text("Encoder self-attention: every token")).to_be_visible()
    expect(page.locator(".js-plotly-plot").first).to_be_visible()
    page.screenshot(path=SCREENSHOTS / "bert_head.png")
    page.get_by_role("radio", name="All heads", exact=True).click()
    wait_idle(page)
    grid = page.locator(".js-plotly-plot").first
    expect(grid).to_be_visible()
    expect(grid.locator(".annotation-text-g")).to_have_count(72)  # 6 layers × 12 heads drawn, each titled
    expect(page.get_by_role("radio", name="L6 H12", exact=True)).to_be_visible()
    page.screenshot(path=SCREENSHOTS / "bert_grid.png")
    page.get_by_role("radio", name="Ablation", exact=True).click()
    wait_idle(page)
    label_on, label_off = "Cosine similarity, all heads on", "With 1 head(s) off"
    before = _metric_value(page, label_on)
    page.get_by_test_id("stMultiSelect").filter(has_text="Heads to switch off").click()
    page.get_by_role("option", name="L1 H1", exact=True).click()
    page.keyboard.press("Escape")
    wait_idle(page)
    after = _metric_value(page, label_off)
    assert float(after) != float(before)
    no_exception(page)
    page.screenshot(path=SCREENSHOTS / "bert_ablation.png", full_page=True)


def test_head_csv_has_the_numbers_of_model_inspect(page: Page, app_url, tmp_path):
    import csv
    import io

    import numpy as np

    from model.inspect import main

    sentence = "The keys to the old cabinet in the hall are on the table."
    page.goto(f"{app_url}/attention?model=all-MiniLM-L6-v2&layer=2&head=4&sentence={sentence.replace(' ', '+')}")
    wait_idle(page)
    expect(page.get_by_text("layer 3 · head 5").first).to_be_visible()
    button = page.get_by_role("button", name=re.compile(r"^(download\s*)?CSV$", re.I)).first
    with page.expect_download() as info:
        button.click()
    rows = list(csv.reader(io.StringIO(open(info.value.path(), encoding="utf-8-sig").read())))
    assert main(["all-MiniLM-L6-v2", sentence, "--out", str(tmp_path / "maps.npz")]) == 0
    data = np.load(tmp_path / "maps.npz")
    assert rows[0][1:] == [f"{j}: {t}" for j, t in enumerate(data["tokens"])]
    table = np.array([[float(v) for v in row[1:]] for row in rows[1:]])
    np.testing.assert_allclose(table, data["encoder_self"][2, 4], atol=1e-6)  # layer 3, head 5
    no_exception(page)

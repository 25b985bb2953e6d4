"""A lecture in a real browser (Chromium): pages keep their view, Back and Forward move between views."""
import re

from playwright.sync_api import Page, expect

from tests.test_browser import no_exception, wait_idle


def _sidebar_page(page: Page, title: str) -> None:
    page.get_by_test_id("stSidebarNav").get_by_text(title, exact=True).click()
    wait_idle(page)


def _pick(page: Page, label: str, option: str) -> None:
    page.get_by_label(label, exact=True).click()
    page.get_by_role("option", name=option, exact=True).click()
    wait_idle(page)


def _press(page: Page, button: str, until: str, presses: int = 2) -> None:
    """Back or Forward until the address matches `until`. Streamlit adds a history entry of its own when a page
    opens (its path with the query string it had), so the view a person expects can be two presses away."""
    for _ in range(presses):
        getattr(page, f"go_{button}")()
        wait_idle(page)
        if re.search(until, page.url):
            return


def test_a_page_keeps_its_view_and_back_returns_to_it(page: Page, app_url):
    page.goto(f"{app_url}/attention?sentence=i+am+a+student&kind=encoder_self&layer=1&head=1&v=2")
    wait_idle(page)
    head_1 = page.get_by_text("Encoder self-attention · layer 1 · head 1").first
    head_3 = page.get_by_text("Encoder self-attention · layer 1 · head 3").first
    expect(head_1).to_be_visible()
    _pick(page, "Head", "3")
    expect(head_3).to_be_visible()
    _sidebar_page(page, "Positional encoding")
    expect(page).to_have_url(re.compile(r"/positional\?.*pe_d=64"))
    _press(page, "back", r"/attention\?")  # the browser's Back: the attention page, on the head it showed
    expect(page).to_have_url(re.compile(r"/attention\?.*head=3"))
    expect(head_3).to_be_visible()
    _press(page, "back", r"head=1(&|$)")  # further back: the view before it
    expect(head_1).to_be_visible()
    _press(page, "forward", r"head=3(&|$)")
    expect(head_3).to_be_visible()
    _press(page, "forward", r"/positional\?", presses=3)
    expect(page.get_by_role("heading", name="Positional encoding").first).to_be_visible()
    _sidebar_page(page, "Transformer attention")  # away and back through the sidebar: the same head
    expect(head_3).to_be_visible()
    no_exception(page)


def test_the_attention_page_opens_on_cross_attention_and_the_grid_opens_a_head(page: Page, app_url):
    page.goto(f"{app_url}/attention?sentence=i+am+a+student")
    wait_idle(page)
    expect(page.get_by_text(re.compile(r"^Why this head")).first).to_be_visible()
    expect(page.get_by_text(re.compile(r"Encoder–decoder \(cross\) attention · layer \d · head \d")).first) \
        .to_be_visible()
    page.get_by_role("radio", name="All heads", exact=True).click()
    wait_idle(page)
    page.locator(".draglayer .xy .nsewdrag").first.hover()  # a thumbnail names its tokens on hover
    expect(page.locator(".hovertext").first).to_contain_text(re.compile(r"query .+ → key .+"))
    page.get_by_role("button", name="L2 H3", exact=True).click()
    wait_idle(page)
    expect(page.get_by_role("radio", name="Head", exact=True)).to_be_checked()
    expect(page.get_by_text("Encoder–decoder (cross) attention · layer 2 · head 3").first).to_be_visible()
    expect(page).to_have_url(re.compile(r"layer=2.*head=3.*view=Head"))
    no_exception(page)

"""A lecture in a real browser (Chromium): pages keep their view, Back and Forward move between views."""
import re

from playwright.sync_api import Page, expect

from tests.browser_steps import grid_thumbnail, no_exception, wait_idle


def _sidebar_page(page: Page, title: str) -> None:
    page.locator(".st-key-page_menu").get_by_text(title, exact=True).click()
    wait_idle(page)


def _pick(page: Page, label: str, option: str) -> None:
    page.get_by_label(label, exact=True).click()
    page.get_by_role("option", name=option, exact=True).click()
    wait_idle(page)


def _press(page: Page, button: str, until: str, presses: int = 2) -> None:
    """Back or Forward until the address matches `until`. Streamlit adds a history entry of its own when a page
    opens (its path with no query string), so the view a person expects can be two presses away."""
    for _ in range(presses):
        getattr(page, f"go_{button}")()
        wait_idle(page)
        # Streamlit's own entry for a page change has no query string; the run it starts writes the view there
        # (replaceState). Pressing again before that write lands would let it overwrite the next entry.
        expect(page).to_have_url(re.compile(r"\?"))
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


def test_a_page_link_carries_its_view_so_back_takes_one_press(page: Page, app_url):
    page.goto(f"{app_url}/attention?sentence=i+am+a+student&kind=encoder_self&layer=1&head=1&v=2")
    wait_idle(page)
    _pick(page, "Head", "3")
    _sidebar_page(page, "Positional encoding")  # a first visit: the link has the page's defaults
    expect(page).to_have_url(re.compile(r"/positional\?.*pe_d=64"))
    page.go_back()
    wait_idle(page)
    expect(page).to_have_url(re.compile(r"/attention\?.*head=3"))
    _sidebar_page(page, "Positional encoding")
    menu_link = page.locator(".st-key-page_menu").get_by_role("link", name="Transformer attention")
    expect(menu_link).to_have_attribute("href", re.compile(r"attention\?.*head=3"))  # the menu keeps the view
    _sidebar_page(page, "Transformer attention")
    expect(page).to_have_url(re.compile(r"/attention\?.*head=3"))
    _sidebar_page(page, "Positional encoding")  # a second visit: the link has the page's whole address
    expect(page).to_have_url(re.compile(r"/positional\?.*pe_d=64"))
    page.go_back()  # one press: no half-written or bare address in between
    wait_idle(page)
    expect(page).to_have_url(re.compile(r"/attention\?.*head=3"))
    expect(page.get_by_text("Encoder self-attention · layer 1 · head 3").first).to_be_visible()
    no_exception(page)


def test_the_attention_page_opens_on_cross_attention_and_the_grid_opens_a_head(page: Page, app_url):
    page.goto(f"{app_url}/attention?sentence=i+am+a+student")
    wait_idle(page)
    expect(page.get_by_text(re.compile(r"^Why this head")).first).to_be_visible()
    expect(page.get_by_text(re.compile(r"Encoder–decoder \(cross\) attention · layer \d · head \d")).first) \
        .to_be_visible()
    page.get_by_role("radio", name="All heads", exact=True).click()
    wait_idle(page)
    page.mouse.move(*grid_thumbnail(page, 1, 1))  # a thumbnail names its tokens on hover
    expect(page.locator(".hovertext").first).to_contain_text(re.compile(r"query .+ → key .+"))
    page.get_by_role("radio", name="L2 H3", exact=True).click()
    wait_idle(page)
    expect(page.get_by_role("radio", name="Head", exact=True)).to_be_checked()
    expect(page.get_by_text("Encoder–decoder (cross) attention · layer 2 · head 3").first).to_be_visible()
    expect(page).to_have_url(re.compile(r"layer=2.*head=3.*view=Head"))
    no_exception(page)

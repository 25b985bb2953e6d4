"""What the browser tests do between clicks: wait for Streamlit's run to finish, check that no traceback is shown,
type a sentence into the sidebar (Playwright against a real `streamlit run app.py`)."""
from playwright.sync_api import Page, expect

expect.set_options(timeout=30000)  # first renders load models; generous, not a speed assertion


def wait_idle(page: Page) -> None:
    """Wait until Streamlit has finished the current run."""
    page.wait_for_timeout(300)
    expect(page.get_by_test_id("stStatusWidget")).to_have_count(0, timeout=60000)
    page.wait_for_timeout(300)


def no_exception(page: Page) -> None:
    expect(page.get_by_test_id("stException")).to_have_count(0)


def set_sentence(page: Page, text: str) -> None:
    box = page.get_by_test_id("stSidebar").get_by_label("Sentence", exact=True)
    box.fill(text)
    box.press("Enter")
    wait_idle(page)

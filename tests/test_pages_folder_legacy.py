"""Why the app's pages live in app_pages/ and not in the design card's pages/: reproduced on a toy app.

With st.navigation in the entry script and a pages/ folder beside it, a deep link to a pages/ script that arrives
before any session has run st.navigation (a student opening a shared link first after a restart) is served in
Streamlit's legacy multipage mode: the script runs without the entry point (its sidebar, its guards) and the
sidebar lists the pages/ scripts. Once a session has run st.navigation, pages/ is ignored. The day a Streamlit
release stops doing this, the first assertion fails, and app_pages/ can take the card's name.
"""
import subprocess
import sys
import time
import urllib.request

import pytest

from tests.conftest import _free_port

ENTRY = 'import streamlit as st\nst.sidebar.write("ENTRY SIDEBAR")\n' \
        'st.navigation([st.Page("home.py", default=True), st.Page("other.py")]).run()\n'


@pytest.fixture()
def toy_app(tmp_path):
    (tmp_path / "pages").mkdir()
    (tmp_path / "app.py").write_text(ENTRY)
    (tmp_path / "home.py").write_text('import streamlit as st\nst.write("HOME PAGE")\n')
    (tmp_path / "other.py").write_text('import streamlit as st\nst.write("OTHER PAGE")\n')
    (tmp_path / "pages" / "secret.py").write_text('import streamlit as st\nst.write("LEGACY PAGES SCRIPT")\n')
    port = _free_port()
    server = subprocess.Popen([sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true",
                               "--server.port", str(port), "--server.address", "127.0.0.1",
                               "--browser.gatherUsageStats", "false"],
                              cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    deadline = time.time() + 60
    while time.time() < deadline:
        try:
            if urllib.request.urlopen(f"{url}/_stcore/health", timeout=2).read() == b"ok":
                break
        except OSError:
            time.sleep(0.3)
    yield url
    server.terminate()
    server.wait(timeout=20)


def _text_of(browser, url: str) -> str:
    context = browser.new_context()
    page = context.new_page()
    page.goto(url)
    page.get_by_text("PAGE").first.wait_for(timeout=30000)  # some page's body has been drawn
    page.wait_for_timeout(1000)
    text = page.locator("body").inner_text()
    context.close()
    return text


@pytest.mark.slow
def test_a_deep_link_to_pages_before_any_navigation_run_is_served_in_legacy_mode(browser, toy_app):
    first = _text_of(browser, f"{toy_app}/secret")  # the first request after the server started
    assert "LEGACY PAGES SCRIPT" in first  # the pages/ script ran ...
    assert "ENTRY SIDEBAR" not in first and "secret" in first  # ... without the entry point; pages/ listed
    later = _text_of(browser, f"{toy_app}/")  # a session runs st.navigation
    assert "HOME PAGE" in later and "ENTRY SIDEBAR" in later
    again = _text_of(browser, f"{toy_app}/secret")
    assert "LEGACY PAGES SCRIPT" not in again and "ENTRY SIDEBAR" in again  # from now on pages/ is ignored

"""Open the app in AppTest the way a shared link does: query parameters (and session state) before the first run."""
from pathlib import Path

from streamlit.testing.v1 import AppTest

APP = str(Path(__file__).resolve().parents[1] / "app.py")


def open_from_link(page: str | None, query: dict[str, str] | None = None, **state) -> tuple[AppTest, str]:
    """-> (the app on `page` ('home' or None: the entry page), the text of the link notices shown on that run)."""
    at = AppTest.from_file(APP, default_timeout=120)
    for name, value in (query or {}).items():
        at.query_params[name] = value
    for key, value in state.items():
        at.session_state[key] = value
    if page and page != "home":
        at.switch_page(f"app_pages/{page}.py")
    at.run()
    assert not at.exception
    return at, " ".join(i.value for i in at.info)

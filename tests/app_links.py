"""The one AppTest harness: open the app on a page the way a shared link does (query parameters and session state
before the first run), the app's page list, and the reading helpers page tests share.

Every page test opens the app through `open_page` (or `open_from_link`, which also returns the link notices), so a
page always runs under app.py's sidebar and URL handling, with one timeout, and is checked for a traceback or a
page-guard message on its first run.
"""
import json
from pathlib import Path

import numpy as np
import plotly.graph_objects as go
import plotly.io as pio
from streamlit.testing.v1 import AppTest

from ui.errors import GUARD_MESSAGE
from ui.page_menu import PAGE_NAMES
from viz.export import trace_values

ROOT = Path(__file__).resolve().parents[1]
APP = str(ROOT / "app.py")
TIMEOUT = 120  # seconds for one run: a cold model load on the shared 2-core box


APP_PAGES = list(PAGE_NAMES)  # the pages app.py hands st.navigation (ui/page_menu), in menu order, 'home' first


def assert_healthy(at: AppTest) -> None:
    """No exception element, and the page guard (which turns errors into a message) did not fire."""
    assert not at.exception, [e.value for e in at.exception]
    assert not [e.value for e in at.error if GUARD_MESSAGE in e.value]


def open_page(page: str | None = None, query: dict[str, str] | None = None, *, healthy: bool = True,
              **state) -> AppTest:
    """The app run once on `page` ('home' or None: the entry page) with `query` in the address and `state` in the
    session; healthy=False skips the traceback/guard check (for a test that expects the guard's message)."""
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    for name, value in (query or {}).items():
        at.query_params[name] = value
    for key, value in state.items():
        at.session_state[key] = value
    if page and page != "home":
        at.switch_page(f"app_pages/{page}.py")
    at.run()
    if healthy:
        assert_healthy(at)
    return at


def link_notices(at: AppTest) -> str:
    """The text of the notices shown on the last run (a link's values that did not fit, a lost class, ...)."""
    return " ".join(i.value for i in at.info)


def open_from_link(page: str | None, query: dict[str, str] | None = None, **state) -> tuple[AppTest, str]:
    """-> (the app opened as `open_page` does, the text of the link notices shown on that run)."""
    at = open_page(page, query, **state)
    return at, link_notices(at)


def go_to(at: AppTest, page: str) -> AppTest:
    """The same session moved to another page (as a click in the menu does), checked like a first open."""
    at.switch_page(f"app_pages/{page}.py").run()
    assert_healthy(at)
    return at


def query_param(at: AppTest, name: str) -> str | None:
    """The address's value of `name` after the last run (the last one if the app wrote it more than once)."""
    value = at.query_params.get(name)
    return value[-1] if isinstance(value, list) else value


def chart_specs(at: AppTest) -> list[dict]:
    """The plotly charts on the page as JSON dicts, in page order."""
    return [json.loads(chart.proto.spec) for chart in at.get("plotly_chart")]


def chart_figures(at: AppTest) -> list[go.Figure]:
    """The plotly charts as figures (typed arrays stay {dtype, bdata} dicts: read numbers with trace_array)."""
    return [pio.from_json(chart.proto.spec, skip_invalid=True) for chart in at.get("plotly_chart")]


def chart_titles(at: AppTest) -> list[str]:
    """Chart titles as read: a title wider than its column is wrapped with <br> (viz.presentation), read as a space."""
    return [spec["layout"]["title"]["text"].replace("<br>", " ") for spec in chart_specs(at)]


def trace_array(values) -> np.ndarray:
    """A trace's numbers as floats (plotly sends numpy arrays as typed-array specs; viz.export decodes them)."""
    return np.asarray(trace_values(values), dtype=float)


def csv_chart_keys(at: AppTest) -> list[str]:
    """Keys of the charts (and tables) that offer a CSV download (show_chart's button key is csv_<chart key>)."""
    return [b.proto.id.rsplit("-", 1)[-1].removeprefix("csv_") for b in at.get("download_button")]


def shipped_checkpoint_upload() -> tuple[bytes, bytes]:
    """(weights, JSON sidecar) of the shipped transformer_reverse as the train page's upload receives them."""
    from model.checkpoint import checkpoint_bytes, load_checkpoint
    from ui.models import CHECKPOINT_DIR

    loaded = load_checkpoint(CHECKPOINT_DIR / "transformer_reverse")
    return checkpoint_bytes(loaded.model, loaded.config, loaded.src_vocab, loaded.tgt_vocab, "reverse")

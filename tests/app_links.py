"""The one AppTest harness: open the app on a page the way a shared link does (query parameters and session state
before the first run), the app's page list, and the reading helpers page tests share.

Every page test opens the app through `open_page` (or `open_from_link`, which also returns the link notices), so a
page always runs under app.py's sidebar and URL handling, with one timeout, and is checked for a traceback or a
page-guard message on its first run.
"""
import base64
import json
from pathlib import Path

import numpy as np
import plotly.graph_objects as go
import plotly.io as pio
from streamlit.testing.v1 import AppTest

from ui.errors import GUARD_MESSAGE
from ui.page_list import PAGE_NAMES
from ui.session import SESSION_KEY, LabSession

ROOT = Path(__file__).resolve().parents[1]
APP = str(ROOT / "app.py")
TIMEOUT = 120  # seconds for one run: a cold model load on the shared 2-core box


APP_PAGES = list(PAGE_NAMES)  # the pages app.py hands st.navigation (ui/page_menu), in menu order, 'home' first


def assert_healthy(at: AppTest) -> None:
    """No exception element, and the page guard (which turns errors into a message) did not fire."""
    assert not at.exception, [e.value for e in at.exception]
    assert not [e.value for e in at.error if GUARD_MESSAGE in e.value]


def open_page(page: str | None = None, query: dict[str, str] | None = None, *, healthy: bool = True,
              lab: LabSession | None = None, **state) -> AppTest:
    """The app run once on `page` ('home' or None: the entry page) with `query` in the address, `lab` as the session
    object (ui/session.py: a trained model, a lesson's answers...) and `state` as widget values (by key);
    healthy=False skips the traceback/guard check (for a test that expects the guard's message)."""
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    for name, value in (query or {}).items():
        at.query_params[name] = value
    if lab is not None:
        at.session_state[SESSION_KEY] = lab
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


def lab_session_of(at: AppTest) -> LabSession:
    """The session object of an AppTest's session (after its first run)."""
    return at.session_state[SESSION_KEY]


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


def altair_text(at: AppTest) -> str:
    """Every altair (Vega-Lite) chart's spec and data as text: its datasets travel as Arrow tables beside the spec."""
    import pyarrow as pa

    parts = []
    for chart in at.get("vega_lite_chart"):
        parts.append(json.dumps(json.loads(chart.proto.spec), ensure_ascii=False))
        tables = [d.data.data for d in chart.proto.datasets] + [chart.proto.data.data]
        parts += [pa.ipc.open_stream(t).read_all().to_pandas().to_json(force_ascii=False) for t in tables if t]
    return " ".join(parts)


def chart_figures(at: AppTest) -> list[go.Figure]:
    """The plotly charts as figures (typed arrays stay {dtype, bdata} dicts: read numbers with trace_array)."""
    return [pio.from_json(chart.proto.spec, skip_invalid=True) for chart in at.get("plotly_chart")]


def chart_titles(at: AppTest) -> list[str]:
    """Chart titles as read: a title wider than its column is wrapped with <br> (viz.presentation), read as a space."""
    return [spec["layout"]["title"]["text"].replace("<br>", " ") for spec in chart_specs(at)]


def trace_values(data) -> np.ndarray | list:
    """Trace data as the browser gets it, as numbers: plotly's typed-array form ({'dtype', 'bdata', 'shape'}, in a
    chart's spec and in a figure rebuilt from it) decoded, lists and arrays as they are.

    That form is plotly.js's documented wire format for typed arrays (base64 of the raw little-endian values); plotly.py
    has no public decoder for it (go.Figure(dict) and plotly.io.from_json both keep the dict, checked with plotly 7.1).
    The app never reads it (a chart's CSV and words start from its data, viz/chart_data.py); the tests read what was
    sent.
    """
    if isinstance(data, dict) and "bdata" in data:
        array = np.frombuffer(base64.b64decode(data["bdata"]), dtype=np.dtype(data["dtype"]))
        shape = data.get("shape")
        if shape:
            array = array.reshape([int(n) for n in str(shape).split(",")])
        return array
    return data


def trace_array(values) -> np.ndarray:
    """A trace's numbers as floats (plotly sends numpy arrays as typed-array specs: trace_values decodes them)."""
    return np.asarray(trace_values(values), dtype=float)


def fragment_ids(at: AppTest) -> list[str]:
    """The ids of the fragments the run registered (AppTest has no public way to name them: its fragment storage;
    tests/test_compat.py fails on a Streamlit that moved it)."""
    return list(at._fragment_storage._fragments)


def csv_chart_keys(at: AppTest) -> list[str]:
    """Keys of the charts (and tables) that offer a CSV download (show_chart's button key is csv_<chart key>)."""
    return [b.proto.id.rsplit("-", 1)[-1].removeprefix("csv_") for b in at.get("download_button")]


def shipped_checkpoint_upload() -> tuple[bytes, bytes]:
    """(weights, JSON sidecar) of the shipped transformer_reverse as the train page's upload receives them."""
    from model.checkpoint import checkpoint_bytes, load_checkpoint
    from ui.models import CHECKPOINT_DIR

    loaded = load_checkpoint(CHECKPOINT_DIR / "transformer_reverse")
    return checkpoint_bytes(loaded.model, loaded.config, loaded.src_vocab, loaded.tgt_vocab, "reverse")


class BrowserPickers:
    """What a browser shows in each keyed picker after a run, modelled on Streamlit's frontend: a widget takes the
    value the server sends only when the run marks it `set_value`; otherwise a widget still on screen keeps what it
    showed, and one mounted in this run shows its element default. AppTest reads the server's value, so a picker
    whose browser shows another value (Next to a stop whose page was hidden behind a question) is caught only here.

    shown(at) after each run -> {widget key: (shown, server's)}, both as the labels or numbers the widget holds."""

    def __init__(self):
        self._shown: dict[str, object] = {}  # element id -> what the browser shows

    @staticmethod
    def _read(widget) -> tuple[object, object, object]:
        """(the proto's value when set_value, its default, the server's value), as comparable labels/numbers."""
        proto, kind = widget.proto, type(widget).__name__
        if kind == "Selectbox" or kind == "Radio":
            options = list(proto.options)
            default = options[proto.default] if proto.HasField("default") and options else None
            server = None if widget.value is None else widget.format_func(widget.value)
            return proto.raw_value, default, server
        if kind == "ButtonGroup":
            options = [o.content for o in proto.options]
            value = widget.value
            server = [] if value is None else [widget.format_func(v) for v in (value if isinstance(value, list)
                                                                               else [value])]
            return list(proto.raw_values), [options[i] for i in proto.default], server
        if kind in ("Slider", "SelectSlider"):
            options = list(proto.options)
            labels = (lambda xs: [options[int(x)] for x in xs]) if options else (lambda xs: [float(x) for x in xs])
            value = widget.value
            values = list(value) if isinstance(value, (list, tuple)) else [value]
            server = [widget.format_func(v) for v in values] if options else [float(v) for v in values]
            sent = list(proto.raw_value) if options and proto.raw_value else labels(proto.value)  # labels, or indices
            return sent, labels(proto.default), server
        if kind == "NumberInput":
            return (proto.value if proto.HasField("value") else None,
                    proto.default if proto.HasField("default") else None, widget.value)
        return proto.value, proto.default, widget.value  # Checkbox, Toggle

    def shown(self, at: AppTest) -> dict[str, tuple[object, object]]:
        kinds = ("selectbox", "radio", "button_group", "slider", "select_slider", "number_input", "toggle", "checkbox")
        now, result = {}, {}
        for kind in kinds:
            for widget in at.get(kind):
                if not widget.key:
                    continue
                sent, default, server = self._read(widget)
                element = widget.proto.id
                shown = sent if widget.proto.set_value else self._shown.get(element, default)
                now[element] = shown
                result[widget.key] = (shown, server)
        self._shown = now
        return result

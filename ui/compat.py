"""Other libraries' internals, behind one door: each wrapper here uses something that has no public equivalent.

A Streamlit or plotly upgrade that moves one of these breaks here, loudly (tests/test_compat.py has a test per
wrapper), instead of somewhere in a page. Everything else in the project uses public APIs only.
"""
from __future__ import annotations

from collections.abc import Callable

import plotly.graph_objects as go


def in_script_run() -> bool:
    """True inside a Streamlit script run (a browser session or AppTest), False in a plain thread or process.

    Streamlit has no public "am I in a session" call; its session state raises or warns outside one.
    """
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    return get_script_run_ctx(suppress_warning=True) is not None


def session_alive_check() -> Callable[[], bool]:
    """A thread-safe check that the current browser session still exists (always true outside a real server).

    Used by a training thread to stop when its tab closes. Streamlit exposes no public session-liveness call.
    """
    from streamlit import runtime
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    ctx = get_script_run_ctx(suppress_warning=True)
    if ctx is None or not runtime.exists():
        return lambda: True
    session_id, instance = ctx.session_id, runtime.get_instance()
    return lambda: instance.is_active_session(session_id)


def script_session_id() -> str | None:
    """The id of the Streamlit session running this script (the one in its upload URLs), or None outside a run.

    Streamlit has no public session id; the upload route's gate (serving/upload_gate.py) is keyed by it.
    """
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    ctx = get_script_run_ctx(suppress_warning=True)
    return ctx.session_id if ctx is not None else None


def figure_from_own_dict(figure_dict: dict) -> go.Figure:
    """A figure rebuilt from the dict of a figure that plotly already validated (Figure.to_dict()).

    The public go.Figure(dict) validates every property again, which makes a cached chart cost as much as building
    it; plotly's only way to skip that is the private `_validate` argument.
    """
    return go.Figure(figure_dict, _validate=False)


# ---- used by the tests only (kept here so that every internal the project touches is in one file)

def data_editor_cell_parser() -> Callable[[str], float | None]:
    """What st.data_editor makes of the text typed into a float cell (its own parser: float(), or None)."""
    from streamlit.elements.widgets.data_editor import ColumnDataKind, _parse_value

    return lambda text: _parse_value(text, ColumnDataKind.FLOAT)


def fragment_ids(app_test) -> list[str]:
    """The ids of the fragments an AppTest run registered (AppTest has no public way to name them)."""
    return list(app_test._fragment_storage._fragments)

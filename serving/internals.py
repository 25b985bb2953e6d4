"""Other libraries' internals, behind one door: each name here is something that has no public equivalent.

Streamlit's public Python API is `import streamlit as st` (and its DeltaGenerator type); everything else of Streamlit
the product reaches (its wire messages, its runtime's managers and stats, whether a script run is under way) is
reached here and nowhere else (tests/test_layers.py fails on any other file that imports it), as is plotly's unvalidated
figure constructor. A Streamlit or plotly upgrade that moves one of these breaks here, loudly: tests/test_compat.py has
a test per wrapper and fails on another version than the one each was written for (WRITTEN_FOR), so an upgrade
re-reads one file.
"""
from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import plotly.graph_objects as go
# Streamlit's wire messages (protobuf), read and written by the gateway, the operator-only route and the warm-up's
# client. Not a public API: their fields follow the front end of the same version.
from streamlit.proto.Alert_pb2 import Alert
from streamlit.proto.BackMsg_pb2 import BackendOperationRequest, BackMsg, DeferredFileRequestPayload
from streamlit.proto.ClientState_pb2 import ClientState, ContextInfo
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.proto.WidgetStates_pb2 import WidgetState
# What Streamlit's own calls raise on a wrong use (ui/page_sections.py catches a widget drawn twice in a run)
from streamlit.errors import StreamlitAPIException
# The /_stcore/metrics families a provider returns (serving/result_metrics.py adds the result store's)
from streamlit.runtime.stats import CounterStat, GaugeStat

__all__ = ["WRITTEN_FOR", "Alert", "BackMsg", "BackendOperationRequest", "ClientState", "ContextInfo", "CounterStat",
           "DeferredFileRequestPayload", "ForwardMsg", "GaugeStat", "StreamlitAPIException", "WidgetState", "build_session_theme_once",
           "data_editor_cell_parser", "figure_from_own_dict", "in_script_run", "media_file", "register_stats_provider",
           "script_session_id", "server_option", "session_alive_check", "uploaded_file_manager"]

# The versions every access here was written for and checked against (the lock's): tests/test_compat.py fails on
# another, naming this file.
WRITTEN_FOR = {"streamlit": "1.67.0", "plotly": "7.1.0"}


def register_stats_provider(provider: Any) -> None:
    """Add a stats provider (its get_stats() -> {family: [CounterStat | GaugeStat]}) to this server's
    /_stcore/metrics. Call it once the runtime exists (asgi.py's lifespan)."""
    from streamlit.runtime import Runtime

    Runtime.instance().stats_mgr.register_provider(provider)


def media_file(file_id: str) -> Any:
    """Streamlit's stored media file of this id (content, mimetype, kind, filename), or None (no runtime, no such
    file, or a storage that cannot read files back)."""
    from streamlit.runtime import Runtime

    if not Runtime.exists():
        return None
    manager = Runtime.instance().media_file_mgr
    return manager.read_file(file_id) if manager.can_read_files else None


def uploaded_file_manager() -> Any:
    """This server's manager of uploaded files (what the upload route stores into), or None outside a server."""
    from streamlit import runtime

    return runtime.get_instance().uploaded_file_mgr if runtime.exists() else None


def server_option(name: str) -> Any:
    """A server option as this process's Streamlit config reads it (its flags, environment and config files), e.g.
    "server.port", outside a script run too (the warm-up's thread)."""
    from streamlit import config

    return config.get_option(name)


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

    Streamlit has no public session id; the upload route's gate (serving/upload_gate.py) is keyed by it, and so is the
    turn of a session without a seat cookie in the workers' queues (ui/analysis_queue.session_name).
    """
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    ctx = get_script_run_ctx(suppress_warning=True)
    return ctx.session_id if ctx is not None else None


def figure_from_own_dict(figure_dict: dict, figure_class: type[go.Figure] = go.Figure) -> go.Figure:
    """A figure (of `figure_class`, go.Figure or a subclass) rebuilt from the dict of a figure that plotly already
    validated (Figure.to_dict()).

    The public go.Figure(dict) validates every property again, which makes a cached chart cost as much as building
    it; plotly's only way to skip that is the private `_validate` argument.
    """
    return figure_class(figure_dict, _validate=False)


# ---- used by the tests only (kept here so that every internal the project touches is in one file)

def data_editor_cell_parser() -> Callable[[str], float | None]:
    """What st.data_editor makes of the text typed into a float cell (its own parser: float(), or None)."""
    from streamlit.elements.widgets.data_editor import ColumnDataKind, _parse_value

    return lambda text: _parse_value(text, ColumnDataKind.FLOAT)


def build_session_theme_once() -> None:
    """Every script run (a student's class poll too) starts with a new_session message whose theme Streamlit builds
    by walking every config option once per theme section, six walks a run: a tenth of the server's CPU while 10
    students polled (py-spy, bench/HISTORY.md). Each section's message is built once per reading of the config
    (config._config_options is replaced when the config is read again) and merged into every run's message.
    Idempotent; asgi.py calls it at start. A Streamlit without these internals (another version than the lock's)
    keeps its own way: the server starts and only this saving is lost (tests/test_compat.py fails on the lock's)."""
    from streamlit import config
    from streamlit.runtime import app_session

    original = getattr(app_session, "_populate_theme_msg", None)
    if original is None or not hasattr(config, "_config_options") or getattr(original, "built_once", False):
        return
    built: dict[tuple[int, str], object] = {}
    lock = threading.Lock()

    def populate(msg, section: str = "theme") -> None:
        key = (id(config._config_options), section)
        with lock:
            ready = built.get(key)
        if ready is None:
            ready = type(msg)()
            original(ready, section)  # the sections are independent messages (light, dark, sidebar, ...)
            with lock:
                if len(built) > 64:  # the config read again many times (a developer editing it): start over
                    built.clear()
                built[key] = ready
        if ready.ByteSize():  # an unset section stays unset (not present), as Streamlit leaves it
            msg.MergeFrom(ready)  # into the run's empty section: the same fields as building it there

    populate.built_once = True
    app_session._populate_theme_msg = populate

"""Shareable views: the state a person would share lives in the URL's query string (st.query_params).

On a session's first run, values from the link are validated and copied into session_state (a bad or stale
value is dropped with a notice, never an error); after every run, the current values are written back so
the address bar always reproduces the view. The page itself is the URL's path (st.navigation).
"""
from __future__ import annotations

from collections.abc import Callable

import streamlit as st

from ui.attention_view import KINDS, VIEWS
from ui.state import get_model, model_ids, selected_model_id
from ui.text import MAX_INPUT_CHARS

RESTORED = "_url_restored"


def _int_below(limit: Callable[[], int]) -> Callable[[str], int]:
    def parse(text: str) -> int:
        value = int(text)
        if not 0 <= value < limit():
            raise ValueError(f"{value} is out of range")
        return value
    return parse


def _model_config():
    return get_model(selected_model_id()).config


def _layers() -> int:
    return getattr(_model_config(), "num_layers", 0)


def _heads() -> int:
    return getattr(_model_config(), "num_heads", 0)


def _choice(options) -> Callable[[str], str]:
    def parse(text: str) -> str:
        if text not in options:
            raise ValueError(f"{text!r} is not one of the choices")
        return text
    return parse


def _sentence(text: str) -> str:
    return text[:MAX_INPUT_CHARS]


def _positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise ValueError("must be at least 1")
    return value


# URL parameter -> (session_state key, parser). Order matters: the model first, layer/head checks need it.
SHARED: dict[str, tuple[str, Callable[[str], object]]] = {
    "model": ("model_id", lambda text: _choice(model_ids())(text)),
    "sentence": ("sentence", _sentence),
    "kind": ("attn_kind", _choice(KINDS)),
    "layer": ("attn_layer", _int_below(_layers)),
    "head": ("attn_head", _int_below(_heads)),
    "view": ("attn_view", _choice(VIEWS)),
    "step": ("decode_step", _positive_int),
    "dec_layer": ("dec_layer", _int_below(_layers)),
}


def restore_from_url() -> None:
    """On the first run of a session, copy valid link values into session_state; report the bad ones."""
    if st.session_state.get(RESTORED):
        return
    st.session_state[RESTORED] = True
    ignored = []
    for name, (key, parse) in SHARED.items():
        if name not in st.query_params:
            continue
        try:
            st.session_state[key] = parse(st.query_params[name])
            if key == "model_id":
                st.session_state["sentence_task"] = get_model(st.session_state[key]).task
        except (ValueError, KeyError, TypeError):
            ignored.append(name)
    if ignored:
        st.session_state["_url_notice"] = ignored


def show_url_notice() -> None:
    ignored = st.session_state.pop("_url_notice", None)
    if ignored:
        st.info(f"This link had values that do not fit this app or model ({', '.join(ignored)}); the defaults "
                "are used for those.")


def write_to_url() -> None:
    """Mirror the current shareable state into the address bar."""
    for name, (key, _) in SHARED.items():
        value = st.session_state.get(key)
        if value is None or value == "":
            st.query_params.pop(name, None)
        elif st.query_params.get(name) != str(value):
            st.query_params[name] = str(value)


def share_link() -> None:
    """'Link to this view': the address with the current state, in a code block (which has a copy button)."""
    from urllib.parse import urlencode

    base = st.context.url
    if not base:
        return
    query = urlencode({name: str(v) for name, (key, _) in SHARED.items()
                       if (v := st.session_state.get(key)) not in (None, "")})
    with st.popover("Link to this view", icon=":material/link:", width="stretch"):
        st.caption("Copy this address: it opens this page with the same model, sentence, layer and head.")
        st.code(f"{base}?{query}", language=None, wrap_lines=True)

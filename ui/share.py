"""Shareable views: the state a person would share lives in the URL's query string (st.query_params).

On a session's first run, values from the link are validated and copied into session_state (a bad or stale
value is dropped with a notice, never an error); after every run, the current page's values are written back so
the address bar always reproduces the view. The page itself is the URL's path (st.navigation). Each parameter
names the pages it belongs to, so the address of one page does not carry another page's sliders.

Widgets whose state comes from here take their default from session_state (`st.session_state.setdefault`), not
from `value=`/`index=`: Streamlit warns when a widget has both.
"""
from __future__ import annotations

from collections.abc import Callable, Collection
import re
from dataclasses import dataclass
from urllib.parse import urlencode

import streamlit as st

from i18n import LANGUAGES, tr
from model.attention_steps import MASKS
from model.normalization import NORM_KINDS
from model.residual import ACTIVATIONS
from ui.attention_view import HIDE_SPECIAL, KINDS, MERGE_WORDS, VIEWS, rescale_options
from ui.compare_view import AVERAGE, METRICS, sentence_lengths, transformer_shape
from ui.display import LANGUAGE, PRESENTER
from ui.explain_view import ENCODER_METRICS as EXPLAIN_ENCODER_METRICS
from ui.explain_view import METRICS as EXPLAIN_METRICS
from ui.explain_view import MODES as EXPLAIN_MODES
from ui.explain_view import PARTS as EXPLAIN_PARTS
from ui.explain_view import PATTERN_FILTERS
from ui.state import get_model, model_ids, selected_model_id
from ui.text import MAX_INPUT_CHARS

RESTORED = "_url_restored"
# The model id of the training running in this session, in the URL of every page while it runs (not in "Link to
# this view": it belongs to this tab): a session that starts with it but has no such job (its server process died
# and serve.py's HAProxy moved the student to another replica, or the tab was reloaded) says the training is lost.
TRAINING_IN_URL = "training_in_url"
_TRAINING_ID = re.compile(r"my-[A-Za-z0-9_-]{1,80}")  # ui.training.start_job's model ids
LINK_DRAWN_BY = "_share_link_drawn_by"  # the page whose fragment drew the sidebar's link in this full run
Parser = Callable[[str], object]


@dataclass(frozen=True)
class Param:
    key: str  # session_state key (usually the widget's key)
    parse: Parser  # text from the URL -> value; raises ValueError/KeyError/TypeError when it does not fit
    pages: Collection[str] = ()  # url paths of the pages it belongs to; empty: every page


def _layers() -> int:
    return getattr(get_model(selected_model_id()).config, "num_layers", 0)


def _heads() -> int:
    return getattr(get_model(selected_model_id()).config, "num_heads", 0)


def _rescale_options() -> list[float]:
    config = get_model(selected_model_id()).config
    return rescale_options(getattr(config, "d_model", 1) // max(getattr(config, "num_heads", 1), 1))


def _head_or_all(text: str) -> int | str:
    """The decoding page's head: 'all' (mean of heads) or one head."""
    return "all" if text == "all" else int_in(0, lambda: _heads() - 1)(text)


def int_in(low: int | Callable[[], int], high: int | Callable[[], int]) -> Parser:
    """An integer in [low, high]; either bound may be a function read at parse time (it depends on the model)."""
    def parse(text: str) -> int:
        value = int(text)
        lo, hi = (b() if callable(b) else b for b in (low, high))
        if not lo <= value <= hi:
            raise ValueError(f"{value} is outside {lo}..{hi}")
        return value
    return parse


def one_of(options: Collection | Callable[[], Collection], convert: Callable[[str], object] = str) -> Parser:
    def parse(text: str) -> object:
        value = convert(text)
        if value not in (options() if callable(options) else options):
            raise ValueError(f"{text!r} is not one of the choices")
        return value
    return parse


def training_id(text: str) -> str:
    if not _TRAINING_ID.fullmatch(text):
        raise ValueError(text)
    return text


def boolean(text: str) -> bool:
    if text not in ("true", "false", "True", "False"):
        raise ValueError(f"{text!r} is not true or false")
    return text.lower() == "true"


def _sentence(text: str) -> str:
    return text[:MAX_INPUT_CHARS]


SEED = int_in(0, 10_000)
SCALING_DKS = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512)  # the softmax-scaling page's d_k choices
SCALING_V1_FACTORS = (1, 2, 5, 10, 20, 50, 100)  # ... and its factors for the notes' v1 = [0.3, 0.4]
FOUNDATIONS = {
    # positional encoding
    "pe_d": Param("pe_d_model", one_of(range(4, 257, 2), int), ["positional"]),
    "pe_len": Param("pe_length", int_in(8, 256), ["positional"]),
    "pe_k": Param("pe_k", int_in(1, lambda: st.session_state.get("pe_length", 64) - 1), ["positional"]),
    "pe_pos": Param("pe_position", int_in(0, lambda: st.session_state.get("pe_length", 64) - 1), ["positional"]),
    # softmax scaling
    "dk": Param("scaling_dk", one_of(SCALING_DKS, int), ["softmax_scaling"]),
    "v1x": Param("scaling_v1_factor", one_of(SCALING_V1_FACTORS, int), ["softmax_scaling"]),
    "scale": Param("scaling_scale", one_of(lambda: scaling_scale_options(st.session_state.get("scaling_dk", 64)),
                                           float), ["softmax_scaling"]),
    "scores_seed": Param("scaling_seed", SEED, ["softmax_scaling"]),
    # attention step by step
    "tokens": Param("steps_tokens", int_in(2, 6), ["attention_steps"]),
    "steps_dk": Param("steps_dk", int_in(1, 6), ["attention_steps"]),
    "seed": Param("steps_seed", SEED, ["attention_steps"]),
    "mask": Param("steps_mask", one_of(MASKS), ["attention_steps"]),
    "padded": Param("steps_padded", int_in(0, lambda: st.session_state.get("steps_tokens", 4) - 1),
                    ["attention_steps"]),
    "heads": Param("mh_heads", one_of([1, 2, 4], int), ["attention_steps"]),
    "d_model": Param("mh_dmodel", one_of([4, 8, 16], int), ["attention_steps"]),
    "mh_mask": Param("mh_mask", one_of(MASKS), ["attention_steps"]),
    # LayerNorm vs BatchNorm
    "batch": Param("norm_batch", int_in(1, 8), ["normalization"]),
    "len": Param("norm_len", int_in(1, 12), ["normalization"]),
    "features": Param("norm_d", int_in(2, 16), ["normalization"]),
    "norm_seed": Param("norm_seed", SEED, ["normalization"]),
    "norm": Param("norm_kind", one_of(NORM_KINDS), ["normalization"]),
    # the highlighted value (after batch, len, features: its bounds depend on them)
    "norm_seq": Param("norm_seq", int_in(0, lambda: st.session_state.get("norm_batch", 4) - 1), ["normalization"]),
    "norm_pos": Param("norm_pos", int_in(0, lambda: st.session_state.get("norm_len", 6) - 1), ["normalization"]),
    "norm_feat": Param("norm_feature", int_in(0, lambda: st.session_state.get("norm_d", 6) - 1),
                       ["normalization"]),
    # residual connections
    "depth": Param("res_depth", int_in(2, 64), ["residual"]),
    "act": Param("res_activation", one_of(ACTIVATIONS), ["residual"]),
    "res_seed": Param("res_seed", SEED, ["residual"]),
    "ln": Param("res_ln", boolean, ["residual"]),
}


def scaling_scale_options(d_k: int) -> list[float]:
    """The softmax-scaling page's scale choices: 1/√d_k sits among round values (the page and the URL share it)."""
    return sorted({0.01, 0.03, 0.1, round(1 / d_k ** 0.5, 3), 0.3, 1.0, 3.0, 10.0})  # d_k = 1: 1/√d_k is 1.0


# URL parameter -> Param. Order matters: the model first (layer/head checks need it), lengths before positions.
SHARED: dict[str, Param] = {
    "lang": Param(LANGUAGE, one_of(LANGUAGES)),
    "presenter": Param(PRESENTER, boolean),
    "model": Param("model_id", lambda text: one_of(model_ids())(text)),
    "sentence": Param("sentence", _sentence, ["attention", "decoding", "compare"]),
    "kind": Param("attn_kind", one_of(KINDS), ["attention"]),
    "layer": Param("attn_layer", int_in(0, lambda: _layers() - 1), ["attention"]),
    "head": Param("attn_head", int_in(0, lambda: _heads() - 1), ["attention"]),
    "view": Param("attn_view", one_of(VIEWS), ["attention"]),
    "cmp_kind": Param("cmp_kind", one_of(KINDS), ["attention"]),
    "cmp_layer": Param("cmp_layer", int_in(0, lambda: _layers() - 1), ["attention"]),
    "cmp_head": Param("cmp_head", int_in(0, lambda: _heads() - 1), ["attention"]),
    "rescale": Param("rescale_factor", one_of(_rescale_options, float), ["attention"]),
    "hide_special": Param(HIDE_SPECIAL, boolean, ["attention"]),  # encoders: hide [CLS]/[SEP]
    "words": Param(MERGE_WORDS, boolean, ["attention"]),  # encoders: merge subwords into words
    "explain": Param("explain_part", one_of(EXPLAIN_PARTS), ["attention"]),
    "explain_mode": Param("explain_mode", one_of(EXPLAIN_MODES), ["attention"]),
    "explain_metric": Param("explain_metric", one_of(EXPLAIN_METRICS), ["attention"]),
    "encoder_metric": Param("explain_encoder_metric", one_of(EXPLAIN_ENCODER_METRICS), ["attention"]),
    "pattern": Param("explain_pattern", one_of(PATTERN_FILTERS), ["attention"]),
    "step": Param("decode_step", int_in(1, 10_000), ["decoding"]),
    "dec_layer": Param("dec_layer", int_in(0, lambda: _layers() - 1), ["decoding"]),
    "dec_head": Param("dec_head", _head_or_all, ["decoding"]),
    # seq2seq vs Transformer (its Transformer is always transformer_en-fr, not the sidebar's model)
    "compare_layer": Param("cmp_model_layer", int_in(0, lambda: transformer_shape()[0] - 1), ["compare"]),
    "compare_head": Param("cmp_model_head", lambda text: AVERAGE if text == AVERAGE else int_in(
        0, lambda: transformer_shape()[1] - 1)(text), ["compare"]),
    "compare_metric": Param("cmp_metric", one_of(METRICS), ["compare"]),
    "compare_len": Param("cmp_length_slider", one_of(sentence_lengths, int), ["compare"]),
    "training": Param(TRAINING_IN_URL, training_id),
    **FOUNDATIONS,
}


def restore_from_url() -> None:
    """On the first run of a session, copy valid link values into session_state; report the bad ones.

    app.py calls it first in every full run, so it also forgets which fragment drew the link in the last run.
    """
    st.session_state.pop(LINK_DRAWN_BY, None)
    if st.session_state.get(RESTORED):
        return
    st.session_state[RESTORED] = True
    ignored = []
    for name, param in SHARED.items():
        if name not in st.query_params:
            continue
        try:
            st.session_state[param.key] = param.parse(st.query_params[name])
            if param.key == "model_id":
                st.session_state["sentence_task"] = get_model(st.session_state[param.key]).task
        except (ValueError, KeyError, TypeError):
            ignored.append(name)
    if ignored:
        st.session_state["_url_notice"] = ignored


def show_url_notice() -> None:
    ignored = st.session_state.pop("_url_notice", None)
    if ignored:
        st.info(tr("share.bad_link", names=", ".join(ignored)))


def _current(page: str) -> dict[str, str]:
    """The shareable values of this page (and the global ones) as URL text."""
    values = {}
    for name, param in SHARED.items():
        if param.pages and page not in param.pages:
            continue
        value = st.session_state.get(param.key)
        if value is None or value == "" or (param.key == PRESENTER and not value) or (
                param.key == LANGUAGE and value == "en"):
            continue
        values[name] = str(value).lower() if isinstance(value, bool) else str(value)  # true/false, as parsed
    return values


def write_to_url(page: str) -> None:
    """Mirror the current page's shareable state into the address bar (and drop other pages' values)."""
    values = _current(page)
    for name in list(st.query_params):
        if name not in values:
            del st.query_params[name]
    for name, text in values.items():
        if st.query_params.get(name) != text:
            st.query_params[name] = text


def share_link(page: str) -> None:
    """'Link to this view': the address with the current state, in a code block (which has a copy button).

    Not drawn again when a fragment of this page has drawn it in this run (follow_fragment).
    """
    if st.session_state.get(LINK_DRAWN_BY) == page:
        return
    _draw_link(page)


def follow_fragment(page: str) -> None:
    """End of a page's fragment whose widgets are shared: a fragment rerun does not run the rest of app.py, so
    the fragment writes the URL and draws the sidebar's link itself (a fragment's writes to the sidebar are
    redrawn in place when it reruns); app.py's share_link then leaves the link to it."""
    write_to_url(page)
    with st.sidebar:
        _draw_link(page)
    st.session_state[LINK_DRAWN_BY] = page


def _draw_link(page: str) -> None:
    base = st.context.url
    if not base:
        return
    with st.popover(tr("share.link"), icon=":material/link:", width="stretch"):
        st.caption(tr("share.link_help"))
        shared = {name: value for name, value in _current(page).items() if name != "training"}
        st.code(f"{base}?{urlencode(shared)}", language=None, wrap_lines=True)

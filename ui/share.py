"""Shareable views: the state a person would share lives in the URL's query string (st.query_params).

On a session's first run, values from the link are validated and copied into session_state (a bad or stale
value is dropped with a notice, never an error); after every run, the current page's values are written back so
the address bar always reproduces the view. The page itself is the URL's path (st.navigation). Each parameter
names the pages it belongs to, so the address of one page does not carry another page's sliders.

Layer and head numbers count from 1 in links, as on screen (`layer=2` is the second layer). Links made before
that counted from 0; a link says which it is by its version: new links carry `v=2`, and a link without `v`
is read as an old 0-based one, so every link ever shared opens the same view. session_state counts from 0.

The same table keeps each page's view while the page is not shown: Streamlit forgets a widget's value at the
end of a run that does not draw it (another page, another view of the attention page, a control hidden in
presenter mode). keep_view_state() copies every value of the table into a non-widget key and puts it back,
checked against the current model, before the widgets are drawn again.

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
from model.scaling import SCALING_DKS, SCALING_V1_FACTORS, scaling_scale_options
from ui.attention_ids import HIDE_SPECIAL, KINDS, MERGE_WORDS, VIEWS, rescale_options
from ui.compare_view import AVERAGE, METRICS, sentence_lengths, transformer_shape
from ui.display import IMAGE_FORMAT, LANGUAGE, PRESENTER
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
KEPT = "_kept_view_state"  # {session_state key: value}: the table's values, kept while their widgets are not drawn
WRITTEN = "_url_written"  # the query string write_to_url left in the address bar at the end of the last run
LINK_VERSION = "2"  # the `v` of links whose layer/head numbers count from 1 (no `v`: an old, 0-based link)
LINK_DRAWN_BY = "_share_link_drawn_by"  # the page whose fragment drew the sidebar's link in this full run
URL_EXTRA = "_url_extra"  # {name: text} other parts keep in the address (the open lesson and stop)
Parser = Callable[[str], object]


@dataclass(frozen=True)
class Param:
    key: str  # session_state key (usually the widget's key)
    parse: Parser  # text from the URL -> value; raises ValueError/KeyError/TypeError when it does not fit
    pages: Collection[str] = ()  # url paths of the pages it belongs to; empty: every page
    counted: bool = False  # a layer or head number: 1-based in links (0-based in session_state)


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


# URL parameter -> Param. Order matters: the model first (layer/head checks need it), lengths before positions.
SHARED: dict[str, Param] = {
    "lang": Param(LANGUAGE, one_of(LANGUAGES)),
    "presenter": Param(PRESENTER, boolean),
    "model": Param("model_id", lambda text: one_of(model_ids())(text)),
    "sentence": Param("sentence", _sentence, ["attention", "decoding", "compare"]),
    "kind": Param("attn_kind", one_of(KINDS), ["attention"]),
    "layer": Param("attn_layer", int_in(0, lambda: _layers() - 1), ["attention"], counted=True),
    "head": Param("attn_head", int_in(0, lambda: _heads() - 1), ["attention"], counted=True),
    "view": Param("attn_view", one_of(VIEWS), ["attention"]),
    "cmp_kind": Param("cmp_kind", one_of(KINDS), ["attention"]),
    "cmp_layer": Param("cmp_layer", int_in(0, lambda: _layers() - 1), ["attention"], counted=True),
    "cmp_head": Param("cmp_head", int_in(0, lambda: _heads() - 1), ["attention"], counted=True),
    "rescale": Param("rescale_factor", one_of(_rescale_options, float), ["attention"]),
    "hide_special": Param(HIDE_SPECIAL, boolean, ["attention"]),  # encoders: hide [CLS]/[SEP]
    "words": Param(MERGE_WORDS, boolean, ["attention"]),  # encoders: merge subwords into words
    "explain": Param("explain_part", one_of(EXPLAIN_PARTS), ["attention"]),
    "explain_mode": Param("explain_mode", one_of(EXPLAIN_MODES), ["attention"]),
    "explain_metric": Param("explain_metric", one_of(EXPLAIN_METRICS), ["attention"]),
    "encoder_metric": Param("explain_encoder_metric", one_of(EXPLAIN_ENCODER_METRICS), ["attention"]),
    "pattern": Param("explain_pattern", one_of(PATTERN_FILTERS), ["attention"]),
    "step": Param("decode_step", int_in(1, 10_000), ["decoding"]),
    "dec_layer": Param("dec_layer", int_in(0, lambda: _layers() - 1), ["decoding"], counted=True),
    "dec_head": Param("dec_head", _head_or_all, ["decoding"], counted=True),
    # seq2seq vs Transformer (its Transformer is always transformer_en-fr, not the sidebar's model)
    "compare_layer": Param("cmp_model_layer", int_in(0, lambda: transformer_shape()[0] - 1), ["compare"],
                           counted=True),
    "compare_head": Param("cmp_model_head", lambda text: AVERAGE if text == AVERAGE else int_in(
        0, lambda: transformer_shape()[1] - 1)(text), ["compare"], counted=True),
    "compare_metric": Param("cmp_metric", one_of(METRICS), ["compare"]),
    "compare_len": Param("cmp_length_slider", one_of(sentence_lengths, int), ["compare"]),
    "training": Param(TRAINING_IN_URL, training_id),
    **FOUNDATIONS,
}


def restore_from_url() -> None:
    """On the first run of a session, copy valid link values into session_state; report the bad ones.

    app.py calls it first in every full run, so it also forgets which fragment drew the link in the last run,
    and puts back the view of the page being opened (keep_view_state).
    """
    st.session_state.pop(LINK_DRAWN_BY, None)
    if not st.session_state.get(RESTORED):
        st.session_state[RESTORED] = True
        _read_link()
    elif WRITTEN in st.session_state and st.query_params.to_dict() not in (st.session_state[WRITTEN], {}):
        # The address is not the one this app wrote: the browser's Back or Forward button (each view the app
        # wrote is an entry of the browser's history) or an address edited by hand. It is a link: open its view.
        _read_link()
    keep_view_state()


def _from_link(param: Param, text: str, one_based: bool) -> str:
    """A link's text in session_state's counting: a 1-based layer/head number becomes 0-based."""
    if param.counted and one_based and text.lstrip("-").isdigit():
        return str(int(text) - 1)
    return text


def _to_link(param: Param, value: object) -> str:
    if param.counted and isinstance(value, int) and not isinstance(value, bool):
        return str(value + 1)
    return _as_text(value)


def _as_text(value: object) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)  # true/false, as parsed


def _read_link() -> None:
    one_based = "v" in st.query_params  # LINK_VERSION or later; an old link has no version
    ignored = _apply({name: st.query_params[name] for name in SHARED if name in st.query_params}, one_based)
    if ignored:
        st.session_state["_url_notice"] = ignored


def _apply(params: dict[str, str], one_based: bool) -> list[str]:
    """Parse each SHARED parameter's URL text into session_state (in SHARED's order); -> the names that do not fit.

    one_based: layer/head numbers count from 1 (links with `v`, lesson files), else from 0 (old links).
    """
    ignored = []
    for name, param in SHARED.items():
        if name not in params:
            continue
        try:
            st.session_state[param.key] = param.parse(_from_link(param, params[name], one_based))
            if param.key == "model_id":
                st.session_state["sentence_task"] = get_model(st.session_state[param.key]).task
        except (ValueError, KeyError, TypeError):
            ignored.append(name)
    return ignored


def apply_view_state(page: str, params: dict[str, str]) -> list[str]:
    """Open a view given as share-link parameters (a lesson stop's state) through the link's own parsers.

    Call it before the widgets of this run are drawn. -> the names that do not fit: unknown, of another page,
    or stale (a value the model or page no longer offers); those keep their current value.
    """
    foreign = [name for name in params
               if name not in SHARED or (SHARED[name].pages and page not in SHARED[name].pages)]
    # Lesson files count layers and heads from 1, as on screen and in links with `v`.
    return foreign + _apply({name: text for name, text in params.items() if name not in foreign}, one_based=True)


def carry_view_state() -> None:
    """Before st.switch_page: set every shared value again in this run. A server-side page switch sends no widget
    states, and Streamlit then drops the values of widgets not on the new page's first run (the sidebar's
    language, presenter mode, model...); a value set in the run that switches is kept."""
    for key in [param.key for param in SHARED.values()] + [IMAGE_FORMAT]:
        if key in st.session_state:
            st.session_state[key] = st.session_state[key]


def _ablated_heads(value: object) -> list[tuple[str, int, int]]:
    """The attention page's switched-off heads, if they exist in the current model."""
    heads = [tuple(item) for item in value]
    if any(kind not in KINDS or not 0 <= layer < _layers() or not 0 <= head < _heads()
           for kind, layer, head in heads):
        raise ValueError("a head that this model does not have")
    return heads


def _dimensions(value: object) -> list[int]:
    """The positional page's chosen curves, if the current d_model has them."""
    dims = [int(d) for d in value]
    if any(not 0 <= d < st.session_state.get("pe_d_model", 64) for d in dims):
        raise ValueError("a dimension that this d_model does not have")
    return dims


# Values a page keeps while it is not shown but that are not in links: session_state key -> check(value).
KEPT_ONLY: dict[str, Callable[[object], object]] = {
    "stats_average": lambda value: boolean(_as_text(value)),
    "ablate_heads": _ablated_heads,
    "pe_dims": _dimensions,
    # the positional page's folded sections that were open (built only while open)
    **{f"pe_open_{section}": lambda value: bool(value) for section in ("dials", "similarity", "rotation", "trained")},
}


def keep_view_state() -> None:
    """Keep every page's values across runs that do not draw their widgets; call it before widgets are drawn.

    A value present now is remembered (a non-widget key survives every run); a value Streamlit has dropped is
    put back, if it still fits the current model (the same check as a link's), else forgotten.
    """
    kept = st.session_state.setdefault(KEPT, {})
    checks = {param.key: (lambda value, parse=param.parse: parse(_as_text(value))) for param in SHARED.values()}
    for key, check in {**checks, **KEPT_ONLY}.items():
        if key in st.session_state:
            kept[key] = st.session_state[key]
        elif key in kept:
            try:
                st.session_state[key] = check(kept[key])
            except (ValueError, KeyError, TypeError):
                del kept[key]


def show_url_notice() -> None:
    ignored = st.session_state.pop("_url_notice", None)
    if ignored:
        st.info(tr("share.bad_link", names=", ".join(ignored)))


def _current(page: str) -> dict[str, str]:
    """The shareable values of this page (and the global ones) as URL text; `v` when it has a layer or head."""
    values = {}
    for name, param in SHARED.items():
        if param.pages and page not in param.pages:
            continue
        value = st.session_state.get(param.key)
        if value is None or value == "" or (param.key == PRESENTER and not value) or (
                param.key == LANGUAGE and value == "en"):
            continue
        values[name] = _to_link(param, value)
        if param.counted:
            values["v"] = LINK_VERSION
    return values


def view_query(page: str) -> dict[str, str]:
    """The query string write_to_url writes for `page` with the values kept now (ui/page_menu's links carry it)."""
    return {**_current(page), **st.session_state.get(URL_EXTRA, {})}


def write_to_url(page: str) -> None:
    """Mirror the current page's shareable state into the address bar (and drop other pages' values)."""
    values = view_query(page)
    if st.query_params.to_dict() != values:
        # One update, so one entry in the browser's history per view (a value set at a time made one per value,
        # and Back stepped through half-written addresses).
        st.query_params.from_dict(values)
    st.session_state[WRITTEN] = values


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

"""Specs of the Transformer attention page (ui/attention_view.py, ui/explain_view.py): which map, which head,
which view, and each view's own choices. Layer and head bounds are the sidebar's model's."""
from __future__ import annotations

from ui.attention_ids import HIDE_SPECIAL, KINDS, MERGE_WORDS, VIEWS, rescale_options
from ui.explain_view import SPECS as EXPLAIN_SPECS
from ui.state import get_model, selected_model_id, selected_model_shape
from ui.widget_spec import WidgetSpec, boolean

PAGE = ("attention",)


def _last_layer(state) -> int:
    return selected_model_shape()[0] - 1


def _last_head(state) -> int:
    return selected_model_shape()[1] - 1


def _rescale_options(state) -> list[float]:
    config = get_model(selected_model_id()).config
    return rescale_options(getattr(config, "d_model", 1) // max(getattr(config, "num_heads", 1), 1))


def _switch(key: str, url: str) -> WidgetSpec:
    return WidgetSpec(key, url, False, PAGE, options=(False, True), convert=boolean)


KIND = WidgetSpec("attn_kind", "kind", next(iter(KINDS)), PAGE, options=KINDS)
LAYER = WidgetSpec("attn_layer", "layer", 0, PAGE, low=0, high=_last_layer, convert=int, counted=True)
HEAD = WidgetSpec("attn_head", "head", 0, PAGE, low=0, high=_last_head, convert=int, counted=True)
VIEW = WidgetSpec("attn_view", "view", VIEWS[0], PAGE, options=VIEWS)
# the Compare view's B: it starts on A's kind (the difference map is there at once) and on A's layer, head 2
COMPARE_KIND = WidgetSpec("cmp_kind", "cmp_kind", lambda state: KIND.current(state), PAGE, options=KINDS)
COMPARE_LAYER = WidgetSpec("cmp_layer", "cmp_layer", 0, PAGE, low=0, high=_last_layer, convert=int, counted=True)
COMPARE_HEAD = WidgetSpec("cmp_head", "cmp_head", lambda state: min(1, _last_head(state)), PAGE, low=0,
                          high=_last_head, convert=int, counted=True)
RESCALE_FACTOR = WidgetSpec("rescale_factor", "rescale", 1.0, PAGE, options=_rescale_options, convert=float)
HIDE_SPECIAL_SPEC = _switch(HIDE_SPECIAL, "hide_special")  # encoders: hide [CLS]/[SEP]
MERGE_WORDS_SPEC = _switch(MERGE_WORDS, "words")  # encoders: merge subwords into words
# the Explain view's are declared beside its widgets in ui/explain_view.py
SPECS = (KIND, LAYER, HEAD, VIEW, COMPARE_KIND, COMPARE_LAYER, COMPARE_HEAD, RESCALE_FACTOR, HIDE_SPECIAL_SPEC,
         MERGE_WORDS_SPEC, *EXPLAIN_SPECS)


def _ablated_heads(value: object, state) -> list[tuple[str, int, int]]:
    """The Ablation view's switched-off heads, if they exist in the current model."""
    heads = [tuple(item) for item in value]
    layers, per_layer = selected_model_shape()
    if any(kind not in KINDS or not 0 <= layer < layers or not 0 <= head < per_layer for kind, layer, head in heads):
        raise ValueError("a head that this model does not have")
    return heads


KEPT_ONLY = {"stats_average": lambda value, state: boolean(str(value)), "ablate_heads": _ablated_heads}

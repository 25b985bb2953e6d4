"""The cell questions' maps (issue 55): each measure returns the one attention map its stop's page draws, with the
tokens on both axes, as a CellMap (classroom/measures/cells.py, which finds the right cells): a head of the attention
page, the decoding page's cross-attention at its layer, the LLM-heads page's top induction head on the copy prompt."""
from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from classroom.measures.cells import CellMap
from classroom.measures.llm import INDUCTION_VIEW, shared_copy_map, shared_induction
from classroom.measures.registry import STOP_MODEL, MeasureError, Phrase, StopView, measure
from classroom.measures.translation import analysed
from model.explain.head_finder import default_kind
from model.explain.induction import COPY_PROMPT, top_heads
from model.families import LabModel
from model.gguf_weights import SMOLLM2_NAME
from model.sources import KindMaps, as_float32

ATTENTION_VIEW = ("sentence", "kind", "layer", "head")  # the attention page's head: its text, kind, layer and head
DECODING_VIEW = ("sentence", "dec_layer", "dec_head")  # the decoding page's cross-attention: its layer and head(s)


def _head(maps: KindMaps, layer: int, head: int) -> np.ndarray:
    """maps' (T_q, T_k) weights of one head; MeasureError when the model has no such head."""
    layers, heads = maps.weights.shape[:2]
    if not (0 <= layer < layers and 0 <= head < heads):
        raise MeasureError(Phrase.of("lessons.no_such_head", answer=f"L{layer + 1} H{head + 1}", layers=layers,
                                     heads=heads))
    return as_float32(maps.weights[layer, head])


@measure("attention_cell", answers="cell", model=STOP_MODEL, reads=ATTENTION_VIEW)
def attention_cell(lab: LabModel, view: StopView, args: Mapping) -> CellMap:
    """The attention page's head at the stop (its kind, layer and head) on the stop's sentence, as its heatmap draws
    it (any model with heads: an encoder's word pieces with [CLS] and [SEP], a translator's kinds)."""
    sentence = str(view.get("sentence") or "")
    if not sentence:
        raise MeasureError(Phrase.of("lessons.needs_sentence"))
    found = lab.analyse(sentence)
    kind = view.get("kind")
    try:
        kind = kind if kind in found.maps else default_kind(found, lab.layout)
    except ValueError as error:  # a model without heads
        raise MeasureError(str(error)) from None
    maps = found.maps[kind]
    weights = _head(maps, int(view.get("layer") or 0), int(view.get("head") or 0))
    return CellMap(weights, tuple(maps.query_tokens), tuple(maps.key_tokens))


@measure("decoding_cross_cell", answers="cell", model=STOP_MODEL, reads=DECODING_VIEW)
def decoding_cross_cell(lab: LabModel, view: StopView, args: Mapping) -> CellMap:
    """The decoding page's cross-attention at its layer: one head's, or the mean of the layer's heads when it shows
    them all; rows the French tokens the decode writes (row n: step n), columns the English source tokens."""
    found = analysed(lab, view)
    if "cross" not in found.maps:  # a GRU's one alignment: no heads
        raise MeasureError(Phrase.of("lessons.needs_transformer"))
    maps, layer, head = found.maps["cross"], int(view.get("dec_layer") or 0), view.get("dec_head")
    if head is None or head == "all":
        _head(maps, layer, 0)  # the layer is there (MeasureError otherwise)
        weights = as_float32(maps.weights[layer]).mean(0)  # one head: itself
    else:
        weights = _head(maps, layer, int(head))
    return CellMap(weights, tuple(maps.query_tokens), tuple(maps.key_tokens))


@measure("induction_copy_cell", answers="cell", model=SMOLLM2_NAME, reads=INDUCTION_VIEW)
def induction_copy_cell(lab: LabModel, view: StopView, args: Mapping) -> CellMap:
    """The strongest induction head of the stop's repeated sequence (the LLM-heads page's top head) on the copy
    prompt, "The cat sat on the mat. The cat sat on the": its whole causal map, as the page's copy section reads it."""
    loaded = lab.network
    result, _ = shared_induction(loaded, int(view["ind_len"]), int(view["ind_seed"]))
    layer, head, _ = top_heads(result.scores, 1)[0]
    tokens = tuple(loaded.token_texts(loaded.encode(COPY_PROMPT)))
    return CellMap(shared_copy_map(loaded, layer, head), tokens, tokens)

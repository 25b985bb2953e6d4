"""The attention page's maps of one kind, as drawn: model.sources.KindMaps with the encoder toggles applied, and the
title, file name and CSV of one head. Every view of the page (and the Explain view) takes a KindMaps.

Its own module so that the views it is handed to import it, not the page module that draws them.
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd

from i18n import tr
from model.capabilities import EMBEDDING
from model.sources import AnalysedInput, KindMaps, hide_tokens, merge_word_pieces
from ui.attention.ids import attention_kind_label
from ui.attention.switches import HIDE_SPECIAL_SPEC, MERGE_WORDS_SPEC
from viz.attention import attention_table
from ui.language import words_for


def drawn_maps(analysed: AnalysedInput, kind: str, raw: bool = False) -> KindMaps:
    """The kind's maps as the encoder toggles (hide [CLS]/[SEP], merge subwords) show them; raw=True: every token, as
    the model computed them (what rescaling re-softmaxes)."""
    maps = analysed.maps[kind]
    if raw or not analysed.can(EMBEDDING):
        return maps
    encoding = analysed.encoding
    word_ids = encoding.word_ids
    if HIDE_SPECIAL_SPEC.get():
        keep = [not special for special in encoding.special]
        maps = hide_tokens(maps, keep)
        word_ids = [w for w, k in zip(word_ids, keep) if k]
    if MERGE_WORDS_SPEC.get():
        maps = merge_word_pieces(maps, word_ids)
    return maps


def head_title(maps: KindMaps, layer: int, head: int) -> str:
    return tr("attention.head_title", kind=attention_kind_label(maps.kind), layer=layer + 1, head=head + 1)


def head_file_name(maps: KindMaps, layer: int, head: int) -> str:
    """Export file name of one head's chart."""
    return f"attention_{maps.kind}_L{layer + 1}_H{head + 1}"


def weights_table(maps: KindMaps, layer: int, head: int) -> Callable[[], pd.DataFrame]:
    """The builder of the head's CSV: its weights (T_q, T_k) with token-labelled rows and columns. It holds a copy of
    that head only: a CSV button's builder outlives the run in the session, and holding these maps would keep a long
    text's whole analysis per session after the result store let it go (runtime/result_cache.py)."""
    return head_table(maps.weights[layer, head], maps.query_tokens, maps.key_tokens)


def head_table(weights: np.ndarray, query_tokens: list[str], key_tokens: list[str]) -> Callable[[], pd.DataFrame]:
    """A CSV builder for one (T_q, T_k) map that holds its own copy (never a view of a whole analysis's arrays)."""
    weights, queries, keys = np.array(weights, dtype=np.float32), list(query_tokens), list(key_tokens)
    return lambda: attention_table(weights, queries, keys, words=words_for("attention"))

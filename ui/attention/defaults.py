"""What the attention page opens on, and the one line that says why: the view a teacher shows first."""
from __future__ import annotations

import numpy as np
import streamlit as st

from i18n import tr
from model.metrics import sharpest_content_head, sharpest_head
from model.sources import KindMaps, as_float32, source_block_shares
from ui.attention.specs import HEAD, KIND, LAYER

TEACHING_KIND = "cross"  # encoder-decoder attention: which source words each written word reads


def open_on_teaching_view(cross: np.ndarray) -> None:
    """A first visit (no link, no kept view) opens cross-attention, weights (L, h, T, S), on its sharpest head for this
    sentence.

    Chosen from the head statistics (lowest mean entropy), not fixed: another model or a retrained one picks its
    own. A link that names a layer or head but no kind meant the first kind of the list (encoder self-attention).
    """
    if KIND.is_set():
        return
    if LAYER.is_set() or HEAD.is_set():
        KIND.set("encoder_self")
        return
    layer, head, _ = sharpest_head(cross)
    _open_head(layer, head, kind=TEACHING_KIND)


def _open_head(layer: int, head: int, kind: str | None = None) -> None:
    if kind is not None:
        KIND.set(kind)
    LAYER.set(layer)
    HEAD.set(head)


def why_this_head(kind: str, weights, layer: int, head: int) -> None:
    """One line under the pickers while the head shown is the sharpest cross-attention head (weights (L, h, T, S))."""
    if kind != TEACHING_KIND:
        return
    best_layer, best_head, entropy = sharpest_head(as_float32(weights))
    if (layer, head) == (best_layer, best_head):
        st.caption(tr("lecture.why_this_head", layer=layer + 1, head=head + 1, heads=weights.shape[0] * weights.shape[1],
                      entropy=f"{entropy:.2f}"))


def open_on_source_block_head(maps: KindMaps) -> None:
    """A first visit (no link, no kept view) to a causal map with a source block (a decoder-only translator) opens
    the head whose output rows put the most weight on the source words: where its cross-attention went."""
    if LAYER.is_set() or HEAD.is_set():
        return
    shares = source_block_shares(maps)  # (L, h)
    layer, head = divmod(int(shares.argmax()), shares.shape[1])
    _open_head(layer, head)


def open_encoder_on_teaching_head(weights, special: list[bool]) -> None:
    """A first visit to an encoder (no link, no kept view) opens the head that links words most sharply (not the
    [CLS]/[SEP] sinks); weights (L, h, T, T) of its self-attention."""
    if LAYER.is_set() or HEAD.is_set():
        return
    layer, head, _ = sharpest_content_head(weights, special)
    _open_head(layer, head)


def why_this_encoder_head(weights, special: list[bool], layer: int, head: int) -> None:
    """One line under the pickers while the head shown is the one open_encoder_on_teaching_head chose."""
    best_layer, best_head, share = sharpest_content_head(weights, special)
    if (layer, head) == (best_layer, best_head):
        st.caption(tr("lecture.why_this_encoder_head", layer=layer + 1, head=head + 1,
                      heads=weights.shape[0] * weights.shape[1], share=f"{share:.0%}"))

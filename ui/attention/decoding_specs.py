"""Specs of the decoding page (app_pages/decoding.py): the step and which cross-attention heads are shown."""
from __future__ import annotations

from ui.state import selected_attention_layout
from ui.widget_spec import WidgetSpec

PAGE = ("decoding",)
ALL_HEADS = "all"  # the head choice that shows every head's row (and the mean of the decoder's self-attention)
# A link is read before the sentence is translated, so it only knows that a step counts from 1; the page keeps the
# step within the translation's length.
STEP = WidgetSpec("decode_step", "step", 1, PAGE, low=1, high=10_000, convert=int)


def _cross_shape(state) -> tuple[int, int]:
    """(layers, heads) of the sidebar's model's cross-attention, the decoding page's maps; (0, 0) for a GRU."""
    return selected_attention_layout(state).get("cross", (0, 0))


LAYER = WidgetSpec("dec_layer", "dec_layer", 0, PAGE, low=0, high=lambda state: _cross_shape(state)[0] - 1,
                   convert=int, counted=True)
HEAD = WidgetSpec("dec_head", "dec_head", ALL_HEADS, PAGE,
                  options=lambda state: [ALL_HEADS, *range(_cross_shape(state)[1])],
                  convert=lambda text: ALL_HEADS if text == ALL_HEADS else int(text), counted=True)
SPECS = (STEP, LAYER, HEAD)

"""Specs of the attention-step-by-step page (app_pages/attention_steps.py): the single head's sizes, seed and mask,
then the multi-head section's. The number of tokens comes before the padded count: its bound depends on it."""
from __future__ import annotations

from model.foundations.attention_steps import MASKS
from ui.widget_spec import PageSection, WidgetSpec, seed_spec

PAGE = ("attention_steps",)
TOKENS = WidgetSpec("steps_tokens", "tokens", 4, PAGE, low=2, high=6, convert=int)
D_K = WidgetSpec("steps_dk", "steps_dk", 3, PAGE, low=1, high=6, convert=int)
SEED = seed_spec("steps_seed", "seed", PAGE)
MASK = WidgetSpec("steps_mask", "mask", "none", PAGE, options=MASKS)
PADDED = WidgetSpec("steps_padded", "padded", 1, PAGE, low=0, high=lambda state: TOKENS.current(state) - 1,
                    convert=int, drawn_when=lambda state: MASK.current(state) == "padding")
HEADS = WidgetSpec("mh_heads", "heads", 2, PAGE, options=(1, 2, 4), convert=int)
D_MODEL = WidgetSpec("mh_dmodel", "d_model", 8, PAGE, options=(4, 8, 16), convert=int)
MULTI_HEAD_MASK = WidgetSpec("mh_mask", "mh_mask", "none", PAGE, options=MASKS)
SPECS = (TOKENS, D_K, SEED, MASK, PADDED, HEADS, D_MODEL, MULTI_HEAD_MASK)
# one head: its inputs (Q, K, V, the mask), its steps (QKᵀ, ÷√d_k, mask, softmax, ×V); then multi-head attention
SECTIONS = (PageSection("single_head"), PageSection("steps"), PageSection("multi_head"))

"""Specs of the LayerNorm-vs-BatchNorm page (app_pages/normalization.py). The tensor's sizes come before the
highlighted value: its bounds depend on them."""
from __future__ import annotations

from model.foundations.normalization import NORM_KINDS
from ui.widget_spec import WidgetSpec, seed_spec

PAGE = ("normalization",)
BATCH = WidgetSpec("norm_batch", "batch", 4, PAGE, low=1, high=8, convert=int)
LENGTH = WidgetSpec("norm_len", "len", 6, PAGE, low=1, high=12, convert=int)
FEATURES = WidgetSpec("norm_d", "features", 6, PAGE, low=2, high=16, convert=int)
SEED = seed_spec("norm_seed", "norm_seed", PAGE)
KIND = WidgetSpec("norm_kind", "norm", "layer", PAGE, options=NORM_KINDS)
# the highlighted value: sequence, position and feature, 0-based (shown 1-based)
SEQUENCE = WidgetSpec("norm_seq", "norm_seq", 0, PAGE, low=0, high=lambda state: BATCH.current(state) - 1, convert=int)
POSITION = WidgetSpec("norm_pos", "norm_pos", 0, PAGE, low=0, high=lambda state: LENGTH.current(state) - 1,
                      convert=int)
FEATURE = WidgetSpec("norm_feature", "norm_feat", 0, PAGE, low=0, high=lambda state: FEATURES.current(state) - 1,
                     convert=int)
SPECS = (BATCH, LENGTH, FEATURES, SEED, KIND, SEQUENCE, POSITION, FEATURE)

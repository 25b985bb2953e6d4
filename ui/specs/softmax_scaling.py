"""Specs of the softmax-scaling page (app_pages/softmax_scaling.py); its choices are model/foundations/scaling.py's."""
from __future__ import annotations

from model.foundations.scaling import SCALING_DKS, SCALING_V1_FACTORS, scaling_scale_options, transformer_scale
from ui.widget_spec import PageSection, WidgetSpec, seed_spec

PAGE = ("softmax_scaling",)
D_K = WidgetSpec("scaling_dk", "dk", 64, PAGE, options=SCALING_DKS, convert=int)
V1_FACTOR = WidgetSpec("scaling_v1_factor", "v1x", 10, PAGE, options=SCALING_V1_FACTORS, convert=int)
# Only the 1/√d_k choice depends on d_k: a scale no longer offered was the old d_k's, so it follows d_k.
SCALE = WidgetSpec("scaling_scale", "scale", 1.0, PAGE, options=lambda state: scaling_scale_options(D_K.current(state)),
                   convert=float, refit=lambda state: transformer_scale(D_K.current(state)))
SEED = seed_spec("scaling_seed", "scores_seed", PAGE)
SPECS = (D_K, V1_FACTOR, SCALE, SEED)
# 1 · dot products grow with d_k, 2 · softmax of v₁ scaled up saturates, 3 · one row of scores at a chosen scale
SECTIONS = (PageSection("dot_products"), PageSection("saturation"), PageSection("row"))

"""Specs of the residual-connection page (app_pages/residual.py)."""
from __future__ import annotations

from model.foundations.residual import ACTIVATIONS
from ui.widget_spec import WidgetSpec, boolean, seed_spec

PAGE = ("residual",)
DEPTH = WidgetSpec("res_depth", "depth", 32, PAGE, low=2, high=64, convert=int)
ACTIVATION = WidgetSpec("res_activation", "act", "tanh", PAGE, options=ACTIVATIONS)
SEED = seed_spec("res_seed", "res_seed", PAGE)
LAYER_NORM = WidgetSpec("res_ln", "ln", False, PAGE, options=(False, True), convert=boolean)
SPECS = (DEPTH, ACTIVATION, SEED, LAYER_NORM)

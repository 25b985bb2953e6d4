"""Specs of the positional-encoding page (app_pages/positional.py). The length comes before the offset and the
position: their bounds depend on it."""
from __future__ import annotations

from ui.session import WidgetKey
from ui.widget_spec import PageSection, WidgetSpec

PAGE = ("positional",)
D_MODEL = WidgetSpec("pe_d_model", "pe_d", 64, PAGE, low=4, high=256, step=2, convert=int)  # sin/cos pairs
LENGTH = WidgetSpec("pe_length", "pe_len", 64, PAGE, low=8, high=256, convert=int)
OFFSET = WidgetSpec("pe_k", "pe_k", 5, PAGE, low=1, high=lambda state: LENGTH.current(state) - 1, convert=int)
POSITION = WidgetSpec("pe_position", "pe_pos", 5, PAGE, low=0, high=lambda state: LENGTH.current(state) - 1,
                      convert=int)
SPECS = (D_MODEL, LENGTH, OFFSET, POSITION)
DIMS = WidgetKey("pe_dims")  # the curves' dimensions: kept while the page is not shown, not in links


def _dimensions(value: object, state) -> list[int]:
    """The chosen curves, if the current d_model has them."""
    dims = [int(d) for d in value]
    if any(not 0 <= d < D_MODEL.current(state) for d in dims):
        raise ValueError("a dimension that this d_model does not have")
    return dims


FOLDED = ("dials", "similarity", "rotation", "rope", "trained")  # the page's folded sections, built only while open


def folded_key(name: str) -> str:
    """The key of a folded section's expander (ui/charts.folded_section): open while its value is true."""
    return f"pe_open_{name}"


SECTIONS = (PageSection("matrix"), PageSection("curves"),
            *(PageSection(name, folded_key=folded_key(name)) for name in FOLDED))
KEPT_ONLY = {DIMS.key: _dimensions, **{folded_key(name): lambda value, state: bool(value) for name in FOLDED}}

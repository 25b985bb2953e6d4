"""Specs of the information-flow section of the page "How an LLM finds its answer" (ui/llm/flow.py): its prompt and the
smallest share of a node an edge must carry to be drawn (the route's threshold τ, Ferrando & Voita 2024, §3)."""
from __future__ import annotations

from ui.specs.llm_answer import DEFAULT_LENS_TEXT
from ui.widget_spec import WidgetSpec, sentence_text

PAGE = ("llm_answer",)
# A fact the lens section reads too: its route runs from " France" and " capital" up to the last position.
DEFAULT_FLOW_TEXT = DEFAULT_LENS_TEXT
THRESHOLDS = (0.02, 0.03, 0.05, 0.08, 0.1, 0.15, 0.2, 0.3)
FLOW_TEXT = WidgetSpec("answer_flow_text", "flow_text", DEFAULT_FLOW_TEXT, PAGE, convert=sentence_text)
FLOW_THRESHOLD = WidgetSpec("answer_flow_threshold", "flow_min", 0.1, PAGE, options=THRESHOLDS, convert=float)
SPECS = (FLOW_TEXT, FLOW_THRESHOLD)

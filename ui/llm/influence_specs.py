"""Specs of the influence section of the page "How an LLM finds its answer" (app_pages/llm_answer.py; its other
widgets are ui/specs/llm_answer.py's): which of the model's five most likely next tokens the three methods explain,
by its rank (1, the model's own prediction, by default)."""
from __future__ import annotations

from model.explain.logit_lens import LENS_TOP_K
from ui.widget_spec import WidgetSpec

PAGE = ("llm_answer",)
# The answer's rank among the next tokens after the lens's prompt: the lens keeps the top LENS_TOP_K of each cell.
INFLUENCE_RANK = WidgetSpec("answer_influence_rank", "influence_rank", 1, PAGE, low=1, high=LENS_TOP_K, convert=int)
SPECS = (INFLUENCE_RANK,)

"""Specs of the LLM heads page (app_pages/llm_heads.py): the sink text, the sliding window, the induction sequence."""
from __future__ import annotations

from model.llama import MAX_TOKENS
from ui.widget_spec import PageSection, WidgetSpec, seed_spec, sentence_text

PAGE = ("llm_heads",)
# A repeated ordinary sentence: past layer 2 most heads put about half their weight on its first token.
DEFAULT_SINK_TEXT = " ".join(["The teacher reads a short story to the class."] * 6)
SINK_TEXT = WidgetSpec("llm_sink_text", "sink_text", DEFAULT_SINK_TEXT, PAGE, convert=sentence_text)
WINDOW = WidgetSpec("llm_window", "window", 4, PAGE, low=2, high=32, convert=int)
# n, the repeated sequence's length: its 2n tokens reach MAX_TOKENS, the longest text the LLM pages read.
INDUCTION_LENGTH = WidgetSpec("llm_induction_length", "ind_len", 40, PAGE, options=(10, 20, 40, 80, MAX_TOKENS // 2),
                              convert=int)
INDUCTION_SEED = seed_spec("llm_induction_seed", "ind_seed", PAGE)
SPECS = (SINK_TEXT, WINDOW, INDUCTION_LENGTH, INDUCTION_SEED)
SECTIONS = (PageSection("sinks"), PageSection("window"), PageSection("induction"), PageSection("copy"))

"""Specs of the LLM heads page (app_pages/llm_heads.py): the sink text, the sliding window, the induction sequence."""
from __future__ import annotations

import re

from model.llama import MAX_TOKENS
from ui.attention.finder_specs import COREFERENCE, contrast
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
# The head finder's text, its second text, the head it opened (the two-texts view and the head across many texts show
# it) and how the many texts' points are coloured (ui/llm_heads/finder.py); the query and key tokens are the
# attention page's (ui/attention/finder_specs.py), so a lesson stop names them the same way on both pages.
FIND_TEXT = WidgetSpec("llm_find_text", "find_text", COREFERENCE, PAGE, convert=sentence_text)
FIND_TEXT_B = WidgetSpec("llm_find_text_b", "find_text_b", lambda state: contrast(FIND_TEXT.current(state)), PAGE,
                         convert=sentence_text)


def head_label_text(text: str) -> str:
    """A head as the page names it, "L4 H2" (1-based): checked against the model where it is drawn, so that reading
    a link never loads the model. Empty: none named (the finder's top head)."""
    if text and not re.fullmatch(r"L[1-9][0-9]{0,2} H[1-9][0-9]{0,2}", text):
        raise ValueError(f"{text!r} is not a head like 'L4 H2'")
    return text


# empty: the finder's top head
QK_HEAD = WidgetSpec("llm_qk_head", "qk_head", "", PAGE, convert=head_label_text)
COLOUR_BY = ("position", "kind")
QK_COLOUR = WidgetSpec("llm_qk_colour", "qk_colour", COLOUR_BY[0], PAGE, options=COLOUR_BY)
SPECS = (SINK_TEXT, WINDOW, INDUCTION_LENGTH, INDUCTION_SEED, FIND_TEXT, FIND_TEXT_B, QK_HEAD, QK_COLOUR)
SECTIONS = (PageSection("sinks"), PageSection("window"), PageSection("induction"), PageSection("copy"),
            PageSection("finder"), PageSection("across"))

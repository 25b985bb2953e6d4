"""Specs of the page "How an LLM finds its answer" (app_pages/llm_answer.py): the logit lens's text and chosen token,
and the activation patching's clean and corrupted prompts, answer and wrong token. Token fields keep their leading
space (" Paris" is one token of SmolLM2, "Paris" another); an empty token field means: the model's own prediction
(the lens). The logit difference is a switch of its own, not an empty wrong token: a link leaves empty values out, so
an emptied field would open on its default again."""
from __future__ import annotations

from ui.widget_spec import PageSection, WidgetSpec, boolean, sentence_text

PAGE = ("llm_answer",)
# A fact whose answer forms late: SmolLM2-135M-Instruct's top token after it is " Paris" (77 %) only in the last row
# of the lens: its commitment is row 30 of 30 (" Paris" is 396th at layer 24, 3rd at layer 29; measured with
# model.explain.logit_lens).
DEFAULT_LENS_TEXT = "The capital of France is"
# An indirect-object sentence (Wang et al. 2022, §2), and the same with the two names swapped: 11 tokens each, and
# p(" Mary") is 0.91 after the clean prompt, 0.001 after the corrupted one. Shorter than the paper's "When Mary and
# John went to the store, John gave a drink to" (14 tokens), whose two sweeps cost about 1.6× as much.
# " John" is the subject, the wrong answer. The answer lesson (lessons/answer.toml) reads the same pair.
DEFAULT_CLEAN = "When Mary and John met, John gave a drink to"
DEFAULT_CORRUPT = "When John and Mary met, Mary gave a drink to"
DEFAULT_ANSWER, DEFAULT_WRONG = " Mary", " John"

# The longest text the lens reads: its map is (L+1) × T cells, each hover naming 5 tokens; past 64 positions neither
# the cells nor their labels can be read on a screen.
LENS_MAX_TOKENS = 64
# The lens's rows on the page's model, SmolLM2-135M-Instruct: its embeddings and its 30 blocks' outputs
# (tests/test_page_llm_answer.py holds it to the loaded model's depth).
LENS_ROWS = 31

LENS_TEXT = WidgetSpec("answer_lens_text", "lens_text", DEFAULT_LENS_TEXT, PAGE, convert=sentence_text)
LENS_TOKEN = WidgetSpec("answer_lens_token", "lens_token", "", PAGE, convert=sentence_text)
CLEAN = WidgetSpec("answer_clean", "clean", DEFAULT_CLEAN, PAGE, convert=sentence_text)
CORRUPT = WidgetSpec("answer_corrupt", "corrupt", DEFAULT_CORRUPT, PAGE, convert=sentence_text)
ANSWER = WidgetSpec("answer_token", "answer", DEFAULT_ANSWER, PAGE, convert=sentence_text)
# Wang et al. 2022's measure, logit(answer) − logit(wrong), beside p(answer); the wrong token is asked for only with it.
DIFFERENCE = WidgetSpec("answer_difference", "difference", True, PAGE, options=(False, True), convert=boolean)


def _with_difference(state) -> bool:
    return DIFFERENCE.current(state)


WRONG = WidgetSpec("answer_wrong", "wrong", DEFAULT_WRONG, PAGE, convert=sentence_text, drawn_when=_with_difference)
# The lens cell whose top tokens are listed under the map (a click on the map picks it too): row 0 the embeddings, row
# l block l's output; the position counted from 0, as the map's columns are. A position past the text's end is its
# last: the default, the position whose next token the prompt asks for, on any text.
LENS_ROW = WidgetSpec("answer_lens_row", "lens_row", LENS_ROWS - 1, PAGE, options=tuple(range(LENS_ROWS)), convert=int)
LENS_POSITION = WidgetSpec("answer_lens_position", "lens_position", LENS_MAX_TOKENS - 1, PAGE, low=0,
                           high=LENS_MAX_TOKENS - 1, convert=int)
SPECS = (LENS_TEXT, LENS_TOKEN, LENS_ROW, LENS_POSITION, CLEAN, CORRUPT, ANSWER, DIFFERENCE, WRONG)
# 1 · the logit lens (nostalgebraist 2020), 2 · activation patching of the residual stream (Meng et al. 2022),
# 3 · per head at the last position (Wang et al. 2022), 4 · direct logit attribution (Elhage et al. 2021),
# 5 · the lens's prompt tokens' influence by three methods (ui/llm/influence.py; its answer's spec: influence_specs.py),
# 6 · the information-flow graph (Ferrando & Voita 2024; its specs: ui/llm/flow_specs.py)
SECTIONS = (PageSection("lens"), PageSection("patching"), PageSection("heads"), PageSection("attribution"),
            PageSection("influence"), PageSection("flow"))

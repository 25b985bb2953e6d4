"""Specs of the LLM page (app_pages/llm.py): the prompt, the chat form, and how the next token is chosen."""
from __future__ import annotations

from dataclasses import replace

from ui.widget_spec import PageSection, WidgetSpec, boolean, seed_spec, sentence_text

PAGE = ("llm",)
DEFAULT_PROMPT = "The Transformer is a neural network that"  # greedy: " can be trained to recognize patterns in text."
GREEDY, SAMPLED = "greedy", "sampled"
TEMPERATURES = (0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.5, 2.0)
TOP_KS = (1, 3, 5, 10, 20, 50, 100)
PROMPT = WidgetSpec("llm_prompt", "llm_prompt", DEFAULT_PROMPT, PAGE, convert=sentence_text)
CHAT = WidgetSpec("llm_chat", "llm_chat", False, PAGE, options=(False, True), convert=boolean)
CHOICE = WidgetSpec("llm_choice", "llm_choice", GREEDY, PAGE, options=(GREEDY, SAMPLED))


def _sampling(state) -> bool:
    """The temperature, top-k and seed are drawn only while the next token is sampled."""
    return CHOICE.current(state) == SAMPLED


TEMPERATURE = WidgetSpec("llm_temperature", "llm_temp", 0.8, PAGE, options=TEMPERATURES, convert=float,
                         drawn_when=_sampling)
TOP_K = WidgetSpec("llm_top_k", "llm_top_k", 50, PAGE, options=TOP_KS, convert=int, drawn_when=_sampling)
SEED = replace(seed_spec("llm_seed", "llm_seed", PAGE), drawn_when=_sampling)
SPECS = (PROMPT, CHAT, CHOICE, TEMPERATURE, TOP_K, SEED)
# 1 · generation step by step, 2 · the KV cache, 3 · grouped-query attention, 4 · branches (ui/llm/branches.py),
# 5 · heads switched off while it writes (ui/llm/switch_off.py, its specs in switch_off_specs.py)
SECTIONS = (PageSection("generation"), PageSection("kv_cache"), PageSection("gqa"), PageSection("branches"),
            PageSection("switch_off"))

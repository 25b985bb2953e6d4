"""Specs of the LLM page's branches (ui/llm/branches.py): how a fork branches, how many branches, how many tokens each
writes, and the seed of sampled branches. The fork's position is the session's (a token of its generation, which no
link holds)."""
from __future__ import annotations

from dataclasses import replace

from model.branches import MAX_BRANCHES, MAX_BRANCH_TOKENS
from ui.widget_spec import WidgetSpec, seed_spec

PAGE = ("llm",)
TOP, TOP_SAMPLED, TEMPERATURES = "top", "top_sampled", "temperatures"
# the temperatures side by side (issue 56): sharper than the model's own distribution, a little, and the model's own
BRANCH_TEMPERATURES = (0.4, 0.7, 1.0)
SAMPLED_TEMPERATURE = 0.7  # a top-k fork continued sampled: each branch after its forced token
SAMPLED_TOP_K = 50  # the generation page's default top-k
BRANCH_TOKENS = tuple(n for n in (4, 8, 12, 16, 24, 32) if n <= MAX_BRANCH_TOKENS)
# the top-k forks side by side, sampled last: that choice draws every widget of the section
MODE = WidgetSpec("llm_branch_mode", "branch_mode", TOP, PAGE, options=(TEMPERATURES, TOP, TOP_SAMPLED))


def _top(state) -> bool:
    return MODE.current(state) != TEMPERATURES


def _sampled(state) -> bool:
    return MODE.current(state) != TOP


COUNT = WidgetSpec("llm_branch_count", "branches", 3, PAGE, low=2, high=MAX_BRANCHES, convert=int, drawn_when=_top)
TOKENS = WidgetSpec("llm_branch_tokens", "branch_tokens", 12, PAGE, options=BRANCH_TOKENS, convert=int)
SEED = replace(seed_spec("llm_branch_seed", "branch_seed", PAGE), drawn_when=_sampled)
SPECS = (MODE, COUNT, TOKENS, SEED)

"""Specs of the LLM page's section "Heads switched off while it writes" (ui/llm/switch_off.py): the heads and how
many tokens each side writes. Heads are (layer, head) 0-based in the session, "19.7,18.4" (1-based) in links."""
from __future__ import annotations

from model.switch_off import MAX_HEADS, heads_text, parse_heads
from ui.widget_spec import WidgetSpec

PAGE = ("llm",)
STEP_CHOICES = (4, 8, 16, 24, 32)  # new tokens per side, at most model.switch_off.MAX_STEPS


class _HeadLists:
    """Any list of at most MAX_HEADS distinct (layer, head) pairs (`in` checks); the page keeps those its model has.
    Checked without the model, so that reading a link never loads it."""

    def __contains__(self, value: object) -> bool:
        heads = [tuple(item) for item in value] if isinstance(value, list | tuple) else None
        return heads is not None and len(heads) <= MAX_HEADS and len(set(heads)) == len(heads) and all(
            len(h) == 2 and all(isinstance(n, int) and n >= 0 for n in h) for h in heads)

    def __iter__(self):
        return iter(())  # not a list of choices: the multiselect lists the model's heads


def _heads_from_text(text: str) -> list[tuple[int, int]]:
    return list(parse_heads(text))


HEADS_OFF = WidgetSpec("llm_off_heads", "off_heads", lambda state: [], PAGE, options=lambda state: _HeadLists(),
                       convert=_heads_from_text, text=lambda heads: heads_text(tuple(tuple(h) for h in heads)))
STEPS = WidgetSpec("llm_off_steps", "off_steps", 16, PAGE, options=STEP_CHOICES, convert=int)
SPECS = (HEADS_OFF, STEPS)

"""The numbers a lesson stop's claims state, computed from attention weights and the foundation demos (pure numpy).

Each returns one number; the claim measures of classroom/measures call them at a stop's view, the lesson file says
which side of a bound the number must be on ([[stop.claim]]), the lesson bar shows the claim with its figure
(ui/lessons/claims.py) and tests/test_lesson_claims.py checks every claim of every shipped lesson, so a retrained
model or an edited text that breaks one fails CI.
Layers and heads are 0-based here; a head may also be "max" or "min": the largest or smallest value over the
layer's heads ("no layer-1 head puts more than …", "every layer-2 head puts at least …").
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from model.foundations.normalization import NormalizationDemo

HeadChoice = int | str  # a 0-based head, or "max" / "min" over the layer's heads


def _over_heads(values: np.ndarray, head: HeadChoice) -> float:
    """values (h,) -> the head's value, or the max/min over heads."""
    if head == "max":
        return float(values.max())
    if head == "min":
        return float(values.min())
    return float(values[int(head)])


def position_share(weights: np.ndarray, layer: int, head: HeadChoice, offset: int) -> float:
    """Self-attention weights (L, h, T, T): the mean over query rows i of the weight on key i + offset (−1 the
    previous token, 0 the token itself, +1 the next), over the rows where that key exists."""
    t = weights.shape[-1]
    rows = [i for i in range(weights.shape[-2]) if 0 <= i + offset < t]
    if not rows:
        raise ValueError("the sentence is too short for this offset")
    shares = np.mean([weights[layer, :, i, i + offset] for i in rows], axis=0)  # (h,)
    return _over_heads(shares, head)


def row_peak(weights: np.ndarray, layer: int, head: HeadChoice) -> float:
    """Weights (L, h, T_q, T_k): the mean over query rows of the largest weight in the row (1: one key per row)."""
    return _over_heads(weights[layer].max(-1).mean(-1), head)


def linking_weight(weights: np.ndarray, query: int, key: int, layer: int, head: HeadChoice) -> float:
    """Weights (L, h, T_q, T_k): the weight from query row `query` on key column `key`."""
    return _over_heads(weights[layer, :, query, key], head)


def exact_match_at_length(by_length: Sequence[dict], words: int) -> float:
    """A model's held-out exact match in the length bucket (min_words..max_words) holding `words` words."""
    for bucket in by_length:
        if bucket["min_words"] <= words <= bucket["max_words"]:
            return float(bucket["exact_match"])
    raise ValueError(f"no length bucket holds {words} words")


def zeroed_fraction(demo: NormalizationDemo) -> float:
    """Share of the real outputs a normalization forces to exactly 0 (statistics of zero variance)."""
    return demo.zeroed_fraction


def pooled_count(demo: NormalizationDemo) -> float:
    """The fewest real values any one of the normalization's statistics is taken over."""
    counts = demo.count[demo.count >= 1]
    return float(counts.min()) if counts.size else 0.0


def holds(value: float, at_least: float | None, at_most: float | None) -> bool:
    return (at_least is None or value >= at_least) and (at_most is None or value <= at_most)

"""Peer instruction's numbers, pure Python: the rule of thumb on round 1's share correct, the normalized gain.

Rule of thumb (Crouch & Mazur 2001, Am. J. Phys. 69:970; Crouch et al. 2004, Am. J. Phys. 72:835): when about 30%
to 70% of the class answers right alone, a discussion with a neighbour helps most; below, the idea needs teaching
again; above, the class has it and moves on. Normalized gain (Hake 1998, Am. J. Phys. 66:64):
⟨g⟩ = (post − pre) / (1 − pre), the share of what could be gained that was gained.
"""
from __future__ import annotations

DISCUSS_LOW, DISCUSS_HIGH = 0.30, 0.70


def rule_of_thumb(share_correct: float) -> str:
    """Round 1's share right (0..1) -> 'reteach' (below 30%), 'discuss' (30%–70%), 'move_on' (above 70%)."""
    if share_correct < DISCUSS_LOW:
        return "reteach"
    if share_correct > DISCUSS_HIGH:
        return "move_on"
    return "discuss"


def normalized_gain(pre: float, post: float) -> float | None:
    """Hake's ⟨g⟩ from shares right before and after (0..1); None when everyone was right before (nothing to gain)."""
    if pre >= 1.0:
        return None
    return (post - pre) / (1.0 - pre)

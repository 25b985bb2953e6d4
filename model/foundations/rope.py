"""Rotary position embedding (Su et al. 2021, RoFormer, §3.2, eq. 13-16) with the LLM's own rotary code.

RoPE adds nothing to the embedding: it turns the query and the key of a head by their positions, each 2-D pair of
dimensions i by the angle p·θ_i (eq. 13 for one pair, eq. 14-15 for the block-diagonal R^d_{Θ,p}). Then
q_m·k_n = (R_m q)ᵀ(R_n k) = qᵀ R_{n−m} k (eq. 16): the score depends on the distance n − m only, not on where the
pair sits in the text. The rotation is model/llama.py's (rotary_cos_sin, apply_rotary: transformers' rotate-half
layout, where dimension i pairs with i + d_k/2 rather than the paper's 2i with 2i + 1; the same rotation, with the
dimensions listed in another order).

Shapes: P positions, d_k head width (even).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from model.foundations.positional import diagonal_spread
from model.llama import apply_rotary, rotary_cos_sin

# SmolLM2-135M's rotary base (its GGUF file's llama.rope.freq_base; a test reads it from the file) and head width:
# the page shows the rotation the shipped LLM applies. RoFormer's paper used 10000.
SMOLLM2_ROPE_BASE = 100_000.0
SMOLLM2_HEAD_DIM = 64


def rotate_by_position(x: torch.Tensor, positions: torch.Tensor, base: float) -> torch.Tensor:
    """x (d_k,) or (P, d_k) -> (P, d_k): the vector turned to each position, R^d_{Θ,p}·x (RoFormer eq. 14)."""
    cos, sin = rotary_cos_sin(positions, x.size(-1), base)  # (P, d_k) each
    return apply_rotary(x.expand(len(positions), -1), cos, sin)


def pair_angles(head_dim: int, base: float) -> np.ndarray:
    """(d_k/2,) θ_i = base^(−2i/d_k): radians that pair i turns per position (RoFormer's Θ, after eq. 15)."""
    return 1.0 / base ** (np.arange(0, head_dim, 2) / head_dim)


@dataclass(frozen=True)
class RopeAnalysis:
    """A query and a key turned to every position, and their scores, as numpy arrays."""

    head_dim: int
    base: float
    pairs: tuple[int, ...]  # the 2-D pairs drawn (index i: dimensions i and i + d_k/2)
    pair_angles: np.ndarray  # (len(pairs),) θ_i, radians per position
    query_pairs: np.ndarray  # (len(pairs), P, 2) (x_i, x_{i+d/2}) of R_p·q for p = 0 … P − 1
    scores: np.ndarray  # (P, P) [m, n] = (R_m q)·(R_n k), query at position m, key at n
    unrotated_score: float  # q·k without any rotation (both at position 0)
    diagonal_spread: float  # max over diagonals n − m = const of (max − min): 0 when the score is a function of n − m
    distance: int  # the example distance k
    at_distance: np.ndarray  # (P − k,) the score with the query at m = k … P − 1 and the key at n = m − k

    @property
    def largest_score(self) -> float:
        return float(np.abs(self.scores).max())


def analyse_rope(length: int, head_dim: int = SMOLLM2_HEAD_DIM, k: int = 1, base: float = SMOLLM2_ROPE_BASE,
                 pairs: tuple[int, ...] = (0, 4, 8), seed: int = 0) -> RopeAnalysis:
    """One random query q and key k (seeded), turned to positions 0 … length − 1 by the LLM's rotary code."""
    if head_dim % 2:
        raise ValueError(f"RoPE turns pairs of dimensions: d_k must be even, not {head_dim}")
    if not 0 < k < length:
        raise ValueError(f"the distance k must be between 1 and length − 1 = {length - 1}, not {k}")
    pairs = tuple(i for i in pairs if i < head_dim // 2)
    generator = torch.Generator().manual_seed(seed)
    q, key = torch.randn(2, head_dim, generator=generator)  # (d_k,) each, as a head's W_q x and W_k x would be
    positions = torch.arange(length)
    queries, keys = rotate_by_position(q, positions, base), rotate_by_position(key, positions, base)  # (P, d_k)
    scores = queries @ keys.T  # (P, P) in float32, as the model computes them
    half = head_dim // 2
    drawn = torch.stack([queries[:, [i, i + half]] for i in pairs]) if pairs else torch.zeros(0, length, 2)
    m = torch.arange(k, length)
    return RopeAnalysis(
        head_dim=head_dim, base=base, pairs=pairs, pair_angles=pair_angles(head_dim, base)[list(pairs)],
        query_pairs=drawn.numpy(), scores=scores.numpy(), unrotated_score=float(q @ key),
        diagonal_spread=diagonal_spread(scores.double()), distance=k, at_distance=scores[m, m - k].numpy())

"""Attention rollout (Abnar & Zuidema 2020, §3): Ā_l = mean_h A_l^h, Â_l = 0.5·Ā_l + 0.5·I, R_1 = Â_1,
R_l = Â_l·R_{l−1}. Self-attention only (encoder self, decoder masked self); cross-attention is out of scope.

Shapes: L layers, h heads, T tokens.
"""
from __future__ import annotations

import numpy as np


def attention_rollout(weights: np.ndarray) -> np.ndarray:
    """weights (L, h, T, T) of one self-attention stack -> R (L, T, T), the rolled-out matrix after each layer.

    R[l, i, j]: how much position i after layer l+1 draws from input token j. Rows sum to 1 wherever the
    attention rows did; a causal (lower-triangular) stack stays lower-triangular.
    """
    weights = np.asarray(weights)
    layers, _, length, width = weights.shape
    if length != width:
        raise ValueError(f"rollout needs self-attention (T_q == T_k), got {length} queries and {width} keys")
    # The head mean summed in float64 without a float64 copy of all the maps first: at 512 tokens SmolLM2's (30, 9,
    # 512, 512) maps in float64 would be 0.57 GB, copied before any work.
    mixed = 0.5 * weights.mean(axis=1, dtype=np.float64) + 0.5 * np.eye(length)  # (L, T, T): Â_l, the residual added
    rolled = np.empty_like(mixed)
    rolled[0] = mixed[0]
    for layer in range(1, layers):
        rolled[layer] = mixed[layer] @ rolled[layer - 1]
    return rolled

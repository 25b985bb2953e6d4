"""Scaled dot-product and multi-head attention broken into the stages a learner steps through.

Uses the same functions as the models (model.attention), so what is shown is what the models compute.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F

from model.attention import MultiHeadAttention, causal_mask, scaled_dot_product_attention

MASKS = ("none", "causal", "padding")


@dataclass
class AttentionStages:
    qk: np.ndarray  # (T_q, T_k) QKᵀ
    scaled: np.ndarray  # (T_q, T_k) QKᵀ/√d_k
    masked: np.ndarray  # (T_q, T_k) scaled with −inf where the mask hides a key
    weights: np.ndarray  # (T_q, T_k) softmax over keys
    output: np.ndarray  # (T_q, d_v) weights · V
    hidden: np.ndarray  # (T_q, T_k) True where masked


def build_mask(kind: str, t_q: int, t_k: int, padded_keys: int = 0) -> np.ndarray:
    """(T_q, T_k) boolean 'may attend' mask: none, causal (j <= i), or the last `padded_keys` keys hidden."""
    if kind == "none":
        return np.ones((t_q, t_k), dtype=bool)
    if kind == "causal":
        return causal_mask(max(t_q, t_k)).numpy()[:t_q, :t_k]
    if kind == "padding":
        allowed = np.ones((t_q, t_k), dtype=bool)
        if padded_keys:
            allowed[:, t_k - min(padded_keys, t_k):] = False
        return allowed
    raise ValueError(f"unknown mask {kind!r}; choose one of {', '.join(MASKS)}")


# Entries of the editable Q, K, V are bounded to ±INPUT_LIMIT: a typed 1e200 would make QKᵀ overflow to ±inf and
# softmax return NaN (inf − inf). (1e6)² · d_k stays far inside float64.
INPUT_LIMIT = 1e6


def bound_inputs(values: np.ndarray) -> np.ndarray:
    """NaN -> 0, ±inf and anything beyond ±INPUT_LIMIT -> ±INPUT_LIMIT (float64)."""
    values = np.nan_to_num(np.asarray(values, dtype=np.float64), nan=0.0, posinf=INPUT_LIMIT, neginf=-INPUT_LIMIT)
    return np.clip(values, -INPUT_LIMIT, INPUT_LIMIT)


def attention_stages(q: np.ndarray, k: np.ndarray, v: np.ndarray, allowed: np.ndarray) -> AttentionStages:
    """q (T_q, d_k), k (T_k, d_k), v (T_k, d_v), allowed (T_q, T_k) -> every stage of softmax(QKᵀ/√d_k + mask)V.

    Inputs are bounded first (bound_inputs), so every stage is finite for any number a student types.
    """
    qt, kt, vt = (torch.as_tensor(bound_inputs(a)) for a in (q, k, v))
    mask = torch.as_tensor(allowed)
    result = scaled_dot_product_attention(qt, kt, vt, mask=mask)
    scaled = result.scores.numpy()
    return AttentionStages(qk=scaled * math.sqrt(q.shape[-1]), scaled=scaled,
                           masked=np.where(allowed, scaled, -np.inf), weights=result.weights.numpy(),
                           output=result.output.numpy(), hidden=~allowed)


@dataclass
class MultiHeadStages:
    x: np.ndarray  # (T, d_model) input
    head_weights: np.ndarray  # (h, T, T) attention weights of each head
    head_outputs: np.ndarray  # (h, T, d_k) each head's weights · V_h
    concat: np.ndarray  # (T, d_model) heads side by side
    output: np.ndarray  # (T, d_model) concat · W_oᵀ + b_o
    module_output: np.ndarray  # (T, d_model) the same from MultiHeadAttention.forward, for comparison


def multi_head_stages(tokens: int, d_model: int, heads: int, mask_kind: str = "none", seed: int = 0) -> MultiHeadStages:
    """Self-attention of random inputs through a seeded MultiHeadAttention, split into its stages."""
    torch.manual_seed(seed)
    mha = MultiHeadAttention(d_model, heads).double().eval()
    x = torch.randn(1, tokens, d_model, dtype=torch.float64)
    allowed = torch.as_tensor(build_mask(mask_kind, tokens, tokens, padded_keys=1 if mask_kind == "padding" else 0))
    with torch.no_grad():
        split = lambda t: t.view(1, tokens, heads, d_model // heads).transpose(1, 2)  # (1, h, T, d_k)
        q, k, v = (split(F.linear(x, *mha.projection(name))) for name in "qkv")
        per_head = scaled_dot_product_attention(q, k, v, mask=allowed)
        concat = per_head.output.transpose(1, 2).reshape(1, tokens, d_model)
        output = F.linear(concat, *mha.projection("o"))
        module = mha(x, x, x, mask=allowed).output
    return MultiHeadStages(x[0].numpy(), per_head.weights[0].numpy(), per_head.output[0].numpy(), concat[0].numpy(),
                           output[0].numpy(), module[0].numpy())

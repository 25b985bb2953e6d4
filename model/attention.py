"""Scaled dot-product attention and multi-head attention that return their weights as values.

Shapes: B batch, h heads, T_q queries, T_k keys, d_k per-head width, d_model model width.
Masks are boolean with True meaning "may attend"; they broadcast to [B, h, T_q, T_k].
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn


@dataclass(frozen=True)
class AttentionResult:
    output: torch.Tensor  # (B, h, T_q, d_v) or (B, T_q, d_model) after projection
    weights: torch.Tensor | None  # (B, h, T_q, T_k), rows sum to 1 (or 0 when fully masked)
    scores: torch.Tensor | None  # (B, h, T_q, T_k), q·k/√d_k before masking and softmax
    heads: torch.Tensor | None = None  # (B, h, T_q, d_v): each head's weighted values before W_o, where kept


def causal_mask(size: int, device: torch.device | str | None = None) -> torch.Tensor:
    """(T, T) boolean mask: position i may attend to positions j <= i."""
    return torch.ones(size, size, dtype=torch.bool, device=device).tril()


def key_padding_from_tokens(tokens: torch.Tensor, pad_id: int) -> torch.Tensor:
    """(B, 1, 1, T) boolean key mask from a (B, T) token tensor."""
    return (tokens != pad_id)[:, None, None, :]


def masked_softmax(scores: torch.Tensor, mask: torch.Tensor | None) -> torch.Tensor:
    """Softmax over the last axis; masked keys get weight 0 and a fully masked row is all zeros (no NaN)."""
    if mask is None:
        return torch.softmax(scores, dim=-1)
    scores = scores.masked_fill(~mask, float("-inf"))
    # A row with every key masked would be softmax(-inf...) = NaN; give it zeros instead.
    any_visible = mask.any(dim=-1, keepdim=True)
    if bool(any_visible.all()):  # the usual case (a causal mask, a sentence with a token): no fix-up passes
        return torch.softmax(scores, dim=-1)
    safe = scores.masked_fill(~any_visible, 0.0)
    weights = torch.softmax(safe, dim=-1)
    return weights.masked_fill(~any_visible, 0.0)


def scaled_dot_product_attention(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    mask: torch.Tensor | None = None,
    scale: float | None = None,
    dropout_p: float = 0.0,
) -> AttentionResult:
    """softmax(QKᵀ·scale + mask)·V with scale = 1/√d_k by default (Vaswani et al. 2017, eq. 1).

    q: (..., T_q, d_k), k: (..., T_k, d_k), v: (..., T_k, d_v). Returns output, weights and raw scores.
    """
    d_k = q.size(-1)
    scale = 1.0 / math.sqrt(d_k) if scale is None else scale
    scores = torch.matmul(q, k.transpose(-2, -1)) * scale  # (..., T_q, T_k)
    weights = masked_softmax(scores, mask)
    attended = F.dropout(weights, p=dropout_p) if dropout_p > 0 else weights
    return AttentionResult(output=torch.matmul(attended, v), weights=weights, scores=scores)


class MultiHeadAttention(nn.Module):
    """Multi-head attention (paper §3.2.2): W_q, W_k, W_v stored as one fused (3·d_model, d_model) projection, and W_o.

    Self-attention (query is key is value) projects Q, K and V in one matrix product, as
    torch.nn.MultiheadAttention's in_proj_weight does; projection("q"|"k"|"v"|"o") reads each one separately.
    forward(..., need_weights=True) returns per-head weights and scores (B, h, T_q, T_k);
    need_weights=False takes the fused F.scaled_dot_product_attention path (training speed).
    head_mask: (h,) of 0/1 (or floats) multiplies each head's output before W_o (ablation).
    """

    def __init__(self, d_model: int, num_heads: int, dropout: float = 0.0, bias: bool = True):
        super().__init__()
        if d_model % num_heads:
            raise ValueError(f"d_model={d_model} is not divisible by num_heads={num_heads}")
        self.d_model, self.num_heads, self.d_k = d_model, num_heads, d_model // num_heads
        self.dropout = dropout
        self.w_qkv = nn.Linear(d_model, 3 * d_model, bias=bias)  # rows: W_q, then W_k, then W_v
        self.w_o = nn.Linear(d_model, d_model, bias=bias)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Xavier-uniform for each of W_q, W_k, W_v, W_o separately, as when they were four nn.Linear (the fused
        matrix's own fans would give a smaller bound); biases keep nn.Linear's default (fan_in is d_model either way)."""
        with torch.no_grad():
            for name in "qkvo":
                nn.init.xavier_uniform_(self.projection(name)[0])

    def projection(self, name: str) -> tuple[torch.Tensor, torch.Tensor | None]:
        """(weight (d_model_out, d_model_in), bias) of W_q, W_k, W_v or W_o, in nn.Linear's layout (y = x·Wᵀ + b).

        The one public way for other code (analysis, weight loaders) to read a projection, however the module
        stores its parameters. For q, k and v these are views into the fused w_qkv (writing to them writes it).
        """
        if name == "o":
            return self.w_o.weight, self.w_o.bias
        index = "qkv".index(name)  # raises ValueError for an unknown name
        rows = slice(index * self.d_model, (index + 1) * self.d_model)
        bias = self.w_qkv.bias
        return self.w_qkv.weight[rows], None if bias is None else bias[rows]

    def project_qkv(self, query: torch.Tensor, key: torch.Tensor, value: torch.Tensor):
        """(B, T, d_model) inputs -> Q (B, T_q, d_model), K, V (B, T_k, d_model), with as few matrix products as
        the sharing allows: one for self-attention, two when key is value (cross-attention), else three."""
        weight, bias = self.w_qkv.weight, self.w_qkv.bias
        d = self.d_model
        if query is key and key is value:
            return F.linear(query, weight, bias).chunk(3, dim=-1)
        q = F.linear(query, weight[:d], None if bias is None else bias[:d])
        if key is value:
            k, v = F.linear(key, weight[d:], None if bias is None else bias[d:]).chunk(2, dim=-1)
            return q, k, v
        k_w, k_b = self.projection("k")
        v_w, v_b = self.projection("v")
        return q, F.linear(key, k_w, k_b), F.linear(value, v_w, v_b)

    def _split(self, x: torch.Tensor) -> torch.Tensor:
        batch, length, _ = x.shape  # (B, T, d_model) -> (B, h, T, d_k)
        return x.view(batch, length, self.num_heads, self.d_k).transpose(1, 2)

    def forward(
        self,
        query: torch.Tensor,
        key: torch.Tensor,
        value: torch.Tensor,
        mask: torch.Tensor | None = None,
        need_weights: bool = True,
        head_mask: torch.Tensor | None = None,
        scale: float | None = None,
        is_causal: bool = False,
    ) -> AttentionResult:
        """is_causal=True (fast path only, with mask None) lets the kernel apply the causal mask without
        materialising it; with need_weights=True pass mask=causal_mask(T) instead."""
        q, k, v = (self._split(t) for t in self.project_qkv(query, key, value))
        dropout_p = self.dropout if self.training else 0.0
        if need_weights:
            if is_causal:
                raise ValueError("is_causal applies to the fast path; pass mask=causal_mask(T) with need_weights")
            result = scaled_dot_product_attention(q, k, v, mask, scale=scale, dropout_p=dropout_p)
            heads, weights, scores = result.output, result.weights, result.scores
        else:
            heads = _fused_attention(q, k, v, mask, dropout_p, scale, is_causal)
            weights = scores = None
        if head_mask is not None:
            heads = heads * head_mask.to(heads.dtype).view(1, -1, 1, 1)
        batch, _, length, _ = heads.shape
        concat = heads.transpose(1, 2).reshape(batch, length, self.d_model)  # (B, T_q, d_model)
        return AttentionResult(output=self.w_o(concat), weights=weights, scores=scores)


def _fused_attention(q, k, v, mask, dropout_p: float, scale: float | None, is_causal: bool = False) -> torch.Tensor:
    """F.scaled_dot_product_attention, with fully masked rows zeroed as in the explicit path."""
    if mask is None:
        return F.scaled_dot_product_attention(q, k, v, dropout_p=dropout_p, scale=scale, is_causal=is_causal)
    if is_causal:
        raise ValueError("pass either a mask or is_causal=True, not both")
    any_visible = mask.any(dim=-1, keepdim=True)  # (B|1, h|1, T_q|1, 1)
    if bool(any_visible.all()):  # the usual case (every sentence has a token): no fix-up kernels
        return F.scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=dropout_p, scale=scale)
    safe_mask = mask | ~any_visible
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=safe_mask, dropout_p=dropout_p, scale=scale)
    return out.masked_fill(~any_visible, 0.0)


def rescale_softmax(scores, factor: float, mask=None):
    """Re-softmax stored scores (..., T_q, T_k) at `factor` × the trained scale (numpy in, numpy out).

    factor 1 gives the trained weights; factor √d_k undoes the 1/√d_k scaling; → 0 flattens to uniform.
    mask: True where the key may be attended to (broadcastable), as in masked_softmax.
    """
    tensor = torch.as_tensor(np.asarray(scores, dtype=np.float64)) * factor
    mask_t = None if mask is None else torch.as_tensor(np.asarray(mask, dtype=bool))
    return masked_softmax(tensor, mask_t).numpy()

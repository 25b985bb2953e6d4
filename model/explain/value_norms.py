"""Value-weighted norms (Kobayashi et al. 2020, eq. 6-8): f_h(x_j) = (x_j W_V^h + b_V^h) W_O^h and
N^h[i, j] = ‖α^h_ij · f_h(x_j)‖₂, with x_j the input of the attention sublayer at key j.

Any model built on model.attention.MultiHeadAttention works (llama_value_norms: SmolLM2's grouped-query
attention, from its cache): weights are read with `projection()` and the
sublayer inputs x_j are captured with forward pre-hooks (`capture_attention_inputs`), so nothing here depends on
how a module stores W_q/W_k/W_v or on the model around it. Shapes: L layers, B batch, h heads, T_q queries,
T_k keys, d model width, d_k = d / h.
"""
from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

import numpy as np
import torch
import torch.nn.functional as F

from model.attention import MultiHeadAttention
from model.explain.kinds import SPECIAL_TOKENS

if TYPE_CHECKING:  # only types: model.llama's blocks do not need this module
    from model.llama import LlamaModel, LlamaOutput


def transformed_value_norms(value_input: torch.Tensor, value_projection: tuple[torch.Tensor, torch.Tensor | None],
                            output_projection: tuple[torch.Tensor, torch.Tensor | None],
                            num_heads: int) -> torch.Tensor:
    """‖f_h(x_j)‖₂ for every head and key: value_input (..., T_k, d) -> (..., h, T_k).

    The projections are (weight, bias) in nn.Linear's layout (y = x·Wᵀ + b), as MultiHeadAttention.projection
    returns them. W_O^h is the block of W_O's input columns that head h's output occupies in the concatenation;
    the output bias is added once after all heads, so it belongs to no head.
    """
    w_v, b_v = value_projection
    w_o, _ = output_projection
    d_model = w_o.shape[0]
    d_k = w_v.shape[0] // num_heads
    values = F.linear(value_input, w_v, b_v)  # (..., T_k, h·d_k)
    values = values.unflatten(-1, (num_heads, d_k)).transpose(-3, -2)  # (..., h, T_k, d_k)
    w_o_heads = w_o.view(d_model, num_heads, d_k).permute(1, 2, 0)  # (h, d_k, d): W_O^h in x·W layout
    transformed = values @ w_o_heads  # (..., h, T_k, d): f_h(x_j)
    return transformed.norm(dim=-1)


def value_weighted_norms(weights: torch.Tensor | np.ndarray, value_input: torch.Tensor,
                         value_projection, output_projection, num_heads: int) -> np.ndarray:
    """N^h[i, j] = ‖α^h_ij · f_h(x_j)‖₂ = α^h_ij · ‖f_h(x_j)‖₂ (α ≥ 0).

    weights (..., h, T_q, T_k), value_input (..., T_k, d) -> (..., h, T_q, T_k) numpy.
    """
    with torch.no_grad():
        norms = transformed_value_norms(value_input, value_projection, output_projection, num_heads).cpu()
        weights = torch.as_tensor(weights.cpu() if isinstance(weights, torch.Tensor) else np.asarray(weights),
                                  dtype=norms.dtype)
        return (weights * norms.unsqueeze(-2)).numpy()  # (..., h, 1, T_k) broadcast over queries


def module_value_norms(module: MultiHeadAttention, weights, value_input: torch.Tensor) -> np.ndarray:
    """value_weighted_norms for one MultiHeadAttention, its weights read through its public projection()."""
    return value_weighted_norms(weights, value_input, module.projection("v"), module.projection("o"),
                                module.num_heads)


@contextlib.contextmanager
def capture_attention_inputs(modules: dict[str, MultiHeadAttention]) -> Iterator[dict[str, list[torch.Tensor]]]:
    """While open, records the value input (B, T_k, d) of every call of each named module, in call order.

    Uses public forward pre-hooks, so it works on any model built on MultiHeadAttention without changing it.
    Only calls made by this thread are recorded: a shipped model is shared by every session's script thread,
    and another session's forward pass while the hooks are on must neither be recorded nor be affected.
    """
    captured: dict[str, list[torch.Tensor]] = {name: [] for name in modules}
    handles = []
    owner = threading.get_ident()
    for name, module in modules.items():
        def hook(_module, args, kwargs, name=name):
            if threading.get_ident() != owner:
                return
            value = args[2] if len(args) > 2 else kwargs["value"]  # forward(query, key, value, mask, ...)
            captured[name].append(value.detach())
        handles.append(module.register_forward_pre_hook(hook, with_kwargs=True))
    try:
        yield captured
    finally:
        for handle in handles:
            handle.remove()


def transformer_attention_modules(model) -> dict[str, MultiHeadAttention]:
    """'encoder_self.0', 'decoder_self.1', 'cross.0', ... -> the encoder-decoder Transformer's attention modules."""
    modules = {f"encoder_self.{i}": layer.self_attn for i, layer in enumerate(model.encoder_layers)}
    for i, layer in enumerate(model.decoder_layers):
        modules[f"decoder_self.{i}"] = layer.self_attn
        modules[f"cross.{i}"] = layer.cross_attn
    return modules


def encoder_attention_modules(encoder) -> list[MultiHeadAttention]:
    """A BertEncoder's self-attention modules, layer by layer."""
    return [layer.self_attn for layer in encoder.layers]


@torch.no_grad()
def stack_value_norms(modules: Sequence[MultiHeadAttention], weights: torch.Tensor | np.ndarray,
                      value_inputs: Sequence[torch.Tensor]) -> np.ndarray:
    """One attention stack: modules[l] with weights (L, B, h, T_q, T_k) and value_inputs[l] (B, T_k, d)
    -> N (L, B, h, T_q, T_k). The entry point for any model on MultiHeadAttention (e.g. a BERT encoder: its
    layers' attention modules, the maps of one forward pass, and the hidden states that entered each layer)."""
    return np.stack([module_value_norms(module, weights[l], value_inputs[l]) for l, module in enumerate(modules)])


def special_token_survival(weights: np.ndarray, norms: np.ndarray, key_tokens: Sequence[str],
                           special: Sequence[str] = SPECIAL_TOKENS,
                           keys: np.ndarray | None = None) -> dict[str, np.ndarray]:
    """Per head, how much of the weight on special-token keys survives in the norms.

    weights, norms (..., h, T_q, T_k) -> each (..., h): weight_share = share of α on special keys (summed over
    queries), norm_share = the same share of N, survival = norm_share / weight_share (NaN without special weight).
    A survival well below 1 is a head whose "attention" to <eos>/[SEP] moves almost nothing (Kobayashi et al.
    2020, §5.1). keys: (T_k,) booleans choosing the keys by position instead (a language model's first token, the
    attention sink, whose text may well occur again later).
    """
    is_special = np.array([t in special for t in key_tokens]) if keys is None else np.asarray(keys, dtype=bool)

    def share(values: np.ndarray) -> np.ndarray:  # summed in float32 at least: compact float16 maps stay as they are
        dtype = np.promote_types(values.dtype, np.float32)
        return values[..., is_special].sum((-1, -2), dtype=dtype) / np.maximum(values.sum((-1, -2), dtype=dtype), 1e-12)

    weight_share, norm_share = share(weights), share(norms)
    with np.errstate(invalid="ignore", divide="ignore"):
        survival = np.where(weight_share > 1e-9, norm_share / weight_share, np.nan)
    return {"weight_share": weight_share, "norm_share": norm_share, "survival": survival}


@torch.no_grad()
def llama_value_norms(model: LlamaModel, out: LlamaOutput) -> torch.Tensor:
    """N^h[i, j] = α^h_ij · ‖f_h(x_j)‖₂ with f_h(x_j) = v_j^{h // group} W_O^h (Kobayashi et al. 2020, eq. 6-8).

    The values v_j are the cache's own (no bias in Llama), so no second pass is needed. out must hold weights;
    returns (L, B, h, T_q, T_k) in the weights' dtype, computed in float32 one layer at a time (compact float16 maps
    never become a float32 copy of every layer): how far each key's value actually moves each query's output.
    """
    if out.weights is None:
        raise ValueError("value-weighted norms need the attention weights (need_weights=True)")
    layers = []
    for layer, values, weights in zip(model.layers, out.cache.values, out.weights):
        norms = llama_head_writes(model, layer, values).norm(dim=-1)  # (B, h, T_k)
        layers.append((weights.float() * norms.unsqueeze(-2)).to(weights.dtype))  # (B, h, 1, T_k) over queries
    return torch.stack(layers)


def llama_head_writes(model: LlamaModel, layer, values: torch.Tensor) -> torch.Tensor:
    """f_h(x_j) = v_j^{h // group} W_O^h: what each query head writes into the residual stream per unit of weight on
    key j. values (B, h_kv, T_k, d_k), one block's (its cache's) -> (B, h, T_k, d), layer that block (a LlamaBlock)."""
    cfg = model.cfg
    w_o, _ = layer.self_attn.projection("o")  # (d, h·d_k)
    w_o_heads = w_o.view(cfg.hidden_size, cfg.num_heads, cfg.head_dim).permute(1, 2, 0)  # (h, d_k, d)
    per_head = values.repeat_interleave(cfg.group_size, dim=1)  # (B, h, T_k, d_k)
    return torch.matmul(per_head, w_o_heads[None])  # (B, h, T_k, d)

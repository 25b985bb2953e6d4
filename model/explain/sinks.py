"""Attention sinks (Xiao et al. 2023, "Efficient Streaming Language Models with Attention Sinks", §3.1).

Past the first layers, many heads of a causal language model put a large share of every query's attention on the
first token, whatever it is: softmax must give its weights somewhere, and the first token is the one key every
query can see. The value-weighted norms (Kobayashi et al. 2020) show how little that attention moves the output:
the first token's transformed value is small. Switching the first token's attention off (a key mask, so every
query spreads its weight over the other keys) or removing the token changes the next-token distribution, which is
why streaming generation keeps the first tokens in its KV cache. With rotary positions, switching the first
token off and removing it give the same distribution (scores depend only on distances, and no later token can see
it either way); the next token then takes the sink's role. The paper's own test is a sliding window: every query
sees only its last w keys. Without the first token in the window the text's loss rises; keeping it (the "sink")
restores most of it (their Figure 3 and Table 1): `window_losses`.

Shapes: L layers, h heads, T tokens.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from model.explain.next_token import kl_divergence


def sink_share(weights: np.ndarray | torch.Tensor, first_query: int = 1) -> np.ndarray:
    """(L, h, T, T) -> (L, h): each head's mean weight on key 0 over the queries first_query … T − 1.

    Query 0 is left out by default: it can only attend to itself, so its weight on key 0 is 1 in every head.
    """
    maps = torch.as_tensor(np.asarray(weights) if not isinstance(weights, torch.Tensor) else weights).float()
    return maps[..., first_query:, 0].mean(-1).cpu().numpy()


def norm_share_on_first(norms: np.ndarray | torch.Tensor, first_query: int = 1) -> np.ndarray:
    """(L, h, T, T) value-weighted norms -> (L, h): key 0's share of the summed norms, mean over queries ≥ 1.

    Beside sink_share (the same share in raw weights) it shows how much of what a head writes comes from the sink.
    """
    norms = torch.as_tensor(np.asarray(norms) if not isinstance(norms, torch.Tensor) else norms).float()
    rows = norms[..., first_query:, :]  # (L, h, T − first_query, T)
    share = rows[..., 0] / rows.sum(-1).clamp(min=1e-12)
    return share.mean(-1).cpu().numpy()


@dataclass(frozen=True)
class NextTokenChange:
    """How the next-token distribution after the text changes when the first token is switched off or removed."""

    top_ids: list[int]  # the 5 most likely next tokens with the first token, most likely first
    top_probs: list[float]
    switched_off_ids: list[int]  # … with every query's attention to the first token switched off
    switched_off_probs: list[float]
    removed_ids: list[int]  # … with the first token removed from the text (the next token becomes first)
    removed_probs: list[float]
    kl_switched_off: float  # KL(p ‖ p_switched_off) in nats
    kl_removed: float  # KL(p ‖ p_removed)


@dataclass(frozen=True)
class SinkResult:
    share: np.ndarray  # (L, h) mean attention weight on the first token
    norm_share: np.ndarray  # (L, h) the first token's share of the value-weighted norms
    change: NextTokenChange


@torch.no_grad()
def sink_analysis(model, ids: list[int], top: int = 5) -> SinkResult:
    """Sink shares of a text and the effect of the first token on the next-token distribution.

    model: a causal model.llama.LlamaModel (it takes key_mask); ids: the text's tokens, at least 3.
    """
    from model.explain.value_norms import llama_value_norms

    if len(ids) < 3:
        raise ValueError("a sink needs a first token and at least two more")
    tokens = torch.tensor([ids])
    # Only the last position's logits are read: the (V × d) output product for the other T − 1 positions is a large
    # part of a long pass with every map, and would be thrown away.
    plain = model(tokens, need_weights=True, last_logits_only=True)
    key_mask = torch.ones(1, len(ids), dtype=torch.bool)
    key_mask[0, 0] = False  # no query may attend to the first token; it still flows through its own position
    switched = model(tokens, need_weights=False, key_mask=key_mask, last_logits_only=True)
    removed = model(tokens[:, 1:], need_weights=False, last_logits_only=True)
    logs = [torch.log_softmax(out.logits[0, -1].float(), -1) for out in (plain, switched, removed)]
    tops = [log.exp().topk(top) for log in logs]
    change = NextTokenChange(
        tops[0].indices.tolist(), tops[0].values.tolist(), tops[1].indices.tolist(), tops[1].values.tolist(),
        tops[2].indices.tolist(), tops[2].values.tolist(), kl_divergence(logs[0], logs[1]), kl_divergence(logs[0], logs[2]))
    norms = llama_value_norms(model, plain)[:, 0]  # (L, h, T, T)
    return SinkResult(sink_share(plain.weights[:, 0]), norm_share_on_first(norms), change)


def sliding_window_mask(length: int, window: int, keep_first: bool) -> torch.Tensor:
    """(T, T) boolean: query i sees keys i − window + 1 … i, plus key 0 when keep_first (StreamingLLM's sink)."""
    positions = torch.arange(length)
    distance = positions[:, None] - positions[None, :]  # (T_q, T_k) i − j
    mask = (distance >= 0) & (distance < window)
    if keep_first:
        mask[:, 0] = True
    return mask


@dataclass(frozen=True)
class WindowLosses:
    window: int
    full: float  # mean next-token cross-entropy (nats) with full causal attention
    window_only: float  # … when each query sees only its last `window` keys
    window_with_sink: float  # … the same window plus the first token


@torch.no_grad()
def next_token_losses(model, ids: list[int], mask: torch.Tensor | None = None) -> np.ndarray:
    """(T − 1,) cross-entropy (nats) of each next token: entry t is the loss of predicting ids[t + 1] at position t,
    under full causal attention or under `mask` (T, T), True where a query may see a key."""
    import torch.nn.functional as F

    logits = model(torch.tensor([ids]), need_weights=False, attention_mask=mask).logits[0, :-1]  # (T − 1, V)
    return F.cross_entropy(logits.float(), torch.tensor(ids[1:]), reduction="none").numpy()


@torch.no_grad()
def window_losses(model, ids: list[int], window: int, full: np.ndarray | None = None) -> WindowLosses:
    """Mean next-token loss of a text under full attention, a sliding window, and the window plus the first token.

    Only predictions made past the window count (positions ≥ window), where the three differ. full: the text's
    next_token_losses under full attention, when the caller already has them (they do not depend on the window:
    a new window then costs two passes, not three).
    """
    if len(ids) <= window + 1:
        raise ValueError(f"the text needs more than {window + 1} tokens for a window of {window}")
    full = next_token_losses(model, ids) if full is None else full

    def loss(mask: torch.Tensor) -> float:
        return float(next_token_losses(model, ids, mask)[window:].mean())  # predicting ids[window + 1:]

    return WindowLosses(window, float(full[window:].mean()), loss(sliding_window_mask(len(ids), window, False)),
                        loss(sliding_window_mask(len(ids), window, True)))

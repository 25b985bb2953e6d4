"""What a causal language model predicts after a text, and how well it predicts the text itself: the outcome that
switching heads off changes for a decoder-only LLM (it has no translation and no sentence embedding to compare).

Shapes: T tokens, V vocabulary.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F

TOP_NEXT_TOKENS = 5  # candidates the ablation view lists for the token after the text


@dataclass(frozen=True)
class NextTokenPrediction:
    """The distribution of the token after the text and the text's own next-token loss."""

    log_probs: np.ndarray  # (V,) float32: log p(next token | the whole text)
    loss: float  # mean next-token cross-entropy (nats) predicting ids[1:] from each prefix; NaN for one token
    predicted: int  # tokens the loss averages over (T − 1)
    top_ids: list[int]  # the TOP_NEXT_TOKENS most likely next tokens, most likely first
    top_tokens: list[str]  # … as text
    top_probs: list[float]  # … their probabilities


def next_token_prediction(logits: torch.Tensor, ids: list[int], token_texts: Callable[[list[int]], list[str]],
                          k: int = TOP_NEXT_TOKENS) -> NextTokenPrediction:
    """logits (T, V) of a causal model over ids (T,) -> the prediction after ids[-1] and the text's mean loss;
    token_texts(ids) names the top k candidates (the model's tokenizer).

    Position t's logits predict token t + 1, so the loss reads positions 0 … T − 2 against ids[1:].
    """
    logits = logits.float()
    log_probs = torch.log_softmax(logits[-1], -1)  # (V,)
    if len(ids) > 1:
        loss = float(F.cross_entropy(logits[:-1], torch.tensor(ids[1:], device=logits.device)))
    else:
        loss = float("nan")
    top = log_probs.topk(k)
    top_ids = top.indices.tolist()
    return NextTokenPrediction(log_probs.cpu().numpy(), loss, len(ids) - 1, top_ids, list(token_texts(top_ids)),
                               top.values.exp().tolist())


def kl_divergence(p_log: np.ndarray | torch.Tensor, q_log: np.ndarray | torch.Tensor) -> float:
    """KL(p ‖ q) = Σ p (log p − log q) in nats, from two log-distributions over the same vocabulary (V,)."""
    p_log, q_log = torch.as_tensor(p_log).double(), torch.as_tensor(q_log).double()
    return float((p_log.exp() * (p_log - q_log)).sum())

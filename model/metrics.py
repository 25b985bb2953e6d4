"""Accuracy, BLEU (sacrebleu) and per-head attention statistics."""
from __future__ import annotations

import numpy as np
import sacrebleu
from scipy.special import entr

from model.data import detokenize


def exact_match(hypotheses: list[list[str]], references: list[list[str]]) -> float:
    return float(np.mean([h == r for h, r in zip(hypotheses, references)])) if references else 0.0


def corpus_bleu(hypotheses: list[list[str]], references: list[list[str]]) -> float:
    """sacrebleu corpus BLEU (0-100) on detokenized strings."""
    if not references:
        return 0.0
    hyp = [detokenize(h) for h in hypotheses]
    ref = [detokenize(r) for r in references]
    return float(sacrebleu.corpus_bleu(hyp, [ref]).score)


def entropy(p: np.ndarray) -> np.ndarray:
    """Distributions (..., n) -> their Shannon entropy in nats (...), with 0·log 0 = 0: 0 for a one-hot row,
    ln n for a uniform one. The one entropy of the lab (heads, patterns, the softmax-scaling page, questions)."""
    return entr(np.asarray(p, dtype=np.float64)).sum(-1)  # entr: -p·log p, 0 where p = 0 (no -inf·0 = NaN)


def head_entropy(weights: np.ndarray) -> np.ndarray:
    """weights (..., T_q, T_k) -> mean entropy in nats over query rows, shape (...)."""
    return entropy(weights).mean(-1)


def head_statistics(weights: np.ndarray, key_tokens: list[str] | None = None) -> dict[str, np.ndarray]:
    """Per-head statistics of weights (L, h, T_q, T_k); each value has shape (L, h).

    entropy (nats), mean attended distance |i - j| (in positions), share on the diagonal (j = i),
    share on the previous token (j = i - 1), share on <eos> keys (if key_tokens given).
    """
    layers, heads, t_q, t_k = weights.shape
    distance = np.abs(np.arange(t_q)[:, None] - np.arange(t_k)[None, :]).astype(np.float64)  # (T_q, T_k)
    eos = None if key_tokens is None else np.array([t == "<eos>" for t in key_tokens])
    stats = {name: np.zeros((layers, heads)) for name in ("entropy", "mean_distance", "diagonal", "previous_token")}
    if eos is not None:
        stats["eos"] = np.zeros((layers, heads))
    # One layer at a time in float64: a 512-token text's 30 layers would be 540 MB a temporary array at once
    for layer in range(layers):
        w = np.asarray(weights[layer], dtype=np.float64)  # (h, T_q, T_k)
        stats["entropy"][layer] = head_entropy(w)
        stats["mean_distance"][layer] = np.einsum("hqk,qk->h", w, distance) / t_q
        stats["diagonal"][layer] = np.diagonal(w, axis1=-2, axis2=-1).sum(-1) / t_q
        stats["previous_token"][layer] = np.diagonal(w, offset=-1, axis1=-2, axis2=-1).sum(-1) / t_q
        if eos is not None:
            stats["eos"][layer] = w[..., eos].sum((-2, -1)) / t_q
    return stats


def sharpest_content_head(weights: np.ndarray, special: list[bool]) -> tuple[int, int, float]:
    """(layer, head, share) of the encoder head that looks most sharply at words rather than at [CLS]/[SEP]:
    the largest mean, over the word rows, of each row's biggest weight on a word column.

    weights (L, h, T, T); special (T,) True for [CLS]/[SEP]-like tokens. Many encoder heads park their weight on
    [SEP] (Clark et al. 2019, §3.2); this picks a head that shows a word-to-word pattern instead.
    """
    words = ~np.asarray(special, dtype=bool)
    if words.sum() < 2:  # nothing but special tokens: any head is as good as another
        return 0, 0, 0.0
    on_words = weights[:, :, words][:, :, :, words]  # (L, h, W, W)
    share = on_words.max(axis=-1).mean(axis=-1)  # (L, h)
    layer, head = np.unravel_index(int(np.argmax(share)), share.shape)
    return int(layer), int(head), float(share[layer, head])


def sharpest_head(weights: np.ndarray) -> tuple[int, int, float]:
    """(layer, head, entropy) of the head whose rows are most peaked: the lowest mean entropy of weights (L, h, T_q,
    T_k). For cross-attention that is the clearest word alignment: each written word reads about one source word."""
    entropy = head_entropy(weights)  # (L, h)
    layer, head = np.unravel_index(int(np.argmin(entropy)), entropy.shape)
    return int(layer), int(head), float(entropy[layer, head])

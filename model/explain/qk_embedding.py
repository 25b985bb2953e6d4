"""A head across many texts (AttentionViz, Yeh et al. 2023): its queries and keys over a fixed set of texts in one 2-D
picture, and its scores split into the rotary position embedding's frequency pairs.

The picture. A head's score of key j for query i is q_i·k_j · s (s = 1/√d_k). Two changes leave every softmax row as
it is, so the picture may make them (AttentionViz §4.2):
- scaling: q_i / c and c · k_j keep every q·k; c = √(mean ‖q‖ / mean ‖k‖) gives queries and keys the same mean norm,
  so neither cloud is a dot in the middle of the other;
- translation: adding one vector δ to every key adds q_i·δ·s to each of query i's scores, the same constant for every
  key that query reads, and softmax ignores a constant added to a whole row. δ = mean(q) − mean(k) (after scaling)
  puts the keys' centroid on the queries', so distance in the picture says more about the dot product.
Then PCA (a centred SVD of queries and keys stacked) gives the two axes of most variance.

The pairs. RoPE turns dimensions (a_p, b_p) of q and k together, pair p by p·θ_p per position (QueriesKeys
.rotary_pairs, rotary_frequencies), so q_i·k_j = Σ_p (q_i[a_p]·k_j[a_p] + q_i[b_p]·k_j[b_p]) of the rotated vectors:
each pair's term depends on the distance i − j through its own frequency only. The terms here are after the 1/√d_k
scaling, so they sum to the model's own pre-softmax scores (KindMaps.scores).

Shapes: N points of each kind (every token of every text), d_k head width, P = d_k / 2 pairs, T tokens of a text.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import torch

from model.explain.fixed_sets import LANGUAGE_MODEL_TEXTS

if TYPE_CHECKING:  # only a type here: the adapters package imports every family
    from model.adapters.protocols import QueriesKeys, ReadsQueriesKeys

CONTEXT_BEFORE, CONTEXT_AFTER = 6, 3  # tokens shown around a point's own on hover


@dataclass(frozen=True)
class QKEmbedding:
    """One head's queries and keys over a set of texts, in 2-D.

    points (2N, 2) float32: the N queries first, then the N keys, each text's tokens in order; is_query (2N,) bool;
    text_index, position (2N,) int: which text and which token of it; token, context (2N,) str: the token, and the
    text around it with the token in brackets. queries, keys (N, d_k) float32: the vectors after the scaling and the
    translation (the module docstring), whose dot products give every text's softmax rows unchanged; key_scale: c
    (queries divided by it, keys multiplied); key_shift (d_k,): δ, added to every scaled key; explained (2,): each
    axis's share of the variance."""

    layer: int
    head: int
    points: np.ndarray
    is_query: np.ndarray
    text_index: np.ndarray
    position: np.ndarray
    token: list[str]
    context: list[str]
    queries: np.ndarray
    keys: np.ndarray
    key_scale: float
    key_shift: np.ndarray
    explained: np.ndarray


@dataclass(frozen=True)
class RotaryPairScores:
    """One head's scores of one text split into its RoPE pairs.

    terms (T_q, T_k, P) float32: s · (q_i[a_p]·k_j[a_p] + q_i[b_p]·k_j[b_p]), after the 1/√d_k scaling, so that
    terms.sum(-1) is the model's pre-softmax score (KindMaps.scores; cells above the diagonal included, though the
    causal mask then hides them); shares (T_q, T_k, P): |term| / Σ_p |term|, each pair's share of the score's
    making (a positive and a negative pair both count); mean_shares (P,): their mean over the cells a query may see;
    frequencies (P,): θ_p, radians per position (pair 0 turns fastest)."""

    layer: int
    head: int
    tokens: list[str]
    terms: np.ndarray
    shares: np.ndarray
    mean_shares: np.ndarray
    frequencies: np.ndarray

    @property
    def scores(self) -> np.ndarray:
        """(T_q, T_k): the pairs' sum, the pre-softmax scores."""
        return self.terms.sum(-1)


def read_texts(lab: ReadsQueriesKeys, texts: tuple[str, ...] = LANGUAGE_MODEL_TEXTS, layers: int | None = None) -> list[QueriesKeys]:
    """Each text's queries and keys in layers 0 … layers−1 (every layer when None), one forward per text (a model
    with QUERIES_KEYS). What a page caches once, and every head's picture reads."""
    return [lab.queries_keys(text, layers) for text in texts]


def embed_head(readings: list[QueriesKeys], layer: int, head: int) -> QKEmbedding:
    """The head's queries and keys over every reading, scaled, translated and projected by PCA (module docstring)."""
    queries = np.concatenate([r.queries[layer, head].numpy() for r in readings]).astype(np.float64)  # (N, d_k)
    keys = np.concatenate([r.keys[layer, head].numpy() for r in readings]).astype(np.float64)  # (N, d_k)
    scale = float(np.sqrt(np.linalg.norm(queries, axis=1).mean() / max(np.linalg.norm(keys, axis=1).mean(), 1e-12)))
    queries, keys = queries / scale, keys * scale  # every q·k kept
    shift = queries.mean(0) - keys.mean(0)  # (d_k,): each query's scores move by one constant
    keys = keys + shift
    both = np.concatenate([queries, keys])  # (2N, d_k)
    centred = both - both.mean(0)
    # axes (d_k, d_k), rows by variance. torch's SVD keeps to the process's torch threads; numpy's BLAS spreads even
    # this small one over threads of its own, which on a loaded server's cores cost many times the work
    _, singular, axes = (part.numpy() for part in torch.linalg.svd(torch.from_numpy(centred), full_matrices=False))
    axes = axes[:2] * np.sign(axes[:2, np.abs(axes[:2]).argmax(1)].diagonal())[:, None]  # a fixed sign per axis
    variance = singular ** 2
    text_index = np.concatenate([np.full(len(r.ids), t) for t, r in enumerate(readings)])
    position = np.concatenate([np.arange(len(r.ids)) for r in readings])
    tokens = [token for r in readings for token in r.tokens]
    contexts = [_context(r.tokens, i) for r in readings for i in range(len(r.tokens))]
    return QKEmbedding(layer, head, (centred @ axes.T).astype(np.float32),
                       np.repeat([True, False], len(queries)), np.tile(text_index, 2), np.tile(position, 2),
                       tokens * 2, contexts * 2, queries.astype(np.float32), keys.astype(np.float32), scale,
                       shift.astype(np.float32), (variance[:2] / max(variance.sum(), 1e-12)).astype(np.float32))


def rotary_pair_scores(reading: QueriesKeys, layer: int, head: int) -> RotaryPairScores:
    """The head's scores of the reading's text split into its RoPE pairs (RotaryPairScores)."""
    q = reading.queries[layer, head].double().numpy()  # (T, d_k)
    k = reading.keys[layer, head].double().numpy()
    a, b = reading.rotary_pairs[:, 0], reading.rotary_pairs[:, 1]  # (P,) each
    terms = (q[:, None, a] * k[None, :, a] + q[:, None, b] * k[None, :, b]) * reading.scale  # (T_q, T_k, P)
    magnitude = np.abs(terms)
    shares = magnitude / np.maximum(magnitude.sum(-1, keepdims=True), 1e-12)
    seen = np.tril(np.ones(terms.shape[:2], dtype=bool))  # (T, T): the keys a causal query reads
    return RotaryPairScores(layer, head, list(reading.tokens), terms.astype(np.float32), shares.astype(np.float32),
                            shares[seen].mean(0).astype(np.float32), np.asarray(reading.rotary_frequencies))


def _context(tokens: list[str], index: int) -> str:
    """The tokens around tokens[index], joined as the model spells them, the token itself in brackets."""
    before = "".join(tokens[max(0, index - CONTEXT_BEFORE):index])
    after = "".join(tokens[index + 1:index + 1 + CONTEXT_AFTER])
    return f"{'…' if index > CONTEXT_BEFORE else ''}{before}[{tokens[index]}]{after}" \
           f"{'…' if index + 1 + CONTEXT_AFTER < len(tokens) else ''}"

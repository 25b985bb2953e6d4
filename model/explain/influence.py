"""Prompt influence by three methods: how much each token of a prompt counts for one answer token after it.

The measure is the answer's log-probability at the last position, log p(a | x) (not its logit: a logit moves with
every other token's, and log p is what occlusion changes in a comparable unit). For a prompt x of T tokens with input
embeddings e_0 … e_{T−1}:

(a) gradient × input (Simonyan et al. 2014, §3, the gradient as a saliency; Shrikumar et al. 2016, its product with
    the input): s_i = Σ_d e_{i,d} · ∂ log p(a | x) / ∂e_{i,d}, the first-order estimate of what setting e_i to zero
    would take away. One forward and one backward pass through the model's blocks (ReadsResidualStream: blocks_from
    and unembed are differentiable).
(b) occlusion (Zeiler & Fergus 2014, §4.2, a part of the input covered and the output's change measured): the
    baseline is the token removed, o_i = log p(a | x) − log p(a | x without token i). The T shorter prompts run
    together, each from the removed token on (occluded_finals).
(c) attention rollout (Abnar & Zuidema 2020, §3, model/explain/rollout.py): r_i = R_L[T−1, i], the share of the
    last position that the attention graph, residual included, draws from token i after the last layer. It reads
    the attention weights only: the same for every answer, and never negative.

Each method's "most influential token" is the one with the largest influence in size (|s_i|, |o_i|, r_i): a token
that pushes the answer down counts as much as one that pushes it up; the chart keeps the signs. Their agreement is
Spearman's ρ of those sizes, pairwise (scipy.stats.spearmanr, model.explain.importance.spearman).

Shapes: T tokens, d width, V vocabulary.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from itertools import combinations
from typing import TYPE_CHECKING

import numpy as np
import torch

from model.explain.importance import spearman
from model.explain.rollout import attention_rollout

if TYPE_CHECKING:  # only a type here: the adapters package imports every family
    from model.adapters.protocols import ReadsResidualStream, ResidualStream

METHODS = ("gradient", "occlusion", "rollout")  # (a), (b), (c) above, in the order the page shows them
MIN_TOKENS = 2  # occlusion removes one token: a prompt of one token would leave nothing to read


@dataclass(frozen=True)
class PromptInfluence:
    """Each token's influence on one answer token by the three methods (module docstring)."""

    ids: list[int]  # (T,)
    tokens: list[str]  # (T,)
    token_id: int  # the answer token
    log_prob: float  # log p(answer | prompt) at the last position
    gradient: np.ndarray  # (T,) float32: s_i, gradient × input, in nats
    occlusion: np.ndarray  # (T,) float32: o_i, the drop in log p when token i is removed, in nats
    rollout: np.ndarray  # (T,) float32: r_i, the rollout's share of token i (sums to 1)

    def sizes(self) -> dict[str, np.ndarray]:
        """{method: (T,) the influence in size}: what the ranks and the most influential token read."""
        return {method: np.abs(getattr(self, method)) for method in METHODS}

    def most_influential(self) -> dict[str, int]:
        """{method: the position of its largest influence in size} (the first, on a tie)."""
        return {method: int(np.argmax(size)) for method, size in self.sizes().items()}

    def disagree(self) -> bool:
        """Whether the methods name different most influential tokens."""
        return len(set(self.most_influential().values())) > 1

    def agreement(self) -> dict[tuple[str, str], float]:
        """{(method, method): Spearman's ρ of their sizes} for each pair, in METHODS' order; NaN where one is constant
        (two tokens of equal size: no ranking to compare)."""
        sizes = self.sizes()
        return {(first, second): spearman(sizes[first], sizes[second]) for first, second in combinations(METHODS, 2)}


def prompt_influence(lab: ReadsResidualStream, text: str, token_id: int) -> PromptInfluence:
    """The influence of each token of `text` (its first tokens, as residual_stream reads them; at least MIN_TOKENS)
    on log p(token_id) after it: gradient × input, occlusion by removal and attention rollout (module docstring)."""
    stream = lab.residual_stream(text)
    length = len(stream.ids)
    if length < MIN_TOKENS:
        raise ValueError(f"prompt influence needs at least {MIN_TOKENS} tokens; the text has {length}")
    embedded = stream.hidden[0].detach().clone().requires_grad_(True)  # (T, d): the input embeddings, a leaf
    with torch.enable_grad():
        final = lab.blocks_from(0, embedded[None])[0, -1]  # (d,) the last position after the last block
        log_prob = torch.log_softmax(lab.unembed(final).float(), dim=-1)[token_id]
        (gradient,) = torch.autograd.grad(log_prob, embedded)  # (T, d)
    with torch.no_grad():
        gradient_input = (gradient * embedded).sum(-1)  # (T,)
        finals = occluded_finals(lab, stream)  # (T, d)
        occluded_log_probs = torch.log_softmax(lab.unembed(finals).float(), dim=-1)[:, token_id]  # (T,)
        occlusion = log_prob.detach() - occluded_log_probs
    return PromptInfluence(list(stream.ids), list(stream.tokens), token_id, float(log_prob.detach()),
                           _array(gradient_input), _array(occlusion), last_row_rollout(lab, text))


@torch.no_grad()
def occluded_finals(lab: ReadsResidualStream, stream: ResidualStream) -> torch.Tensor:
    """(T, d): row i, the last block's output at the last position of the text without its token i.

    A token's embedding does not depend on its position (the positions are rotary, in the attention), so the shorter
    prompt's input is the stream's embeddings without row i. Causal: its positions 0 … i−1 are the whole text's, so
    only positions i … T−2 run, reading the keys and values before them from the stream's own cache (cut to T − 1
    positions, so that block_on_suffixes places each run at i … T−2), and all T − 1 runs go through each block
    together: T(T−1)/2 positions, not T(T−1). Without token T−1 the prompt is the text's first T − 1 tokens, whose
    output the stream holds already. A family that keeps no cache runs the T shorter prompts whole, in one batch."""
    embedded, length = stream.hidden[0], len(stream.ids)  # (T, d)
    if stream.cache is None:
        kept = ~torch.eye(length, dtype=torch.bool, device=embedded.device)
        return lab.blocks_from(0, embedded[None].expand(length, -1, -1)[kept].view(length, length - 1, -1))[:, -1]
    cut = type(stream.cache)(*(tuple(t[:, :, :length - 1] for t in part)
                               for part in (stream.cache.keys, stream.cache.values)))
    shorter = replace(stream, cache=cut)
    runs = [embedded[position + 1:][None] for position in range(length - 1)]  # run i: (1, T−1−i, d)
    blocks = stream.hidden.shape[0] - 1
    for block in range(blocks):
        runs = lab.block_on_suffixes(block, runs, shorter, last_only=block == blocks - 1)
    return torch.stack([run[0, -1] for run in runs] + [stream.hidden[-1, length - 2]])


def last_row_rollout(lab, text: str) -> np.ndarray:
    """(T,) float32: the attention rollout's last row after the last layer, from the model's own attention weights
    (its one kind of self-attention, (L, h, T, T))."""
    weights = next(iter(lab.analyse(text).maps.values())).weights
    return attention_rollout(weights)[-1, -1].astype(np.float32)


def _array(values: torch.Tensor) -> np.ndarray:
    return values.detach().float().cpu().numpy().astype(np.float32)

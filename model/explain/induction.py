"""Induction heads (Olsson et al. 2022, "In-context Learning and Induction Heads", §2 and appendix).

An induction head, at a token A that occurred before as "… A B …", attends to B, the token right after the
earlier A, so that the model can copy B next. The standard measurement: a sequence of random tokens repeated
twice, [prefix, r_1 … r_n, r_1 … r_n]; for every query in the second copy (token r_i at position p + n + i) the
induction target is key p + i + 1 (r_{i+1} in the first copy), i.e. the diagonal at offset 1 − n. The induction
score of a head is its mean attention weight on that diagonal (as TransformerLens's tutorials compute it); a head
that attends uniformly over 2n tokens scores about 1/n, an induction head close to 1.

Shapes: L layers, h heads, T = p + 2n tokens.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F

# Token ids drawn for the random sequence start here: SmolLM2's first ids are control tokens and single bytes,
# which would make the "text" unlike anything the model reads.
FIRST_ORDINARY_ID = 1000
# In-context copying in plain text: the model should end it with " mat", copied from the first sentence (the LLM
# heads page shows it, and a claim of the LLM lesson measures it).
COPY_PROMPT = "The cat sat on the mat. The cat sat on the"


def repeated_random_tokens(vocab_size: int, length: int, seed: int, prefix: list[int] | tuple[int, ...] = (),
                           low: int = FIRST_ORDINARY_ID) -> list[int]:
    """prefix + n distinct random ids + the same n ids again (distinct, so each token's earlier occurrence is one)."""
    generator = torch.Generator().manual_seed(seed)
    chosen = (torch.randperm(vocab_size - low, generator=generator)[:length] + low).tolist()
    return list(prefix) + chosen + chosen


def induction_scores(weights: np.ndarray | torch.Tensor, period: int, prefix: int = 0) -> np.ndarray:
    """(L, h, T, T) weights of [prefix, r, r] with len(r) = period -> (L, h) mean weight on the induction target.

    Query q = prefix + period + i attends to its target key q − period + 1 (i = 0 … period − 2; the last token of
    the second copy has no target inside the text, its next token being outside it).
    """
    maps = torch.as_tensor(np.asarray(weights) if not isinstance(weights, torch.Tensor) else weights).float()
    queries = torch.arange(prefix + period, prefix + 2 * period - 1)
    return maps[..., queries, queries - period + 1].mean(-1).cpu().numpy()


def previous_token_scores(weights: np.ndarray | torch.Tensor, start: int = 1) -> np.ndarray:
    """(L, h, T, T) -> (L, h) mean weight from each query q ≥ start on key q − 1: the previous-token heads that an
    induction head reads from (the first half of the two-head induction circuit)."""
    maps = torch.as_tensor(np.asarray(weights) if not isinstance(weights, torch.Tensor) else weights).float()
    queries = torch.arange(max(start, 1), maps.size(-1))
    return maps[..., queries, queries - 1].mean(-1).cpu().numpy()


def top_heads(scores: np.ndarray, count: int = 5) -> list[tuple[int, int, float]]:
    """The `count` highest (layer, head, score) of an (L, h) map, highest first."""
    order = np.argsort(scores, axis=None)[::-1][:count]
    return [(int(i // scores.shape[1]), int(i % scores.shape[1]), float(scores.flat[i])) for i in order]


@dataclass(frozen=True)
class InductionResult:
    tokens: list[int]  # prefix + r + r
    period: int  # n, the length of r
    prefix: int  # p, tokens before the first copy
    scores: np.ndarray  # (L, h) induction score per head
    previous_token: np.ndarray  # (L, h) previous-token score per head
    first_copy_loss: float  # mean next-token cross-entropy (nats) inside the first copy: random, unpredictable
    second_copy_loss: float  # … inside the second copy: low when the model copies from context

    def top_heads(self, count: int = 5) -> list[tuple[int, int, float]]:
        return top_heads(self.scores, count)


@torch.no_grad()
def induction_analysis(model, vocab_size: int, length: int = 40, seed: int = 0,
                       prefix: tuple[int, ...] = ()) -> InductionResult:
    """Run a causal model (model.llama.LlamaModel) on a repeated random sequence; scores and the in-context loss.

    The loss drop from the first copy to the second is what induction heads buy: the same random tokens, but the
    second time they can be copied from the context.
    """
    return induction_analysis_with_weights(model, vocab_size, length, seed, prefix)[0]


@torch.no_grad()
def induction_analysis_with_weights(model, vocab_size: int, length: int = 40, seed: int = 0,
                                    prefix: tuple[int, ...] = ()) -> tuple[InductionResult, torch.Tensor]:
    """induction_analysis and the (L, h, T, T) attention weights it read (to draw a head's off-diagonal stripe)."""
    tokens = repeated_random_tokens(vocab_size, length, seed, prefix)
    out = model(torch.tensor([tokens]), need_weights=True)
    weights = out.weights[:, 0]  # (L, h, T, T)
    # logits at position t predict token t + 1; per-position loss over positions 0 … T − 2.
    losses = F.cross_entropy(out.logits[0, :-1], torch.tensor(tokens[1:]), reduction="none")  # (T − 1,)
    p = len(prefix)
    first = losses[p:p + length - 1]  # predicting r_2 … r_n from inside the first copy
    second = losses[p + length:p + 2 * length - 1]  # predicting r_2 … r_n inside the second copy
    result = InductionResult(tokens, length, p, induction_scores(weights, length, p),
                             previous_token_scores(weights, p + 1), float(first.mean()), float(second.mean()))
    return result, weights

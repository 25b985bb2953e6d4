"""Branching generations: at one position of a text, fork into the k most likely tokens there (or into one
continuation per temperature, with one seed), and continue every branch for N tokens, all of them reading the shared
prefix's keys and values from one KV cache.

The prefix (the text before the fork, P positions) is run once, or not at all when the caller's cache already holds
it (the LLM page's generation): its cache, (1, h_kv, P, d_k) per layer, is expanded to a batch of k branches without
a copy, and every step then runs the k branches' newest tokens together, (k, 1), against it. Each branch's own keys
and values are appended by the attention's concatenation, so a branch never sees another's. Recomputing instead (k
generations, each from the text itself) runs the prefix k + 1 times: `fork_by_recomputing`, the same tokens at that
cost, which the tests and bench/llm_branches.py compare with.

A sampled token is drawn as model.generation.generation_step draws it: seeded by (seed, position), so a branch at
temperature T is the very text the generation page writes with T and that seed, and branches at three temperatures
with one seed share their random draws (the temperature alone makes them differ).
"""
from __future__ import annotations

import time
from dataclasses import dataclass

import torch

from model.generation import choose_next, generate, top_next_tokens
from model.kv_cache import GenerationTrace, TraceStep
from model.llama import KVCache, LlamaModel

MAX_BRANCHES = 5  # k: the page's limit (and the command line's), 5 × the cache of the prefix while a fork runs
MAX_BRANCH_TOKENS = 32  # N: tokens written per branch, the first (forced or chosen at the fork) included
TOP_SHOWN = 5  # the most likely tokens kept at every step of a branch (as a generation step keeps them)


@dataclass(frozen=True)
class Branch:
    token_ids: list[int]  # N tokens from the fork: the forced (or chosen) token first, then its continuation
    first_prob: float  # the model's probability of token_ids[0] at the fork (temperature 1)
    temperature: float  # how the tokens after the first were chosen (0: greedy)
    top_ids: list[list[int]]  # per token, the TOP_SHOWN most likely at the step that chose it (temperature 1)
    top_probs: list[list[float]]


@dataclass(frozen=True)
class Fork:
    prefix_ids: list[int]  # the text before the fork: branch tokens start at position len(prefix_ids)
    branches: list[Branch]
    prefix_computed: int  # prefix positions whose K and V this fork computed (1 when a cache held the rest)
    prefix_reused: int  # prefix positions whose K and V it read from a cache it was given
    branch_computed: int  # positions run for the branches: k × (N − 1) (a branch's last token is chosen, not run)
    forward_passes: int  # calls of the model: one for the fork's distribution, then one per step for all k
    seconds: float  # wall time of the whole fork

    @property
    def position(self) -> int:
        return len(self.prefix_ids)

    @property
    def computed(self) -> int:
        """Every position whose keys and values this fork computed."""
        return self.prefix_computed + self.branch_computed

    @property
    def recompute_positions(self) -> int:
        """What recomputing would run (fork_by_recomputing): the prefix once for the fork's distribution, then per
        branch the prefix and its forced token at once and one position for each later step: P + k·(P + N − 1)
        (a branch of one token runs nothing after the fork)."""
        steps = len(self.branches[0].token_ids) if self.branches else 0
        return self.position + (len(self.branches) * (self.position + steps - 1) if steps > 1 else 0)

    def divergence(self) -> list[int | None]:
        """Per branch, the first token index at which it differs from branch 0 (None where it never does)."""
        first = self.branches[0].token_ids
        return [next((i for i, (a, b) in enumerate(zip(first, branch.token_ids)) if a != b), None)
                for branch in self.branches]

    def first_difference(self) -> int | None:
        """The first token index at which any two branches differ (0 for a fork into the top k), None if none."""
        found = [i for i in self.divergence() if i is not None]
        return min(found) if found else None


def prefix_cache(cache: KVCache, length: int) -> KVCache:
    """The first `length` positions of a cache (views: no copy; the cache is never changed in place)."""
    if length > cache.length:
        raise ValueError(f"the cache holds {cache.length} positions, not {length}")
    return KVCache(*(tuple(t[:, :, :length] for t in part) for part in (cache.keys, cache.values)))


def _check(ids: list[int], position: int, branches: int, steps: int) -> None:
    if not 1 <= position <= len(ids):
        raise ValueError(f"a fork is at a position 1 … {len(ids)} of the text (it has {len(ids)} tokens)")
    if not 1 <= branches <= MAX_BRANCHES:
        raise ValueError(f"a fork has 1 … {MAX_BRANCHES} branches")
    if not 1 <= steps <= MAX_BRANCH_TOKENS:
        raise ValueError(f"a branch writes 1 … {MAX_BRANCH_TOKENS} tokens")


def _fork_point(model: LlamaModel, prefix: list[int], cache: KVCache | None) -> tuple[torch.Tensor, KVCache, int]:
    """(the next-token logits after the prefix (V,), the prefix's cache, positions computed). A cache holding at least
    P − 1 of the prefix's positions is cut to P − 1 and only the prefix's last token is run (its logits are not
    kept by a generation); without one the whole prefix runs."""
    past = prefix_cache(cache, len(prefix) - 1) if cache is not None and cache.length >= len(prefix) - 1 else None
    new = prefix[past.length:] if past is not None else prefix
    out = model(torch.tensor([new]), cache=past, need_weights=False, last_logits_only=True)
    return out.logits[0, -1], out.cache, len(new)


def _grow(model: LlamaModel, cache: KVCache, firsts: list[int], temperatures: list[float], steps: int,
          top_k: int | None, seed: int) -> tuple[list[list[int]], list[list[list[int]]], list[list[list[float]]]]:
    """Every branch's tokens after its first: one forward pass per step runs the k newest tokens (k, 1) against the
    prefix's cache, expanded to k rows without a copy; each branch then chooses its next token at its temperature."""
    count, position = len(firsts), cache.length
    batch = KVCache(*(tuple(t.expand(count, -1, -1, -1) for t in part) for part in (cache.keys, cache.values)))
    tokens = [[first] for first in firsts]
    tops = [[[] for _ in range(count)], [[] for _ in range(count)]]  # ids, probs per branch, per token after the first
    for step in range(1, steps):
        newest = torch.tensor([[branch[-1]] for branch in tokens])  # (k, 1)
        out = model(newest, cache=batch, need_weights=False, last_logits_only=True)
        batch = out.cache  # (k, h_kv, P + step, d_k) per layer
        for b, logits in enumerate(out.logits[:, -1]):  # (V,) each
            generator = torch.Generator().manual_seed(seed * 1_000_003 + position + step)  # as generation_step
            tokens[b].append(choose_next(logits, temperatures[b], top_k, generator))
            ids, probs = top_next_tokens(logits, TOP_SHOWN)
            tops[0][b].append(ids)
            tops[1][b].append(probs)
    return tokens, tops[0], tops[1]


def _fork(model: LlamaModel, ids: list[int], position: int, steps: int, cache: KVCache | None,
          choose_firsts, temperatures: list[float], top_k: int | None, seed: int) -> Fork:
    start = time.perf_counter()
    prefix = list(ids[:position])
    logits, shared, computed = _fork_point(model, prefix, cache)
    probs = torch.softmax(logits.float(), dim=-1)  # (V,) at temperature 1
    firsts = choose_firsts(logits, probs)
    top_ids, top_probs = top_next_tokens(logits, TOP_SHOWN)
    tokens, later_ids, later_probs = _grow(model, shared, firsts, temperatures, steps, top_k, seed)
    branches = [Branch(tokens[b], float(probs[firsts[b]]), temperatures[b], [top_ids] + later_ids[b],
                       [top_probs] + later_probs[b]) for b in range(len(firsts))]
    return Fork(prefix, branches, computed, position - computed, len(firsts) * (steps - 1), steps,
                time.perf_counter() - start)


@torch.no_grad()
def fork_top(model: LlamaModel, ids: list[int], position: int, branches: int, steps: int, *,
             cache: KVCache | None = None, temperature: float = 0.0, top_k: int | None = None,
             seed: int = 0) -> Fork:
    """Fork the text `ids` at `position` (1 … len(ids)): branch b forces the (b+1)-th most likely token after
    ids[:position], then writes steps − 1 more, greedily (temperature 0) or sampled. `cache`, if given, holds the
    keys and values of ids' first positions (at least position − 1 of them): the prefix is then not run again."""
    _check(ids, position, branches, steps)
    return _fork(model, ids, position, steps, cache, lambda logits, probs: probs.topk(branches).indices.tolist(),
                 [temperature] * branches, top_k, seed)


@torch.no_grad()
def fork_temperatures(model: LlamaModel, ids: list[int], position: int, temperatures: tuple[float, ...],
                      steps: int, *, cache: KVCache | None = None, top_k: int | None = None, seed: int = 0) -> Fork:
    """One branch per temperature after ids[:position], every token (the first too) drawn at that temperature with
    the same seed: the same random draws, different distributions."""
    _check(ids, position, len(temperatures), steps)

    def firsts(logits: torch.Tensor, probs: torch.Tensor) -> list[int]:
        generator = [torch.Generator().manual_seed(seed * 1_000_003 + position) for _ in temperatures]
        return [choose_next(logits, t, top_k, g) for t, g in zip(temperatures, generator)]
    return _fork(model, ids, position, steps, cache, firsts, list(temperatures), top_k, seed)


@torch.no_grad()
def fork_by_recomputing(model: LlamaModel, ids: list[int], position: int, branches: int, steps: int, *,
                        temperature: float = 0.0, top_k: int | None = None, seed: int = 0) -> tuple[list[list[int]], int]:
    """fork_top's tokens the way a fork without a shared cache computes them: the prefix run once for the fork's
    distribution, then each branch generated on its own from the prefix and its forced token (model.generation).
    Returns (every branch's tokens, the positions computed)."""
    _check(ids, position, branches, steps)
    prefix = list(ids[:position])
    logits = model(torch.tensor([prefix]), need_weights=False, last_logits_only=True).logits[0, -1]
    computed, tokens = len(prefix), []
    for first in torch.softmax(logits.float(), dim=-1).topk(branches).indices.tolist():
        written = generate(model, prefix + [first], steps - 1, temperature=temperature, top_k=top_k, seed=seed)
        computed += sum(step.computed_positions for step in written.steps)
        tokens.append([first] + written.new_ids)
    return tokens, computed


def branch_arrays(fork: Fork) -> dict:
    """`python -m model.inspect … --branch POS --top K --steps N`'s arrays: branch_ids (K, N) int64, each branch's
    tokens from the fork (the k-th most likely forced first), and branch_probs (K,) float32, their probabilities."""
    import numpy as np

    return {"branch_ids": np.array([branch.token_ids for branch in fork.branches], dtype=np.int64),
            "branch_probs": np.array([branch.first_prob for branch in fork.branches], dtype=np.float32)}


def adopt_branch(trace: GenerationTrace, lab, fork: Fork, index: int, count: int) -> GenerationTrace:
    """A new generation of trace's prompt: its tokens before the fork, then branch `index`'s first `count` tokens, as
    if the generation had written them (lab: a model with GENERATION). Each new step keeps the branch's top tokens;
    the cache (every position but the last) and the last step's attention row come from one forward pass over the
    branch's tokens, the prefix's keys and values read from trace's cache."""
    position, branch = fork.position, fork.branches[index]
    prompt = len(trace.prompt_ids)
    kept = trace.steps[:position - prompt]
    steps = [TraceStep(token, branch.top_ids[i], branch.top_probs[i],
                       position + i if position + i == prompt else 1,  # step 1 runs the whole prompt
                       0 if position + i == prompt else position + i - 1)
             for i, token in enumerate(branch.token_ids[:count])]
    adopted = GenerationTrace(list(trace.prompt_ids), kept + steps)
    text = adopted.ids
    past = prefix_cache(trace.cache, position - 1) if trace.cache is not None else None  # None: before any step
    step, adopted.cache = lab.next_token(text[:-1], past)
    adopted.attention = step.attention.numpy()  # (L, h, T_k): the query of the text's last token before the newest
    return adopted

"""What the KV cache and grouped-query attention save, counted from a Llama config and measured on the model.

Generation step n (1-based) chooses the token after prompt + n − 1 tokens. Step 1 runs the whole prompt either way.
With the cache, every later step runs only the newest token (T_q = 1): each of the L layers computes one key and one
value per key/value head for it and reads the other positions' keys and values from the cache. Without the cache,
step n runs all prompt + n − 1 positions again. Grouped-query attention (Ainslie et al. 2023, section 2.2) stores
h_kv key/value heads instead of h, so the cache holds h_kv / h of what full multi-head attention would.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np
import torch

from model.config import LlamaConfig
from model.llama import KVCache, LlamaModel


def positions_run(step: int, prompt_length: int, use_cache: bool) -> int:
    """Positions whose K and V step `step` (1-based) computes: the prompt at step 1; then 1 with the cache, or the
    whole text so far (prompt + step − 1) without it."""
    if step < 1 or prompt_length < 1:
        raise ValueError("steps count from 1 and a prompt has at least one token")
    if step == 1 or not use_cache:
        return prompt_length + step - 1
    return 1


def key_vectors_computed(cfg: LlamaConfig, step: int, prompt_length: int, use_cache: bool) -> int:
    """Key vectors (each d_k wide) that step `step` computes over all layers: positions run × L × h_kv."""
    return positions_run(step, prompt_length, use_cache) * cfg.num_layers * cfg.num_kv_heads


def kv_groups(cfg: LlamaConfig) -> list[list[int]]:
    """For each key/value head, the query heads that read it (0-based): query head i reads head i // (h / h_kv)."""
    return [[q for q in range(cfg.num_heads) if cfg.kv_head_of(q) == kv] for kv in range(cfg.num_kv_heads)]


@dataclass(frozen=True)
class StepTiming:
    with_cache: float  # seconds: the newest token alone against the cached keys and values
    without_cache: float  # seconds: the whole text run again
    positions: int  # the text's length at this step (what the run without the cache computes)

    @property
    def speedup(self) -> float:
        return self.without_cache / self.with_cache if self.with_cache > 0 else float("inf")


@torch.no_grad()
def time_step_both_ways(model: LlamaModel, ids: list[int], cache: KVCache, repeats: int = 3) -> StepTiming:
    """Wall time of the forward pass that predicts the token after `ids`, with `cache` (which must hold ids[:-1])
    and without any cache; the fastest of `repeats` runs each (a shared server's other work only adds time), no
    attention maps kept in either (need_weights=False)."""
    if cache.length != len(ids) - 1:
        raise ValueError(f"the cache holds {cache.length} positions; timing needs {len(ids) - 1}")
    newest, whole = torch.tensor([ids[-1:]]), torch.tensor([ids])  # (1, 1) the new token; (1, T) every position

    def fastest(run) -> float:
        times = []
        for _ in range(repeats):
            start = time.perf_counter()
            run()
            times.append(time.perf_counter() - start)
        return min(times)

    with_cache = fastest(lambda: model(newest, cache=cache, need_weights=False, last_logits_only=True))
    without_cache = fastest(lambda: model(whole, need_weights=False, last_logits_only=True))
    return StepTiming(with_cache, without_cache, len(ids))


# --- one session's generation, step by step ---------------------------------------------------------------------

@dataclass(frozen=True)
class TraceStep:
    token_id: int  # the token this step chose
    top_ids: list[int]  # the 5 most likely tokens under the model (temperature 1), most likely first
    top_probs: list[float]
    computed_positions: int  # positions whose K and V this step computed (T_q)
    reused_positions: int  # positions whose K and V it read from the cache


@dataclass
class GenerationTrace:
    """A prompt and the tokens generated after it so far, with the KV cache of the text before the newest token.

    After step n (n ≥ 1), `cache` holds the keys and values of prompt + the first n − 1 new tokens, at every layer,
    (1, h_kv, P + n − 1, d_k) each; the newest token's own K and V are computed by the next step. `attention` is
    step n's query row in every layer and head, (L, h, P + n − 1): what the text's last token attended to while
    choosing the new one.
    """

    prompt_ids: list[int]
    steps: list[TraceStep] = field(default_factory=list)
    cache: KVCache | None = None
    attention: np.ndarray | None = None
    timing: StepTiming | None = None  # the next step timed both ways, when asked for
    timing_at: int = -1  # len(ids) when `timing` was measured

    @property
    def new_ids(self) -> list[int]:
        return [step.token_id for step in self.steps]

    @property
    def ids(self) -> list[int]:
        return self.prompt_ids + self.new_ids

    def finished(self, stop_ids: tuple[int, ...], max_new_tokens: int) -> bool:
        """The model wrote a stop token, or the page's limit of new tokens is reached."""
        return len(self.steps) >= max_new_tokens or bool(self.steps and self.steps[-1].token_id in stop_ids)

    def advance(self, lab, temperature: float = 0.0, top_k: int | None = None, seed: int = 0) -> TraceStep:
        """One generation step (lab.next_token: a model with GENERATION) choosing the token after `ids`."""
        step, self.cache = lab.next_token(self.ids, self.cache, temperature=temperature, top_k=top_k, seed=seed)
        record = TraceStep(step.token_id, step.top_ids, step.top_probs, step.computed_positions,
                           step.reused_positions)
        self.steps.append(record)
        self.attention = step.attention.numpy()  # (L, h, T_k)
        return record

    def time_next_step(self, lab) -> StepTiming:
        """The forward pass of the next step (predicting the token after `ids`), timed with the cache and without."""
        self.timing, self.timing_at = lab.time_step(self.ids, self.cache), len(self.ids)
        return self.timing

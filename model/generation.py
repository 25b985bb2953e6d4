"""Generation step by step on a decoder-only model (model/llama.py), with its KV cache: one step computes the new
token's keys and values and reuses the cached ones; greedy or sampled (temperature, top-k, seeded by the seed and the
position, so that Back then Next draws the same token); the top-5 next tokens with their probabilities."""
from __future__ import annotations

import time
from dataclasses import dataclass

import torch

from model.llama import KVCache, LlamaModel


@dataclass(frozen=True)
class GenerationStep:
    token_id: int  # the token chosen at this step
    top_ids: list[int]  # the 5 most likely next tokens under the model (temperature 1), most likely first
    top_probs: list[float]
    computed_positions: int  # positions whose K and V this step computed (the whole text without the cache)
    reused_positions: int  # positions whose K and V came from the cache
    seconds: float  # the forward pass's wall time
    attention: torch.Tensor | None  # (L, h, T_k) the last query's attention row in every layer and head


@dataclass(frozen=True)
class Generation:
    prompt_ids: list[int]
    steps: list[GenerationStep]

    @property
    def new_ids(self) -> list[int]:
        return [step.token_id for step in self.steps]


def top_next_tokens(logits: torch.Tensor, k: int = 5) -> tuple[list[int], list[float]]:
    """The k most likely next tokens of (V,) logits, with their softmax probabilities."""
    probs, ids = torch.softmax(logits.float(), dim=-1).topk(k)
    return ids.tolist(), probs.tolist()


def sampling_probabilities(logits: torch.Tensor, temperature: float, top_k: int | None = None) -> torch.Tensor:
    """(V,) the distribution a sampled step draws from: softmax(logits / temperature) over the top_k logits, the others
    0 (Fan et al. 2018, §5.4); temperature > 0."""
    scaled = logits.float() / temperature
    if top_k is not None and top_k < scaled.numel():
        threshold = scaled.topk(top_k).values[-1]
        scaled = scaled.masked_fill(scaled < threshold, float("-inf"))
    return torch.softmax(scaled, dim=-1)


def choose_next(logits: torch.Tensor, temperature: float = 0.0, top_k: int | None = None,
                generator: torch.Generator | None = None) -> int:
    """Greedy (temperature 0) or sampled from sampling_probabilities(logits, temperature, top_k), seeded."""
    if temperature <= 0:
        return int(logits.argmax())
    # drawn on the CPU, whatever the logits' device: the seeded generator is a CPU one, and a draw then reads the same
    return int(torch.multinomial(sampling_probabilities(logits, temperature, top_k).cpu(), 1, generator=generator))


@torch.no_grad()
def generation_step(model: LlamaModel, ids: list[int], cache: KVCache | None = None, *, use_cache: bool = True,
                    temperature: float = 0.0, top_k: int | None = None, seed: int = 0,
                    need_weights: bool = False, head_mask: torch.Tensor | None = None,
                    ) -> tuple[GenerationStep, KVCache | None]:
    """Choose the token after `ids`; returns the step and the cache to pass with ids + [token] next time.
    head_mask (L, h) of 0/1 switches heads off (model.switch_off): the cache then holds the switched-off model's keys.

    With use_cache, `cache` must hold ids[:-1] (or be None: the first step runs the whole prompt); the step runs only
    the tokens the cache lacks. Without it the step runs all of ids. A sampled token's draw is seeded by
    (seed, position), so replaying a step (Back, then Next, in the app) draws the same token.
    """
    if not ids:
        raise ValueError("generation needs at least one prompt token")
    start = time.perf_counter()
    if use_cache:
        new = ids[cache.length:] if cache is not None else ids
        out = model(torch.tensor([new]), cache=cache, need_weights=need_weights, last_logits_only=True,
                    head_mask=head_mask)
    else:
        out = model(torch.tensor([ids]), need_weights=need_weights, last_logits_only=True, head_mask=head_mask)
    seconds = time.perf_counter() - start
    logits = out.logits[0, -1]  # (V,)
    generator = torch.Generator().manual_seed(seed * 1_000_003 + len(ids))
    token = choose_next(logits, temperature, top_k, generator)
    top_ids, top_probs = top_next_tokens(logits)
    attention = out.weights[:, 0, :, -1] if need_weights else None  # (L, h, T_k): the last query's rows
    step = GenerationStep(token, top_ids, top_probs, out.computed_positions, out.reused_positions, seconds, attention)
    return step, out.cache if use_cache else None


@torch.no_grad()
def generate(model: LlamaModel, prompt_ids: list[int], max_new_tokens: int, *, use_cache: bool = True,
             temperature: float = 0.0, top_k: int | None = None, seed: int = 0, stop_ids: tuple[int, ...] = (),
             need_weights: bool = False, head_mask: torch.Tensor | None = None) -> Generation:
    """Generate up to max_new_tokens after the prompt, one generation_step at a time, with or without the KV cache.

    With the cache a step runs the new token only (T_q = 1) against the cached keys and values; without it, every
    step runs the whole text again. Both choose the same tokens (the cache changes the work, not the result).
    """
    ids, steps, cache = list(prompt_ids), [], None
    for _ in range(max_new_tokens):
        step, cache = generation_step(model, ids, cache, use_cache=use_cache, temperature=temperature, top_k=top_k,
                                      seed=seed, need_weights=need_weights, head_mask=head_mask)
        steps.append(step)
        ids.append(step.token_id)
        if step.token_id in stop_ids:
            break
    return Generation(list(prompt_ids), steps)


# --- value-weighted norms ---------------------------------------------------------------------------------------------

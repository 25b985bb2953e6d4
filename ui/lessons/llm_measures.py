"""Answers and claims of the LLM lesson (lessons/llm.toml), measured on SmolLM2-135M-Instruct and the stop's view.

Each function reads the stop's state the way its page does (the spec's value, else its default) and goes through
the same server-wide caches as the pages (ui/llm_heads.py), so a class at the stop costs one computation, shared
with the page under it. Layer numbers returned for the screen count from 1.
"""
from __future__ import annotations

import numpy as np

from classroom.lessons import Stop
from model.kv_cache import key_vectors_computed
from ui.llm.generation import LLM_ID
from ui.llm_heads import copy_view, induction_view, sink_view, window_view
from ui.positional_view import rope
from ui.specs import SPECS
from ui.state import get_model


def _view(stop: Stop, name: str):
    """The stop's value of a share-link parameter as the page reads it: the stop's state, else the spec's default."""
    spec = SPECS[name]
    return spec.convert(stop.state[name]) if name in stop.state else spec.initial({})


def _llm():
    return get_model(LLM_ID)  # the shared adapter (model/families.py LlamaAdapter), loaded once per process


def prompt_ids(stop: Stop) -> list[int]:
    """The LLM page's prompt at this stop as the model reads it (in chat form when the stop says so)."""
    lab = _llm()
    text = str(_view(stop, "llm_prompt"))
    return lab.encode(lab.chat_prompt(text) if _view(stop, "llm_chat") else text)


def greedy_next_token(stop: Stop, options: list[str]) -> tuple[str, dict[str, float]]:
    """(the token the model writes first after the stop's prompt (greedy), as text; each option token's probability
    there, at temperature 1): one forward pass. An option outside the model's top 5 gets the fifth's probability,
    the most it can have."""
    lab = _llm()
    step, _ = lab.next_token(prompt_ids(stop), None)
    top = dict(zip(lab.token_texts(step.top_ids), step.top_probs, strict=True))
    return lab.token_texts([step.token_id])[0], {token: float(top.get(token, min(step.top_probs))) for token in options}


def key_vectors(stop: Stop, step: int, cached: bool) -> int:
    """Key vectors (over all layers and key/value heads) that generation step `step` computes for the stop's prompt."""
    return key_vectors_computed(_llm().config, step, len(prompt_ids(stop)), use_cache=cached)


def query_heads_per_kv_head() -> int:
    return _llm().config.group_size


def _sink_ids(stop: Stop) -> tuple[int, ...]:
    return tuple(_llm().encode(str(_view(stop, "sink_text"))))


def sink_share(stop: Stop, from_layer: int) -> float:
    """Mean share of attention on the first token over the heads of layers from_layer … L (1-based)."""
    share = sink_view(_sink_ids(stop)).share  # (L, h)
    if not 1 <= from_layer <= share.shape[0]:
        raise ValueError(f"from_layer must be 1 … {share.shape[0]}")
    return float(np.mean(share[from_layer - 1:]))


def window_gain(stop: Stop) -> float:
    """How much lower the loss is (nats) when a sliding window keeps the first token than when it does not."""
    losses = window_view(_sink_ids(stop), int(_view(stop, "window")))
    return float(losses.window_only - losses.window_with_sink)


def _induction(stop: Stop):
    return induction_view(int(_view(stop, "ind_len")), int(_view(stop, "ind_seed")))


def induction_best_layer(stop: Stop) -> int:
    """The layer (1-based) of the head with the highest induction score on the stop's repeated sequence."""
    return _induction(stop).top[0][0] + 1


def induction_layer_scores(stop: Stop) -> list[float]:
    """The highest induction score of each layer's heads, layer 1 first."""
    return [float(s) for s in _induction(stop).scores.max(axis=1)]


def induction_best_score(stop: Stop) -> float:
    return float(_induction(stop).top[0][2])


def rope_distance_spread(stop: Stop) -> float:
    """Largest spread of the rotated q·k along one distance on the positional page's RoPE section (0: the score
    depends on the distance only)."""
    return float(rope(int(_view(stop, "pe_len")), int(_view(stop, "pe_d")), int(_view(stop, "pe_k"))).diagonal_spread)


def copy_probability(stop: Stop, token: str) -> float:
    """The probability of `token` (as the tokenizer writes it, " mat") as the word the model writes after the
    in-context copy prompt; 0 unless it is the model's most likely (greedy) choice."""
    layer, head, _ = _induction(stop).top[0]
    view = copy_view(layer, head)
    return float(view.top_probs[0]) if view.top_tokens[0] == token else 0.0

"""Right answers computed from a model's attention (pure numpy): a lesson's question stays right when the model
is retrained. Layer/head results are 0-based here; the UI shows them 1-based."""
from __future__ import annotations

import numpy as np

from model.foundations.scaling import softmax


def strongest_head_for(weights: np.ndarray, query: int, key: int) -> tuple[int, int]:
    """(layer, head) that puts the most weight from query row `query` on key column `key`. weights (L, h, T_q, T_k)."""
    layer, head = np.unravel_index(int(np.argmax(weights[:, :, query, key])), weights.shape[:2])
    return int(layer), int(head)


def most_attended_key(weights: np.ndarray, query: int) -> int:
    """The key column with the largest weight in one query row. weights (T_q, T_k)."""
    return int(np.argmax(weights[query]))


def softmax_weight(scores: list[float], factor: float, index: int) -> float:
    """softmax(factor · scores)[index]: e.g. the weight on the second score after scaling by 10."""
    return float(softmax(factor * np.asarray(scores, dtype=float))[index])


def causal_visible_keys(allowed: np.ndarray, query_position: int) -> int:
    """How many keys the query at 1-based position i may attend to under the mask drawn: allowed (T_q, T_k) boolean,
    True where the query may attend (model/foundations/attention_steps.build_mask)."""
    if not 1 <= query_position <= allowed.shape[0]:
        raise ValueError(f"query {query_position} is not one of the {allowed.shape[0]} queries")
    return int(np.count_nonzero(allowed[query_position - 1]))


def lowest_metric(metrics: dict[str, float]) -> str:
    """The name with the lowest value (e.g. the model with the lowest long-sentence exact match)."""
    return min(metrics, key=metrics.get)

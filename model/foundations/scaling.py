"""Why attention divides by √d_k: dot-product variance, softmax saturation, and the softmax Jacobian.

Vaswani et al. 2017, footnote 4: if q and k have independent components with mean 0 and variance 1,
q·k = Σ q_i k_i has mean 0 and variance d_k; dividing by √d_k brings the variance back to 1.
"""
from __future__ import annotations

import numpy as np

from model.metrics import entropy

# The softmax-scaling page's choices (its widgets and its links read these):
SCALING_DKS = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512)  # d_k
SCALING_V1_FACTORS = (1, 2, 5, 10, 20, 50, 100)  # factors for v1 = [0.3, 0.4] (NOTES_SOFTMAX_EXAMPLE)


def transformer_scale(d_k: int) -> float:
    """The Transformer's 1/√d_k, rounded as the page offers and shows it."""
    return round(1 / d_k ** 0.5, 3)


def scaling_scale_options(d_k: int) -> list[float]:
    """The score scales offered: the Transformer's 1/√d_k sits among round values (d_k = 1: 1/√d_k is 1.0)."""
    return sorted({0.01, 0.03, 0.1, transformer_scale(d_k), 0.3, 1.0, 3.0, 10.0})


def dot_product_samples(d_k: int, samples: int = 20000, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """(raw q·k, q·k/√d_k) for `samples` random pairs with N(0, 1) components; each (samples,)."""
    rng = np.random.default_rng(seed)
    q = rng.standard_normal((samples, d_k))
    k = rng.standard_normal((samples, d_k))
    raw = np.einsum("nd,nd->n", q, k)
    return raw, raw / np.sqrt(d_k)


def softmax(z: np.ndarray) -> np.ndarray:
    """Numerically stable softmax over the last axis."""
    z = np.asarray(z, dtype=np.float64)
    e = np.exp(z - z.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def softmax_jacobian(p: np.ndarray) -> np.ndarray:
    """∂y_i/∂z_j = y_i(δ_ij − y_j) = diag(p) − p pᵀ, for y = softmax(z) = p; shape (n, n)."""
    p = np.asarray(p, dtype=np.float64)
    return np.diag(p) - np.outer(p, p)


def saturation_curve(scores: np.ndarray, scales: np.ndarray) -> dict[str, np.ndarray]:
    """For each scale s: entropy, max weight and Jacobian (Frobenius) norm of softmax(s · scores)."""
    rows = {"scale": np.asarray(scales, dtype=float), "entropy": [], "max_weight": [], "jacobian_norm": []}
    for s in rows["scale"]:
        p = softmax(s * np.asarray(scores, dtype=float))
        rows["entropy"].append(entropy(p))
        rows["max_weight"].append(float(p.max()))
        rows["jacobian_norm"].append(float(np.linalg.norm(softmax_jacobian(p))))
    return {k: np.asarray(v) for k, v in rows.items()}


# The notes' examples (001 §3.3): the dot product grows with the dimension.
NOTES_DOT_EXAMPLES = ((np.array([2.0, 2.0]), np.array([2.0, 2.0])),
                      (np.array([2.0] * 5), np.array([2.0] * 5)))
NOTES_SOFTMAX_EXAMPLE = np.array([0.3, 0.4])

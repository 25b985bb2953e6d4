"""The positional page's look at the sinusoidal table (Vaswani et al. 2017, §3.5): similarity, rotation by an
offset, dials against a binary counter, and a trained model's own table. The table itself, and the module that adds
it to the embeddings, are the network's: model/positional.py."""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch

from model.positional import PositionalEncoding, sinusoidal_at, sinusoidal_encoding


def frequencies(d_model: int) -> torch.Tensor:
    """(d_model // 2,) float64: ω_i = 1 / 10000^(2i/d_model), the turning speed (radians per position) of pair i."""
    two_i = torch.arange(0, d_model - 1, 2, dtype=torch.float64)  # (d_model // 2,): only complete (sin, cos) pairs
    return 1.0 / torch.pow(10000.0, two_i / d_model)


def wavelengths(d_model: int) -> torch.Tensor:
    """(d_model // 2,) float64: positions it takes dimension pair i to turn once, 2π / ω_i (2π up to 10000·2π)."""
    return 2 * math.pi / frequencies(d_model)


def position_similarity(table: torch.Tensor) -> torch.Tensor:
    """(T, d_model) -> (T, T): entry [p, q] = PE(p)·PE(q); for the sinusoidal table this is Σ_i cos((p−q)·ω_i)."""
    return table @ table.T


def diagonal_spread(similarity: torch.Tensor) -> float:
    """Largest (max − min) along any diagonal q − p = const of a (T, T) matrix; 0 when it depends on p − q only."""
    length = similarity.shape[0]
    diagonals = (torch.diagonal(similarity, offset) for offset in range(-length + 1, length))
    return max(float(d.max() - d.min()) for d in diagonals)


def rotation_matrix(d_model: int, k: int, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    """(d_model, d_model) M_k with PE(p + k) = M_k · PE(p) for every p: one 2×2 rotation by k·ω_i per pair.

    On the pair (sin pω, cos pω): sin((p+k)ω) = cos(kω)·sin(pω) + sin(kω)·cos(pω) and
    cos((p+k)ω) = −sin(kω)·sin(pω) + cos(kω)·cos(pω). M_k depends on k only, never on p.
    """
    if d_model % 2:
        raise ValueError(f"the rotation needs complete (sin, cos) pairs: d_model must be even, not {d_model}")
    angle = k * frequencies(d_model)  # (d_model // 2,)
    c, s = torch.cos(angle), torch.sin(angle)
    matrix = torch.zeros(d_model, d_model, dtype=torch.float64)
    even, odd = torch.arange(0, d_model, 2), torch.arange(1, d_model, 2)
    matrix[even, even], matrix[even, odd] = c, s
    matrix[odd, even], matrix[odd, odd] = -s, c
    return matrix.to(dtype)


def dial_angles(positions: torch.Tensor | list[int], d_model: int) -> torch.Tensor:
    """(P,) positions -> (P, d_model // 2) angle p·ω_i of each dimension pair, wrapped to [0, 2π).

    Read as a clock hand starting at 12 o'clock and turning clockwise, its tip is exactly
    (PE(p, 2i), PE(p, 2i+1)) = (sin, cos). Pair 0 turns fastest (1 radian per position), the last slowest.
    """
    p = torch.as_tensor(positions, dtype=torch.float64)[:, None]  # (P, 1)
    return torch.remainder(p * frequencies(d_model), 2 * math.pi)  # (P, d_model // 2)


def binary_counter(positions: torch.Tensor | list[int], bits: int) -> torch.Tensor:
    """(P,) non-negative positions -> (P, bits) int64 bits of p, least significant first (bit 0 flips every step)."""
    p = torch.as_tensor(positions, dtype=torch.int64)[:, None]  # (P, 1)
    return torch.bitwise_and(torch.bitwise_right_shift(p, torch.arange(bits)), 1)  # (P, bits)


def bits_needed(length: int) -> int:
    """Bits a counter needs to count positions 0 … length − 1."""
    return max(1, (length - 1).bit_length())


@dataclass(frozen=True)
class SinusoidalAnalysis:
    """Everything the positional-encoding page shows for one (length, d_model, k), as numpy arrays."""

    table: np.ndarray  # (T, d_model) PE(p)
    similarity: np.ndarray  # (T, T) PE(p)·PE(q)
    diagonal_spread: float  # 0 when the similarity depends on p − q only
    rotation: np.ndarray  # (d_model, d_model) M_k
    shifted: np.ndarray  # (T − k, d_model) PE(p + k) for p = 0 … T − k − 1
    rotated: np.ndarray  # (T − k, d_model) M_k · PE(p) for the same p
    angles: np.ndarray  # (T, d_model // 2) dial angles in radians, [0, 2π)
    wavelengths: np.ndarray  # (d_model // 2,) positions per full turn of each dial
    bits: np.ndarray  # (T, bits_needed(T)) binary counter, least significant bit first
    fine_positions: np.ndarray  # (F,) 0 … T − 1 in steps of 1 / CURVE_SAMPLES: the curves between the integers
    fine_table: np.ndarray  # (F, d_model) PE at fine_positions

    @property
    def rotation_error(self) -> np.ndarray:
        """(T − k,) max over dimensions of |PE(p + k) − M_k · PE(p)|."""
        return np.abs(self.shifted - self.rotated).max(axis=1)


CURVE_SAMPLES = 8  # samples per position: dimension 0 turns 1 radian per position, so 8 draw it as a smooth wave


def analyse_sinusoidal(length: int, d_model: int, k: int) -> SinusoidalAnalysis:
    """The sinusoidal table of `length` positions and its properties; needs even d_model and 0 < k < length."""
    if not 0 < k < length:
        raise ValueError(f"offset k must be between 1 and length − 1 = {length - 1}, not {k}")
    table = sinusoidal_encoding(length, d_model)  # (T, d_model)
    similarity = position_similarity(table.double())  # (T, T), float64 so rounding does not hide the pattern
    rotation = rotation_matrix(d_model, k)  # (d_model, d_model)
    positions = torch.arange(length)
    fine = torch.arange((length - 1) * CURVE_SAMPLES + 1, dtype=torch.float64) / CURVE_SAMPLES  # (F,)
    return SinusoidalAnalysis(
        table=table.numpy(), similarity=similarity.numpy(), diagonal_spread=diagonal_spread(similarity),
        rotation=rotation.numpy(), shifted=table[k:].numpy(), rotated=(table[: length - k] @ rotation.T).numpy(),
        angles=dial_angles(positions, d_model).numpy(), wavelengths=wavelengths(d_model).numpy(),
        bits=binary_counter(positions, bits_needed(length)).numpy(),
        fine_positions=fine.numpy(), fine_table=sinusoidal_at(fine, d_model).numpy())


@dataclass(frozen=True)
class PositionTableSummary:
    """A model's position table as numpy, with how far it is from the sinusoidal formula."""

    kind: str  # "sinusoidal" (fixed buffer) or "learned" (trained parameter)
    table: np.ndarray  # (max_len, d_model)
    max_diff_from_sinusoidal: float  # max |table − sinusoidal_encoding(max_len, d_model)|


def summarize_position_table(encoding: PositionalEncoding) -> PositionTableSummary:
    table = encoding.table.detach().float().cpu()  # (max_len, d_model)
    reference = sinusoidal_encoding(*table.shape)
    return PositionTableSummary(encoding.kind, table.numpy(), float((table - reference).abs().max()))


def trained_position_table(model: object) -> PositionTableSummary | None:
    """The summary of a model's source-side position table (PositionalEncoding, as our Transformer has), or None for
    a model without one (a GRU reads positions from its recurrence; a BERT's table is an embedding of its own)."""
    encoding = getattr(model, "src_pos", None)
    return summarize_position_table(encoding) if isinstance(encoding, PositionalEncoding) else None

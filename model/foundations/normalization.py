"""Layer normalization vs batch normalization on a padded batch of sequences (notes 000 §1.1).

Shapes: B sequences, T positions (the longest length; shorter sequences are padded), d features.
`mask` is (B, T) boolean, True for real tokens and False for padding. Padding never enters a statistic.

Three ways to choose the values that are normalised together:
- "layer": one token's d features (Ba et al. 2016). Statistics per token, shape (B, T).
- "batch": one feature across every real token of the batch (BatchNorm1d on the unpadded tokens).
  Statistics per feature, shape (d,).
- "batch_per_step": one feature across the batch at one position, the per-time-step statistics a
  recurrent model would have to keep (notes §1.1.1, point 2). Statistics per position and feature, (T, d).
No affine scale or shift: the normalised value is (x − mean) / √(var + eps) with the biased variance,
as torch.nn.LayerNorm(elementwise_affine=False) and torch.nn.BatchNorm1d(affine=False) compute it in training.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np
import torch
from torch import nn

NormKind = Literal["layer", "batch", "batch_per_step"]
NORM_KINDS: tuple[NormKind, ...] = ("layer", "batch", "batch_per_step")
EPS = 1e-5  # torch's default for both LayerNorm and BatchNorm1d


@dataclass(frozen=True)
class NormResult:
    output: torch.Tensor  # (B, T, d); 0 at padded positions
    mean: torch.Tensor  # layer (B, T) | batch (d,) | batch_per_step (T, d); NaN where nothing real was pooled
    var: torch.Tensor  # same shape as mean, biased (divide by count)
    count: torch.Tensor  # same shape as mean: how many real values each statistic pooled (int64)


def lengths_mask(lengths: torch.Tensor, max_len: int | None = None) -> torch.Tensor:
    """(B,) lengths -> (B, T) boolean mask, True for the first lengths[b] positions."""
    max_len = int(lengths.max()) if max_len is None else max_len
    return torch.arange(max_len)[None, :] < lengths[:, None]


def example_lengths(batch_size: int, max_len: int, seed: int = 0) -> torch.Tensor:
    """(B,) sequence lengths in 1..max_len; the first sequence always has max_len (it sets T)."""
    generator = torch.Generator().manual_seed(seed)
    lengths = torch.randint(1, max_len + 1, (batch_size,), generator=generator)
    lengths[0] = max_len
    return lengths


def example_batch(batch_size: int, max_len: int, d: int, seed: int = 0,
                  lengths: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """A deterministic padded batch: x (B, T, d) float32 with 0 at padding, and its mask (B, T).

    Each feature has its own offset and spread (as activations in a real layer do), so statistics taken
    per feature and statistics taken per token visibly differ.
    """
    lengths = example_lengths(batch_size, max_len, seed) if lengths is None else lengths
    mask = lengths_mask(lengths, max_len)  # (B, T)
    generator = torch.Generator().manual_seed(seed + 1)
    offset = 2.0 * torch.randn(d, generator=generator)  # (d,)
    spread = 0.5 + 2.5 * torch.rand(d, generator=generator)  # (d,)
    x = offset + spread * torch.randn(batch_size, max_len, d, generator=generator)  # (B, T, d)
    return x * mask[..., None], mask


def _masked_normalize(x: torch.Tensor, mask: torch.Tensor, dims: tuple[int, ...], eps: float) -> NormResult:
    """Normalise x over `dims`, pooling only cells where the (B, T, d)-broadcast mask is True."""
    weight = mask[..., None].expand_as(x).to(x.dtype)  # (B, T, d)
    count = weight.sum(dims, keepdim=True)  # 1 along `dims`
    mean = (x * weight).sum(dims, keepdim=True) / count  # 0/0 = NaN where nothing real was pooled
    var = ((x - mean) ** 2 * weight).sum(dims, keepdim=True) / count
    output = torch.where(weight.bool(), (x - mean) / torch.sqrt(var + eps), torch.zeros_like(x))
    return NormResult(output, mean, var, count.to(torch.int64))


def layer_norm(x: torch.Tensor, mask: torch.Tensor, eps: float = EPS) -> NormResult:
    """Statistics per token over its d features; mean, var, count (B, T). Padded tokens: NaN statistics."""
    result = _masked_normalize(x, mask, (2,), eps)
    return NormResult(result.output, result.mean[..., 0], result.var[..., 0], result.count[..., 0])


def batch_norm(x: torch.Tensor, mask: torch.Tensor, eps: float = EPS) -> NormResult:
    """Statistics per feature over every real token of the batch; mean, var, count (d,)."""
    result = _masked_normalize(x, mask, (0, 1), eps)
    return NormResult(result.output, result.mean[0, 0], result.var[0, 0], result.count[0, 0])


def batch_norm_per_step(x: torch.Tensor, mask: torch.Tensor, eps: float = EPS) -> NormResult:
    """Statistics per (position, feature) over the sequences still running there; mean, var, count (T, d)."""
    result = _masked_normalize(x, mask, (0,), eps)
    return NormResult(result.output, result.mean[0], result.var[0], result.count[0])


NORMALIZERS = {"layer": layer_norm, "batch": batch_norm, "batch_per_step": batch_norm_per_step}


def normalize(x: torch.Tensor, mask: torch.Tensor, kind: NormKind, eps: float = EPS) -> NormResult:
    return NORMALIZERS[kind](x, mask, eps)


def pooled_cells(mask: np.ndarray, d: int, kind: NormKind, focus: tuple[int, int, int]) -> np.ndarray:
    """(B, T, d) boolean: the real cells whose values make up the statistic that normalises cell `focus`.

    focus is (sequence b, position t, feature f); layer uses (b, t), batch uses f, batch_per_step uses (t, f).
    """
    mask = np.asarray(mask, dtype=bool)
    b, t, f = focus
    cells = np.zeros(mask.shape + (d,), dtype=bool)  # (B, T, d)
    if kind == "layer":
        cells[b, t, :] = True
    elif kind == "batch":
        cells[:, :, f] = True
    else:
        cells[:, t, f] = True
    return cells & mask[..., None]


def torch_reference(x: torch.Tensor, mask: torch.Tensor, kind: NormKind,
                    eps: float = EPS) -> tuple[torch.Tensor | None, str | None]:
    """The same normalisation by torch.nn modules on the unpadded tokens: (output (B, T, d) or None, error or None).

    BatchNorm1d in training mode refuses a channel with a single value ("Expected more than 1 value per channel
    when training"): the variance of one number is 0, so every output would be 0. That refusal is returned as text.
    """
    d = x.size(-1)
    output = torch.zeros_like(x)
    try:
        if kind == "layer":
            output[mask] = nn.LayerNorm(d, eps=eps, elementwise_affine=False)(x[mask])  # (N_real, d)
        elif kind == "batch":
            output[mask] = nn.BatchNorm1d(d, eps=eps, affine=False).train()(x[mask])  # (N_real, d)
        else:
            for t in range(x.size(1)):
                rows = mask[:, t]  # (B,) sequences still running at position t
                output[rows, t] = nn.BatchNorm1d(d, eps=eps, affine=False).train()(x[rows, t])
    except ValueError as error:
        return None, str(error)
    return output, None


@dataclass(frozen=True)
class NormalizationDemo:
    """Everything the normalization page shows, as numpy arrays."""
    x: np.ndarray  # (B, T, d) input, 0 at padding
    mask: np.ndarray  # (B, T) True for real tokens
    lengths: np.ndarray  # (B,)
    output: np.ndarray  # (B, T, d) normalised, 0 at padding
    mean: np.ndarray  # layer (B, T) | batch (d,) | batch_per_step (T, d)
    var: np.ndarray  # same shape as mean
    count: np.ndarray  # same shape as mean
    torch_error: str | None  # what torch.nn raised, if it refused
    torch_max_abs_diff: float | None  # max |ours − torch.nn| over real cells, None when torch refused

    @property
    def collapsed(self) -> np.ndarray:
        """Boolean, same shape as mean: statistics pooled from real values that have zero variance."""
        return (self.count >= 1) & (self.var == 0)

    @property
    def zeroed_fraction(self) -> float:
        """Share of real output values that came out exactly 0 because their statistic had zero variance."""
        real = np.broadcast_to(self.mask[..., None], self.output.shape)
        return float((self.output[real] == 0).mean()) if real.any() else 0.0


def normalization_demo(batch_size: int, max_len: int, d: int, kind: NormKind, seed: int = 0) -> NormalizationDemo:
    x, mask = example_batch(batch_size, max_len, d, seed)
    result = normalize(x, mask, kind)
    reference, error = torch_reference(x, mask, kind)
    diff = None if reference is None else float((result.output - reference)[mask].abs().max())
    return NormalizationDemo(x=x.numpy(), mask=mask.numpy(), lengths=mask.sum(1).numpy(), output=result.output.numpy(),
                             mean=result.mean.numpy(), var=result.var.numpy(), count=result.count.numpy(),
                             torch_error=error, torch_max_abs_diff=diff)

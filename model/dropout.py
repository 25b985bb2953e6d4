"""Dropout (Srivastava et al. 2014; the Transformer's residual and embedding dropout, Vaswani et al. 2017 §5.4) with
a cheaper keep mask on the CPU.

torch's CPU dropout draws its mask with `bernoulli_`, one generator call per element, a large share of a training
step at p = 0.1. Here one 64-bit draw gives two 32-bit uniform integers, so a mask costs half the generator calls,
and the keep test is a float comparison (`python bench/dropout_speed.py` compares the two). Same placement,
same probability (to within 3·10⁻⁸; torch.rand's own resolution is 2⁻²⁴ ≈ 6·10⁻⁸), same inverted scaling by
1/(1 − p), the same global generator (torch.manual_seed repeats a run). On other devices and dtypes torch's own
dropout kernels are used unchanged. Attention-weight dropout stays inside F.scaled_dot_product_attention (dropout_p):
the cheaper mask there saves next to nothing a step, not worth a second attention path.
"""
from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

_INT32_SPAN = 2.0 ** 32


def keep_mask(like: torch.Tensor, p: float) -> torch.Tensor:
    """A float32 CPU tensor shaped like `like`: 1.0 with probability 1 − p (keep), else 0.0 (drop)."""
    count = like.numel()
    words = torch.empty((count + 1) // 2, dtype=torch.int64).random_(-2 ** 63, None)  # 64 uniform bits each
    draws = words.view(torch.int32)[:count].view(like.shape)  # uniform over [-2³¹, 2³¹)
    # A draw is kept when it lies at or above the lowest p·2³² integers. float32 keeps the comparison one fast
    # vectorised kernel; rounding the draws to float32 moves the threshold by at most 64 of 2³² (p off by < 3e-8).
    threshold = -2.0 ** 31 + round(p * _INT32_SPAN)
    return draws.to(torch.float32).ge_(threshold)


def _check(p: float) -> None:
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def _cheap_mask_applies(x: torch.Tensor, p: float) -> bool:
    """float32 on the CPU (the tested default; the mask is float32), and p < 1 (p = 1 keeps nothing: torch's kernel
    does that without a scale of 1/0)."""
    return x.device.type == "cpu" and x.dtype == torch.float32 and p < 1.0


def dropout(x: torch.Tensor, p: float, training: bool = True) -> torch.Tensor:
    """F.dropout(x, p, training): each element zeroed with probability p, the rest scaled by 1/(1 − p)."""
    _check(p)
    if not training or p == 0.0:
        return x
    if not _cheap_mask_applies(x, p):
        return F.dropout(x, p, training=True)
    return x * keep_mask(x, p).mul_(1.0 / (1.0 - p))  # (…) × {0, 1/(1−p)}


def dropout_add(residual: torch.Tensor, x: torch.Tensor, p: float, training: bool = True) -> torch.Tensor:
    """residual + dropout(x, p): the residual connection's add and the dropout's scaling in one kernel (addcmul)."""
    _check(p)
    if not training or p == 0.0:
        return residual + x
    if not _cheap_mask_applies(x, p):
        return residual + F.dropout(x, p, training=True)
    return torch.addcmul(residual, x, keep_mask(x, p), value=1.0 / (1.0 - p))


class Dropout(nn.Module):
    """nn.Dropout(p) on this module's cheaper CPU mask (no parameters, so state dicts are the same)."""

    def __init__(self, p: float = 0.5):
        super().__init__()
        _check(p)
        self.p = p

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return dropout(x, self.p, self.training)

    def extra_repr(self) -> str:
        return f"p={self.p}"

"""Positional encodings (Vaswani et al. 2017, §3.5)."""
from __future__ import annotations

import math

import torch
from torch import nn


def sinusoidal_encoding(length: int, d_model: int) -> torch.Tensor:
    """(length, d_model): PE(pos, 2i) = sin(pos/10000^(2i/d_model)), PE(pos, 2i+1) = cos(same)."""
    position = torch.arange(length, dtype=torch.float64)[:, None]  # (T, 1)
    two_i = torch.arange(0, d_model, 2, dtype=torch.float64)  # (ceil(d/2),)
    angle = position / torch.pow(10000.0, two_i / d_model)  # (T, ceil(d/2))
    table = torch.zeros(length, d_model, dtype=torch.float64)
    table[:, 0::2] = torch.sin(angle)
    table[:, 1::2] = torch.cos(angle[:, : d_model // 2])
    return table.float()


class PositionalEncoding(nn.Module):
    """Adds a sinusoidal (fixed buffer) or learned (parameter) position table to (B, T, d_model)."""

    def __init__(self, d_model: int, max_len: int, kind: str = "sinusoidal", dropout: float = 0.0):
        super().__init__()
        if kind not in ("sinusoidal", "learned"):
            raise ValueError(f"positional encoding must be 'sinusoidal' or 'learned', not {kind!r}")
        self.kind = kind
        if kind == "sinusoidal":
            self.register_buffer("table", sinusoidal_encoding(max_len, d_model), persistent=False)
        else:
            self.table = nn.Parameter(torch.randn(max_len, d_model) * (1.0 / math.sqrt(d_model)))
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.dropout(x + self.table[: x.size(1)])

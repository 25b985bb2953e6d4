"""Positional encodings (Vaswani et al. 2017, §3.5): the sinusoidal table and the module that adds it (or a learned
one) to the embeddings. What the positional page shows about the table is in model/foundations/positional.py."""
from __future__ import annotations

import math

import torch
from torch import nn

from model.dropout import Dropout


def sinusoidal_at(positions, d_model: int) -> torch.Tensor:
    """(P,) real positions -> (P, d_model) float64: the same formula between the integers (for smooth curves)."""
    position = torch.as_tensor(positions, dtype=torch.float64)[:, None]  # (P, 1)
    two_i = torch.arange(0, d_model, 2, dtype=torch.float64)  # (ceil(d/2),)
    angle = position / torch.pow(10000.0, two_i / d_model)  # (P, ceil(d/2))
    table = torch.zeros(len(position), d_model, dtype=torch.float64)
    table[:, 0::2] = torch.sin(angle)
    table[:, 1::2] = torch.cos(angle[:, : d_model // 2])
    return table


def sinusoidal_encoding(length: int, d_model: int) -> torch.Tensor:
    """(length, d_model) float32: PE(pos, 2i) = sin(pos/10000^(2i/d_model)), PE(pos, 2i+1) = cos(same)."""
    return sinusoidal_at(torch.arange(length), d_model).float()  # computed in float64, stored as the model's float32


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
        self.dropout = Dropout(dropout)  # model/dropout.py: nn.Dropout with a cheaper CPU mask

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.dropout(x + self.table[: x.size(1)])

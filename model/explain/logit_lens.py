"""The logit lens (nostalgebraist 2020): read the residual stream after the embeddings and after every block as if it
were the last one, through the model's final norm and output matrix, and see at which layer the answer forms.

Row 0 is the token embeddings, row l the output of block l, so row L is the model's own next-token distribution.
The blocks run once (the model's residual_stream); only the (L+1)·T unembeddings are added, in chunks of rows so
that at most LENS_CHUNK_ROWS × V logits are held at once (V = 49152 for SmolLM2: 48 MiB of float32 per chunk).

Shapes: L blocks, T positions, V vocabulary, k top tokens.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import torch

if TYPE_CHECKING:  # only a type here: the adapters package imports every family
    from model.adapters.protocols import ReadsResidualStream

LENS_TOP_K = 5  # tokens kept per cell: the map shows the first, its hover the rest
LENS_CHUNK_ROWS = 256  # residual vectors unembedded at once


@dataclass(frozen=True)
class LogitLens:
    """The logit lens of one text; `token_*` are None when no token was chosen."""

    ids: list[int]  # (T,) the text's token ids
    tokens: list[str]  # (T,) … as text
    top_ids: np.ndarray  # (L+1, T, k) int64: each cell's most likely next tokens, most likely first
    top_probs: np.ndarray  # (L+1, T, k) float32: their probabilities
    commitment: np.ndarray  # (T,) int64: the first row from which row L's top token stays the top token
    token_id: int | None = None  # the chosen token
    token_ranks: np.ndarray | None = None  # (L+1, T) int64: its rank in each cell, 1 = the top token
    token_probs: np.ndarray | None = None  # (L+1, T) float32: its probability in each cell

    @property
    def layers(self) -> int:
        """L: the number of blocks (rows are L + 1)."""
        return self.top_ids.shape[0] - 1


def logit_lens(lab: ReadsResidualStream, text: str, token_id: int | None = None, k: int = LENS_TOP_K) -> LogitLens:
    """The top k tokens and their probabilities in every (row, position) of the text's residual stream, each row
    through the final norm and the output matrix; with token_id, that token's rank and probability in every cell."""
    stream = lab.residual_stream(text)
    rows, length = stream.hidden.shape[0], stream.hidden.shape[1]
    flat = stream.hidden.reshape(rows * length, -1)  # ((L+1)·T, d)
    top_ids, top_probs, ranks, probs = [], [], [], []
    with torch.no_grad():
        for chunk in flat.split(LENS_CHUNK_ROWS):
            logits = lab.unembed(chunk).float()  # (n, V)
            distribution = torch.softmax(logits, dim=-1)
            top = distribution.topk(k, dim=-1)
            top_ids.append(top.indices)
            top_probs.append(top.values)
            if token_id is not None:
                chosen = logits[:, token_id:token_id + 1]  # (n, 1)
                ranks.append(1 + (logits > chosen).sum(-1))  # tokens strictly more likely, plus one
                probs.append(distribution[:, token_id])
    ids = torch.cat(top_ids).reshape(rows, length, k).cpu().numpy().astype(np.int64)
    chosen_ranks = chosen_probs = None
    if token_id is not None:
        chosen_ranks = torch.cat(ranks).reshape(rows, length).cpu().numpy().astype(np.int64)
        chosen_probs = torch.cat(probs).reshape(rows, length).cpu().numpy().astype(np.float32)
    return LogitLens(list(stream.ids), list(stream.tokens), ids,
                     torch.cat(top_probs).reshape(rows, length, k).cpu().numpy().astype(np.float32),
                     commitment_layers(ids[..., 0]), token_id, chosen_ranks, chosen_probs)


def commitment_layers(top1: np.ndarray) -> np.ndarray:
    """top1 (L+1, T) each cell's top token -> (T,): per position, the first row r such that rows r … L all have
    row L's top token on top (L when it only gets there at the last row; 0 when the embeddings already agree)."""
    agrees = top1 == top1[-1]  # (L+1, T); the last row always agrees with itself
    stays = np.logical_and.accumulate(agrees[::-1], axis=0)[::-1]  # row r: rows r … L all agree
    return np.argmax(stays, axis=0).astype(np.int64)  # the first True of each column

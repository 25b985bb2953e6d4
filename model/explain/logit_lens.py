"""The logit lens (nostalgebraist 2020): read the residual stream after the embeddings and after every block as if it
were the last one, through the model's final norm and output matrix, and see at which layer the answer forms.

Row 0 is the token embeddings, row l the output of block l, so row L is the model's own next-token distribution.
The blocks run once (the model's residual_stream); only the unembeddings are added, in chunks of rows so that at most
LENS_CHUNK_ROWS × V logits are held at once (V = 49152 for SmolLM2: 12 MiB of float32 per chunk, which stays in a
server CPU's last-level cache for the passes after the matmul). Three readings of one stream:
- logit_lens: the whole grid, (L+1)·T rows: its price is the unembedding matmul of those rows (bench/llm.py times the
  two in one run); one softmax, one top-k and one comparison pass per chunk come on top.
- lens_column: one position across every row, (L+1) rows: what a question about the last position needs, without
  the grid (a fraction of one forward).
- lens_cell: one (row, position) cell, its top tokens: one vector through the unembedding (milliseconds).

Shapes: L blocks, T positions, V vocabulary, k top tokens.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import torch

if TYPE_CHECKING:  # only a type here: the adapters package imports every family
    from model.adapters.protocols import ReadsResidualStream, ResidualStream

LENS_TOP_K = 5  # tokens kept per cell: the map shows the first, its hover the rest
CELL_TOP_K = 10  # tokens a clicked cell lists
LENS_CHUNK_ROWS = 64  # residual vectors unembedded at once


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


@dataclass(frozen=True)
class LensColumn:
    """The logit lens at one position, every row: `token_*` are None when no token was chosen."""

    position: int  # 0-based
    top_ids: np.ndarray  # (L+1, k) int64
    top_probs: np.ndarray  # (L+1, k) float32
    commitment: int  # the first row from which row L's top token stays the top token
    token_id: int | None = None
    token_ranks: np.ndarray | None = None  # (L+1,) int64, 1 = the top token
    token_probs: np.ndarray | None = None  # (L+1,) float32


@dataclass(frozen=True)
class _Read:
    top_ids: torch.Tensor  # (n, k)
    top_probs: torch.Tensor  # (n, k)
    token_ranks: torch.Tensor | None  # (n,)
    token_probs: torch.Tensor | None  # (n,)


def _read_rows(lab: ReadsResidualStream, rows: torch.Tensor, token_id: int | None, k: int) -> _Read:
    """rows (n, d) residual vectors -> each row's top k tokens and probabilities through the final norm and the
    output matrix, and token_id's rank and probability; LENS_CHUNK_ROWS rows at a time."""
    top_ids, top_probs, ranks, probs = [], [], [], []
    with torch.no_grad():
        for chunk in rows.split(LENS_CHUNK_ROWS):
            logits = lab.unembed(chunk).float()  # (n, V)
            distribution = torch.softmax(logits, dim=-1)
            top = distribution.topk(k, dim=-1)
            top_ids.append(top.indices)
            top_probs.append(top.values)
            if token_id is not None:
                chosen = logits[:, token_id:token_id + 1]  # (n, 1)
                # tokens strictly more likely, plus one (summed as int32: a sum of booleans into int64 is 5× slower)
                ranks.append(1 + (logits > chosen).sum(-1, dtype=torch.int32))
                probs.append(distribution[:, token_id])
    chosen_ranks = chosen_probs = None
    if token_id is not None:
        chosen_ranks, chosen_probs = torch.cat(ranks), torch.cat(probs)
    return _Read(torch.cat(top_ids), torch.cat(top_probs), chosen_ranks, chosen_probs)


def _ints(values: torch.Tensor) -> np.ndarray:
    return values.cpu().numpy().astype(np.int64)


def _floats(values: torch.Tensor) -> np.ndarray:
    return values.cpu().numpy().astype(np.float32)


def logit_lens(lab: ReadsResidualStream, text: str, token_id: int | None = None, k: int = LENS_TOP_K,
               stream: ResidualStream | None = None) -> LogitLens:
    """The top k tokens and their probabilities in every (row, position) of the text's residual stream, each row
    through the final norm and the output matrix; with token_id, that token's rank and probability in every cell.
    `stream`: the text's residual stream where the caller has it (no second forward)."""
    stream = stream if stream is not None else lab.residual_stream(text)
    rows, length = stream.hidden.shape[0], stream.hidden.shape[1]
    read = _read_rows(lab, stream.hidden.reshape(rows * length, -1), token_id, k)  # ((L+1)·T, d) in
    ids = _ints(read.top_ids).reshape(rows, length, k)
    chosen_ranks = chosen_probs = None
    if token_id is not None:
        chosen_ranks = _ints(read.token_ranks).reshape(rows, length)
        chosen_probs = _floats(read.token_probs).reshape(rows, length)
    return LogitLens(list(stream.ids), list(stream.tokens), ids, _floats(read.top_probs).reshape(rows, length, k),
                     commitment_layers(ids[..., 0]), token_id, chosen_ranks, chosen_probs)


def lens_column(lab: ReadsResidualStream, hidden: torch.Tensor, position: int = -1, token_id: int | None = None,
                k: int = LENS_TOP_K) -> LensColumn:
    """The lens at one position (negative counts from the end) of a residual stream's hidden (L+1, T, d), every row:
    the same numbers as that column of logit_lens, for L+1 unembeddings instead of (L+1)·T."""
    length = hidden.shape[1]
    if not -length <= position < length:
        raise IndexError(f"position {position} of a {length}-token text")
    position %= length
    read = _read_rows(lab, hidden[:, position], token_id, k)  # (L+1, d) in
    ids = _ints(read.top_ids)
    ranks = None if read.token_ranks is None else _ints(read.token_ranks)
    probs = None if read.token_probs is None else _floats(read.token_probs)
    return LensColumn(position, ids, _floats(read.top_probs), int(commitment_layers(ids[:, :1])[0]), token_id,
                      ranks, probs)


def lens_cell(lab: ReadsResidualStream, hidden: torch.Tensor, row: int, position: int,
              k: int = CELL_TOP_K) -> tuple[list[int], list[float]]:
    """One cell of the lens of hidden (L+1, T, d): row `row` (0 = the embeddings, l = block l's output) at `position`
    (0-based) -> its top k token ids and probabilities, most likely first. IndexError outside the stream."""
    rows, length = hidden.shape[0], hidden.shape[1]
    if not (0 <= row < rows and 0 <= position < length):
        raise IndexError(f"cell ({row}, {position}) of a {rows} × {length} lens")
    read = _read_rows(lab, hidden[row, position][None], None, k)
    return read.top_ids[0].tolist(), read.top_probs[0].tolist()


def commitment_layers(top1: np.ndarray) -> np.ndarray:
    """top1 (L+1, T) each cell's top token -> (T,): per position, the first row r such that rows r … L all have
    row L's top token on top (L when it only gets there at the last row; 0 when the embeddings already agree)."""
    agrees = top1 == top1[-1]  # (L+1, T); the last row always agrees with itself
    stays = np.logical_and.accumulate(agrees[::-1], axis=0)[::-1]  # row r: rows r … L all agree
    return np.argmax(stays, axis=0).astype(np.int64)  # the first True of each column

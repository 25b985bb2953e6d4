"""Activation patching of the residual stream (Meng et al. 2022's causal tracing; Wang et al. 2022): which
(layer, position) carries what the answer needs.

Two prompts of the same token count, a clean one ("The capital of France is") and a corrupted one ("The capital of
Italy is"), and an answer token (" Paris"). For each block l and position t, the corrupted run is repeated with block
l's output at position t replaced by the clean run's, and p(answer) is read at the last position: a cell near the
clean run's p(answer) carries the difference between the prompts there. Both residual streams are computed once; a
patched run starts from the corrupted run's residual after block l and runs only blocks l+1 … L−1 again. The model is
causal, so a patch at t changes nothing before t: a run (l, t) runs positions t … T−1 only, each block reading the
earlier positions' keys and values from the corrupted run's residual stream (its KV cache, ResidualStream.cache). The
L runs of one position read the same earlier keys and values and run the same positions, so they go as one batch that
grows block by block: run l joins before block l+1 (at most PATCH_ROWS positions and PATCH_KEYS keys at once). A patch
that changes nothing (a position before the prompts' first difference, where both runs hold the same row) is the
corrupted run, and is not run again.

Per head (Wang et al. 2022): the same, with one head's output at the last position of the corrupted run replaced by
the clean run's (its attention-weighted values, before the output matrix, so that its slice of W_o carries them in);
a patched run starts from the corrupted residual entering block l and runs the last position only, and all L × H runs
go as one batch that grows block by block, block l's H runs joining before it.

`by_block=True` keeps the sweeps as they ran before (each block's runs a batch of their own through every later block):
the reference the batches by position are tested and benched against (bench/patching_speed.py).

Shapes: L blocks, T positions, H heads per block, d width, d_k head width, V vocabulary.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import torch

if TYPE_CHECKING:  # only types here: the adapters package imports every family
    from model.adapters.protocols import ReadsResidualStream, ResidualStream

PATCH_ROWS = 2048  # token positions through the blocks at once: runs per batch × the positions each runs
# Keys and values read at once: runs per batch × T (a run of the per-head sweep runs one position but reads all T), so
# that a batch's attention holds tens of MB, not hundreds, on a server a class shares.
PATCH_KEYS = 16384

Progress = Callable[[int, int], None]  # (runs done, runs in all)


@dataclass(frozen=True)
class PatchingSweep:
    """What every patching sweep gives: both prompts' tokens, the answer (and wrong) token, p(answer) of each patched
    run in a grid whose shape the subclass names, and of the two unpatched runs; the logit differences are None
    without a wrong token. The fields with a default come last, so a subclass adds only defaulted ones."""

    clean_tokens: list[str]  # (T,)
    corrupt_tokens: list[str]  # (T,)
    answer_id: int
    wrong_id: int | None
    patched_probs: np.ndarray  # float32 grid of p(answer) at the last position, one cell a patched run
    clean_prob: float  # p(answer) after the clean prompt
    corrupt_prob: float  # … after the corrupted one
    patched_logit_diffs: np.ndarray | None = None  # float32, the grid's shape: logit(answer) − logit(wrong), patched


@dataclass(frozen=True)
class ResidualPatching(PatchingSweep):
    """A residual-stream patching sweep: patched_probs and patched_logit_diffs are (L, T), cell (l, t) the run with
    block l's output at position t from the clean run; the unpatched runs' logit differences too."""

    clean_logit_diff: float | None = None
    corrupt_logit_diff: float | None = None


def single_token(lab: ReadsResidualStream, text: str, role: str = "answer") -> int:
    """The id of the one token `text` is; ValueError naming its tokens when it is none or several."""
    ids = lab.encode(text)
    if len(ids) != 1:
        raise ValueError(f"the {role} {text!r} must be one token; it is {len(ids)}: {lab.token_texts(ids)}")
    return ids[0]


def matched_streams(lab: ReadsResidualStream, clean: str, corrupt: str) -> tuple[ResidualStream, ResidualStream]:
    """Both prompts' residual streams; ValueError showing both tokenizations when their token counts differ."""
    clean_stream, corrupt_stream = lab.residual_stream(clean), lab.residual_stream(corrupt)
    if len(clean_stream.ids) != len(corrupt_stream.ids):
        raise ValueError(f"the clean and corrupted prompts must have the same number of tokens: the clean one has "
                         f"{len(clean_stream.ids)} {clean_stream.tokens}, the corrupted one "
                         f"{len(corrupt_stream.ids)} {corrupt_stream.tokens}")
    return clean_stream, corrupt_stream


@torch.no_grad()
def patched_last_logits(lab: ReadsResidualStream, clean: ResidualStream, corrupt: ResidualStream, layer: int,
                        positions: Sequence[int], full: bool = False) -> torch.Tensor:
    """(n, V) logits at the last position of n patched runs, one per position: the corrupted run with block
    `layer`'s output at that position replaced by the clean run's, then blocks layer+1 … L−1 on the result, over
    the positions from the first patched one on (the earlier ones read the corrupted run's keys and values), or over
    every position with `full` (the reference the shorter runs are tested against)."""
    first = 0 if full else min(positions)
    corrupted = corrupt.hidden[layer + 1, first:]  # (T − first, d): block `layer`'s output, row layer + 1
    index = torch.as_tensor(list(positions), dtype=torch.long, device=corrupted.device)
    runs = corrupted.expand(len(index), *corrupted.shape).clone()  # (n, T − first, d)
    runs[torch.arange(len(index), device=index.device), index - first] = clean.hidden[layer + 1, index]
    return lab.unembed(lab.blocks_from(layer + 1, runs, prefix=None if full else corrupt)[:, -1]).float()  # (n, V)


def patched_run(lab: ReadsResidualStream, clean: ResidualStream, corrupt: ResidualStream, layer: int,
                position: int) -> torch.Tensor:
    """(V,) logits after the corrupted prompt with block `layer`'s output at `position` taken from the clean run."""
    return patched_last_logits(lab, clean, corrupt, layer, [position])[0]


@torch.no_grad()
def position_patched_last_logits(lab: ReadsResidualStream, clean: ResidualStream, corrupt: ResidualStream,
                                 position: int, layers: range) -> torch.Tensor:
    """(n, V) logits at the last position of the n = len(layers) patched runs (l, position), l in `layers`, the same
    runs patched_last_logits makes, taken by position instead of by block: every run reads the same earlier
    positions' keys and values (the corrupted run's, positions 0 … position−1) and runs positions position … T−1, so
    they go as one batch that grows block by block: run l joins before block l+1, from the corrupted run's residual
    there with its row `position` from the clean run. One call per block, not one per block and patched layer."""
    blocks, last = corrupt.hidden.shape[0] - 1, corrupt.hidden.shape[1] - 1
    # A patch that puts the same row in (a position before the prompts' first difference, where both runs have read
    # the same tokens) is the corrupted run itself: it is not run again.
    moves = [not torch.equal(clean.hidden[layer + 1, position], corrupt.hidden[layer + 1, position])
             for layer in layers]
    runs = corrupt.hidden.new_empty((0, last + 1 - position, corrupt.hidden.shape[-1]))  # (n so far, T − position, d)
    for block in range(layers.start + 1, blocks):
        if block - 1 in layers and moves[block - 1 - layers.start]:
            # run l = block − 1 joins: the corrupted stream's row `block` (what enters block `block`), with block l's
            # output at `position` from the clean run
            joining = corrupt.hidden[block, position:].clone()  # (T − position, d)
            joining[0] = clean.hidden[block, position]
            runs = torch.cat([runs, joining[None]])
        if len(runs):
            runs = lab.blocks_from(block, runs, prefix=corrupt, stop=block + 1)
    finals = corrupt.hidden[blocks, last].expand(len(layers), -1).clone()  # (n, d): the corrupted run's, where unmoved
    ran = [index for index, layer in enumerate(layers) if moves[index] and layer < blocks - 1]
    finals[ran] = runs[:, -1]
    if blocks - 1 in layers and position == last:  # a patch of the last block's output runs nothing: its row is
        finals[-1] = clean.hidden[blocks, last]  # the final residual
    return lab.unembed(finals).float()


def residual_patching(lab: ReadsResidualStream, clean: str, corrupt: str, answer: str, wrong: str | None = None,
                      progress: Progress | None = None, by_block: bool = False) -> ResidualPatching:
    """Every (block, position) patch of the corrupted prompt from the clean one: p(answer) at the last position,
    and logit(answer) − logit(wrong) when a wrong token is given; progress(done, total) after each batch of runs.
    The runs of one position go as one batch (position_patched_last_logits); `by_block` takes them as the sweep did
    before, the runs of one block as a batch over every later block (patched_last_logits), the reference the batches
    by position are tested and benched against (bench/patching_speed.py)."""
    answer_id = single_token(lab, answer)  # refused before any block runs
    wrong_id = None if wrong is None else single_token(lab, wrong, "wrong token")
    clean_stream, corrupt_stream = matched_streams(lab, clean, corrupt)
    rows, length = clean_stream.hidden.shape[:2]
    layers, total = rows - 1, (rows - 1) * length
    probs = np.empty((layers, length), dtype=np.float32)
    diffs = np.empty((layers, length), dtype=np.float32)
    cells = []  # (block rows, position columns) of each batch, in the order they run
    if by_block:
        batch = max(1, PATCH_ROWS // length)
        cells = [(range(layer, layer + 1), range(first, min(length, first + batch)))
                 for layer in range(layers) for first in range(0, length, batch)]
    else:
        for position in range(length):
            batch = max(1, min(PATCH_ROWS // (length - position), PATCH_KEYS // length))
            cells += [(range(first, min(layers, first + batch)), range(position, position + 1))
                      for first in range(0, layers, batch)]
    done = 0
    for blocks, positions in cells:
        if by_block:
            logits = patched_last_logits(lab, clean_stream, corrupt_stream, blocks.start, positions)  # (n, V)
        else:
            logits = position_patched_last_logits(lab, clean_stream, corrupt_stream, positions.start, blocks)
        shape = (len(blocks), len(positions))
        cell = (slice(blocks.start, blocks.stop), slice(positions.start, positions.stop))
        probs[cell] = torch.softmax(logits, -1)[:, answer_id].cpu().numpy().reshape(shape)
        if wrong_id is not None:
            diffs[cell] = (logits[:, answer_id] - logits[:, wrong_id]).cpu().numpy().reshape(shape)
        done += logits.shape[0]
        if progress is not None:
            progress(done, total)
    with torch.no_grad():
        ends = lab.unembed(torch.stack([clean_stream.hidden[-1, -1], corrupt_stream.hidden[-1, -1]])).float()
    end_probs = torch.softmax(ends, -1)[:, answer_id].tolist()  # (2,): clean, corrupted
    end_diffs = [None, None] if wrong_id is None else (ends[:, answer_id] - ends[:, wrong_id]).tolist()
    return ResidualPatching(clean_stream.tokens, corrupt_stream.tokens, answer_id, wrong_id, probs, end_probs[0],
                            end_probs[1], None if wrong_id is None else diffs, end_diffs[0], end_diffs[1])


@dataclass(frozen=True)
class HeadPatching(PatchingSweep):
    """A per-head patching sweep at the last position: patched_probs and patched_logit_diffs are (L, H), cell (l, h)
    the run with head (l, h)'s output at the last position of the corrupted run taken from the clean run."""


@torch.no_grad()
def head_patched_last_logits(lab: ReadsResidualStream, clean_values: torch.Tensor, corrupt: ResidualStream,
                             layer: int, full: bool = False) -> torch.Tensor:
    """(H, V) logits at the last position of H patched runs, one per head of block `layer`: the corrupted run with
    that head's output at the last position replaced by clean_values[head] ((H, d_k), the clean run's), block
    `layer` and the ones after it run again from the corrupted residual entering it, at the last position only (the
    earlier ones read the corrupted run's keys and values), or at every position with `full` (the reference)."""
    from model.adapters.protocols import HeadPatch

    heads = clean_values.shape[0]
    last = corrupt.hidden.shape[1] - 1
    entering = corrupt.hidden[layer, 0 if full else last:]  # (T or 1, d): row `layer` of the stream enters block `layer`
    runs = entering.expand(heads, *entering.shape)  # (H, T or 1, d), read only: the blocks add to copies
    patch = HeadPatch(last, clean_values.expand(heads, *clean_values.shape),
                      torch.eye(heads, dtype=torch.bool, device=entering.device))  # run b takes head b's clean output
    return lab.unembed(lab.blocks_from(layer, runs, heads=patch, prefix=None if full else corrupt)[:, -1]).float()


@torch.no_grad()
def heads_patched_last_logits(lab: ReadsResidualStream, clean_values: torch.Tensor, corrupt: ResidualStream,
                              layers: range, joined: Callable[[int], None] | None = None) -> torch.Tensor:
    """(n·H, V) logits at the last position of the H patched runs of each block in `layers` (n of them), block by
    block: head_patched_last_logits's runs, taken as one batch that grows as it goes: the H runs of block l join
    before block l, from the corrupted residual entering it, and the batch runs the last position only (the earlier
    positions' keys and values the corrupted run's). One call per block, not one per block and patched block.
    clean_values (L, H, d_k): every head's output at the last position in the clean run; joined(l) after block l
    ran with block l's runs in the batch."""
    from model.adapters.protocols import HeadPatch

    blocks, heads = clean_values.shape[:2]
    last = corrupt.hidden.shape[1] - 1
    runs = corrupt.hidden.new_empty((0, 1, corrupt.hidden.shape[-1]))  # (n so far, 1, d)
    for block in range(layers.start, blocks):
        chosen = torch.zeros(len(runs), heads, dtype=torch.bool, device=runs.device)  # the runs under way: none
        if block in layers:  # block l's H runs join, run b taking head b's clean output
            runs = torch.cat([runs, corrupt.hidden[block, last:].expand(heads, 1, -1)])
            chosen = torch.cat([chosen, torch.eye(heads, dtype=torch.bool, device=runs.device)])
        patch = HeadPatch(last, clean_values[block].expand(len(runs), heads, -1), chosen)
        runs = lab.blocks_from(block, runs, heads=patch, prefix=corrupt, stop=block + 1)
        if joined is not None and block in layers:
            joined(block)
    return lab.unembed(runs[:, -1]).float()


def head_patching(lab: ReadsResidualStream, clean: str, corrupt: str, answer: str, wrong: str | None = None,
                  progress: Progress | None = None, by_block: bool = False) -> HeadPatching:
    """Every head's patch at the last position of the corrupted prompt from the clean one: p(answer) there, and
    logit(answer) − logit(wrong) when a wrong token is given; progress(done, total) as each block's runs join (they
    end together). The runs go as one batch that grows block by block (heads_patched_last_logits, at most PATCH_ROWS
    runs and PATCH_KEYS keys at once); `by_block` takes each block's runs through the later blocks as a batch of
    their own (head_patched_last_logits), the reference the growing batch is tested and benched against."""
    answer_id = single_token(lab, answer)  # refused before any block runs
    wrong_id = None if wrong is None else single_token(lab, wrong, "wrong token")
    clean_stream, corrupt_stream = matched_streams(lab, clean, corrupt)
    clean_values = lab.position_parts(clean, -1).head_values  # (L, H, d_k) at the last position
    layers, heads = clean_values.shape[:2]
    length = clean_stream.hidden.shape[1]
    probs = np.empty((layers, heads), dtype=np.float32)
    diffs = np.empty((layers, heads), dtype=np.float32)
    batch = 1 if by_block else max(1, min(PATCH_ROWS, PATCH_KEYS // length) // heads)  # blocks whose runs go together

    def joined(layer: int) -> None:
        if progress is not None:
            progress((layer + 1) * heads, layers * heads)
    for first in range(0, layers, batch):
        blocks = range(first, min(layers, first + batch))
        if by_block:
            logits = head_patched_last_logits(lab, clean_values[first], corrupt_stream, first)  # (H, V)
            joined(first)
        else:
            logits = heads_patched_last_logits(lab, clean_values, corrupt_stream, blocks, joined)  # (n·H, V)
        probs[blocks.start:blocks.stop] = torch.softmax(logits, -1)[:, answer_id].cpu().numpy().reshape(-1, heads)
        if wrong_id is not None:
            diffs[blocks.start:blocks.stop] = (logits[:, answer_id] - logits[:, wrong_id]).cpu().numpy().reshape(
                -1, heads)
    with torch.no_grad():
        ends = lab.unembed(torch.stack([clean_stream.hidden[-1, -1], corrupt_stream.hidden[-1, -1]])).float()
    end_probs = torch.softmax(ends, -1)[:, answer_id].tolist()  # (2,): clean, corrupted
    return HeadPatching(clean_stream.tokens, corrupt_stream.tokens, answer_id, wrong_id, probs, end_probs[0],
                        end_probs[1], None if wrong_id is None else diffs)

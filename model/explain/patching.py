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
grows block by block: run l joins before block l+1. The batches of every position go through each block together,
their rows one matrix for the norms, projections and MLP and only the attention per position (block_on_suffixes;
at most PATCH_ROWS rows and PATCH_KEYS keys at once), and the last block runs each run's last position only. A patch
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

# Token positions through a block at once (runs × the positions each runs): 4,096 rows make the MLP's (4096, 1536)
# float32 products 25 MB each, and multiply faster than 2,048 (bench/README.md, the residual sweep).
PATCH_ROWS = 4096
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


def _moves(clean: ResidualStream, corrupt: ResidualStream) -> torch.Tensor:
    """(L, T) boolean: whether the patch (l, t) puts in a row the corrupted run does not already hold there. A position
    before the prompts' first difference (both runs have read the same tokens) holds the same row in both: its patch is
    the corrupted run itself, and is not run again."""
    return (clean.hidden[1:] != corrupt.hidden[1:]).any(dim=-1)


@torch.no_grad()
def positions_patched_finals(lab: ReadsResidualStream, clean: ResidualStream, corrupt: ResidualStream,
                             positions: Sequence[int], ran: Callable[[int], None] | None = None) -> torch.Tensor:
    """(L, n, d): the final residual at the last position of every run (l, t), l a block, t in `positions` (n of
    them), the same runs patched_last_logits makes. A run (l, t) reads the corrupted run's keys and values of
    positions 0 … t−1 and runs positions t … T−1, so the runs of one position go as a batch that grows block by
    block: run l joins before block l+1, from the corrupted run's residual there with its row t from the clean run.
    The batches of all the positions go through each block together (block_on_suffixes: their rows as one matrix),
    the last block running each run's last position only. ran(rows) after each block, with the rows it ran."""
    blocks, last, width = corrupt.hidden.shape[0] - 1, corrupt.hidden.shape[1] - 1, corrupt.hidden.shape[-1]
    moves = _moves(clean, corrupt)
    runs = {t: corrupt.hidden.new_empty((0, last + 1 - t, width)) for t in positions}  # (n_t so far, T − t, d)
    joined: dict[int, list[int]] = {t: [] for t in positions}  # the blocks l whose runs (l, t) are in runs[t]
    for block in range(1, blocks):
        for t in positions:
            if moves[block - 1, t]:
                # run (block − 1, t) joins: the corrupted stream's row `block` (what enters block `block`), with
                # block − 1's output at t from the clean run
                joining = corrupt.hidden[block, t:].clone()  # (T − t, d)
                joining[0] = clean.hidden[block, t]
                runs[t] = torch.cat([runs[t], joining[None]])
                joined[t].append(block - 1)
        live = [t for t in positions if len(runs[t])]
        if live:
            outputs = lab.block_on_suffixes(block, [runs[t] for t in live], corrupt, last_only=block == blocks - 1)
            runs.update(zip(live, outputs))
            if ran is not None:
                ran(sum(output.shape[0] * output.shape[1] for output in outputs))
    finals = corrupt.hidden[blocks, last].expand(blocks, len(positions), width).clone()  # the corrupted run's, where
    for column, t in enumerate(positions):  # a patch moves nothing
        if joined[t]:
            finals[joined[t], column] = runs[t][:, -1]
        if t == last and moves[blocks - 1, t]:  # a patch of the last block's output runs nothing: its row is the
            finals[blocks - 1, column] = clean.hidden[blocks, last]  # final residual
    return finals


def _position_batches(moves: torch.Tensor) -> list[list[int]]:
    """The positions whose patches move something, in batches of at most PATCH_ROWS rows through a block and
    PATCH_KEYS keys read at once (a run of position t runs T − t rows and reads T keys); in order."""
    blocks, length = moves.shape
    batches, rows, keys = [[]], 0, 0
    for t in range(length):
        runs = int(moves[:blocks - 1, t].sum()) + int(t == length - 1 and moves[-1, t])
        if not runs:
            continue
        if batches[-1] and (rows + runs * (length - t) > PATCH_ROWS or keys + runs * length > PATCH_KEYS):
            batches.append([])
            rows = keys = 0
        batches[-1].append(t)
        rows, keys = rows + runs * (length - t), keys + runs * length
    return [batch for batch in batches if batch]


def _rows_to_run(moves: torch.Tensor, positions: Sequence[int]) -> int:
    """The rows positions_patched_finals runs through the blocks for `positions`: before block b, the runs (l, t) with
    l < b that move something, T − t rows each, one each in the last block."""
    blocks, length = moves.shape
    joined = moves[:blocks - 1, list(positions)].long().cumsum(0)  # (L − 1, n): row b − 1, the runs in block b
    widths = torch.tensor([length - t for t in positions], device=moves.device)
    return int((joined[:-1] * widths).sum() + joined[-1].sum()) if blocks > 1 else 0


def residual_patching(lab: ReadsResidualStream, clean: str, corrupt: str, answer: str, wrong: str | None = None,
                      progress: Progress | None = None, by_block: bool = False) -> ResidualPatching:
    """Every (block, position) patch of the corrupted prompt from the clean one: p(answer) at the last position,
    and logit(answer) − logit(wrong) when a wrong token is given; progress(done, total) as the blocks run (runs done
    in proportion to the rows run). The runs of every position go through each block together
    (positions_patched_finals); `by_block` takes them as the sweep did before issue 51, the runs of one block as a
    batch over every later block (patched_last_logits), the reference the batches by position are tested and benched
    against (bench/patching_speed.py)."""
    answer_id = single_token(lab, answer)  # refused before any block runs
    wrong_id = None if wrong is None else single_token(lab, wrong, "wrong token")
    clean_stream, corrupt_stream = matched_streams(lab, clean, corrupt)
    rows, length = clean_stream.hidden.shape[:2]
    layers, total = rows - 1, (rows - 1) * length
    with torch.no_grad():
        ends = lab.unembed(torch.stack([clean_stream.hidden[-1, -1], corrupt_stream.hidden[-1, -1]])).float()
    end_probs = torch.softmax(ends, -1)[:, answer_id].tolist()  # (2,): clean, corrupted
    end_diffs = [None, None] if wrong_id is None else (ends[:, answer_id] - ends[:, wrong_id]).tolist()
    # a cell whose patch moves nothing is the corrupted run's
    probs = np.full((layers, length), end_probs[1], dtype=np.float32)
    diffs = np.full((layers, length), np.nan if wrong_id is None else end_diffs[1], dtype=np.float32)

    def fill(logits: torch.Tensor, cell: tuple[slice, slice], shape: tuple[int, int]) -> None:  # logits (n, V)
        probs[cell] = torch.softmax(logits, -1)[:, answer_id].cpu().numpy().reshape(shape)
        if wrong_id is not None:
            diffs[cell] = (logits[:, answer_id] - logits[:, wrong_id]).cpu().numpy().reshape(shape)
    if by_block:
        batch = max(1, PATCH_ROWS // length)
        for layer in range(layers):
            for first in range(0, length, batch):
                positions = range(first, min(length, first + batch))
                fill(patched_last_logits(lab, clean_stream, corrupt_stream, layer, positions),
                     (slice(layer, layer + 1), slice(positions.start, positions.stop)), (1, len(positions)))
                if progress is not None:
                    progress(layer * length + positions.stop, total)
    else:
        moves = _moves(clean_stream, corrupt_stream)
        batches = _position_batches(moves)
        work, done = max(1, sum(_rows_to_run(moves, batch) for batch in batches)), 0

        def ran(rows: int) -> None:
            nonlocal done
            done += rows
            if progress is not None:
                progress(total * done // work, total)
        for batch in batches:
            finals = positions_patched_finals(lab, clean_stream, corrupt_stream, batch, ran)  # (L, n, d)
            for column, position in enumerate(batch):  # one position's L logits at a time: (L, V), not (L, n, V)
                with torch.no_grad():
                    logits = lab.unembed(finals[:, column]).float()
                fill(logits, (slice(None), slice(position, position + 1)), (layers, 1))
        if progress is not None:
            progress(total, total)
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

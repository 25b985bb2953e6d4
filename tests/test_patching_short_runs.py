"""Activation patching's shorter runs (model/explain/patching.py): a residual patch at (l, t) runs blocks l+1 … L−1
on positions t … T−1 only, a head patch at the last position runs its block and the ones after on that position
only, both reading the earlier positions' keys and values from the corrupted run's residual stream (its KV cache).
Causal attention makes this exact: each is checked against the same run over every position (full=True), the
path the transformers comparisons in tests/test_logit_lens.py and tests/test_attribution.py also hold: p(token)
within 1e-5, the logits (about ±22) within 1e-4, float32's rounding of the same sums over other shapes through up to
30 blocks (two batches of the full path alone differ by 7e-6).
"""
import pytest
import torch

from model.explain.patching import (head_patched_last_logits, head_patching, matched_streams, patched_last_logits,
                                    residual_patching)
from model.families import adapt
from model.gguf_weights import SMOLLM2_NAME
from model.llama import load_smollm2

# 12 tokens each, differing at " teacher" / " student"
CLEAN = "Every morning the teacher walks to the old school near the river"
CORRUPT = "Every morning the student walks to the old school near the river"
PROBABILITY, LOGIT = dict(rtol=0, atol=1e-5), dict(rtol=0, atol=1e-4)


@pytest.fixture(scope="module")
def lab():
    return adapt(SMOLLM2_NAME, load_smollm2())


@pytest.fixture(scope="module")
def streams(lab):
    return matched_streams(lab, CLEAN, CORRUPT)


def _assert_same_run(short, full):
    torch.testing.assert_close(torch.softmax(short, -1), torch.softmax(full, -1), **PROBABILITY)
    torch.testing.assert_close(short, full, **LOGIT)


def test_the_corrupted_streams_cache_is_what_a_forward_computes(lab, streams):
    _, corrupt = streams
    out = lab.network.model(torch.tensor([corrupt.ids]), need_weights=False)
    assert corrupt.cache.length == len(corrupt.ids) and len(corrupt.cache.keys) == 30
    for mine, theirs in zip((*corrupt.cache.keys, *corrupt.cache.values), (*out.cache.keys, *out.cache.values)):
        # the stream's pass computes the maps, this forward the fused kernel: the same sums in another order
        torch.testing.assert_close(mine, theirs, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("layer", [0, 7, 20, 28, 29])
def test_a_residual_patch_runs_the_later_positions_only_and_changes_nothing(lab, streams, layer):
    clean, corrupt = streams
    length = len(clean.ids)
    for positions in ([0], [3], [length - 1], [3, 4, 5], [6, 9, length - 1]):
        short = patched_last_logits(lab, clean, corrupt, layer, positions)
        full = patched_last_logits(lab, clean, corrupt, layer, positions, full=True)
        assert short.shape == full.shape == (len(positions), lab.network.config.vocab_size)
        _assert_same_run(short, full)


def test_the_last_positions_blocks_see_only_as_many_rows(lab, streams, monkeypatch):
    """The shorter run is shorter: block l+1 gets T − t rows, the head patch's first block one."""
    clean, corrupt = streams
    seen = []
    blocks_from = lab.network.model.blocks_from

    def spy(start, hidden, **kwargs):
        seen.append((start, tuple(hidden.shape[:2]), 0 if kwargs.get("past") is None else kwargs["past"].length))
        return blocks_from(start, hidden, **kwargs)
    monkeypatch.setattr(lab.network.model, "blocks_from", spy)
    patched_last_logits(lab, clean, corrupt, 4, [5, 7])
    values = lab.position_parts(CLEAN, -1).head_values  # (L, H, d_k)
    head_patched_last_logits(lab, values[10], corrupt, 10)
    length = len(clean.ids)
    assert seen[0] == (5, (2, length - 5), 5)
    assert seen[-1] == (10, (9, 1), length - 1)


@pytest.mark.parametrize("layer", [0, 5, 14, 29])
def test_a_head_patch_runs_the_last_position_only_and_changes_nothing(lab, streams, layer):
    _, corrupt = streams
    values = lab.position_parts(CLEAN, -1).head_values  # (L, H, d_k) at the last position
    short = head_patched_last_logits(lab, values[layer], corrupt, layer)
    full = head_patched_last_logits(lab, values[layer], corrupt, layer, full=True)
    assert short.shape == full.shape == (9, lab.network.config.vocab_size)
    _assert_same_run(short, full)
    # and each head's patch moves the logits (the values differ from the corrupted run's own), except where they agree
    corrupted_end = lab.unembed(corrupt.hidden[-1, -1]).float()
    assert (short - corrupted_end).abs().amax() > 1e-3


@pytest.mark.slow
def test_the_sweeps_batched_by_position_give_the_one_block_at_a_time_sweeps_cells(lab):
    """residual_patching's batches by position (run l joining before block l+1, the positions before the prompts'
    first difference not run again) and head_patching's one growing batch give every cell of the sweeps as they ran
    before issue 51 (by_block, each block's runs a batch through the later blocks), with the same progress counts."""
    for sweep, total in ((residual_patching, 30 * 12), (head_patching, 30 * 9)):
        calls = {True: [], False: []}
        old, new = (sweep(lab, CLEAN, CORRUPT, " school", " house", by_block=by_block,
                          progress=lambda done, all_, made=calls[by_block]: made.append((done, all_)))
                    for by_block in (True, False))
        assert new.patched_probs.shape == old.patched_probs.shape and new.patched_probs.dtype == old.patched_probs.dtype
        torch.testing.assert_close(torch.from_numpy(new.patched_probs), torch.from_numpy(old.patched_probs),
                                   **PROBABILITY)
        torch.testing.assert_close(torch.from_numpy(new.patched_logit_diffs), torch.from_numpy(old.patched_logit_diffs),
                                   **LOGIT)
        spread = new.patched_logit_diffs.max() - new.patched_logit_diffs.min()
        assert spread > 0.05  # the patches move the answer: not one value in every cell
        for made in calls.values():
            assert made[-1] == (total, total) and [done for done, _ in made] == sorted(done for done, _ in made)


@pytest.mark.parametrize("block", [0, 13, 29])
def test_one_block_on_runs_of_several_lengths_is_that_block_on_each(lab, streams, block):
    """block_on_suffixes (the rows of every batch one matrix, the attention per batch) gives what blocks_from gives
    for each batch alone, and with last_only each run's last position of it."""
    clean, corrupt = streams
    length = len(clean.ids)
    suffixes = [clean.hidden[block, t:].expand(runs, -1, -1) + 0.01 * torch.randn(runs, length - t, clean.hidden.shape[-1])
                for t, runs in ((1, 3), (5, 1), (length - 1, 2))]
    alone = [lab.blocks_from(block, suffix, prefix=corrupt, stop=block + 1) for suffix in suffixes]
    together = lab.block_on_suffixes(block, suffixes, corrupt)
    last = lab.block_on_suffixes(block, suffixes, corrupt, last_only=True)
    for one, both, only in zip(alone, together, last):
        assert both.shape == one.shape and only.shape == (one.shape[0], 1, one.shape[-1])
        # the same sums over other shapes: float32 rounding, in rows whose largest entries reach about 2·10⁴ (a sink)
        torch.testing.assert_close(both, one, rtol=1e-5, atol=1e-4)
        torch.testing.assert_close(only, one[:, -1:], rtol=1e-5, atol=1e-4)

"""LayerNorm / BatchNorm on padded sequences against torch.nn and the formulas, including batch size 1."""
import numpy as np
import pytest
import torch
from torch import nn

from model.foundations.normalization import (batch_norm, batch_norm_per_step, example_batch, example_lengths,
                                             layer_norm, lengths_mask, normalization_demo, pooled_cells,
                                             torch_reference)


@pytest.fixture
def padded():
    lengths = torch.tensor([5, 2, 4, 1])
    x, mask = example_batch(4, 5, 6, seed=3, lengths=lengths)
    return x, mask


def test_example_batch_is_seeded_padded_and_of_varied_lengths():
    x, mask = example_batch(6, 7, 5, seed=11)
    again, _ = example_batch(6, 7, 5, seed=11)
    other, _ = example_batch(6, 7, 5, seed=12)
    assert x.shape == (6, 7, 5) and mask.shape == (6, 7)
    torch.testing.assert_close(x, again)
    assert not torch.equal(x, other)
    lengths = mask.sum(1)
    assert lengths[0] == 7 and ((lengths >= 1) & (lengths <= 7)).all() and len(set(lengths.tolist())) > 1
    assert (x[~mask] == 0).all() and (x[mask] != 0).all()
    assert torch.equal(example_lengths(6, 7, 11), lengths)
    assert torch.equal(lengths_mask(torch.tensor([2, 1])), torch.tensor([[True, True], [True, False]]))


def test_layer_norm_matches_torch_layer_norm_per_token(padded):
    x, mask = padded
    result = layer_norm(x, mask)
    expected = nn.LayerNorm(6, elementwise_affine=False)(x[mask])  # (N_real, 6)
    torch.testing.assert_close(result.output[mask], expected)
    assert (result.output[~mask] == 0).all()
    assert result.mean.shape == result.var.shape == result.count.shape == (4, 5)
    torch.testing.assert_close(result.mean[mask], x[mask].mean(-1))
    torch.testing.assert_close(result.var[mask], x[mask].var(-1, unbiased=False))
    assert torch.isnan(result.mean[~mask]).all()
    assert (result.count[mask] == 6).all() and (result.count[~mask] == 0).all()
    out = result.output[mask]  # every token: mean 0, variance 1 over its features
    torch.testing.assert_close(out.mean(-1), torch.zeros(len(out)), atol=1e-5, rtol=0)
    torch.testing.assert_close(out.var(-1, unbiased=False), torch.ones(len(out)), atol=1e-3, rtol=0)


def test_batch_norm_matches_batchnorm1d_on_the_unpadded_tokens(padded):
    x, mask = padded
    result = batch_norm(x, mask)
    module = nn.BatchNorm1d(6, affine=False).train()
    torch.testing.assert_close(result.output[mask], module(x[mask]))
    assert (result.output[~mask] == 0).all()
    assert result.mean.shape == result.var.shape == (6,) and (result.count == 12).all()  # 5 + 2 + 4 + 1 real tokens
    torch.testing.assert_close(result.mean, x[mask].mean(0))
    torch.testing.assert_close(result.var, x[mask].var(0, unbiased=False))
    # what torch keeps as the running mean after one step (momentum 0.1 from 0) is 0.1 × our batch mean
    torch.testing.assert_close(module.running_mean, 0.1 * result.mean)


def test_padding_values_never_enter_a_statistic(padded):
    x, mask = padded
    garbage = torch.where(mask[..., None], x, torch.full_like(x, 1e4))
    for normalize in (layer_norm, batch_norm, batch_norm_per_step):
        torch.testing.assert_close(normalize(garbage, mask).output, normalize(x, mask).output)


def test_per_step_batch_norm_matches_batchnorm1d_at_each_position(padded):
    x, mask = padded
    result = batch_norm_per_step(x, mask)
    assert result.mean.shape == (5, 6)
    assert result.count[:, 0].tolist() == [4, 3, 2, 2, 1]  # sequences still running at positions 1..5
    for t in range(4):
        rows = mask[:, t]
        torch.testing.assert_close(result.output[rows, t], nn.BatchNorm1d(6, affine=False).train()(x[rows, t]))
    # position 5: only the first sequence is left, one value per feature, variance 0, output 0
    assert (result.var[4] == 0).all() and (result.output[0, 4] == 0).all()
    reference, error = torch_reference(x, mask, "batch_per_step")
    assert reference is None and "Expected more than 1 value per channel" in error


def test_torch_reference_agrees_where_torch_accepts(padded):
    x, mask = padded
    for kind, normalize in (("layer", layer_norm), ("batch", batch_norm)):
        reference, error = torch_reference(x, mask, kind)
        assert error is None
        torch.testing.assert_close(reference, normalize(x, mask).output)


def test_batch_of_one_token_batch_norm_collapses_and_layer_norm_works():
    x, mask = example_batch(1, 1, 8, seed=0)
    bn = batch_norm(x, mask)
    assert (bn.count == 1).all() and (bn.var == 0).all()
    assert (bn.output == 0).all()  # every value equals its own mean: the input is gone
    reference, error = torch_reference(x, mask, "batch")
    assert reference is None and "Expected more than 1 value per channel when training" in error
    with pytest.raises(ValueError):
        nn.BatchNorm1d(8, affine=False).train()(x[mask])
    ln = layer_norm(x, mask)
    torch.testing.assert_close(ln.output[mask], nn.LayerNorm(8, elementwise_affine=False)(x[mask]))
    assert ln.var.item() > 0 and ln.output.abs().sum() > 0
    # LayerNorm keeps the token's pattern: the output is an increasing function of the input
    assert torch.equal(ln.output[0, 0].argsort(), x[0, 0].argsort())


def test_one_sentence_of_several_tokens_still_has_batch_statistics_over_time():
    x, mask = example_batch(1, 5, 4, seed=2)
    assert (batch_norm(x, mask).var > 0).all()
    assert (batch_norm_per_step(x, mask).var == 0).all()  # one value per position and feature


def test_pooled_cells_are_the_values_behind_one_statistic(padded):
    x, mask = padded
    mask_np = mask.numpy()
    layer = pooled_cells(mask_np, 6, "layer", (2, 3, 0))
    assert layer.sum() == 6 and layer[2, 3].all()
    batch = pooled_cells(mask_np, 6, "batch", (0, 0, 4))
    assert batch.sum() == 12 and batch[..., 4].sum() == 12 and not batch[~mask_np].any()
    step = pooled_cells(mask_np, 6, "batch_per_step", (0, 1, 2))
    assert step.sum() == 3 and step[:, 1, 2].tolist() == [True, True, True, False]
    # the outlined cells really are what the statistic averages
    result = batch_norm(x, mask)
    np.testing.assert_allclose(x.numpy()[batch].mean(), result.mean[4].item(), rtol=1e-5)


def test_demo_reports_torch_agreement_and_the_collapse():
    demo = normalization_demo(4, 6, 5, "layer", seed=1)
    assert demo.torch_error is None and demo.torch_max_abs_diff < 1e-5
    assert demo.x.shape == demo.output.shape == (4, 6, 5) and demo.mean.shape == (4, 6)
    assert not demo.collapsed.any() and demo.zeroed_fraction == 0.0
    degenerate = normalization_demo(1, 1, 5, "batch", seed=1)
    assert degenerate.torch_error is not None and degenerate.torch_max_abs_diff is None
    assert degenerate.collapsed.all() and degenerate.zeroed_fraction == 1.0

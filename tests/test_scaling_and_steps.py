"""Formulas behind the softmax-scaling and step-by-step pages, against references."""
import numpy as np
import pytest
import torch

from model.foundations.attention_steps import attention_stages, build_mask, multi_head_stages
from model.foundations.scaling import (NOTES_DOT_EXAMPLES, dot_product_samples, saturation_curve, softmax,
                                       softmax_jacobian)
from model.metrics import entropy


@pytest.mark.parametrize("d_k", [4, 64, 256])
def test_dot_product_variance_is_d_k_and_scaled_is_one(d_k):
    raw, scaled = dot_product_samples(d_k, samples=50000, seed=1)
    assert raw.var() == pytest.approx(d_k, rel=0.05)
    assert scaled.var() == pytest.approx(1.0, rel=0.05)


def test_notes_examples():
    assert [float(a @ b) for a, b in NOTES_DOT_EXAMPLES] == [8.0, 20.0]
    p, saturated = softmax(np.array([0.3, 0.4])), softmax(100 * np.array([0.3, 0.4]))
    assert p[1] == pytest.approx(0.525, abs=1e-3)
    assert saturated[1] > 0.9999


def test_jacobian_matches_autograd_and_vanishes_when_saturated():
    z = torch.tensor([0.5, -1.0, 2.0, 0.1], dtype=torch.float64)
    auto = torch.autograd.functional.jacobian(lambda t: torch.softmax(t, 0), z).numpy()
    np.testing.assert_allclose(softmax_jacobian(softmax(z.numpy())), auto, atol=1e-12)
    curve = saturation_curve(z.numpy(), np.array([0.1, 1.0, 10.0, 100.0]))
    assert np.all(np.diff(curve["entropy"]) < 0) and curve["jacobian_norm"][-1] < 1e-6 < curve["jacobian_norm"][0]
    assert entropy(np.ones(4) / 4) == pytest.approx(np.log(4))
    # row by row, 0·log 0 = 0: a one-hot row has none, a row split over two keys ln 2, never NaN
    np.testing.assert_allclose(entropy(np.array([[1.0, 0.0, 0.0], [0.5, 0.5, 0.0]])), [0.0, np.log(2)], atol=1e-15)


def test_attention_stages_follow_the_formula_with_masks():
    rng = np.random.default_rng(0)
    q, k, v = rng.standard_normal((4, 3)), rng.standard_normal((4, 3)), rng.standard_normal((4, 2))
    for kind, padded in (("none", 0), ("causal", 0), ("padding", 2)):
        allowed = build_mask(kind, 4, 4, padded)
        s = attention_stages(q, k, v, allowed)
        np.testing.assert_allclose(s.qk, q @ k.T)
        np.testing.assert_allclose(s.scaled, q @ k.T / np.sqrt(3))
        expected = softmax(np.where(allowed, s.scaled, -np.inf))
        np.testing.assert_allclose(s.weights, expected, atol=1e-12)
        np.testing.assert_allclose(s.output, expected @ v, atol=1e-12)
        assert np.all(s.weights[~allowed] == 0) and np.all(np.isneginf(s.masked[~allowed]))
    assert build_mask("causal", 3, 3).tolist() == [[True, False, False], [True, True, False], [True, True, True]]
    assert build_mask("padding", 2, 3, 1)[:, -1].tolist() == [False, False]


def test_multi_head_stages_reproduce_the_module():
    stages = multi_head_stages(5, 8, 2, "causal", seed=3)
    assert stages.head_weights.shape == (2, 5, 5) and stages.concat.shape == (5, 8)
    np.testing.assert_allclose(stages.output, stages.module_output, atol=1e-12)
    assert np.all(np.triu(stages.head_weights, 1) == 0)

"""Gradient through deep stacks: it vanishes without the skip and survives with x + f(x)."""
import numpy as np
import pytest
import torch

from model.foundations.residual import gradient_profile, input_gradient_norms, make_layers


def test_depth_32_plain_gradient_vanishes_and_residual_survives():
    profile = gradient_profile(32, "tanh", seed=0)
    assert profile.plain.shape == profile.residual.shape == profile.residual_ln.shape == (32,)
    assert profile.plain[0] / profile.residual[0] < 1e-6  # measured ≈ 3e-9: orders of magnitude
    assert profile.first_over_last("plain") < 1e-6
    assert 1.0 <= profile.first_over_last("residual") < 10.0  # measured ≈ 6: grows a little, never vanishes
    assert 1 / 3 < profile.first_over_last("residual_ln") < 3.0


@pytest.mark.parametrize("activation", ["tanh", "relu"])
def test_plain_gradient_shrinks_with_depth_and_the_skip_keeps_it(activation):
    first = {depth: gradient_profile(depth, activation, seed=1) for depth in (4, 16, 48)}
    plain = [first[d].plain[0] for d in (4, 16, 48)]
    assert plain[0] > 100 * plain[1] > 1e4 * plain[2]
    for profile in first.values():
        assert (profile.residual >= 0.5).all()  # the identity path carries the output gradient (norm 1) back
        assert (profile.residual > profile.plain).all()


def test_identity_path_alone_carries_exactly_one():
    """With f ≡ 0 (zero weights), d(x + f(x))/dx = 1 + 0: norm 1 everywhere; the plain stack passes back 0."""
    layers = make_layers(6, width=8, seed=0)
    with torch.no_grad():
        for layer in layers:
            layer.weight.zero_()
            layer.bias.zero_()
    x = torch.randn(3, 8, dtype=torch.float64)
    r = torch.zeros(8, dtype=torch.float64)
    r[0] = 1.0
    np.testing.assert_allclose(input_gradient_norms(layers, x, r, "tanh", "residual"), np.ones(6))
    np.testing.assert_allclose(input_gradient_norms(layers, x, r, "tanh", "plain")[:-1], np.zeros(5))


def test_one_layer_gradient_matches_the_formula():
    """∂L/∂x = (I + Wᵀ diag(1 − tanh²(Wx + b))) r with the skip, without the I for the plain layer."""
    layers = make_layers(1, width=5, seed=4)
    x = torch.randn(2, 5, dtype=torch.float64)
    r = torch.randn(5, dtype=torch.float64)
    r = r / r.norm()
    w, b = layers[0].weight.detach(), layers[0].bias.detach()
    slope = 1 - torch.tanh(x @ w.T + b) ** 2  # (2, 5)
    plain = (slope * r) @ w  # (2, 5): row b is Wᵀ diag(slope_b) r
    for wiring, expected in (("plain", plain), ("residual", plain + r)):
        norms = input_gradient_norms(layers, x, r, "tanh", wiring)
        np.testing.assert_allclose(norms, [float(expected.norm() / 2 ** 0.5)])


def test_default_init_and_seeding():
    layers = make_layers(3, width=16, seed=5)
    bound = 1 / 16 ** 0.5
    assert all(layer.weight.abs().max() <= bound and layer.weight.abs().max() > 0.9 * bound for layer in layers)
    assert torch.equal(make_layers(3, 16, 5)[2].weight, layers[2].weight)
    a, b, c = gradient_profile(8, "relu", 2), gradient_profile(8, "relu", 2), gradient_profile(8, "relu", 3)
    np.testing.assert_array_equal(a.residual, b.residual)
    assert not np.array_equal(a.residual, c.residual)

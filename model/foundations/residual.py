"""Gradient through a deep stack of small layers, with and without the residual skip x + f(x) (notes 000 §1.2).

Every layer is f(x) = act(W x + b) with torch's default nn.Linear initialisation (W, b ~ U(±1/√width)).
The same layers (same weights, same input) are run three ways:
- plain:        x_{l+1} = f_l(x_l)
- residual:     x_{l+1} = x_l + f_l(x_l)             (∂x_{l+1}/∂x_l = I + f_l'(x_l): the identity is always there)
- residual_ln:  x_{l+1} = LayerNorm(x_l + f_l(x_l))  (the Transformer's "residual, then layer normalization")
One backward pass from the scalar loss L = Σ_b r·y_b, r a fixed random unit vector, so the gradient at the
output has norm exactly 1 per example. The reported number for layer l is ‖∂L/∂x_l‖ at the *input* of layer l,
as a root-mean-square over the batch (norm per example).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

Activation = Literal["tanh", "relu"]
ACTIVATIONS = {"tanh": torch.tanh, "relu": torch.relu}
Wiring = Literal["plain", "residual", "residual_ln"]
WIRINGS: tuple[Wiring, ...] = ("plain", "residual", "residual_ln")


def make_layers(depth: int, width: int = 64, seed: int = 0) -> nn.ModuleList:
    """depth nn.Linear(width, width) layers in float64 (so a vanished gradient does not underflow to 0).

    Initialised as nn.Linear does by default, U(±1/√width) for weights and biases, but from a seeded generator
    rather than torch's global one.
    """
    generator = torch.Generator().manual_seed(seed)
    layers = nn.ModuleList(nn.Linear(width, width, dtype=torch.float64) for _ in range(depth))
    bound = 1.0 / width ** 0.5
    with torch.no_grad():
        for layer in layers:
            layer.weight.uniform_(-bound, bound, generator=generator)
            layer.bias.uniform_(-bound, bound, generator=generator)
    return layers


def input_gradient_norms(layers: nn.ModuleList, x: torch.Tensor, direction: torch.Tensor,
                         activation: Activation = "tanh", wiring: Wiring = "plain") -> np.ndarray:
    """(depth,) ‖∂L/∂x_l‖ per example at the input of each layer, layer 1 (next to the input) first.

    x: (B, width) input; direction: (width,) unit vector r of the loss L = Σ_b r·y_b.
    """
    act = ACTIVATIONS[activation]
    h = x.detach().requires_grad_()
    inputs = []  # x_l for l = 1..depth, each (B, width)
    for layer in layers:
        inputs.append(h)
        f = act(layer(h))  # (B, width)
        if wiring == "plain":
            h = f
        elif wiring == "residual":
            h = h + f
        else:
            h = F.layer_norm(h + f, (h.size(-1),))
    loss = (h @ direction).sum()  # scalar; ∂L/∂y_b = r for every example b
    grads = torch.autograd.grad(loss, inputs)  # one backward pass; each (B, width)
    batch = x.size(0)
    return np.array([float(g.norm() / batch ** 0.5) for g in grads])


@dataclass(frozen=True)
class GradientProfile:
    """Gradient norm at the input of each layer, index 0 = layer 1 (input side), index −1 = the last layer."""
    plain: np.ndarray  # (depth,)
    residual: np.ndarray  # (depth,)
    residual_ln: np.ndarray  # (depth,)

    def first_over_last(self, wiring: Wiring) -> float:
        """How much the gradient shrank (< 1) or grew (> 1) going back from the last layer to the first."""
        norms = getattr(self, wiring)
        return float(norms[0] / norms[-1])


def gradient_profile(depth: int, activation: Activation = "tanh", seed: int = 0, width: int = 64,
                     batch: int = 16) -> GradientProfile:
    """Run one seeded stack plain, with the skip, and with skip + LayerNorm; one backward pass each."""
    layers = make_layers(depth, width, seed)
    generator = torch.Generator().manual_seed(seed + 1)
    x = torch.randn(batch, width, generator=generator, dtype=torch.float64)  # (B, width)
    direction = torch.randn(width, generator=generator, dtype=torch.float64)
    direction = direction / direction.norm()  # (width,), ‖r‖ = 1
    norms = {wiring: input_gradient_norms(layers, x, direction, activation, wiring) for wiring in WIRINGS}
    return GradientProfile(**norms)

"""PositionalEncoding as a module (the formula itself: test_positional_explorer.py)."""
import torch

from model.positional import PositionalEncoding, sinusoidal_encoding


def test_odd_width_and_learned_option():
    assert sinusoidal_encoding(5, 7).shape == (5, 7)
    learned = PositionalEncoding(8, 10, kind="learned")
    assert learned.table.requires_grad
    x = torch.zeros(2, 4, 8)
    torch.testing.assert_close(PositionalEncoding(8, 10)(x)[0], sinusoidal_encoding(4, 8))

import math

import torch

from model.positional import PositionalEncoding, sinusoidal_encoding


def test_matches_paper_formula():
    table = sinusoidal_encoding(50, 16)
    for pos in (0, 7, 49):
        for i in range(8):
            angle = pos / 10000 ** (2 * i / 16)
            assert math.isclose(table[pos, 2 * i].item(), math.sin(angle), abs_tol=1e-6)
            assert math.isclose(table[pos, 2 * i + 1].item(), math.cos(angle), abs_tol=1e-6)


def test_odd_width_and_learned_option():
    assert sinusoidal_encoding(5, 7).shape == (5, 7)
    learned = PositionalEncoding(8, 10, kind="learned")
    assert learned.table.requires_grad
    x = torch.zeros(2, 4, 8)
    torch.testing.assert_close(PositionalEncoding(8, 10)(x)[0], sinusoidal_encoding(4, 8))

"""The positional-encoding explorer's maths: the paper formula, the rotation M_k, similarity, dials and bits."""
import math

import numpy as np
import pytest
import torch

from model.foundations.positional import (analyse_sinusoidal, binary_counter, bits_needed, dial_angles,
                                          diagonal_spread, position_similarity, rotation_matrix,
                                          summarize_position_table, trained_position_table, wavelengths)
from model.config import Seq2SeqConfig, TransformerConfig
from model.positional import PositionalEncoding, sinusoidal_encoding
from model.seq2seq import Seq2Seq
from model.transformer import Transformer


@pytest.mark.parametrize("d_model", [4, 64, 256])
def test_table_matches_the_paper_formula(d_model):
    table = sinusoidal_encoding(300, d_model)
    for pos in (0, 1, 17, 299):
        for i in (0, 1, d_model // 4, d_model // 2 - 1):
            angle = pos / 10000 ** (2 * i / d_model)
            assert math.isclose(table[pos, 2 * i].item(), math.sin(angle), abs_tol=1e-6)
            assert math.isclose(table[pos, 2 * i + 1].item(), math.cos(angle), abs_tol=1e-6)


@pytest.mark.parametrize("d_model", [4, 16, 128, 256])
def test_shift_by_k_is_one_fixed_rotation(d_model):
    table = sinusoidal_encoding(400, d_model)  # (T, d)
    for k in (1, 2, 5, 37, 100, 250):
        m = rotation_matrix(d_model, k)
        shifted = table[: 400 - k] @ m.T  # row p: M_k PE(p)
        torch.testing.assert_close(shifted, table[k:], atol=1e-5, rtol=0)


def test_rotation_is_orthogonal_block_diagonal_and_composes():
    m3, m4, m7 = (rotation_matrix(32, k, dtype=torch.float64) for k in (3, 4, 7))
    torch.testing.assert_close(m3 @ m3.T, torch.eye(32, dtype=torch.float64))
    torch.testing.assert_close(m3 @ m4, m7)  # turning by 3 then by 4 is turning by 7
    outside = torch.ones(32, 32, dtype=torch.bool)
    for pair in range(16):
        outside[2 * pair: 2 * pair + 2, 2 * pair: 2 * pair + 2] = False
    assert (m3[outside] == 0).all()
    torch.testing.assert_close(rotation_matrix(32, 0, dtype=torch.float64), torch.eye(32, dtype=torch.float64))
    with pytest.raises(ValueError):
        rotation_matrix(7, 1)


def test_a_random_matrix_does_not_pass_the_rotation_check():
    table = sinusoidal_encoding(50, 16)
    wrong = rotation_matrix(16, 3)  # M_3 is not M_4
    assert (table[:46] @ wrong.T - table[4:]).abs().max() > 0.1


def test_similarity_depends_only_on_the_offset():
    table = sinusoidal_encoding(120, 64)
    sim = position_similarity(table.double())  # (T, T)
    omega = 1 / 10000 ** (torch.arange(0, 64, 2, dtype=torch.float64) / 64)
    for p, q in [(0, 0), (3, 10), (50, 7), (119, 0)]:
        assert math.isclose(sim[p, q].item(), torch.cos((p - q) * omega).sum().item(), abs_tol=1e-5)
    for p, q, shift in [(3, 10, 40), (50, 7, 69), (10, 20, -10), (0, 119, 0)]:
        assert math.isclose(sim[p, q].item(), sim[p + shift, q + shift].item(), abs_tol=1e-5)
    assert diagonal_spread(sim) < 1e-5
    assert torch.allclose(torch.diagonal(sim), torch.full((120,), 32.0, dtype=torch.float64))  # |PE(p)|² = d/2
    learned = PositionalEncoding(64, 120, kind="learned").table.detach()
    assert diagonal_spread(position_similarity(learned)) > 0.1  # a random table has no such structure


def test_dial_angles_turn_fast_then_slow_and_point_at_the_encoding():
    angles = dial_angles(list(range(60)), 32)  # (P, 16)
    assert angles.shape == (60, 16)
    assert ((angles >= 0) & (angles < 2 * math.pi)).all()
    assert math.isclose(angles[1, 0].item(), 1.0)  # pair 0 turns 1 radian per position
    assert math.isclose(angles[10, 1].item(), 10 / 10000 ** (2 / 32))
    step = dial_angles([1], 32)[0]
    assert (step[1:] < step[:-1]).all()  # each higher pair turns more slowly
    table = sinusoidal_encoding(60, 32).double()
    torch.testing.assert_close(torch.sin(angles), table[:, 0::2], atol=1e-6, rtol=0)  # hand tip = (PE_2i, PE_2i+1)
    torch.testing.assert_close(torch.cos(angles), table[:, 1::2], atol=1e-6, rtol=0)
    assert math.isclose(wavelengths(32)[0].item(), 2 * math.pi)
    assert math.isclose(wavelengths(32)[-1].item(), 2 * math.pi * 10000 ** (30 / 32))


def test_binary_counter_bits():
    bits = binary_counter([0, 1, 2, 5, 13, 255], 8)
    assert bits.tolist()[3] == [1, 0, 1, 0, 0, 0, 0, 0]
    assert bits.tolist()[4] == [1, 0, 1, 1, 0, 0, 0, 0]
    assert (bits * 2 ** torch.arange(8)).sum(1).tolist() == [0, 1, 2, 5, 13, 255]
    flips = (binary_counter(list(range(64)), 6).diff(dim=0) != 0).sum(0)
    assert flips.tolist() == [63, 31, 15, 7, 3, 1]  # the least significant bit flips fastest
    assert [bits_needed(n) for n in (1, 2, 8, 9, 256)] == [1, 1, 3, 4, 8]


def test_analysis_and_model_table_summary():
    pe = analyse_sinusoidal(40, 8, 3)
    assert pe.table.shape == (40, 8) and pe.similarity.shape == (40, 40) and pe.rotation.shape == (8, 8)
    assert pe.shifted.shape == pe.rotated.shape == (37, 8)
    assert pe.rotation_error.max() < 1e-5 and pe.diagonal_spread < 1e-5
    assert pe.angles.shape == (40, 4) and pe.bits.shape == (40, 6)
    with pytest.raises(ValueError):
        analyse_sinusoidal(10, 8, 10)
    fixed = summarize_position_table(PositionalEncoding(16, 30))
    assert fixed.kind == "sinusoidal" and fixed.max_diff_from_sinusoidal == 0.0 and fixed.table.shape == (30, 16)
    learned = summarize_position_table(PositionalEncoding(16, 30, kind="learned"))
    assert learned.kind == "learned" and learned.max_diff_from_sinusoidal > 0.5
    assert isinstance(learned.table, np.ndarray)


def test_a_models_own_table_is_found_only_where_it_has_one():
    learned = Transformer(TransformerConfig(20, 20, num_layers=1, d_model=16, num_heads=2, d_ff=32, max_len=24,
                                            positional="learned"))
    summary = trained_position_table(learned)
    assert summary.kind == "learned" and summary.table.shape == (24, 16)
    np.testing.assert_array_equal(summary.table, learned.src_pos.table.detach().numpy())
    assert trained_position_table(Seq2Seq(Seq2SeqConfig(20, 20, embed_dim=8, hidden_size=8))) is None  # a GRU
    assert trained_position_table(None) is None  # a model without a `model` (a BERT encoder)

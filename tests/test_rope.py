"""model/foundations/rope.py and viz/rope.py: RoPE (Su et al. 2021) through the LLM's own rotary code."""
import numpy as np
import pytest
import torch

from model.foundations.rope import (SMOLLM2_HEAD_DIM, SMOLLM2_ROPE_BASE, analyse_rope, pair_angles,
                                    rotate_by_position)
from viz.rope import rotation_of_pairs, score_at_distance, scores_by_position
from ui.language import words_for


def test_the_rotation_is_the_llms_and_turns_each_pair_by_p_theta():
    x = torch.randn(8, generator=torch.Generator().manual_seed(3))
    turned = rotate_by_position(x, torch.arange(5), 10000.0)  # (5, 8)
    assert torch.equal(turned[0], x)  # position 0: no turn
    # pair i = (x_i, x_{i+4}) turned by p·θ_i, θ_i = 10000^(−2i/8), as a complex product
    for i, theta in enumerate(pair_angles(8, 10000.0)):
        expected = complex(x[i], x[i + 4]) * np.exp(1j * 3 * theta)
        assert complex(turned[3, i], turned[3, i + 4]) == pytest.approx(expected, abs=1e-5)
    assert torch.allclose(turned.norm(dim=-1), x.norm().expand(5))  # a rotation keeps the length


def test_the_score_depends_on_the_distance_only_and_not_without_rope():
    analysis = analyse_rope(128, 64, k=7)
    assert analysis.scores.shape == (128, 128)
    assert analysis.diagonal_spread < 1e-3 * analysis.largest_score  # float32 rounding only
    np.testing.assert_allclose(np.diag(analysis.scores), analysis.unrotated_score, rtol=1e-5)
    assert analysis.at_distance.shape == (121,) and np.ptp(analysis.at_distance) < 1e-3
    # the score does change with the distance (else the check could not fail): rows are not constant
    assert np.ptp(analysis.scores[64]) > 1.0
    # the measure sees one score off its diagonal's value
    plain = analysis.scores.copy()
    plain[40, 33] += 1.0
    from model.foundations.positional import diagonal_spread
    assert diagonal_spread(torch.tensor(plain)) == pytest.approx(1.0, abs=1e-3)


def test_pairs_and_bounds():
    analysis = analyse_rope(16, 8, k=1, pairs=(0, 2, 9))
    assert analysis.pairs == (0, 2)  # a pair the head width does not have is left out
    assert analysis.query_pairs.shape == (2, 16, 2)
    np.testing.assert_allclose(analysis.pair_angles, [1.0, SMOLLM2_ROPE_BASE ** (-4 / 8)])
    with pytest.raises(ValueError):
        analyse_rope(16, 7)
    with pytest.raises(ValueError):
        analyse_rope(16, 8, k=16)


def test_the_page_shows_smollm2s_own_rotary_base():
    from model.gguf_weights import read_config, smollm2_path

    import gguf

    config = read_config(gguf.GGUFReader(smollm2_path()))
    assert (config.rope_theta, config.head_dim) == (SMOLLM2_ROPE_BASE, SMOLLM2_HEAD_DIM)


def test_rope_charts_hold_the_analysis():
    analysis = analyse_rope(32, 16, k=3)
    pairs = rotation_of_pairs(analysis.query_pairs, analysis.pairs, analysis.pair_angles, 16, "t",
                              words=words_for("rope"))
    assert len(pairs.data) == 2 and pairs.data[0].marker.size[0] > pairs.data[0].marker.size[1]
    radius = np.hypot(pairs.data[1].x, pairs.data[1].y)
    np.testing.assert_allclose(radius, radius[0], rtol=1e-5)
    heatmap = scores_by_position(analysis.scores, "s", words=words_for("rope"))
    np.testing.assert_array_equal(heatmap.data[0].z, analysis.scores.astype(float))
    line = score_at_distance(analysis.at_distance, 3, analysis.unrotated_score, "d", words=words_for("rope"))
    assert list(line.data[0].x) == list(range(3, 32))

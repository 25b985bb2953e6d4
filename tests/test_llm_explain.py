"""model/explain/induction.py and sinks.py on the real SmolLM2-135M-Instruct: numbers computed from its maps.

Induction heads: Olsson et al. 2022 (repeated random tokens, attention to the token after the previous
occurrence). Attention sinks: Xiao et al. 2023 (share on the first token; sliding window with and without it).
"""
import numpy as np
import pytest
import torch

from model.explain.induction import (induction_analysis, induction_scores, previous_token_scores,
                                     repeated_random_tokens, top_heads)
from model.explain.sinks import (next_token_losses, norm_share_on_first, sink_analysis, sink_share, sliding_window_mask,
                                 window_losses)
from model.explain.value_norms import llama_value_norms
from model.llama import load_smollm2

REPEATED = "The cat sat on the mat. The cat sat on the mat. The cat sat on the mat. The cat sat on the"
TEXT = ("Attention lets every token look at every other token. A query vector is compared with every key vector, "
        "the scores go through a softmax, and the weights mix the value vectors. Language models stack many such "
        "layers, and each layer has several heads that learn different patterns.")


@pytest.fixture(scope="module")
def smollm():
    return load_smollm2()


@pytest.fixture(scope="module")
def induction(smollm):
    return induction_analysis(smollm.model, smollm.config.vocab_size, length=30, seed=0)


@pytest.fixture(scope="module")
def sinks(smollm):
    return sink_analysis(smollm.model, smollm.encode(REPEATED))


def test_induction_scores_read_the_diagonal_after_the_previous_occurrence():
    tokens = repeated_random_tokens(49152, 4, seed=1, prefix=[7])
    assert len(tokens) == 9 and tokens[1:5] == tokens[5:] and len(set(tokens[1:5])) == 4
    # A perfect induction head: query 5 + i (second r_i) attends to key 2 + i (first r_{i+1}); uniform elsewhere.
    perfect = np.zeros((1, 2, 9, 9))
    for q in range(9):
        perfect[0, :, q, :q + 1] = 1 / (q + 1)
    for i in range(3):
        perfect[0, 0, 5 + i] = 0
        perfect[0, 0, 5 + i, 2 + i] = 1
    scores = induction_scores(perfect, period=4, prefix=1)
    assert scores[0, 0] == pytest.approx(1.0) and scores[0, 1] == pytest.approx(np.mean([1 / 6, 1 / 7, 1 / 8]))
    assert top_heads(scores, 1)[0][:2] == (0, 0)
    # Previous-token score: the diagonal just below the main one.
    shifted = np.zeros((1, 1, 5, 5))
    shifted[0, 0, 0, 0] = 1
    shifted[0, 0, np.arange(1, 5), np.arange(0, 4)] = 1
    assert previous_token_scores(shifted)[0, 0] == pytest.approx(1.0)


def test_smollm_has_induction_heads_that_copy_random_tokens(induction):
    scores = induction.scores
    assert scores.shape == (30, 9)
    layer, head, best = induction.top_heads(1)[0]
    assert best > 0.5 and best > 20 * np.median(scores)  # a few heads, far above the rest
    assert layer >= 2  # an induction head needs a previous-token head in an earlier layer
    assert (scores > 0.3).sum() <= 20
    # What they buy: the second copy of the same random tokens is predicted far better than the first.
    assert induction.first_copy_loss > 10 and induction.second_copy_loss < induction.first_copy_loss / 3
    assert induction.previous_token[:layer].max() > 0.5  # the circuit's first half: a previous-token head


def test_the_first_token_is_an_attention_sink_past_the_first_layers(sinks, smollm):
    share = sinks.share
    assert share.shape == (30, 9)
    length = len(smollm.encode(REPEATED))
    uniform = np.mean([1 / (q + 1) for q in range(1, length)])  # a head spreading evenly over what it can see
    assert share[3:].mean() > 0.4 and share[3:].mean() > 3 * uniform
    assert share[3:].mean() > share[:2].mean() + 0.2
    # The value-weighted norms: the sink's share of what the heads write is smaller than its share of the weights.
    assert sinks.norm_share[3:].mean() < share[3:].mean() - 0.05


def test_switching_the_sink_off_equals_removing_it_with_rotary_positions(sinks, smollm):
    change = sinks.change
    assert smollm.decode(change.top_ids[:1]) == " mat"
    assert change.kl_switched_off > 0
    # Under RoPE only distances matter and nothing sees the token either way: the same distribution.
    assert change.kl_switched_off == pytest.approx(change.kl_removed, abs=1e-4)
    assert change.switched_off_ids == change.removed_ids


def test_a_sliding_window_needs_the_sink(smollm):
    losses = window_losses(smollm.model, smollm.encode(TEXT), window=8)
    # StreamingLLM (Xiao et al. 2023, Fig. 3): the window alone loses much; the window plus the first token is
    # close to full attention.
    assert losses.window_only > losses.window_with_sink + 1.0
    assert losses.window_with_sink < losses.full + 1.0
    mask = sliding_window_mask(6, 2, keep_first=True)
    assert mask.tolist()[5] == [True, False, False, False, True, True]
    # The full-attention losses, computed once per text, give every window the same result as its own pass.
    ids = smollm.encode(TEXT)
    full = next_token_losses(smollm.model, ids)
    assert full.shape == (len(ids) - 1,)
    for window in (4, 8):
        again = window_losses(smollm.model, ids, window, full=full)
        alone = losses if window == 8 else window_losses(smollm.model, ids, window)
        assert again.full == pytest.approx(alone.full, abs=1e-5)
        assert again.window_only == pytest.approx(alone.window_only, abs=1e-5)


def test_share_helpers_on_hand_made_maps():
    maps = torch.zeros(1, 1, 3, 3)
    maps[0, 0, 0, 0] = 1
    maps[0, 0, 1, :2] = torch.tensor([0.8, 0.2])
    maps[0, 0, 2] = torch.tensor([0.5, 0.25, 0.25])
    assert sink_share(maps)[0, 0] == pytest.approx(0.65)
    norms = maps.clone()
    norms[..., 0] *= 0.1  # the first token's value is ten times shorter
    assert norm_share_on_first(norms)[0, 0] == pytest.approx(np.mean([0.08 / 0.28, 0.05 / 0.55]))


def test_value_weighted_norms_match_a_direct_computation_in_layer_0(smollm):
    ids = smollm.encode("Attention is all you need")
    model = smollm.model
    with torch.no_grad():
        out = smollm.run(ids)
        norms = llama_value_norms(model, out)  # (L, B, h, T, T)
        x = model.layers[0].attention_norm(model.embed(torch.tensor(ids)))  # (T, d) the sublayer's input
        w_v, _ = model.layers[0].self_attn.projection("v")  # (3·64, d)
        w_o, _ = model.layers[0].self_attn.projection("o")  # (d, 9·64)
        for head in (0, 4, 8):
            v = x @ w_v[64 * (head // 3):64 * (head // 3 + 1)].T  # (T, d_k) of the shared value head
            f = v @ w_o[:, 64 * head:64 * (head + 1)].T  # (T, d): what each key would write at full weight
            expected = out.weights[0, 0, head] * f.norm(dim=-1)[None, :]
            torch.testing.assert_close(norms[0, 0, head], expected, rtol=1e-4, atol=1e-6)
    assert norms.shape == out.weights.shape

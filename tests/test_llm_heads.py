"""viz/llm_heads.py's charts, and the induction analysis's weights (model/explain/induction.py) on SmolLM2."""
import numpy as np
import pytest
import torch

from model.explain.induction import induction_analysis, induction_analysis_with_weights, induction_scores, top_heads
from model.explain.kinds import head_label
from viz.llm_heads import (attention_row_bars, layer_means, layers_by_heads_map, ranked_next_tokens,
                           window_loss_bars)
from ui.language import words_for


def test_a_layers_by_heads_map_labels_the_chosen_heads_by_their_1_based_names():
    values = np.zeros((30, 9))
    values[18, 6], values[17, 3] = 0.92, 0.81
    fig = layers_by_heads_map(values, "t", "score", labelled=top_heads(values, 2), words=words_for("llm_heads"))
    assert fig.data[0].y[0] == "L1" and fig.data[0].y[-1] == "L30" and list(fig.data[0].x)[-1] == "H9"
    np.testing.assert_array_equal(fig.data[0].z, values)
    labels = [a.text for a in fig.layout.annotations]
    assert labels == ["<b>L19 H7</b> 0.92", "<b>L18 H4</b> 0.81"]
    assert (fig.layout.annotations[0].x, fig.layout.annotations[0].y) == ("H7", "L19")
    assert head_label(0, 0) == "L1 H1"


def test_layer_means_average_each_layers_heads():
    share = np.array([[0.1, 0.3], [0.5, 0.7]])
    fig = layer_means({"weights": share, "norms": share / 2}, "t", reference=0.25, words=words_for("llm_heads"))
    np.testing.assert_allclose(fig.data[0].y, [0.2, 0.6])
    np.testing.assert_allclose(fig.data[1].y, [0.1, 0.3])
    assert list(fig.data[0].x) == [1, 2] and fig.layout.shapes[0].y0 == 0.25


def test_window_bars_table_and_row_show_the_numbers():
    bars = window_loss_bars(0.6, 6.3, 2.6, 4, "w", words=words_for("llm_heads"))
    assert list(bars.data[0].y) == [0.6, 6.3, 2.6] and "4" in bars.data[0].x[1]
    lying = window_loss_bars(0.6, 6.3, 2.6, 4, "w", compact=True, words=words_for("llm_heads"))
    assert lying.data[0].orientation == "h" and list(lying.data[0].x) == [0.6, 6.3, 2.6]
    assert list(lying.data[0].text) == ["0.60", "6.30", "2.60"] and lying.layout.height <= 250
    table = ranked_next_tokens({"a": ([" mat", "<b>"], [0.5, 0.25]), "b": ([" cat", "x"], [0.4, 0.1])},
                             words=words_for("llm_heads"))
    assert table.shape == (2, 2) and table.iloc[0, 0] == "' mat' (50.0%)" and table.iloc[1, 0] == "'<b>' (25.0%)"
    row = attention_row_bars(["The", "<b>"], np.array([0.9, 0.1]), "r", words=words_for("llm_heads"))
    assert list(row.data[0].y) == ["The", "&lt;b&gt;"]  # token text never becomes markup in plotly


@pytest.fixture(scope="module")
def smollm():
    from model.llama import load_smollm2

    return load_smollm2()


def test_the_weights_returned_are_the_ones_scored(smollm):
    result, weights = induction_analysis_with_weights(smollm.model, smollm.config.vocab_size, length=10, seed=4)
    assert weights.shape == (30, 9, 20, 20)
    np.testing.assert_allclose(induction_scores(weights, 10), result.scores)
    assert torch.allclose(weights.sum(-1), torch.ones(30, 9, 20), atol=1e-4)
    plain = induction_analysis(smollm.model, smollm.config.vocab_size, length=10, seed=4)
    np.testing.assert_array_equal(plain.scores, result.scores)
    layer, head, score = result.top_heads(1)[0]
    # the top head's stripe: in the second copy, each query's largest weight past key 0 is its induction target
    stripe = weights[layer, head, 10:19, 1:].argmax(-1) + 1
    assert (stripe == torch.arange(10, 19) - 10 + 1).float().mean() > 0.7 and score > 0.5

"""Every chart builder of viz/ that the pages show through ui/charts.show_chart, built on small fixed inputs (token
text with markup, formula characters, repeats and spaces; masks, padding, gaps): the charts whose CSV and words
tests/test_chart_outputs.py pins.

The inputs are made by exact arithmetic (no random numbers, no sines or exponentials), so that their CSV is the same
to the last digit on every machine; only the dials draw their faces with sines and cosines of their own.
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np
import plotly.graph_objects as go

from ui.language import words_for
from viz.analysis import layers_by_heads, pattern_grid, pruning_curve_chart, survival_bars
from viz.attention import attention_heatmap, attention_lines, difference_heatmap, head_grid, probability_bars
from viz.cells import answer_map, tap_density
from viz.encoder import token_movement_bars
from viz.head_finder import highlight_row, qk_scatter, ranking_bars, rotary_share_bars
from viz.llm import attention_row_chart, cache_layers_chart, kv_groups_chart, next_token_chart, work_per_step_chart
from viz.llm_answer import attribution_bars, heads_map, lens_map, patching_map, rank_by_layer
from viz.llm_heads import attention_row_bars, layer_means, layers_by_heads_map, window_loss_bars
from viz.matrices import matrix_figure
from viz.normalization import before_after_chart, statistics_chart, tensor_grid
from viz.positional import (dials_and_counter, dimension_curves, encoding_heatmap, rotation_check,
                            rotation_matrix_heatmap, similarity_by_offset, similarity_heatmap)
from viz.residual import gradient_norm_chart
from viz.rope import rotation_of_pairs, score_at_distance, scores_by_position
from viz.scaling import dot_product_histogram, jacobian_heatmap, saturation_chart, softmax_bars
from viz.training import accuracy_by_length_chart, training_curves

QUERIES = ["=cmd", "<b>x</b>", " Mary", "a & b", "=cmd"]  # markup, a formula, a space, an ampersand, a repeat
KEYS = ["je", "+1", "suis", "<eos>"]


def _values(shape: tuple[int, ...], seed: int, low: float = 0.0) -> np.ndarray:
    """Fixed values in low … low + 1, in sixteenths: a different pattern for each seed."""
    count = int(np.prod(shape))
    return low + ((np.arange(count) * (2 * seed + 5) + seed) % 17).reshape(shape) / 16


def _rows(shape: tuple[int, ...], seed: int) -> np.ndarray:
    """Attention-like rows: each last-axis row sums to 1."""
    values = _values(shape, seed) + 1 / 16
    return values / values.sum(axis=-1, keepdims=True)


def _attention() -> dict[str, Callable[[], go.Figure]]:
    words = words_for("attention")
    causal = np.triu(np.ones((5, 5), bool), 1)
    square = [f"t{i}" for i in range(5)]
    return {
        "heatmap": lambda: attention_heatmap(_rows((5, 4), 0), QUERIES, KEYS, "Layer 1 · head 2", words=words),
        "heatmap_masked": lambda: attention_heatmap(np.where(causal, 0, _rows((5, 5), 1)), square, square, "masked",
                                                    masked=causal, words=words),
        "heatmap_block_rows_title": lambda: attention_heatmap(_rows((5, 5), 2), QUERIES, square, "block",
                                                              block=(1, 3), rows_title="heads", words=words),
        "heatmap_untitled": lambda: attention_heatmap(_rows((2, 3), 3), ["a", "b"], ["x", "y", "z"], words=words),
        "difference": lambda: difference_heatmap(_rows((5, 4), 4), _rows((5, 4), 5), QUERIES, KEYS, "A − B",
                                                 words=words),
        "grid": lambda: head_grid(_rows((2, 3, 5, 4), 6), QUERIES, KEYS, "All heads", selected=(1, 2), words=words),
        "grid_masked_paged_labelled": lambda: head_grid(
            np.where(causal, 0, _rows((2, 2, 5, 5), 7)), square, square, "page", masked=causal,
            labels=[["prev", "self"], ["sink", "broad"]], first_layer=12, words=words),
        "grid_one_head": lambda: head_grid(_rows((1, 1, 3, 3), 8), ["a", "b", "c"], ["a", "b", "c"], "GRU",
                                           words=words),
        "probability_bars": lambda: probability_bars(["le", "=la", " un"], [0.6, 0.3, 0.1], "Next word",
                                                     words=words),
        "highlighted_row": lambda: highlight_row(attention_heatmap(_rows((5, 4), 9), QUERIES, KEYS, "row",
                                                                   words=words), 2),
        "tap_density": lambda: tap_density(_rows((5, 4), 10), QUERIES, KEYS, {(1, 0): 3, (1, 2): 1, (4, 3): 4},
                                           [(1, 2)], "Taps: 12% right", words=words),
        "answer_map": lambda: answer_map(_rows((5, 4), 10), QUERIES, KEYS, [(1, 2)], "The real map", words=words),
    }


def _explain() -> dict[str, Callable[[], go.Figure]]:
    words = words_for("explain")
    rows = ["Encoder self L1", "Encoder self L2"]
    return {
        "survival_bars": lambda: survival_bars(_values((2, 3), 10), _values((2, 3), 11), "Survival",
                                               words=words),
        "layers_by_heads": lambda: layers_by_heads(_values((2, 3), 12, low=-0.5), rows, "Importance", "drop",
                                                   zmid=0.0, words=words),
        "pruning_curve": lambda: pruning_curve_chart([{"k": k, "exact_match": 1 - k / 8, "loss": 1 + k / 4}
                                                      for k in range(7)], 6, "Curve", words=words),
        "pruning_curve_loss": lambda: pruning_curve_chart([{"k": k, "loss": 2 + k / 3} for k in range(5)], 4,
                                                          "Loss curve", measure="loss", measure_label="loss",
                                                          words=words),
        "pattern_grid": lambda: pattern_grid(np.array([["previous", "self", "sink"], ["broad", "first", "next"]]),
                                             rows, "Patterns", words=words),
    }


def _llm() -> dict[str, Callable[[], go.Figure]]:
    words = words_for("llm", "llm_explain")
    keys = ["<|im_start|>", " The", " cat", "\n", " =sat"]
    return {
        "next_token": lambda: next_token_chart([" mat", " floor", "\n"], [0.5, 0.3, 0.1], 0, "Next", words=words),
        "attention_row": lambda: attention_row_chart(_rows((3, 5), 13), keys, [0, 0, 1], "Row", words=words),
        "cache_layers": lambda: cache_layers_chart(3, keys, 3, "Cache", words=words),
        "work_per_step": lambda: work_per_step_chart([30, 6, 6], [30, 36, 42], "Work", words=words),
        "kv_groups": lambda: kv_groups_chart([[0, 1], [2, 3]], 4, "Groups", words=words),
    }


def _llm_heads() -> dict[str, Callable[[], go.Figure]]:
    words = words_for("llm_heads")
    return {
        "layers_by_heads_map": lambda: layers_by_heads_map(_values((4, 3), 14), "Sinks", "share",
                                                           labelled=[(1, 2, 0.9)], words=words),
        "layer_means": lambda: layer_means({"weight": _values((4, 3), 15), "norm <b>": _values((4, 3), 16)},
                                           "Means", reference=0.25, words=words),
        "window_loss_bars": lambda: window_loss_bars(2.5, 4.0, 2.6, 8, "Losses", words=words),
        "window_loss_bars_compact": lambda: window_loss_bars(2.5, 4.0, 2.6, 8, "Losses", compact=True, words=words),
        "attention_row_bars": lambda: attention_row_bars(QUERIES, _rows((5,), 17), "One row", largest_first=True,
                                                         words=words),
    }


def _llm_answer() -> dict[str, Callable[[], go.Figure]]:
    words = words_for("llm_answer")
    top_tokens = np.array([[[" Paris", " the"], ["\n", "="]], [[" Paris", " is"], [" France", " it"]],
                           [[" <i>", " a"], [" Paris", " Lyon"]]], dtype=object)  # (L+1 = 3, T = 2, k = 2)
    top_probs = np.array([[[0.2, 0.1], [0.3, 0.2]], [[0.5, 0.2], [0.4, 0.3]], [[0.9, 0.05], [0.7, 0.2]]])
    return {
        "lens_map": lambda: lens_map(top_tokens, top_probs, ["The", " capital"], np.array([1, 2]), "Lens",
                                     words=words),
        "rank_by_layer": lambda: rank_by_layer(np.array([900, 40, 1]), np.array([0.001, 0.05, 0.9]), " Paris",
                                               "Rank", words=words),
        "patching_map": lambda: patching_map(_values((3, 3), 18), ["The", " Eiffel", " is"],
                                             ["The", " Colosseum", " is"], "Patching", "p(answer)", words=words),
        "patching_map_difference": lambda: patching_map(_values((3, 3), 19, low=-0.5), ["a", "b", "c"],
                                                        ["a", "x", "c"], "Patching", "logit difference",
                                                        difference=True, compact=True, words=words),
        "heads_map": lambda: heads_map(_values((3, 4), 20), "Heads", "p(answer)", words=words),
        "attribution_bars": lambda: attribution_bars(_values((2, 3), 21, low=-0.5), _values((2,), 22, low=-0.5), 0.3,
                                                     "Attribution", count=5, words=words),
    }


def _foundations() -> dict[str, Callable[[], go.Figure]]:
    positional, rope, scaling = words_for("positional"), words_for("rope"), words_for("softmax_scaling")
    normalization, steps = words_for("normalization"), words_for("attention_steps")
    table = _values((12, 8), 26, low=-0.5)  # (T, d_model), as a positional table
    fine_positions = np.arange(0, 12 * 4) / 4  # four samples a position
    similarity = table @ table.T  # sums of products of sixteenths: exact
    x = _values((3, 4, 3), 27, low=-0.5)  # (B, T, d), the last sequence padded after 2 tokens
    mask = np.array([[True] * 4, [True] * 3 + [False], [True] * 2 + [False] * 2])
    statistics = {"layer": (_values((3, 4), 28, low=-0.5), _values((3, 4), 29), np.where(mask, 3, 0)),
                  "batch": (_values((3,), 30, low=-0.5), np.array([0.25, 0.0, 0.5]), np.array([9, 1, 9])),
                  "batch_per_step": (_values((4, 3), 31, low=-0.5), _values((4, 3), 32), np.array([[3] * 3, [3] * 3,
                                                                                                   [2] * 3, [0] * 3]))}
    scores = np.array([[2.0, -np.inf, 0.5], [1.0, 0.25, -np.inf]])
    return {
        "encoding_heatmap": lambda: encoding_heatmap(table, "PE", words=positional),
        "dimension_curves": lambda: dimension_curves(table, [0, 3], fine=_values((48, 8), 33, low=-0.5),
                                                     fine_positions=fine_positions, words=positional),
        "dials": lambda: dials_and_counter(np.array([0.5, 3.0]), np.array([1, 0, 1]), np.array([6.25, 625.0]),
                                           5, words=positional),
        "similarity_heatmap": lambda: similarity_heatmap(similarity, words=positional),
        "similarity_by_offset": lambda: similarity_by_offset(similarity, [0, 4], words=positional),
        "rotation_matrix": lambda: rotation_matrix_heatmap(_values((8, 8), 34, low=-0.5), 2, words=positional),
        "rotation_check": lambda: rotation_check(table[2:], table[2:] + 1 / 1024, 3, 2, words=positional),
        "rope_pairs": lambda: rotation_of_pairs(_values((2, 10, 2), 35, low=-0.5), (0, 4), np.array([1.0, 0.125]),
                                                16, "Pairs", words=rope),
        "rope_scores": lambda: scores_by_position(_values((10, 10), 36, low=-0.5), "Scores", words=rope),
        "rope_distance": lambda: score_at_distance(np.full(8, 0.375), 2, 0.375, "Distance", words=rope),
        "tensor_grid": lambda: tensor_grid(x, mask, None, "Batch", words=normalization),
        "tensor_grid_one": lambda: tensor_grid(x[:1], mask[:1], np.ones((1, 4, 3), bool), "One",
                                               words=normalization),
        **{f"statistics_{kind}": (lambda kind=kind: statistics_chart(*statistics[kind], kind, "Statistics",
                                                                     words=normalization))
           for kind in statistics},
        "before_after": lambda: before_after_chart(x, x * 2, mask, "Before and after", words=normalization),
        "matrix": lambda: matrix_figure(scores, ["q1", "=q2"], ["k1", "k2", "k3"], "Scores", words=steps),
        "matrix_titled": lambda: matrix_figure(np.eye(2), ["a", "b"], ["c", "d"], "Eye", row_title="rows",
                                               col_title="cols", zmid=None, words=steps),
        "dot_products": lambda: dot_product_histogram(np.arange(-16, 17) / 4, np.arange(-16, 17) / 16, 16,
                                                      words=scaling),
        "softmax_bars": lambda: softmax_bars(np.array([0.625, 0.25, 0.125]), ["k1", "k2", "=k3"], "Softmax",
                                             words=scaling),
        "jacobian": lambda: jacobian_heatmap(np.array([[0.25, -0.125], [-0.125, 0.25]]), ["1", "2"], "Jacobian",
                                             words=scaling),
        "saturation": lambda: saturation_chart({"scale": np.array([0.125, 0.5, 2.0, 8.0]),
                                                "entropy": np.array([1.0, 0.875, 0.5, 0.125]),
                                                "max_weight": np.array([0.375, 0.5, 0.75, 0.875]),
                                                "jacobian_norm": np.array([0.25, 0.375, 0.25, 0.0625])}, 1.0,
                                               words=scaling),
        "gradient_norms": lambda: gradient_norm_chart({"plain": np.array([1 / 1024, 0.0, 0.5]),
                                                       "residual": np.array([1.25, 1.125, 1.0])}, "Gradients",
                                                      words=words_for("residual")),
    }


def _other() -> dict[str, Callable[[], go.Figure]]:
    finder = words_for("head_finder")
    history = [{"step": s, "loss": 3.0 - s / 30, "token_accuracy": s / 30, "lr": 1e-3, "elapsed_s": s}
               for s in range(1, 25)]
    for row in history[9::10]:
        row.update(val_exact_match=row["step"] / 40, val_token_accuracy=row["step"] / 30)
    points = _values((6, 2), 23, low=-0.5)
    return {
        "token_movement": lambda: token_movement_bars(["[CLS]", "=x", "[SEP]"], np.array([0.1, 0.4, 0.0]),
                                                      "Movement", "1 − cos"),
        "ranking_bars": lambda: ranking_bars(_values((2, 3), 24), [(1, 2), (0, 0), (1, 0)], "Ranking", "weight",
                                             selected=(0, 0), words=finder),
        "qk_scatter": lambda: qk_scatter(points, np.array([True] * 3 + [False] * 3), np.array([0, 1, 2] * 2),
                                         ["a <b>", "b", "c"] * 2, "Queries and keys", words=finder),
        "qk_scatter_kind": lambda: qk_scatter(points, np.array([True] * 3 + [False] * 3), np.array([0, 1, 2] * 2),
                                              ["a", "b", "c"] * 2, "By kind", colour_by="kind",
                                              explained=np.array([0.5, 0.25]), words=finder),
        "rotary_shares": lambda: rotary_share_bars(np.array([0.5, 0.3, 0.2]), np.array([1.0, 0.1, 0.01]), "RoPE",
                                                   words=finder),
        "training_curves": lambda: training_curves(history, "Training", words=words_for("train", "compare")),
        "training_curves_empty": lambda: training_curves([], words=words_for("train", "compare")),
        "accuracy_by_length": lambda: accuracy_by_length_chart(
            {"Transformer": [{"min_words": 1, "max_words": 5, "exact_match": 0.9, "bleu": 0.8, "sentences": 10},
                             {"min_words": 6, "max_words": 10, "exact_match": 0.5, "bleu": 0.6, "sentences": 4}],
             "GRU <b>": [{"min_words": 1, "max_words": 5, "exact_match": 0.7, "bleu": 0.5, "sentences": 10}]},
            words=words_for("compare")),
    }


def chart_builders() -> dict[str, Callable[[], go.Figure]]:
    """name -> a function that builds the chart in the current language (words_for reads it)."""
    return {**_attention(), **_explain(), **_llm(), **_llm_heads(), **_llm_answer(), **_foundations(), **_other()}


def lines_view() -> go.Figure:
    """The lines view (its data is the map it redraws; the attention page shows the map's words under it)."""
    return attention_lines(_rows((5, 4), 25), QUERIES, KEYS, "Lines", words=words_for("attention"))

"""The head-pattern label "alignment (monotone)" (model/explain/patterns.py): a cross-attention head whose rows follow a
monotone alignment is named so, not "block"; checked on synthetic maps and on the shipped model's heads picked by
eye from its maps (layer 2: four clean diagonals, adjective–noun swaps aside; layer 1: spread over neighbours)."""
import numpy as np
import pytest

from model.explain.fixed_sets import held_out_pairs

from model.explain.patterns import label_heads, labelling_sentences, transformer_head_labels


def test_a_diagonal_cross_map_is_an_alignment_and_a_scattered_or_reversed_one_is_not():
    diagonal = np.eye(6)[None, None] * 0.95 + 0.05 / 6  # (L=1, h=1, T, S): rows sum to 1
    reversed_ = diagonal[..., ::-1, :]
    rng = np.random.default_rng(0)
    scattered = np.eye(6)[rng.permutation(6)][None, None] * 0.95 + 0.05 / 6
    keys = [f"w{i}" for i in range(6)]
    labels = [label_heads([(w, keys)], self_attention=False).labels[0, 0]
              for w in (diagonal, reversed_, scattered)]
    assert labels[0] == "alignment" and labels[1] != "alignment" and labels[2] != "alignment"
    # self-attention is never an "alignment": the diagonal there is "self"
    assert label_heads([(diagonal, keys)], self_attention=True).labels[0, 0] == "self"


@pytest.mark.slow
def test_the_shipped_models_diagonal_cross_heads_are_labelled_alignment():
    from model.checkpoint import load_checkpoint
    from ui.models import CHECKPOINT_DIR

    loaded = load_checkpoint(CHECKPOINT_DIR / "transformer_en-fr")
    sentences = labelling_sentences(loaded, held_out_pairs(loaded, 100))
    cross = transformer_head_labels(loaded.model, sentences)["cross"]
    by_eye_diagonal = {(1, 0), (1, 1), (1, 2), (1, 3)}  # L2 H1..H4, 0-based
    labelled = {(l, h) for l, h in np.ndindex(cross.labels.shape) if cross.labels[l, h] == "alignment"}
    assert labelled == by_eye_diagonal, cross.labels
    assert "block" not in cross.labels[1]
    assert (cross.monotone[1] >= 0.95).all() and (cross.peak[1] >= 0.95).all()


@pytest.mark.slow
def test_stop_10s_thumbnails_call_the_layer_2_cross_heads_an_alignment():
    from tests.app_links import assert_healthy, chart_specs, open_from_link
    from tests.test_lessons import _answer

    at, _ = open_from_link(None, {"lesson": "intro", "stop": "10"})
    _answer(at, "q_intro_10", "choice", "2")
    assert_healthy(at)
    texts = " ".join(a.get("text", "") for spec in chart_specs(at) for a in spec["layout"].get("annotations", []))
    assert all(f"L2 H{h} · align" in texts for h in range(1, 5)), texts
    assert "L2 H1 · block" not in texts

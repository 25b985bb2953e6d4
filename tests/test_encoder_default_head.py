"""The real encoder opens on a head that links words, not on a [CLS]/[SEP] sink, and says why."""
import numpy as np

from model.metrics import sharpest_content_head
from tests.app_links import open_from_link


def test_a_word_to_word_head_wins_over_a_sep_sink():
    special = [True, False, False, False, True]  # [CLS] w w w [SEP]
    sink = np.zeros((5, 5))
    sink[:, 4] = 1.0  # everything on [SEP]: the sharpest head by entropy, and it shows nothing about the words
    previous = np.zeros((5, 5))
    previous[np.arange(5), np.maximum(np.arange(5) - 1, 0)] = 1.0  # each token on the one before it
    broad = np.full((5, 5), 0.2)
    weights = np.stack([np.stack([sink, broad]), np.stack([broad, previous])])  # (L=2, h=2, 5, 5)
    assert sharpest_content_head(weights, special)[:2] == (1, 1)


def test_the_encoder_page_opens_on_that_head_with_its_reason():
    sentence = "The animal didn't cross the street because it was too tired."
    at, _ = open_from_link("attention", {"model": "all-MiniLM-L6-v2", "sentence": sentence})
    assert not at.exception
    layer, head = at.session_state["attn_layer"], at.session_state["attn_head"]
    reason = [c.value for c in at.caption if c.value.startswith("Why this head")]
    assert reason and f"layer {layer + 1} · head {head + 1}" in reason[0]

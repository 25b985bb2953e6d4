"""model/sources.py's promise, through each family's adapter (model/families.py): a model's layout (known before any
input) names exactly the kinds every analysis of it has, each with maps of that many layers and heads; and what
counts as punctuation."""
import pytest

from model.bert import load_minilm
from model.checkpoint import load_checkpoint
from model.data import is_punctuation
from model.decode import greedy_decode
from model.families import adapt
from model.sources import analyse_toy
from ui.models import CHECKPOINT_DIR

TEXTS = ("i am a student", "the black cat eats the fish near the river .")


@pytest.mark.parametrize("name", ["transformer_en-fr", "bahdanau_en-fr", "transformer_reverse"])
def test_a_shipped_models_layout_is_what_its_analyses_hold(name):
    loaded = load_checkpoint(CHECKPOINT_DIR / name)
    layout = adapt(name, loaded).layout
    for text in (TEXTS if name.endswith("en-fr") else ("3 1 4", "15 9 2 6 5 3")):
        analysed = analyse_toy(name, text, greedy_decode(loaded, text))
        assert {kind: maps.weights.shape[:2] for kind, maps in analysed.maps.items()} == layout
    if name.startswith("transformer"):  # 2 layers, 4 heads, every kind of the encoder-decoder
        assert layout == {kind: (2, 4) for kind in ("encoder_self", "decoder_self", "cross")}
    else:
        assert layout == {}  # a GRU has no heads: its additive alignment is shown as such


def test_an_encoders_layout_is_what_its_analyses_hold():
    minilm = load_minilm()
    layout = adapt("minilm", minilm).layout
    assert layout == {"encoder_self": (6, 12)}
    for text in TEXTS + ("Hello, world!",):
        analysed = adapt("minilm", minilm).analyse(text, (("encoder_self", 0, 1),))
        assert {kind: maps.weights.shape[:2] for kind, maps in analysed.maps.items()} == layout


def test_punctuation_is_a_token_without_letters_or_digits():
    assert all(is_punctuation(t) for t in (".", ",", "!", "…", "«", "##.", "?!"))
    assert not any(is_punctuation(t) for t in ("a", "l'", "[CLS]", "[SEP]", "##s", "3", "é", "", "##"))

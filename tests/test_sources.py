"""model/sources.py's promise, through each family's adapter (model/adapters/): a model's layout (known before any
input) names exactly the kinds every analysis of it has, each with maps of that many layers and heads; and what
counts as punctuation."""
import pytest

from model.bert import load_minilm
from model.capabilities import EMBEDDING, TRANSLATION
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
        result = greedy_decode(loaded, text)
        analysed = analyse_toy(name, text, result)
        shapes = {kind: maps.weights.shape[:2] for kind, maps in analysed.maps.items()}
        assert shapes == (layout or {"alignment": (1, 1)})
        # every map once: in `maps`, not again in the decode the analysis keeps for its steps
        assert analysed.decode.attention == {} and analysed.decode.step_probs is result.step_probs
        for kind, maps in analysed.maps.items():
            assert (maps.weights == result.attention[kind].reshape(maps.weights.shape)).all()
        assert analysed.output_tokens == result.output_tokens
    if name.startswith("transformer"):  # 2 layers, 4 heads, every kind of the encoder-decoder
        assert layout == {kind: (2, 4) for kind in ("encoder_self", "decoder_self", "cross")}
    else:
        # a GRU has no heads to pick: its additive alignment is one map of (1, 1), rows the token each step writes
        assert layout == {}
        alignment = analysed.maps["alignment"]
        assert alignment.query_tokens == result.written_tokens and alignment.key_tokens == result.source.tokens


def test_a_part_only_some_models_have_is_asked_by_capability():
    minilm = load_minilm()
    encoder = adapt("minilm", minilm).analyse("a cat")
    assert encoder.can(EMBEDDING) and encoder.special == [True, False, False, True]
    assert encoder.encoding.embedding.shape == (384,) and encoder.encoding.final_vectors.shape == (4, 384)
    assert not encoder.can(TRANSLATION) and encoder.translation is None
    with pytest.raises(AttributeError, match="translation"):
        assert encoder.output_tokens
    translator = adapt("t", load_checkpoint(CHECKPOINT_DIR / "transformer_en-fr")).analyse("a cat")
    assert translator.can(TRANSLATION) and translator.encoding is None
    with pytest.raises(AttributeError, match="embedding"):
        assert translator.special


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

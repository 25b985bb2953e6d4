"""The shipped checkpoints reach the accuracy the issue asks for, measured again here (not read from JSON)."""
import pytest

from model.checkpoint import load_checkpoint
from model.data import make_dataset
from model.decode import greedy_decode
from model.evaluation import evaluate
from ui.models import CHECKPOINT_DIR


@pytest.fixture(scope="module")
def en_fr():
    return make_dataset("en-fr", seed=0)


# The splits each model is measured on: every model's test split (its stored metrics are checked against it), and
# the long sentences where a test below reads them (the attention and no-attention GRUs). The transformer's and the
# decoder-only model's long_test, read by no test, took 48 of this fixture's 93 s.
SPLITS = {"transformer_en-fr": ("test",), "bahdanau_en-fr": ("test", "long_test"),
          "no-attention_en-fr": ("test", "long_test"), "decoder-only_en-fr": ("test",)}


@pytest.fixture(scope="module")
def scores(en_fr):
    return {name: {split: evaluate(load_checkpoint(CHECKPOINT_DIR / name).model, en_fr, split)["exact_match"]
                   for split in splits}
            for name, splits in SPLITS.items()}


@pytest.mark.slow
def test_transformer_en_fr_exact_match(scores):
    assert scores["transformer_en-fr"]["test"] >= 0.97


@pytest.mark.slow
def test_bahdanau_en_fr_exact_match(scores):
    assert scores["bahdanau_en-fr"]["test"] >= 0.90


@pytest.mark.slow
def test_no_attention_model_is_clearly_worse_on_long_sentences(scores):
    assert scores["no-attention_en-fr"]["long_test"] < scores["bahdanau_en-fr"]["long_test"] - 0.2


@pytest.mark.slow
def test_stored_metrics_match_measured(scores):
    for name, measured in scores.items():
        stored = load_checkpoint(CHECKPOINT_DIR / name).metrics
        assert stored["test"]["exact_match"] == pytest.approx(measured["test"], abs=1e-9)


def test_notes_example_and_reverse_model():
    loaded = load_checkpoint(CHECKPOINT_DIR / "transformer_en-fr")
    assert greedy_decode(loaded, "i am a student").output_tokens == ["je", "suis", "étudiant"]
    reverse = load_checkpoint(CHECKPOINT_DIR / "transformer_reverse")
    data = make_dataset("reverse", seed=0)
    assert evaluate(reverse.model, data, "test")["exact_match"] >= 0.95
    assert greedy_decode(reverse, "3 1 4 15 9").output_tokens == ["9", "15", "4", "1", "3"]

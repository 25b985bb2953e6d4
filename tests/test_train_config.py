"""TrainConfig nests the model configuration: the architecture defaults live once, in model/config.py."""
import json
from dataclasses import fields
from pathlib import Path

from model.config import Seq2SeqConfig, TransformerConfig
from model.data import make_algorithmic
from model.train import TRANSFORMER_OVERRIDES, TrainConfig, parse_command, train

CHECKPOINTS = Path(__file__).resolve().parents[1] / "assets" / "checkpoints"


def test_architecture_fields_exist_once_and_default_to_the_model_config():
    assert not {f.name for f in fields(TrainConfig)} & {f.name for f in fields(TransformerConfig)}
    model = TrainConfig().model
    assert isinstance(model, TransformerConfig) and TrainConfig().family == "transformer"
    for f in fields(TransformerConfig):  # every architecture default is TransformerConfig's, but the recipe's own
        expected = TRANSFORMER_OVERRIDES.get(f.name, f.default)
        assert getattr(model, f.name) == expected, f.name


def test_shipped_checkpoints_nested_configs_load_and_match_their_commands():
    for name, family, config_class in (("transformer_en-fr", "transformer", TransformerConfig),
                                       ("bahdanau_en-fr", "bahdanau", Seq2SeqConfig),
                                       ("no-attention_en-fr", "no-attention", Seq2SeqConfig)):
        meta = json.loads((CHECKPOINTS / f"{name}.json").read_text())["meta"]
        saved = meta["train_config"]
        assert saved["model"]["family"] == config_class().to_dict()["family"]  # nested, as to_dict() writes it
        loaded = TrainConfig.from_dict(saved)
        assert loaded.family == family and isinstance(loaded.model, config_class)
        assert loaded.model.dropout == saved["model"]["dropout"] == 0.1 and loaded.steps == saved["steps"]
        assert loaded.batching == "by-length" and getattr(loaded.model, "norm_first", False) is False  # as trained
        from_command, out = parse_command(meta["command"].removeprefix("python -m model.train ").split())
        assert out == f"assets/checkpoints/{name}"
        assert (from_command.family, from_command.steps, from_command.lr, from_command.model.dropout) == \
            (family, loaded.steps, loaded.lr, loaded.model.dropout)
    assert TrainConfig.from_dict(json.loads((CHECKPOINTS / "transformer_en-fr.json").read_text())["meta"][
        "train_config"]).long_train_size == 20000


def test_a_run_saves_its_nested_config_and_it_rebuilds_the_same():
    tiny_copy = make_algorithmic("copy", seed=0, train_size=64, test_size=16, long_size=8, max_len=6)
    cfg = TrainConfig.for_model(task="copy", steps=1, batch_size=8, eval_every=0, num_layers=1, d_model=16,
                                num_heads=2, d_ff=32, norm_first=True)
    assert (cfg.model.d_model, cfg.model.num_layers, cfg.model.norm_first) == (16, 1, True)
    saved = json.loads(json.dumps(train(cfg, data=tiny_copy).loaded.meta["train_config"]))
    assert saved["model"]["family"] == "transformer" and saved["model"]["d_model"] == 16
    assert TrainConfig.from_dict(saved) == cfg
    gru = TrainConfig.for_model("no-attention", hidden_size=32, d_model=999)  # d_model: the other family's, ignored
    assert TrainConfig.from_dict(json.loads(json.dumps(gru.to_dict()))) == gru
    assert gru.model == Seq2SeqConfig(hidden_size=32, attention=False, dropout=0.0)


def test_mixed_batches_of_any_size_draw_the_same_sentences_in_the_same_order():
    """bench/README.md compares recipes at the same training tokens (400 steps of 64 against 3200 of 8): with mixed
    batching a smaller batch size cuts the same shuffled order finer, so those runs train on the very same
    sentences; by-length batching does not have this property (its buckets depend on the batch size)."""
    import itertools

    from model.train import training_batches

    data = make_algorithmic("copy", seed=0, train_size=200, test_size=8, long_size=4, max_len=6)

    def first_sentences(batch_size: int, count: int, batching: str) -> list:
        cfg = TrainConfig.for_model(task="copy", batch_size=batch_size, batching=batching, seed=3)
        batches = training_batches(cfg, data)
        return [pair for batch in itertools.islice(batches, count // batch_size) for pair in batch]

    assert first_sentences(64, 128, "mixed") == first_sentences(8, 128, "mixed")
    assert first_sentences(64, 128, "by-length") != first_sentences(8, 128, "by-length")

import pickle

import numpy as np
import pytest
import torch

from model.checkpoint import CheckpointError, load_checkpoint, load_checkpoint_bytes, save_checkpoint
from model.data import make_algorithmic
from model.decode import greedy_decode
from model.evaluation import evaluate
from model.train import TrainConfig, noam_rate, train

TINY = {"steps": 1, "batch_size": 8, "eval_every": 0, "num_layers": 1, "d_model": 16, "num_heads": 2, "d_ff": 32,
        "embed_dim": 8, "hidden_size": 16, "dropout": 0.0}


@pytest.fixture(scope="module")
def tiny_copy():
    return make_algorithmic("copy", seed=0, train_size=64, test_size=16, long_size=8, max_len=6)


@pytest.mark.parametrize("family", ["transformer", "bahdanau", "no-attention"])
def test_save_load_roundtrip_and_decode(tmp_path, tiny_copy, family):
    result = train(TrainConfig.for_model(model=family, task="copy", **TINY), data=tiny_copy)
    loaded = result.loaded
    stem = save_checkpoint(tmp_path / "m", loaded.model, loaded.config, loaded.src_vocab, loaded.tgt_vocab, "copy",
                           metrics={"test": {"exact_match": 0.5}})
    again = load_checkpoint(stem)
    assert again.family == loaded.family and again.metrics["test"]["exact_match"] == 0.5
    for a, b in zip(loaded.model.state_dict().values(), again.model.state_dict().values()):
        torch.testing.assert_close(a, b)
    out = greedy_decode(again, "1 2 3 zebra")
    assert out.source.unknown == ["zebra"]
    assert out.source.tokens[-1] == "<eos>"
    assert np.allclose(out.step_probs.sum(-1), 1, atol=1e-4)
    if family == "transformer":
        steps = len(out.decoder_input_tokens)  # <bos> + every generated id (a 1-step model may emit specials)
        assert out.attention["cross"].shape == (1, 2, steps, 5)
        assert np.all(np.triu(out.attention["decoder_self"], 1) == 0)
    elif family == "bahdanau":
        assert out.attention["alignment"].shape[1] == 5
    else:
        assert out.attention == {}
    assert not list(tmp_path.glob("*.tmp"))


def test_broken_checkpoints_give_clear_errors(tmp_path, tiny_copy):
    loaded = train(TrainConfig.for_model(task="copy", **TINY), data=tiny_copy).loaded
    stem = save_checkpoint(tmp_path / "good", loaded.model, loaded.config, loaded.src_vocab, loaded.tgt_vocab, "copy")
    weights, sidecar = stem.with_suffix(".safetensors").read_bytes(), stem.with_suffix(".json").read_bytes()
    with pytest.raises(CheckpointError, match="file not found"):
        load_checkpoint(tmp_path / "missing")
    with pytest.raises(CheckpointError, match="empty"):
        load_checkpoint_bytes(b"", sidecar)
    with pytest.raises(CheckpointError, match="truncated"):
        load_checkpoint_bytes(weights[: len(weights) // 2], sidecar)
    with pytest.raises(CheckpointError, match="truncated|pickle"):
        load_checkpoint_bytes(pickle.dumps({"w": torch.zeros(2)}), sidecar)
    with pytest.raises(CheckpointError, match="JSON"):
        load_checkpoint_bytes(weights, b"{not json")
    other = train(TrainConfig.for_model(task="copy", **{**TINY, "d_model": 32}), data=tiny_copy).loaded
    other_stem = save_checkpoint(tmp_path / "other", other.model, other.config, other.src_vocab, other.tgt_vocab,
                                 "copy")
    with pytest.raises(CheckpointError, match=r"has shape \[32\], the config needs \[16\]"):
        load_checkpoint_bytes(other_stem.with_suffix(".safetensors").read_bytes(), sidecar)


def test_tiny_transformer_overfits_tiny_batch():
    data = make_algorithmic("reverse", seed=0, train_size=16, test_size=4, long_size=2, max_len=5)
    data.splits["test"] = data.splits["train"]
    cfg = TrainConfig.for_model(task="reverse", steps=150, batch_size=16, lr=3e-3, eval_every=0, num_layers=1,
                                d_model=32, num_heads=2, d_ff=64, dropout=0.0)
    result = train(cfg, data=data)
    assert result.history[-1]["loss"] < 0.1 < result.history[0]["loss"]
    assert evaluate(result.loaded.model, data, "train")["exact_match"] == 1.0


def test_on_step_stop_and_non_finite_loss(tiny_copy):
    seen = []
    result = train(TrainConfig.for_model(task="copy", **{**TINY, "steps": 20}), data=tiny_copy,
                   on_step=lambda info: seen.append(info.step) or info.step == 5)
    assert result.stopped == "stopped by user" and seen == [1, 2, 3, 4, 5]
    bad = train(TrainConfig.for_model(task="copy", **{**TINY, "steps": 5, "lr": 1e30}), data=tiny_copy)
    assert "non-finite" in bad.stopped
    assert all(torch.isfinite(p).all() for p in bad.loaded.model.parameters())


def test_noam_schedule_peaks_at_warmup():
    rates = [noam_rate(s, 512, 4000) for s in (1, 2000, 4000, 8000)]
    assert rates[0] < rates[1] < rates[2] > rates[3]
    assert abs(rates[2] - 512 ** -0.5 * 4000 ** -0.5) < 1e-12

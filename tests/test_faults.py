"""Faults: a save killed half-way, and damaged files offered as checkpoints."""
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
import torch

from model.checkpoint import CheckpointError, load_checkpoint, remove_stale_temp_files, save_checkpoint
from model.data import make_algorithmic
from model.train import TrainConfig, train

ROOT = Path(__file__).resolve().parents[1]
TINY = dict(steps=1, batch_size=8, eval_every=0, num_layers=1, d_model=16, num_heads=2, d_ff=32, dropout=0.0)


@pytest.fixture(scope="module")
def tiny():
    data = make_algorithmic("copy", seed=0, train_size=32, test_size=8, long_size=4, max_len=5)
    return train(TrainConfig.for_model(task="copy", **TINY), data=data).loaded


def test_sigkill_during_save_keeps_the_previous_checkpoint(tmp_path, tiny):
    stem = tmp_path / "model"
    save_checkpoint(stem, tiny.model, tiny.config, tiny.src_vocab, tiny.tgt_vocab, "copy", metrics={"v": 1})
    before = {k: v.clone() for k, v in load_checkpoint(stem).model.state_dict().items()}
    # A second process overwrites the same checkpoint with other weights, but is killed inside the write
    # (fsync is made to block so the kill lands between writing the temporary file and os.replace).
    script = textwrap.dedent(f"""
        import os, sys, time, torch
        sys.path.insert(0, {str(ROOT)!r})
        from model import checkpoint
        loaded = checkpoint.load_checkpoint({str(stem)!r})
        for p in loaded.model.parameters():
            torch.nn.init.normal_(p)
        def hang(fd):
            print("writing", flush=True)
            time.sleep(60)
        checkpoint.os.fsync = hang
        checkpoint.save_checkpoint({str(stem)!r}, loaded.model, loaded.config, loaded.src_vocab, loaded.tgt_vocab,
                                   "copy", metrics={{"v": 2}})
    """)
    process = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    assert process.stdout.readline().strip() == "writing"
    os.kill(process.pid, signal.SIGKILL)
    process.wait(timeout=10)
    leftovers = list(tmp_path.glob(".*.tmp"))
    assert leftovers, "the killed save should have left its temporary file"
    after = load_checkpoint(stem)
    assert after.metrics == {"v": 1}
    for key, value in after.model.state_dict().items():
        torch.testing.assert_close(value, before[key])
    assert remove_stale_temp_files(tmp_path, older_than_s=3600) == []  # fresh: may still be in use
    os.utime(leftovers[0], (time.time() - 7200, time.time() - 7200))
    assert remove_stale_temp_files(tmp_path, older_than_s=3600) == leftovers
    assert not list(tmp_path.glob(".*.tmp"))


def test_damaged_files_on_disk_give_clear_errors(tmp_path, tiny):
    stem = save_checkpoint(tmp_path / "good", tiny.model, tiny.config, tiny.src_vocab, tiny.tgt_vocab, "copy")
    weights = stem.with_suffix(".safetensors").read_bytes()
    cases = {
        "zero": (b"", "empty"),
        "truncated": (weights[:100], "truncated"),
        "pickle": (b"\x80\x04\x95" + b"\0" * 64, "truncated|pickle"),
    }
    for name, (content, message) in cases.items():
        bad = tmp_path / name
        bad.with_suffix(".safetensors").write_bytes(content)
        bad.with_suffix(".json").write_bytes(stem.with_suffix(".json").read_bytes())
        with pytest.raises(CheckpointError, match=message) as error:
            load_checkpoint(bad)
        assert str(bad) in str(error.value)  # the message names the file
    (tmp_path / "nojson.safetensors").write_bytes(weights)
    with pytest.raises(CheckpointError, match="nojson.json: file not found"):
        load_checkpoint(tmp_path / "nojson")


def test_loading_never_unpickles(tmp_path, tiny, monkeypatch):
    import pickle

    def forbidden(*args, **kwargs):
        raise AssertionError("pickle was used")

    monkeypatch.setattr(pickle, "load", forbidden)
    monkeypatch.setattr(pickle, "loads", forbidden)
    monkeypatch.setattr(torch, "load", forbidden)
    stem = save_checkpoint(tmp_path / "m", tiny.model, tiny.config, tiny.src_vocab, tiny.tgt_vocab, "copy")
    assert load_checkpoint(stem).task == "copy"

"""The shipped checkpoints, re-saved in the fused w_qkv layout (issue 25), compute what they computed before:
logits and every attention map on fixed batches, against tests/data/shipped_outputs.npz (recorded with the loader
that still fused the old w_q/w_k/w_v names)."""
import json

import numpy as np
import pytest
import torch
from safetensors import safe_open
from safetensors.torch import load, save

from model.checkpoint import CheckpointError, load_checkpoint_bytes
from tests.data.shipped_outputs import CHECKPOINTS, PAIRS, RECORDED, outputs


@pytest.fixture(scope="module")
def recorded():
    with np.load(RECORDED) as arrays:
        return {key: arrays[key] for key in arrays.files}


@pytest.mark.parametrize("name", list(PAIRS))
def test_resaved_checkpoint_computes_the_recorded_outputs(name, recorded):
    expected = {key: value for key, value in recorded.items() if key.startswith(f"{name}/")}
    assert f"{name}/logits" in expected
    actual = outputs(name)
    assert set(actual) == set(expected)  # the same maps (a Transformer's six, a Bahdanau model's alignment)
    for key, value in expected.items():
        torch.testing.assert_close(torch.from_numpy(actual[key]), torch.from_numpy(value), rtol=1e-5, atol=1e-5,
                                   msg=lambda m, key=key: f"{key}: {m}")


@pytest.mark.parametrize("name", list(PAIRS))
def test_shipped_files_are_in_todays_layout(name):
    with safe_open(str(CHECKPOINTS / f"{name}.safetensors"), framework="pt") as handle:
        keys = list(handle.keys())  # safe_open is no mapping: it has keys() but cannot be iterated
    assert not [key for key in keys if key.rsplit(".", 2)[-2] in ("w_q", "w_k", "w_v")]
    if name.startswith("transformer"):
        assert "encoder_layers.0.self_attn.w_qkv.weight" in keys
    train_config = json.loads((CHECKPOINTS / f"{name}.json").read_text(encoding="utf-8"))["meta"]["train_config"]
    assert isinstance(train_config["model"], dict)  # nested, as TrainConfig.to_dict() writes it


def test_a_file_in_the_old_layout_is_refused_by_name():
    """Nothing converts w_q/w_k/w_v any more: such a file is refused, and the message names the tensor."""
    stem = CHECKPOINTS / "transformer_reverse"
    tensors = load(stem.with_suffix(".safetensors").read_bytes())
    fused = tensors.pop("encoder_layers.0.self_attn.w_qkv.weight")
    for name, rows in zip(("w_q", "w_k", "w_v"), fused.chunk(3)):
        tensors[f"encoder_layers.0.self_attn.{name}.weight"] = rows.clone()
    with pytest.raises(CheckpointError, match=r"'encoder_layers\.0\.self_attn\.w_[qkv]\.weight' is not a weight"):
        load_checkpoint_bytes(save(tensors), stem.with_suffix(".json").read_bytes(), name="old")

"""A checkpoint's size and tensors, known from its config before anything is built (model/checkpoint_shapes.py), and
the upload's config bounds (model/config.py::check_config)."""
import dataclasses

import pytest

from model.checkpoint import build_model
from model.checkpoint_shapes import parameter_count, state_shapes
from model.config import (
    MAX_LAYERS,
    MAX_POSITIONS,
    Seq2SeqConfig,
    TransformerConfig,
    check_config,
)

SMALL_CONFIGS = [
    TransformerConfig(11, 13, num_layers=2, d_model=16, num_heads=4, d_ff=24),
    TransformerConfig(9, 9, num_layers=1, d_model=8, num_heads=2, d_ff=8, positional="learned", max_len=20,
                      norm_first=True, tie_embeddings=True),
    TransformerConfig(30, 20, num_layers=3, d_model=12, num_heads=3, d_ff=36, norm_first=True, dropout=0.0),
    Seq2SeqConfig(11, 13, embed_dim=8, hidden_size=16),
    Seq2SeqConfig(20, 7, embed_dim=5, hidden_size=6, attention=False),
]


@pytest.mark.parametrize("config", SMALL_CONFIGS, ids=lambda c: f"{type(c).__name__}")
def test_the_count_and_shapes_from_the_config_are_the_built_model_own(config):
    model = build_model(config)
    assert parameter_count(config) == sum(p.numel() for p in model.parameters())
    assert state_shapes(config) == {name: tuple(t.shape) for name, t in model.state_dict().items()}


def test_the_configs_that_grew_a_replica_count_far_over_the_upload_limit():
    from model.checkpoint import MAX_UPLOAD_PARAMETERS

    wide = TransformerConfig(100, 100, num_layers=2, d_model=4096, num_heads=8, d_ff=16384)  # 809 MB -> 4.4 GB
    deep = TransformerConfig(100, 100, num_layers=12, d_model=8192, num_heads=8, d_ff=2048)
    assert parameter_count(wide) > 10 * MAX_UPLOAD_PARAMETERS
    assert parameter_count(deep) > 100 * MAX_UPLOAD_PARAMETERS


BAD_FIELDS = [("num_layers", 0), ("num_layers", -1), ("num_layers", True), ("num_layers", 2.0),
              ("num_layers", MAX_LAYERS + 1), ("num_layers", "2"), ("d_model", float("nan")), ("num_heads", 3),
              ("num_heads", 0), ("d_ff", None), ("src_vocab_size", 0), ("tgt_vocab_size", 10**9),
              ("max_len", MAX_POSITIONS + 1), ("max_len", 10**12), ("dropout", float("nan")), ("dropout", 1.0),
              ("dropout", -0.1), ("dropout", True), ("dropout", "0.1"), ("positional", "rotary"), ("pad_id", 11),
              ("pad_id", -1), ("norm_first", 1), ("tie_embeddings", True), ("tie_embeddings", "yes")]


@pytest.mark.parametrize(("field", "value"), BAD_FIELDS, ids=[f"{f}={v!r}" for f, v in BAD_FIELDS])
def test_a_config_field_out_of_its_kind_or_bounds_is_named(field, value):
    config = dataclasses.replace(SMALL_CONFIGS[0], **{field: value})
    with pytest.raises(ValueError, match=field):
        check_config(config)


def test_the_shipped_and_trainable_configs_pass():
    for config in SMALL_CONFIGS:
        check_config(config)
    check_config(TransformerConfig(241, 351, num_layers=4, d_model=256, num_heads=8, d_ff=512))
    with pytest.raises(ValueError, match="attention"):
        check_config(dataclasses.replace(SMALL_CONFIGS[3], attention=0))

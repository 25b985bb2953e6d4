"""model/decoder_only.py: the decoder-only translator, one causal sequence "<bos> english ⟶ french" per pair."""
import shlex

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from model.checkpoint import build_model, load_checkpoint, read_sidecar, save_checkpoint
from model.checkpoint_shapes import parameter_count, state_shapes
from model.config import DecoderOnlyConfig
from model.data import BOS_ID, PAD_ID, make_dataset, pad_batch
from model.decode import greedy_decode
from model.decoder_only import SEPARATOR, pack_pairs
from model.capabilities import NORMS, STEPS, TRANSLATION
from model.families import CHECKPOINT_DIR, open_model
from model.train import TrainConfig, make_training_data, parse_command
from model.transformer import HeadMasks

SHIPPED = "decoder-only_en-fr"


@pytest.fixture(scope="module")
def data():
    return make_dataset("en-fr", train_size=200)


@pytest.fixture(scope="module")
def model(data):
    torch.manual_seed(0)
    cfg = DecoderOnlyConfig(len(data.src_vocab), len(data.tgt_vocab), dropout=0.0)
    network = build_model(cfg).eval()
    network.requires_grad_(False)
    return network


def _batch(data, count=5):
    pairs = data.splits["test"][:count]  # sentences of different lengths: the batch is padded
    return pairs, *pad_batch(pairs, data, "cpu")


def test_one_pair_is_one_sequence_bos_english_separator_french(data, model):
    pairs, src, tgt_in, _ = _batch(data, 3)
    packed = pack_pairs(src, tgt_in, model.cfg)
    english, french = pairs[1]
    row = packed.ids[1].tolist()
    s = model.cfg.src_vocab_size
    expected = [BOS_ID, *data.src_vocab.encode(english)[0], s, *(s + 1 + i for i in data.tgt_vocab.encode(french)[0])]
    assert row[:len(expected)] == expected and set(row[len(expected):]) <= {PAD_ID}
    assert int(packed.separator[1]) == 1 + len(english)
    assert packed.target_positions[1, 0] == packed.separator[1]  # "⟶" predicts the first French word


def test_shapes_and_no_weight_above_the_diagonal(data, model):
    _, src, tgt_in, tgt_out = _batch(data)
    logits, maps = model(src, tgt_in, need_weights=True)
    packed = pack_pairs(src, tgt_in, model.cfg)
    length = packed.ids.size(1)
    cfg = model.cfg
    assert logits.shape == (*tgt_out.shape, cfg.tgt_vocab_size)  # French outputs only, aligned with tgt_out
    assert maps.decoder_self.shape == (cfg.num_layers, len(src), cfg.num_heads, length, length)
    above = torch.triu(torch.ones(length, length, dtype=torch.bool), 1)
    assert float(maps.decoder_self[..., above].abs().max()) == 0.0
    real = packed.ids != PAD_ID  # (B, N): each real query's weights sum to 1 over earlier real keys
    sums = maps.decoder_self.sum(-1).permute(1, 3, 0, 2)  # (B, N, L, h)
    torch.testing.assert_close(sums[real], torch.ones_like(sums[real]), atol=1e-5, rtol=0)
    pad_keys = (~real)[:, None, None, None, :]  # nothing attends to padding
    assert float((maps.decoder_self.permute(1, 0, 2, 3, 4) * pad_keys).abs().max()) == 0.0


def test_a_padded_batch_gives_each_sentence_its_own_logits(data, model):
    pairs, src, tgt_in, tgt_out = _batch(data)
    logits, _ = model(src, tgt_in)
    for row, pair in enumerate(pairs):
        alone_src, alone_in, alone_out = pad_batch([pair], data, "cpu")
        alone, _ = model(alone_src, alone_in)
        torch.testing.assert_close(logits[row, : alone_out.size(1)], alone[0], atol=1e-5, rtol=1e-5)


def test_the_loss_is_on_the_french_part_only(data, model):
    """The logits are the outputs at "⟶" and the French positions; a change of the last English word changes
    French predictions (they read it), and a change of the last French word changes no earlier prediction."""
    _, src, tgt_in, tgt_out = _batch(data, 1)
    logits, _ = model(src, tgt_in)
    packed = pack_pairs(src, tgt_in, model.cfg)
    hidden, _ = model.run(packed.ids)
    positions = packed.target_positions[0]
    torch.testing.assert_close(logits[0], model.generator(hidden[0, positions]))
    assert int(positions[0]) == int(packed.separator[0]) and positions.tolist() == list(
        range(int(positions[0]), int(positions[0]) + tgt_out.size(1)))  # no English position is predicted from
    changed_src = src.clone()
    changed_src[0, -2] = data.src_vocab.stoi["cat"] if changed_src[0, -2] != data.src_vocab.stoi["cat"] else 5
    assert not torch.allclose(model(changed_src, tgt_in)[0], logits)
    changed_tgt = tgt_in.clone()
    changed_tgt[0, -1] = 4 if changed_tgt[0, -1] != 4 else 5
    torch.testing.assert_close(model(src, changed_tgt)[0][0, :-1], logits[0, :-1])
    loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)), tgt_out.reshape(-1), ignore_index=PAD_ID,
                           reduction="sum")
    assert loss.isfinite()


def test_a_head_mask_switches_exactly_that_head_off(data, model):
    """Head (layer 1, head 2) off is the same network with that head's columns of W_o set to zero."""
    _, src, tgt_in, _ = _batch(data)
    cfg = model.cfg
    mask = torch.ones(cfg.num_layers, cfg.num_heads)
    mask[1, 2] = 0.0
    masked, _ = model(src, tgt_in, head_masks=HeadMasks(decoder_self=mask))
    assert not torch.allclose(masked, model(src, tgt_in)[0])
    edited = build_model(cfg).eval().requires_grad_(False)
    edited.load_state_dict(model.state_dict())
    d_k = cfg.d_model // cfg.num_heads
    with torch.no_grad():
        edited.layers[1].self_attn.w_o.weight[:, 2 * d_k:3 * d_k] = 0.0
    torch.testing.assert_close(masked, edited(src, tgt_in)[0], atol=1e-5, rtol=1e-5)


def test_checkpoint_round_trip(tmp_path, data, model):
    assert {k: tuple(v.shape) for k, v in model.state_dict().items()} == state_shapes(model.cfg)
    assert parameter_count(model.cfg) == sum(p.numel() for p in model.parameters())
    save_checkpoint(tmp_path / "m", model, model.cfg, data.src_vocab, data.tgt_vocab, "en-fr", metrics={}, meta={})
    loaded = load_checkpoint(tmp_path / "m")
    assert loaded.config == model.cfg and loaded.family == "decoder-only"
    _, src, tgt_in, _ = _batch(data)
    torch.testing.assert_close(loaded.model(src, tgt_in)[0], model(src, tgt_in)[0], atol=0, rtol=0)


def test_training_builds_it_from_the_command_line():
    cfg, out = parse_command(["--model", "decoder-only", "--steps", "5", "--num-layers", "3"])
    assert cfg.family == "decoder-only" and cfg.model.num_layers == 3 and out is None
    assert isinstance(TrainConfig.for_model("decoder-only").model, DecoderOnlyConfig)


# --- the shipped checkpoint -------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def shipped():
    return load_checkpoint(CHECKPOINT_DIR / SHIPPED)


def test_the_shipped_checkpoint_translates_test_sentences_exactly(shipped):
    """The first test sentences of the split the translator is measured on (the same split as transformer_en-fr)."""
    sidecar = read_sidecar(CHECKPOINT_DIR / SHIPPED)
    data = make_training_data(TrainConfig.from_dict(sidecar["meta"]["train_config"]))
    for english, french in data.splits["test"][:8]:
        assert greedy_decode(shipped, " ".join(english)).output_tokens == french, english
    assert greedy_decode(shipped, "i am a student").output_tokens == "je suis étudiant".split()


@pytest.mark.slow
def test_the_shipped_json_holds_its_command_metrics_and_the_translators_splits(shipped):
    sidecar = read_sidecar(CHECKPOINT_DIR / SHIPPED)
    command = shlex.split(sidecar["meta"]["command"])
    assert command[:3] == ["python", "-m", "model.train"]
    cfg, out = parse_command(command[3:])
    assert cfg.to_dict() == sidecar["meta"]["train_config"] and out == f"assets/checkpoints/{SHIPPED}"
    assert cfg.model.num_layers == 4 and cfg.model.d_model == 128 and cfg.model.num_heads == 4
    metrics = sidecar["metrics"]
    assert metrics["test"]["sentences"] == 1000 and metrics["long_test"]["sentences"] == 500
    translator = read_sidecar(CHECKPOINT_DIR / "transformer_en-fr")["meta"]["train_config"]
    ours = TrainConfig.from_dict(sidecar["meta"]["train_config"])
    theirs = TrainConfig.from_dict(translator)
    assert make_training_data(ours).splits["test"] == make_training_data(theirs).splits["test"]


def test_its_adapter_shows_one_causal_map_with_the_french_rows_after_the_separator():
    lab = open_model(SHIPPED)
    assert lab.family == "decoder-only" and lab.layout == {"decoder_self": (4, 4)}
    assert lab.can(TRANSLATION) and lab.can(NORMS) and not lab.can(STEPS)
    analysed = lab.analyse("i am a student")
    maps = analysed.maps["decoder_self"]
    assert analysed.output_tokens == ["je", "suis", "étudiant"]
    assert maps.query_tokens == ["<bos>", "i", "am", "a", "student", SEPARATOR, "je", "suis", "étudiant"]
    assert maps.key_tokens == maps.query_tokens and maps.weights.shape == (4, 4, 9, 9)
    assert np.array_equal(maps.masked, np.triu(np.ones((9, 9), dtype=bool), 1))
    assert float(maps.weights[..., maps.masked].max()) == 0.0
    off = tuple(("decoder_self", layer, head) for layer in range(4) for head in range(4))
    assert lab.analyse("i am a student", off).output_tokens != analysed.output_tokens
    arrays = lab.explain(analysed)
    assert arrays["value_norms_decoder_self"].shape == maps.weights.shape
    assert arrays["rollout_decoder_self"].shape == (4, 9, 9)
    np.testing.assert_allclose(arrays["decoder_self"], maps.weights, atol=1e-6)

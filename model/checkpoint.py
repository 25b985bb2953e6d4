"""Checkpoints: weights in safetensors + a JSON sidecar (config, vocabularies, metrics, seed). Never unpickles.

A checkpoint named NAME is two files in one folder: NAME.safetensors and NAME.json, each written
atomically (temporary file in the same folder, then os.replace), JSON last so a half-written save
never looks complete.
"""
from __future__ import annotations

import hashlib
import json
import math
import os
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import torch
from safetensors import SafetensorError, safe_open
from safetensors.torch import load as load_safetensors_bytes
from safetensors.torch import save as save_safetensors_bytes

from model.checkpoint_shapes import parameter_count, state_shapes, tied_aliases
from model.config import (DecoderOnlyConfig, ModelConfig, Seq2SeqConfig, TransformerConfig, check_config,
                          config_from_dict, family_of)
from model.data import TASKS, Vocabulary
from model.decoder_only import DecoderOnlyTranslator
from model.safetensors_header import HeaderError, header_of_bytes
from model.seq2seq import Seq2Seq
from model.transformer import Transformer

FORMAT_VERSION = 1
MAX_CHECKPOINT_BYTES = 64 * 1024 * 1024
# The largest model an upload may ask for: 200 MB of float32 weights, a few times the 64 MiB file limit (a config
# can ask for more parameters than its file holds only by failing the header check, which comes next). The
# trainable models have at most ~2 M parameters; a student's upload above this is refused before anything is built.
MAX_UPLOAD_PARAMETERS = 50_000_000


class CheckpointError(ValueError):
    """A checkpoint file is missing, damaged or does not fit; the message names the file and the problem."""


@dataclass
class LoadedModel:
    model: torch.nn.Module
    config: ModelConfig
    src_vocab: Vocabulary
    tgt_vocab: Vocabulary
    task: str
    metrics: dict = field(default_factory=dict)
    meta: dict = field(default_factory=dict)

    @property
    def family(self) -> str:
        return family_of(self.config)


def build_model(config: ModelConfig) -> torch.nn.Module:
    if isinstance(config, DecoderOnlyConfig):
        return DecoderOnlyTranslator(config)
    return Transformer(config) if isinstance(config, TransformerConfig) else Seq2Seq(config)


def _atomic_write(path: Path, data: bytes) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        os.chmod(tmp, 0o644)  # mkstemp makes 0600; checkpoints are meant to be read by the app's user
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def remove_stale_temp_files(folder: str | Path, older_than_s: float = 3600.0) -> list[Path]:
    """Delete temporary files left by a save that was killed (".NAME.*.tmp"); returns what was removed."""
    removed = []
    for path in Path(folder).glob(".*.tmp"):
        try:
            if time.time() - path.stat().st_mtime > older_than_s:
                path.unlink()
                removed.append(path)
        except OSError:
            pass  # another process removed or replaced it
    return removed


def checkpoint_bytes(model, config, src_vocab, tgt_vocab, task: str, metrics=None, meta=None) -> tuple[bytes, bytes]:
    """The two files' contents: (safetensors weights, JSON metadata)."""
    # Tied weights are stored once; clone so safetensors sees no shared storage.
    seen, tensors = set(), {}
    for name, tensor in model.state_dict().items():
        if tensor.data_ptr() in seen:
            continue
        seen.add(tensor.data_ptr())
        tensors[name] = tensor.detach().cpu().contiguous().clone()
    weights = save_safetensors_bytes(tensors)
    sidecar = {"format_version": FORMAT_VERSION, "task": task, "config": config.to_dict(),
               "src_vocab": src_vocab.to_list(), "tgt_vocab": tgt_vocab.to_list(),
               "metrics": metrics or {}, "meta": meta or {}}
    return weights, json.dumps(sidecar, ensure_ascii=False, indent=1).encode("utf-8")


def save_checkpoint(path_stem: str | Path, model, config, src_vocab, tgt_vocab, task: str,
                    metrics: dict | None = None, meta: dict | None = None) -> Path:
    """Write PATH.safetensors then PATH.json atomically; returns the stem path."""
    stem = Path(path_stem)
    stem.parent.mkdir(parents=True, exist_ok=True)
    remove_stale_temp_files(stem.parent)  # what an earlier save that was killed left behind in this folder
    weights, sidecar = checkpoint_bytes(model, config, src_vocab, tgt_vocab, task, metrics, meta)
    _atomic_write(stem.with_suffix(".safetensors"), weights)
    _atomic_write(stem.with_suffix(".json"), sidecar)
    return stem


def write_metrics(path_stem: str | Path, metrics: dict) -> None:
    """Replace the metrics in PATH.json (atomically), leaving the weights, config, vocabularies and meta as saved."""
    json_path = Path(path_stem).with_suffix(".json")
    sidecar = json.loads(json_path.read_text(encoding="utf-8"))
    sidecar["metrics"] = metrics
    _atomic_write(json_path, json.dumps(sidecar, ensure_ascii=False, indent=1).encode("utf-8"))


def _read_sidecar_json(sidecar: bytes, name: str) -> dict:
    try:
        meta = json.loads(sidecar.decode("utf-8"))
    # ValueError: also a number of over 4300 digits; RecursionError: arrays nested thousands deep
    except (UnicodeDecodeError, ValueError, RecursionError) as error:
        raise CheckpointError(f"{name}.json: not valid JSON ({str(error)[:120]})") from None
    if not isinstance(meta, dict) or type(meta.get("format_version")) is not int \
            or meta["format_version"] != FORMAT_VERSION:
        raise CheckpointError(f"{name}.json: not an Attention Lab checkpoint (format_version missing or unknown)")
    return meta


def _checked_config(meta: dict, name: str) -> tuple[TransformerConfig | Seq2SeqConfig, Vocabulary, Vocabulary]:
    """The sidecar's config and vocabularies, every field bounded and the model's size counted, nothing built."""
    if not isinstance(meta.get("config"), dict):
        raise CheckpointError(f"{name}.json: bad config or vocabulary (config is missing or not an object)")
    try:
        config = config_from_dict(meta["config"])
        check_config(config)
        vocabularies = []
        for side in ("src", "tgt"):
            tokens = meta.get(f"{side}_vocab")
            if not isinstance(tokens, list) or not all(isinstance(token, str) for token in tokens):
                raise ValueError(f"{side}_vocab must be a list of tokens")
            if len(tokens) != getattr(config, f"{side}_vocab_size"):
                raise ValueError(f"{side}_vocab has {len(tokens)} tokens but the config says "
                                 f"{side}_vocab_size {getattr(config, f'{side}_vocab_size')}")
            vocabularies.append(Vocabulary.from_list(tokens))
        # pages look the task up (example sentences, datasets) and read metrics and meta as tables
        if meta.get("task") not in TASKS:
            raise ValueError(f"task must be one of {', '.join(TASKS)}")
        if not all(isinstance(meta.get(part, {}), dict) for part in ("metrics", "meta")) \
                or not isinstance(meta.get("meta", {}).get("train_config", {}), dict):
            raise ValueError("metrics and meta must be objects")
    except (KeyError, TypeError, ValueError) as error:
        raise CheckpointError(f"{name}.json: bad config or vocabulary ({error})") from None
    count = parameter_count(config)
    if count > MAX_UPLOAD_PARAMETERS:
        raise CheckpointError(f"{name}.json: the config asks for a model of {count:,} parameters, over the "
                              f"{MAX_UPLOAD_PARAMETERS:,} this server loads")
    return config, *vocabularies


def check_weights_header(weights: bytes, config: TransformerConfig | Seq2SeqConfig, name: str) -> None:
    """CheckpointError naming the first tensor whose name, dtype or shape does not fit the config, from the
    safetensors header alone: nothing is allocated for a file that would not load."""
    try:
        header = header_of_bytes(weights)
    except HeaderError as error:
        raise CheckpointError(f"{name}.safetensors: not a readable safetensors file ({error}); "
                              "it may be truncated or a pickle file") from None
    expected, aliases = state_shapes(config), tied_aliases(config)
    for key, info in header.items():
        if key in aliases:  # a tied config holds the embedding once; a second copy would be silently dropped
            raise CheckpointError(f"{name}.safetensors: {key!r} is tied to src_embed.weight in this config and "
                                  "must not be stored (unexpected key)")
        if key not in expected:
            raise CheckpointError(f"{name}.safetensors: {key!r} is not a weight of this {config.to_dict()['family']} "
                                  "config (unexpected key)")
        if info.dtype != "F32":
            raise CheckpointError(f"{name}.safetensors: {key!r} is {info.dtype}; checkpoints hold F32 weights")
        if info.shape != expected[key]:
            raise CheckpointError(f"{name}.safetensors: {key!r} has shape {list(info.shape)}, the config needs "
                                  f"{list(expected[key])}")
    missing = [key for key in expected if key not in header and key not in aliases]
    if missing:
        raise CheckpointError(f"{name}.safetensors: {missing[0]!r} is missing ({len(missing)} weight(s) the config "
                              "needs are not in the file)")


def load_checkpoint_bytes(weights: bytes, sidecar: bytes, name: str = "checkpoint",
                          device: str | torch.device = "cpu") -> LoadedModel:
    """Validate and load from bytes (used for uploads); raises CheckpointError with a clear message.

    Everything an upload could make expensive is checked first, from the JSON and the safetensors header: the
    config's fields and parameter count, then every tensor's name, dtype and shape. Only then are tensors read
    (at most the file's size) and a model built (at most MAX_UPLOAD_PARAMETERS)."""
    if len(weights) > MAX_CHECKPOINT_BYTES:
        raise CheckpointError(f"{name}: weights file is {len(weights) / 2**20:.1f} MiB, over the "
                              f"{MAX_CHECKPOINT_BYTES // 2**20} MiB limit")
    meta = _read_sidecar_json(sidecar, name)
    config, src_vocab, tgt_vocab = _checked_config(meta, name)
    if len(weights) == 0:
        raise CheckpointError(f"{name}.safetensors: the file is empty")
    check_weights_header(weights, config, name)
    try:
        tensors = load_safetensors_bytes(weights)
    except (SafetensorError, ValueError, RuntimeError, OSError) as error:
        raise CheckpointError(f"{name}.safetensors: not a readable safetensors file ({error}); "
                              "it may be truncated or a pickle file") from None
    if not all(torch.isfinite(tensor).all() for tensor in tensors.values()):
        raise CheckpointError(f"{name}.safetensors: weights contain NaN or infinity")
    model = build_model(config)
    state = model.state_dict()
    missing = [k for k in state if k not in tensors and not _is_tied_alias(model, k)]
    unexpected = [k for k in tensors if k not in state]
    mismatched = [k for k in tensors if k in state and tensors[k].shape != state[k].shape]
    if missing or unexpected or mismatched:
        raise CheckpointError(f"{name}.safetensors: weights do not fit the {meta['config'].get('family')} config "
                              f"(missing {missing[:3]}, unexpected {unexpected[:3]}, wrong shape {mismatched[:3]})")
    model.load_state_dict(tensors, strict=False)
    model.to(device).eval()
    return LoadedModel(model, config, src_vocab, tgt_vocab, meta["task"], meta.get("metrics", {}),
                       meta.get("meta", {}))


def _is_tied_alias(model, key: str) -> bool:
    cfg = getattr(model, "cfg", None)
    return bool(getattr(cfg, "tie_embeddings", False)) and key in ("tgt_embed.weight", "generator.weight")


def state_dict_sha256(state_dict: dict) -> str:
    """sha256 over every tensor's name, dtype, shape and bytes, in name order: proves weights unchanged."""
    digest = hashlib.sha256()
    for name in sorted(state_dict):
        tensor = state_dict[name].detach().cpu().contiguous()
        digest.update(f"{name}|{tensor.dtype}|{tuple(tensor.shape)}|".encode())
        digest.update(tensor.reshape(-1).view(torch.uint8).numpy().tobytes())
    return digest.hexdigest()


def read_sidecar(path_stem: str | Path) -> dict:
    """The JSON half of a checkpoint (config, vocabularies, metrics) without touching the weights."""
    path = Path(path_stem).with_suffix(".json")
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise CheckpointError(f"{path}: cannot read ({error})") from None


def count_parameters(path_stem: str | Path) -> int:
    """Number of stored weights, read from the safetensors header only."""
    path = Path(path_stem).with_suffix(".safetensors")
    try:
        with safe_open(str(path), framework="pt") as handle:
            # safe_open is no mapping: it has keys() but cannot be iterated
            return sum(math.prod(handle.get_slice(key).get_shape()) for key in handle.keys())  # noqa: SIM118
    except (OSError, SafetensorError) as error:
        raise CheckpointError(f"{path}: cannot read ({error})") from None


def load_checkpoint(path_stem: str | Path, device: str | torch.device = "cpu") -> LoadedModel:
    """Load PATH.safetensors + PATH.json; raises CheckpointError naming the file and the problem."""
    stem = Path(path_stem)
    weights_path, json_path = stem.with_suffix(".safetensors"), stem.with_suffix(".json")
    for path in (weights_path, json_path):
        if not path.is_file():
            raise CheckpointError(f"{path}: file not found")
    if weights_path.stat().st_size > MAX_CHECKPOINT_BYTES:
        raise CheckpointError(f"{weights_path}: over the {MAX_CHECKPOINT_BYTES // 2**20} MiB limit")
    return load_checkpoint_bytes(weights_path.read_bytes(), json_path.read_bytes(), name=str(stem), device=device)

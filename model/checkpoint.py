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
from dataclasses import dataclass, field
from pathlib import Path

import torch
from safetensors import SafetensorError, safe_open
from safetensors.torch import load as load_safetensors_bytes
from safetensors.torch import save as save_safetensors_bytes

from model.attention import fuse_qkv_state_dict
from model.config import Seq2SeqConfig, TransformerConfig, config_from_dict
from model.data import Vocabulary

FORMAT_VERSION = 1
MAX_CHECKPOINT_BYTES = 64 * 1024 * 1024


class CheckpointError(ValueError):
    """A checkpoint file is missing, damaged or does not fit; the message names the file and the problem."""


@dataclass
class LoadedModel:
    model: torch.nn.Module
    config: TransformerConfig | Seq2SeqConfig
    src_vocab: Vocabulary
    tgt_vocab: Vocabulary
    task: str
    metrics: dict = field(default_factory=dict)
    meta: dict = field(default_factory=dict)

    @property
    def family(self) -> str:
        if isinstance(self.config, TransformerConfig):
            return "transformer"
        return "bahdanau" if self.config.attention else "no-attention"


def build_model(config: TransformerConfig | Seq2SeqConfig) -> torch.nn.Module:
    from model.seq2seq import Seq2Seq
    from model.transformer import Transformer
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
    import time

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


def load_checkpoint_bytes(weights: bytes, sidecar: bytes, name: str = "checkpoint",
                          device: str | torch.device = "cpu") -> LoadedModel:
    """Validate and load from bytes (used for uploads); raises CheckpointError with a clear message."""
    if len(weights) > MAX_CHECKPOINT_BYTES:
        raise CheckpointError(f"{name}: weights file is {len(weights) / 2**20:.1f} MiB, over the "
                              f"{MAX_CHECKPOINT_BYTES // 2**20} MiB limit")
    try:
        meta = json.loads(sidecar.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise CheckpointError(f"{name}.json: not valid JSON ({error})") from None
    if not isinstance(meta, dict) or meta.get("format_version") != FORMAT_VERSION:
        raise CheckpointError(f"{name}.json: not an Attention Lab checkpoint (format_version missing or unknown)")
    try:
        config = config_from_dict(meta["config"])
        src_vocab, tgt_vocab = Vocabulary.from_list(meta["src_vocab"]), Vocabulary.from_list(meta["tgt_vocab"])
    except (KeyError, TypeError, ValueError) as error:
        raise CheckpointError(f"{name}.json: bad config or vocabulary ({error})") from None
    if len(weights) == 0:
        raise CheckpointError(f"{name}.safetensors: the file is empty")
    try:
        tensors = load_safetensors_bytes(weights)
    except (SafetensorError, ValueError, RuntimeError, OSError) as error:
        raise CheckpointError(f"{name}.safetensors: not a readable safetensors file ({error}); "
                              "it may be truncated or a pickle file") from None
    model = build_model(config)
    tensors = fuse_qkv_state_dict(tensors)  # checkpoints saved before W_q, W_k, W_v were fused
    state = model.state_dict()
    missing = [k for k in state if k not in tensors and not _is_tied_alias(model, k)]
    unexpected = [k for k in tensors if k not in state]
    mismatched = [k for k in tensors if k in state and tensors[k].shape != state[k].shape]
    if missing or unexpected or mismatched:
        raise CheckpointError(f"{name}.safetensors: weights do not fit the {meta['config'].get('family')} config "
                              f"(missing {missing[:3]}, unexpected {unexpected[:3]}, wrong shape {mismatched[:3]})")
    model.load_state_dict(tensors, strict=False)
    for tensor in tensors.values():
        if not torch.isfinite(tensor).all():
            raise CheckpointError(f"{name}.safetensors: weights contain NaN or infinity")
    model.to(device).eval()
    return LoadedModel(model, config, src_vocab, tgt_vocab, meta.get("task", "?"), meta.get("metrics", {}),
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
            return sum(math.prod(handle.get_slice(key).get_shape()) for key in handle.keys())
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

"""Opening a model by id as a LabModel (model/adapters/: the protocols and one adapter per family).

`open_model(id)` opens a shipped checkpoint, the pretrained encoder, SmolLM2 or a models-folder entry; the family
helpers below answer for the sidebar and the train page without loading weights. The adapters' names are
re-exported, so `from model.families import LabModel, adapt, ...` reads as before.
"""
from __future__ import annotations

import functools
import hashlib
from pathlib import Path

import torch

from model.adapters import (
    FAMILY_NAMES,
    Adapter,
    DecoderOnlyAdapter,
    EncoderAdapter,
    GeneratingModel,
    Generates,
    ImportanceReport,
    LabModel,
    LlamaAdapter,
    QueriesKeys,
    ReadsQueriesKeys,
    ReadsResidualStream,
    ResidualModel,
    ResidualStream,
    ScoresHeads,
    Seq2SeqAdapter,
    SwitchedOff,
    TransformersAdapter,
    TranslatorAdapter,
    adapt,
    curve_counts,
)
from model.bert import MINILM_NAME, MINILM_SHA256, load_minilm
from model.checkpoint import CheckpointError, load_checkpoint, read_sidecar
from model.config import family_of
from model.gguf_weights import SMOLLM2_NAME, SMOLLM2_SHA256
from model.llama import load_smollm2
from model.local_models import LocalModelEntry, local_model_entry, open_local_model

__all__ = ["CHECKPOINT_DIR", "FAMILY_NAMES", "Adapter", "DecoderOnlyAdapter", "EncoderAdapter", "Generates",
           "GeneratingModel", "ResidualModel", "ImportanceReport", "LabModel", "LlamaAdapter", "QueriesKeys", "ReadsQueriesKeys",
           "ReadsResidualStream", "ResidualStream", "ScoresHeads",
           "Seq2SeqAdapter", "SwitchedOff", "TransformersAdapter", "TranslatorAdapter", "adapt", "curve_counts",
           "entry_family", "fixed_weights_digest", "model_family", "open_model", "shipped_model_names", "trains_attention", "trains_heads"]

CHECKPOINT_DIR = Path(__file__).resolve().parents[1] / "assets" / "checkpoints"


def shipped_model_names() -> list[str]:
    """Checkpoint stems in assets/checkpoints, e.g. 'transformer_en-fr'."""
    return sorted(p.stem for p in CHECKPOINT_DIR.glob("*.json") if p.with_suffix(".safetensors").exists())


@functools.cache
def _file_digest(path: Path, size: int, modified: int) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()  # (size, modified): a file replaced is read again


def fixed_weights_digest(model_id: str) -> str | None:
    """What names a model's weights across processes: the sha256 of a shipped checkpoint's files, or the pinned
    sha256 of the pretrained encoder's and SmolLM2's weights; None for any other model (a student's own or uploaded
    model, a models-folder entry: results about them are never kept beyond the process, runtime/kept_results.py)."""
    if model_id == MINILM_NAME:
        return MINILM_SHA256
    if model_id == SMOLLM2_NAME:
        return SMOLLM2_SHA256
    if model_id not in shipped_model_names():
        return None
    digests = []
    for suffix in (".json", ".safetensors"):
        path = (CHECKPOINT_DIR / model_id).with_suffix(suffix)
        stat = path.stat()
        digests.append(_file_digest(path, stat.st_size, stat.st_mtime_ns))
    return hashlib.sha256("".join(digests).encode()).hexdigest()


def open_model(model_id: str, device: str | torch.device = "cpu", folder: Path | None = None) -> LabModel:
    """A model by id: a shipped checkpoint, the pretrained encoder, or a models-folder entry (`folder`, else the
    configured one). ValueError (CheckpointError) naming the choices when there is none of that name."""
    if model_id in shipped_model_names():
        return adapt(model_id, load_checkpoint(CHECKPOINT_DIR / model_id, device=device))
    if model_id == MINILM_NAME:
        return adapt(model_id, load_minilm())
    if model_id == SMOLLM2_NAME:  # loaded on this first call, then shared by the process (model.llama.load_smollm2)
        return adapt(model_id, load_smollm2())
    entry = local_model_entry(model_id, folder)
    if entry is None:
        raise CheckpointError(f"unknown model {model_id!r}; choose a shipped model ({', '.join(shipped_model_names())})"
                              f", {MINILM_NAME}, {SMOLLM2_NAME}, or a folder name in the models folder")
    return adapt(model_id, open_local_model(entry))


def trains_heads(family: str) -> bool:
    """A family the train page trains (model.train.FAMILIES) whose models have layers of attention heads."""
    from model.train import default_model

    return hasattr(default_model(family), "num_heads")


def trains_attention(family: str) -> bool:
    """A family the train page trains whose models attend at all (heads or one additive alignment)."""
    from model.train import default_model

    return getattr(default_model(family), "attention", True)


def model_family(model_id: str) -> str:
    """The family of a shipped checkpoint (from its JSON alone, no weights loaded) or of the pretrained encoder."""
    from model.config import config_from_dict

    if model_id == MINILM_NAME:
        return "bert"
    if model_id == SMOLLM2_NAME:
        return "llama"
    return family_of(config_from_dict(read_sidecar(CHECKPOINT_DIR / model_id)["config"]))


def entry_family(entry: LocalModelEntry) -> tuple[str, str]:
    """(family, architecture) of a models-folder entry without loading it: "bert" runs in our encoder."""
    return ("bert", "bert") if entry.runs_in_our_encoder else ("transformers", entry.model_type)

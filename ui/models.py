"""Shipped checkpoints, loaded once per server and shared read-only by every session."""
from __future__ import annotations

import gc
import logging
import threading
from pathlib import Path

import streamlit as st
import torch

from i18n import tr
from model.bert import MINILM_NAME, PretrainedEncoder, load_minilm
from model.checkpoint import CheckpointError, LoadedModel, count_parameters, load_checkpoint, read_sidecar
from model.local_models import LocalModelEntry, list_local_models, models_folder, open_local_model
from model.device import pick_device

CHECKPOINT_DIR = Path(__file__).resolve().parents[1] / "assets" / "checkpoints"
_LOG = logging.getLogger("attention_lab.models")

# Page analyses are tiny forward passes (one sentence): a second intra-op thread does not make them faster
# (bench/README.md, Classroom load), while N students' script threads × 2 OpenMP threads oversubscribe the cores. Trainings set their own thread to 1 as well (ui/training.py).
PAGE_TORCH_THREADS = 1


def bound_torch_threads() -> None:
    """One intra-op (and inter-op) torch thread for this thread and every thread started after it."""
    torch.set_num_threads(PAGE_TORCH_THREADS)  # torch's global: script threads created later start with it
    try:
        torch.set_num_interop_threads(PAGE_TORCH_THREADS)
    except RuntimeError:  # only possible before any inter-op work; the pool is unused here anyway
        pass


bound_torch_threads()
_frozen_models: set[str] = set()
_freeze_lock = threading.Lock()


def _freeze_long_lived(name: str) -> None:
    """Take what is alive now (modules, torch, plotly, the shipped model) out of the cyclic GC's scans.

    Streamlit runs gc.collect(2) after every script run (runner.postScriptGC); with torch, plotly and pandas
    imported that full collection walks every long-lived object on every rerun, holding the GIL for every session
    (measured in bench/README.md, Classroom load). After gc.freeze() it only walks what was created since. Garbage is collected first, so
    nothing dead is frozen; once per shipped model, so at most a handful of times per server.
    """
    with _freeze_lock:
        if name in _frozen_models:
            return
        _frozen_models.add(name)
        gc.collect()
        gc.freeze()


def shipped_model_names() -> list[str]:
    """Checkpoint stems in assets/checkpoints, e.g. 'transformer_en-fr'."""
    return sorted(p.stem for p in CHECKPOINT_DIR.glob("*.json") if p.with_suffix(".safetensors").exists())


@st.cache_resource(show_spinner="Loading model…")
def load_shipped(name: str) -> LoadedModel:
    """Loaded once per server, in eval mode, with gradients off; never mutated afterwards."""
    if name not in shipped_model_names():
        raise CheckpointError(f"no shipped model named {name!r}")
    loaded = load_checkpoint(CHECKPOINT_DIR / name, device=pick_device("auto"))
    for parameter in loaded.model.parameters():
        parameter.requires_grad_(False)
    _LOG.info("loaded shipped model %s", name)
    _freeze_long_lived(name)
    return loaded


PRETRAINED_MODELS = (MINILM_NAME,)  # real pretrained encoders that ship with the install (a pip package)


@st.cache_resource(show_spinner="Loading model…")
def load_pretrained(name: str) -> PretrainedEncoder:
    """A pretrained encoder, loaded once per server (sha256 checked), shared read-only by every session."""
    if name != MINILM_NAME:
        raise CheckpointError(f"no pretrained model named {name!r}")
    encoder = load_minilm()
    _LOG.info("loaded pretrained model %s", name)
    _freeze_long_lived(name)
    return encoder


@st.cache_data(ttl=60, show_spinner=False)
def _local_entries(folder: str, reserved: tuple[str, ...]) -> list[LocalModelEntry]:
    return list_local_models(Path(folder), reserved)


def local_model_entries() -> list[LocalModelEntry]:
    """The models folder's entries (usable or with a reason), re-read at most once a minute; [] without a folder."""
    folder = models_folder()
    if folder is None:
        return []
    return _local_entries(str(folder), tuple(shipped_model_names()) + PRETRAINED_MODELS)


@st.cache_resource(show_spinner="Loading model…")
def load_local(name: str, folder: str):
    """A models-folder entry, loaded once per server (sha256 pins checked), shared read-only by every session."""
    entry = next((e for e in _local_entries(folder, tuple(shipped_model_names()) + PRETRAINED_MODELS)
                  if e.name == name), None)
    if entry is None:
        raise CheckpointError(f"no model named {name!r} in the models folder")
    model = open_local_model(entry)
    _LOG.info("loaded local model %s", name)
    return model


@st.cache_data(show_spinner=False)
def shipped_model_info(name: str) -> dict:
    """Family, task and metrics of a shipped model from its JSON alone (no weights loaded)."""
    sidecar = read_sidecar(CHECKPOINT_DIR / name)
    config = sidecar["config"]
    family = config["family"] if config["family"] == "transformer" else (
        "bahdanau" if config.get("attention") else "no-attention")
    return {"family": family, "task": sidecar.get("task", "?"), "metrics": sidecar.get("metrics", {}),
            "parameters": count_parameters(CHECKPOINT_DIR / name)}


def family_label(family: str) -> str:
    """'Transformer', 'GRU seq2seq + Bahdanau attention', ... in the user's language."""
    if family == "bert":
        return tr("bert.family")
    if family.startswith("transformers:"):
        return tr("bert.family_transformers", architecture=family.split(":", 1)[1])
    return tr(f"models.family_{family.replace('-', '_')}")


def device_label() -> str:
    return str(pick_device("auto")).upper()

"""The models (shipped, pretrained, the models folder), loaded once per server and shared read-only by every session."""
from __future__ import annotations

import gc
import logging
import threading
from pathlib import Path

import streamlit as st
import torch

from i18n import tr
from model.bert import MINILM_NAME
from model.gguf_weights import SMOLLM2_NAME
from model.checkpoint import count_parameters, read_sidecar
from model.families import CHECKPOINT_DIR, LabModel, model_family, open_model, shipped_model_names
from model.local_models import LocalModelEntry, list_local_models, models_folder
from model.device import pick_device
from ui.text import escape_markdown

_LOG = logging.getLogger("attention_lab.models")

# Page analyses are tiny forward passes (one sentence): a second intra-op thread does not make them faster,
# while N students' script threads × 2 OpenMP threads oversubscribe the cores. Trainings set their own thread to 1
# as well (runtime/training_jobs.py).
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
    imported that full collection walks every long-lived object on every rerun, holding the GIL for every session.
    After gc.freeze() it only walks what was created since. Garbage is collected first, so
    nothing dead is frozen; once per shipped model, so at most a handful of times per server.
    """
    with _freeze_lock:
        if name in _frozen_models:
            return
        _frozen_models.add(name)
        gc.collect()
        gc.freeze()


_loaded: set[tuple[str, str]] = set()  # (model id, folder) that cached_model has returned in this process


def load_model(model_id: str, folder: str = "") -> LabModel:
    """cached_model, with a message in the user's language while a model loads (st.spinner shows only after 0.5 s;
    st.cache_resource's own spinner text is fixed once, in English). A model already loaded goes without the spinner:
    each st.spinner starts a thread, and a page asks for its models a dozen times a run (a class after a Reveal runs
    the page once per student)."""
    if (model_id, folder) in _loaded:
        return cached_model(model_id, folder)
    with st.spinner(tr("models.loading", model=model_id)):
        model = cached_model(model_id, folder)
    _loaded.add((model_id, folder))
    return model


def capable_model(model_id: str, capability: str, unavailable: str, lacking: str) -> LabModel | None:
    """The shared model `model_id`, loaded on the first visit of a page that needs it (seconds), never at start-up;
    None where it cannot be loaded (the i18n message `unavailable`, with the model and the error) or lacks
    `capability` (the message `lacking`, with the model): the page then draws nothing else."""
    try:
        lab = load_model(model_id)
    except (OSError, ImportError, ValueError) as error:  # CheckpointError is a ValueError: package missing, bad file
        st.error(tr(unavailable, model=model_id, error=escape_markdown(str(error))))
        return None
    if not lab.can(capability):
        st.info(tr(lacking, model=model_id))
        return None
    return lab


@st.cache_resource(show_spinner=False)
def cached_model(model_id: str, folder: str = "") -> LabModel:
    """Any model by id (model.families.open_model: shipped, pretrained, or the models folder `folder`), loaded once
    per server and shared read-only by every session; a shipped one in eval mode with gradients off."""
    lab = open_model(model_id, device=pick_device("auto"), folder=Path(folder) if folder else None)
    if model_id in shipped_model_names():
        lab.freeze()
        _LOG.info("loaded shipped model %s", model_id)
    else:
        _LOG.info("loaded model %s", model_id)
    if not folder:
        _freeze_long_lived(model_id)
    return lab


PRETRAINED_MODELS = (MINILM_NAME, SMOLLM2_NAME)  # real pretrained models that ship with the install (pip packages)


@st.cache_data(ttl=60, show_spinner=False)
def _local_entries(folder: str, reserved: tuple[str, ...]) -> list[LocalModelEntry]:
    return list_local_models(Path(folder), reserved)


def local_model_entries() -> list[LocalModelEntry]:
    """The models folder's entries (usable or with a reason), re-read at most once a minute; [] without a folder."""
    folder = models_folder()
    if folder is None:
        return []
    return _local_entries(str(folder), tuple(shipped_model_names()) + PRETRAINED_MODELS)


@st.cache_data(show_spinner=False)
def shipped_model_info(name: str) -> dict:
    """Family, task and metrics of a shipped model from its JSON alone (no weights loaded)."""
    sidecar = read_sidecar(CHECKPOINT_DIR / name)
    return {"family": model_family(name), "task": sidecar.get("task", "?"), "metrics": sidecar.get("metrics", {}),
            "parameters": count_parameters(CHECKPOINT_DIR / name)}


# The families whose name is said in the bert.toml strings (the others: models.family_<name>).
FAMILY_LABELS = {"bert": "bert.family", "transformers": "bert.family_transformers"}


def family_label(family: str, architecture: str = "") -> str:
    """'Transformer', 'GRU seq2seq + Bahdanau attention', ... in the user's language (model.families names)."""
    return tr(FAMILY_LABELS.get(family, f"models.family_{family.replace('-', '_')}"), architecture=architecture)


def device_label() -> str:
    return str(pick_device("auto")).upper()

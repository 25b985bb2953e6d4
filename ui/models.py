"""Shipped checkpoints, loaded once per server and shared read-only by every session."""
from __future__ import annotations

from pathlib import Path

import streamlit as st
from streamlit.logger import get_logger

from i18n import tr
from model.checkpoint import CheckpointError, LoadedModel, count_parameters, load_checkpoint, read_sidecar
from model.device import pick_device

CHECKPOINT_DIR = Path(__file__).resolve().parents[1] / "assets" / "checkpoints"
# A plain logging.Logger; streamlit's get_logger gives it streamlit's stderr handler and the --logger.level level.
_LOG = get_logger("attention_lab.models")


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
    return loaded


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
    return tr(f"models.family_{family.replace('-', '_')}")


def device_label() -> str:
    return str(pick_device("auto")).upper()

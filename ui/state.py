"""The model and sentence a user has chosen, the models they trained, and cached analyses."""
from __future__ import annotations

from pathlib import Path

import streamlit as st
import torch

from i18n import tr
from model.checkpoint import LoadedModel
from model.decode import DecodeResult, greedy_decode
from model.transformer import HeadMasks
from ui.models import family_label, load_shipped, shipped_model_info, shipped_model_names
from ui.text import check_sentence
from ui.vocabulary import unknown_words_notice

ASSETS = Path(__file__).resolve().parents[1] / "assets"
USER_MODELS = "user_models"  # session_state key: {model id: LoadedModel} trained or uploaded in this session


@st.cache_data(show_spinner=False)
def example_sentences(task: str) -> list[str]:
    name = "examples.txt" if task == "en-fr" else "examples_reverse.txt"
    lines = (ASSETS / name).read_text(encoding="utf-8").splitlines()
    return [line for line in lines if line.strip() and not line.startswith("#")]


def model_ids() -> list[str]:
    return shipped_model_names() + list(st.session_state.get(USER_MODELS, {}))


def model_label(model_id: str) -> str:
    """'name (family)' without loading a shipped model's weights."""
    user_models = st.session_state.get(USER_MODELS, {})
    family = user_models[model_id].family if model_id in user_models else shipped_model_info(model_id)["family"]
    return f"{model_id} ({family_label(family)})"


def get_model(model_id: str) -> LoadedModel:
    user_models = st.session_state.get(USER_MODELS, {})
    return user_models[model_id] if model_id in user_models else load_shipped(model_id)


DEFAULT_MODEL = "transformer_en-fr"


def selected_model_id() -> str:
    """The sidebar's model, or the default one before the sidebar has run."""
    ids = model_ids()
    chosen = st.session_state.get("model_id")
    if chosen in ids:
        return chosen
    return DEFAULT_MODEL if DEFAULT_MODEL in ids else ids[0]


@st.cache_data(max_entries=512, show_spinner=False)
def analyse(model_id: str, sentence: str, _loaded: LoadedModel) -> DecodeResult:
    """Greedy translation with every attention map; cached per (model id, sentence)."""
    return greedy_decode(_loaded, sentence)


@st.cache_data(max_entries=512, show_spinner=False)
def analyse_ablated(model_id: str, sentence: str, switched_off: tuple[tuple[str, int, int], ...],
                    _loaded: LoadedModel) -> DecodeResult:
    """Translation with the given (kind, layer, head) heads switched off."""
    cfg = _loaded.config
    masks = {kind: torch.ones(cfg.num_layers, cfg.num_heads) for kind in ("encoder_self", "decoder_self", "cross")}
    for kind, layer, head in switched_off:
        masks[kind][layer, head] = 0.0
    return greedy_decode(_loaded, sentence, head_masks=HeadMasks(**masks))


def current_analysis() -> tuple[str, LoadedModel, DecodeResult] | None:
    """The chosen model's analysis of the chosen sentence, with notices shown; None when there is nothing to show."""
    model_id = selected_model_id()
    loaded = get_model(model_id)
    sentence, notices = check_sentence(st.session_state.get("sentence", ""))
    for notice in notices:
        st.info(notice)
    if sentence is None:
        return None
    result = analyse(model_id, sentence, loaded)
    show_input_notices(result, loaded)
    if not result.source.ids[:-1]:
        st.warning(tr("input.no_words"))
        return None
    return model_id, loaded, result


def show_input_notices(result: DecodeResult, loaded: LoadedModel) -> None:
    source = result.source
    if source.truncated_from:
        st.warning(tr("input.truncated", tokens=source.truncated_from, limit=len(source.tokens) - 1))
    unknown_words_notice(loaded, result)

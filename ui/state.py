"""The model and sentence a user has chosen, the models they trained, and cached analyses."""
from __future__ import annotations

from pathlib import Path

import streamlit as st
import torch

from i18n import tr
from model.checkpoint import LoadedModel
from model.decode import DecodeResult, greedy_decode
from model.transformer import HeadMasks
from model.bert import PretrainedEncoder
from model.sources import AnalysedInput, analyse_encoder, analyse_model, analyse_toy, attention_layout
from ui.models import (PRETRAINED_MODELS, family_label, load_local, load_pretrained, load_shipped,
                       local_model_entries, models_folder, shipped_model_info, shipped_model_names)
from ui.text import check_sentence, escape_markdown
from ui.vocabulary import unknown_words_notice

ASSETS = Path(__file__).resolve().parents[1] / "assets"
USER_MODELS = "user_models"  # session_state key: {model id: LoadedModel} trained or uploaded in this session


@st.cache_data(show_spinner=False)
def example_sentences(task: str) -> list[str]:
    name = {"en-fr": "examples.txt", "english": "examples_english.txt"}.get(task, "examples_reverse.txt")
    lines = (ASSETS / name).read_text(encoding="utf-8").splitlines()
    return [line for line in lines if line.strip() and not line.startswith("#")]


def model_ids() -> list[str]:
    local = [entry.name for entry in local_model_entries() if entry.usable]
    return shipped_model_names() + list(PRETRAINED_MODELS) + local + list(st.session_state.get(USER_MODELS, {}))


def _local_entry(model_id: str):
    return next((e for e in local_model_entries() if e.name == model_id and e.usable), None)


def model_label(model_id: str) -> str:
    """'name (family)' without loading a shipped model's weights."""
    user_models = st.session_state.get(USER_MODELS, {})
    if model_id in user_models:
        family = user_models[model_id].family
    elif model_id in PRETRAINED_MODELS:
        family = "bert"
    elif (entry := _local_entry(model_id)) is not None:
        family = "bert" if entry.runs_in_our_encoder else f"transformers:{entry.model_type}"
    else:
        family = shipped_model_info(model_id)["family"]
    return f"{model_id} ({family_label(family)})"


def get_model(model_id: str) -> LoadedModel | PretrainedEncoder:
    user_models = st.session_state.get(USER_MODELS, {})
    if model_id in user_models:
        return user_models[model_id]
    if model_id in PRETRAINED_MODELS:
        return load_pretrained(model_id)
    if _local_entry(model_id) is not None:
        return load_local(model_id, str(models_folder()))
    return load_shipped(model_id)


def is_toy(loaded) -> bool:
    """A shipped or trained model of this project (model.decode translates with it, step by step)."""
    return isinstance(loaded, LoadedModel)


def is_encoder_only(loaded) -> bool:
    """An encoder without a decoder (BERT family): nothing is generated, so no translation or decoding steps."""
    return isinstance(loaded, PretrainedEncoder)


DEFAULT_MODEL = "transformer_en-fr"


def selected_model_id() -> str:
    """The sidebar's model, or the default one before the sidebar has run."""
    ids = model_ids()
    chosen = st.session_state.get("model_id")
    if chosen in ids:
        return chosen
    return DEFAULT_MODEL if DEFAULT_MODEL in ids else ids[0]


def selected_attention_layout() -> dict[str, tuple[int, int]]:
    """kind -> (layers, heads) of the sidebar's model's attention ({} for a GRU seq2seq): what the attention page's
    kind, layer and head pickers offer, and what links to them may ask for."""
    return attention_layout(get_model(selected_model_id()))


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


@st.cache_data(max_entries=512, show_spinner=False)
def analyse_foreign_input(model_id: str, sentence: str, _loaded) -> AnalysedInput:
    """A transformers model's maps (and its generated translation, for an encoder-decoder)."""
    return analyse_model(model_id, sentence, _loaded)


# An encoder's analysis holds weights and scores (L, h, T, T): 0.2 MiB for a 20-token sentence, 38 MiB at the
# 256-token limit; fewer entries than the toy models' 512 bound the worst case to ~2.4 GiB.
@st.cache_data(max_entries=64, show_spinner=False)
def analyse_encoder_input(model_id: str, sentence: str, switched_off: tuple[tuple[int, int], ...],
                          _loaded: PretrainedEncoder) -> AnalysedInput:
    """An encoder's maps, token vectors and sentence embedding; switched_off: (layer, head) pairs, 0-based."""
    return analyse_encoder(model_id, sentence, _loaded, switched_off)


def current_attention() -> tuple[str, LoadedModel | PretrainedEncoder, AnalysedInput] | None:
    """The chosen model's attention maps for the chosen sentence (model.sources), with notices shown."""
    model_id = selected_model_id()
    loaded = get_model(model_id)
    if is_toy(loaded):
        analysis = current_analysis()
        if analysis is None:
            return None
        return model_id, loaded, analyse_toy(model_id, st.session_state.get("sentence", ""), analysis[2])
    sentence, notices = check_sentence(st.session_state.get("sentence", ""))
    for notice in notices:
        st.info(notice)
    if sentence is None:
        return None
    if is_encoder_only(loaded):
        analysed = analyse_encoder_input(model_id, sentence, (), loaded)
    else:
        analysed = analyse_foreign_input(model_id, sentence, loaded)
    if analysed.truncated_from:
        st.warning(tr("bert.truncated", tokens=analysed.truncated_from, limit=len(analysed.input_tokens)))
    if analysed.unknown:
        unique = list(dict.fromkeys(analysed.unknown))
        shown = ", ".join(escape_markdown(w) for w in unique[:12]) + (" …" if len(unique) > 12 else "")
        st.warning(tr("bert.unknown", count=len(unique), words=shown))
    return model_id, loaded, analysed


def current_analysis() -> tuple[str, LoadedModel, DecodeResult] | None:
    """The chosen translation model's analysis of the chosen sentence, with notices shown; None when there is
    nothing to show (an encoder-only model translates nothing: a notice says so)."""
    model_id = selected_model_id()
    loaded = get_model(model_id)
    if not is_toy(loaded):
        st.info(tr("bert.no_decoder" if is_encoder_only(loaded) else "bert.no_steps", model=escape_markdown(model_id)))
        return None
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

"""The model and sentence a user has chosen, the models they trained, and cached analyses."""
from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import streamlit as st

from i18n import tr
from model.decode import DecodeResult
from model.capabilities import GENERATION, STEPS, TRAINING, TRANSLATION, VOCABULARY
from model.adapters import WordVocabulary
from model.families import LabModel, SwitchedOff, adapt, entry_family, model_family
from model.sources import AnalysedInput, compact_maps
from runtime.result_cache import memoized
from ui.models import (PRETRAINED_MODELS, family_label, load_model, local_model_entries, models_folder,
                       shipped_model_names)
from runtime.analysis_worker import size
from ui.analysis_queue import heavy
from ui.text import check_sentence, escape_markdown
from ui.session import lab_session
from ui.vocabulary import REAL_ENCODER, unknown_words_notice
from ui.widget_spec import WidgetSpec

ASSETS = Path(__file__).resolve().parents[1] / "assets"


@st.cache_data(show_spinner=False)
def example_sentences(task: str) -> list[str]:
    name = {"en-fr": "examples.txt", "english": "examples_english.txt"}.get(task, "examples_reverse.txt")
    lines = (ASSETS / name).read_text(encoding="utf-8").splitlines()
    return [line for line in lines if line.strip() and not line.startswith("#")]


def model_ids() -> list[str]:
    local = [entry.name for entry in local_model_entries() if entry.usable]
    return shipped_model_names() + list(PRETRAINED_MODELS) + local + list(lab_session().training.user_models)


def _local_entry(model_id: str):
    return next((e for e in local_model_entries() if e.name == model_id and e.usable), None)


def model_label(model_id: str) -> str:
    """'name (family)' without loading a shipped or models-folder model's weights."""
    user_models = lab_session().training.user_models
    if model_id in user_models:
        family, architecture = adapt(model_id, user_models[model_id]).family, ""
    elif model_id in PRETRAINED_MODELS or (entry := _local_entry(model_id)) is None:
        family, architecture = model_family(model_id), ""
    else:
        family, architecture = entry_family(entry)
    return f"{model_id} ({family_label(family, architecture)})"


def get_model(model_id: str) -> LabModel:
    """The model of that id as its family's adapter (model.families): a user's own, or one shared by the server."""
    user_models = lab_session().training.user_models
    if model_id in user_models:
        return adapt(model_id, user_models[model_id])
    folder = str(models_folder()) if _local_entry(model_id) is not None else ""
    return load_model(model_id, folder)


DEFAULT_MODEL = "transformer_en-fr"
# The sidebar's model: declared here, below ui.specs (ui/specs/common.py lists it with the other shared widgets), so
# that this module, the sidebar and the Train page read its key from the spec.
MODEL = WidgetSpec("model_id", "model", DEFAULT_MODEL, options=lambda state: model_ids())


def selected_model_id(state: Mapping | None = None) -> str:
    """The sidebar's model in `state` (the session's by default), or the default one before the sidebar has run."""
    ids = model_ids()
    chosen = MODEL.get(state)
    if chosen in ids:
        return chosen
    return DEFAULT_MODEL if DEFAULT_MODEL in ids else ids[0]


def selected_attention_layout(state: Mapping | None = None) -> dict[str, tuple[int, int]]:
    """kind -> (layers, heads) of the sidebar's model's attention ({} for a GRU seq2seq): what the attention page's
    kind, layer and head pickers offer, and what links to them may ask for."""
    return get_model(selected_model_id(state)).layout


# Every model's analyses, in the replica's one byte-bounded store (runtime/result_cache.py): a class's translation
# sentences are a few KiB each, an LLM's 512-token text tens of MB even compacted (model.sources.compact_maps), so
# a count of entries bounds nothing. The analysis is shared, not copied: views only read it.
@memoized
def shared_analysis(model_id: str, sentence: str, _lab: LabModel, switched_off: SwitchedOff = ()) -> AnalysedInput:
    """The model's maps of the sentence (a translation model's with its greedy decode), with the given
    (kind, layer, head) heads switched off; cached per (model id, sentence, switched-off heads)."""
    return compact_maps(_lab.analyse(sentence, switched_off))


def analysis_of(model_id: str, sentence: str) -> AnalysedInput | None:
    """The model's analysis of an already checked sentence, from the store (or computed again): None past the time
    limit, with a message. A long text through an LLM is seconds of work: the analysis worker's
    (runtime/analysis_worker.py).

    What a fragment calls with (model_id, sentence) instead of being handed the analysis: Streamlit keeps a
    fragment's arguments in its session for the fragment's reruns, so an analysis passed to one was held by every
    open session outside the store's budget (a long LLM text's maps are hundreds of MiB)."""
    lab = get_model(model_id)
    return heavy(("analyse", model_id, sentence), lambda: shared_analysis(model_id, sentence, lab),
                 work=size(len(sentence.split()), lab.parameter_count))  # at least a token a word


def checked_input(text: str | None) -> str | None:
    """A view's sentence, cleaned, with notices shown; None when there is nothing to analyse."""
    sentence, notices = check_sentence(text or "")
    for notice in notices:
        st.info(notice)
    return sentence


def current_attention(model_id: str, text: str | None) -> tuple[str, LabModel, AnalysedInput] | None:
    """A view's model's attention maps for its sentence (model.families), with notices shown."""
    lab = get_model(model_id)
    sentence = checked_input(text)
    if sentence is None:
        return None
    analysed = analysis_of(model_id, sentence)
    if analysed is None:  # past the time limit, with a message
        return None
    if analysed.can(VOCABULARY):  # a closed vocabulary: the greedy decode and its words
        show_input_notices(analysed.decode, lab.vocabulary)
        if not analysed.decode.source.ids[:-1]:
            st.warning(tr("input.no_words"))
            return None
        return model_id, lab, analysed
    if analysed.truncated_from:
        # an encoder keeps its closing [SEP]; a model that continues text (GENERATION) reads the text's first tokens
        message = "bert.truncated_first" if lab.can(GENERATION) else "bert.truncated"
        st.warning(tr(message, tokens=analysed.truncated_from, limit=len(analysed.input_tokens)))
    if analysed.unknown:
        unique = list(dict.fromkeys(analysed.unknown))
        shown = ", ".join(escape_markdown(w) for w in unique[:12]) + (" …" if len(unique) > 12 else "")
        st.warning(tr("bert.unknown", count=len(unique), words=shown))
    return model_id, lab, analysed


def no_steps_notice(lab: LabModel, model_id: str) -> bool:
    """True (with a notice saying why) when the model cannot go step by step through a translation of ours."""
    if lab.can(STEPS):
        return False
    # a translator of this project (TRAINING) without steps reads its English in the same causal map (decoder-only)
    key = ("bert.no_steps_causal" if lab.can(TRAINING) else "bert.no_steps") if lab.can(TRANSLATION) \
        else "bert.no_decoder"
    st.info(tr(key, model=escape_markdown(model_id)))
    return True


def current_analysis(model_id: str, text: str | None) -> tuple[str, LabModel, AnalysedInput] | None:
    """A view's translation model's analysis of its sentence (its greedy decode: `.decode`), with notices shown; None
    when there is nothing to show (a model without decoding steps: a notice says so)."""
    lab = get_model(model_id)
    if no_steps_notice(lab, model_id):
        return None
    found = current_attention(model_id, text)
    return found


def show_input_notices(result: DecodeResult, vocabulary: WordVocabulary) -> None:
    source = result.source
    if source.truncated_from:
        st.warning(tr("input.truncated", tokens=source.truncated_from, limit=len(source.tokens) - 1))
    unknown_words_notice(vocabulary, result, on_real_encoder=_use_real_encoder)


def _use_real_encoder() -> None:
    """Keep the sentence, read it with the pretrained encoder (the sidebar's model choice)."""
    MODEL.set(REAL_ENCODER)
    lab_session().input.sentence_task = "english"  # so the sidebar keeps this sentence instead of an example

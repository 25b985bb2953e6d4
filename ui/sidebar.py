"""The shared sidebar: model and sentence, kept across pages (widgets with keys in the entry point), and display."""
from __future__ import annotations

import streamlit as st

from i18n import tr
from ui.display import display_settings
from model.checkpoint import CheckpointError
from ui.models import device_label, local_model_entries
from ui.state import DEFAULT_MODEL, example_sentences, get_model, is_toy, model_ids, model_label, selected_model_id
from ui.text import MAX_INPUT_CHARS, escape_markdown
from ui.vocabulary import vocabulary_help

MODEL_ERROR = "_model_error"  # session_state: why the model chosen last could not be opened


def _use_example() -> None:
    if st.session_state.get("example"):
        st.session_state["sentence"] = st.session_state["example"]


def _model_changed() -> None:
    """A model of another task reads other words: start it on one of its own examples."""
    try:
        loaded = get_model(st.session_state["model_id"])
    except CheckpointError:
        return  # render_sidebar says why and goes back to the default model
    if st.session_state.get("sentence_task") != loaded.task:
        st.session_state["sentence"] = example_sentences(loaded.task)[0]
        st.session_state["sentence_task"] = loaded.task


def render_sidebar() -> None:
    ids = model_ids()
    chosen = selected_model_id()
    try:
        get_model(chosen)
    except CheckpointError as error:  # a models-folder entry that fails on opening (e.g. its sha256 pin)
        st.session_state[MODEL_ERROR] = str(error)
        chosen = DEFAULT_MODEL
    st.session_state["model_id"] = chosen
    with st.sidebar:
        display_settings()
        st.divider()
        # No format_func: the id is the label (AppTest and URLs see the same value); the family is captioned below.
        st.selectbox(tr("sidebar.model"), ids, key="model_id", on_change=_model_changed)
        if MODEL_ERROR in st.session_state:
            st.error(tr("bert.open_failed", error=escape_markdown(st.session_state.pop(MODEL_ERROR))))
        unusable = [entry for entry in local_model_entries() if not entry.usable]
        if unusable:
            with st.expander(tr("bert.local_problems", count=len(unusable))):
                for entry in unusable:
                    st.text(f"{entry.name}: {entry.reason}")  # st.text: folder names are never markdown
        loaded = get_model(st.session_state["model_id"])
        examples = example_sentences(loaded.task)
        if "sentence" not in st.session_state:
            st.session_state["sentence"], st.session_state["sentence_task"] = examples[0], loaded.task
        # A placeholder rather than a translated "" option: the options stay the same in every language.
        st.selectbox(tr("sidebar.example"), examples, index=None, placeholder=tr("sidebar.pick_one"), key="example",
                     on_change=_use_example)
        st.text_input(tr("sidebar.sentence"), key="sentence", max_chars=MAX_INPUT_CHARS,
                      help=tr("sidebar.sentence_help"))
        if is_toy(loaded):  # a word list only where the model has a closed vocabulary (not a WordPiece encoder)
            vocabulary_help(loaded)
        st.caption(tr("sidebar.caption", model=model_label(st.session_state["model_id"]), task=loaded.task,
                      device=device_label()))

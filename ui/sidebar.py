"""The shared sidebar: model and sentence, kept across pages (widgets with keys in the entry point), and display."""
from __future__ import annotations

import streamlit as st

from i18n import tr
from ui.display import display_settings
from ui.models import device_label
from ui.state import example_sentences, get_model, model_ids, model_label, selected_model_id
from ui.vocabulary import vocabulary_help


def _use_example() -> None:
    if st.session_state.get("example"):
        st.session_state["sentence"] = st.session_state["example"]


def _model_changed() -> None:
    """A model of another task reads other words: start it on one of its own examples."""
    loaded = get_model(st.session_state["model_id"])
    if st.session_state.get("sentence_task") != loaded.task:
        st.session_state["sentence"] = example_sentences(loaded.task)[0]
        st.session_state["sentence_task"] = loaded.task


def render_sidebar() -> None:
    ids = model_ids()
    st.session_state["model_id"] = selected_model_id()
    with st.sidebar:
        display_settings()
        st.divider()
        # No format_func: the id is the label (AppTest and URLs see the same value); the family is captioned below.
        st.selectbox(tr("sidebar.model"), ids, key="model_id", on_change=_model_changed)
        loaded = get_model(st.session_state["model_id"])
        examples = example_sentences(loaded.task)
        if "sentence" not in st.session_state:
            st.session_state["sentence"], st.session_state["sentence_task"] = examples[0], loaded.task
        # A placeholder rather than a translated "" option: the options stay the same in every language.
        st.selectbox(tr("sidebar.example"), examples, index=None, placeholder=tr("sidebar.pick_one"), key="example",
                     on_change=_use_example)
        st.text_input(tr("sidebar.sentence"), key="sentence", max_chars=2000, help=tr("sidebar.sentence_help"))
        vocabulary_help(loaded)
        st.caption(tr("sidebar.caption", model=model_label(st.session_state["model_id"]), task=loaded.task,
                      device=device_label()))

"""Decoding step by step: what each new word reads in the source, the causal mask growing, next-token odds."""
import streamlit as st

from i18n import tr
from ui.attention.decoding import decoding_explorer
from ui.presenter import explanation, page_title
from ui.state import current_analysis
from ui.view import current_view

page_title(tr("decoding.title"))
with explanation():  # presenter mode: folded, the maps above the fold at 1280×720
    st.write(tr("decoding.intro"))

view = current_view("decoding")  # what this page draws (ui/view.py)
analysis = current_analysis(view.model, view.sentence)
if analysis is not None:
    model_id, lab, analysed = analysis
    # A fragment: Previous, Next, the step, layer and head rerun only the explorer.
    decoding_explorer("decoding", lab.vocabulary.target, analysed)

"""Seq2seq vs Transformer: the same sentence through three models, and accuracy against sentence length."""
import streamlit as st

from i18n import tr
from ui.compare_view import length_chart, long_sentence_demo, side_by_side
from ui.presenter import explanation, page_title
from ui.page_sections import page_sections
from ui.state import get_model, no_steps_notice
from ui.view import current_view

page_title(tr("compare.title"))
with explanation():  # presenter mode: folded, the maps above the fold at 1280×720
    st.write(tr("compare.intro"))

view = current_view("compare")
sections = page_sections("compare")  # a lesson stop's section first (ui/page_sections.py)
if "side_by_side" in sections.drawn:  # a section held for a later question is neither drawn nor computed
    with sections["side_by_side"]:
        # a model that is not one of our step-by-step translators: its free English would be <unk> to them
        if not no_steps_notice(get_model(view.model), view.model):
            side_by_side(view.sentence)
if "length" in sections.drawn:
    with sections["length"]:
        length_chart()
if "growing" in sections.drawn:
    with sections["growing"]:
        long_sentence_demo()

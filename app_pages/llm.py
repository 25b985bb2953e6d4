"""An LLM, step by step: SmolLM2-135M-Instruct writes one token per click, with its KV cache and shared heads."""
import streamlit as st

from i18n import tr
from ui.presenter import explanation, page_title
from ui.llm.branches import branches_view
from ui.llm.generation import gqa_view, generation_view, kv_cache_view, llm_model
from ui.llm.switch_off import switch_off_view
from ui.page_sections import page_sections

page_title(tr("llm.title"))
with explanation(tr("projected_lesson.about_page")):  # presenter mode: folded, the text and next tokens higher
    st.write(tr("llm.intro"))

lab = llm_model()  # the shared model, loaded on the first visit; None (with a message) where it cannot be
if lab is not None:
    sections = page_sections("llm")  # a lesson stop's section first (ui/page_sections.py)
    drawn = sections.drawn  # a section held for a later question is neither drawn nor computed
    sections.header("generation", tr("llm.generation_title"), sub=True)
    with sections["generation"]:
        trace = generation_view(lab)
    if "kv_cache" in drawn:
        with sections["kv_cache"]:
            kv_cache_view(lab, trace)
    if "gqa" in drawn:
        with sections["gqa"]:
            gqa_view(lab, trace)
    if "branches" in drawn:
        with sections["branches"]:
            branches_view(lab, trace)
    if "switch_off" in drawn:
        with sections["switch_off"]:
            switch_off_view(lab, trace)

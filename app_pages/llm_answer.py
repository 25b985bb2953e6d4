"""How an LLM finds its answer: the logit lens (nostalgebraist 2020), activation patching of the residual stream and of
each head (Meng et al. 2022; Wang et al. 2022), direct logit attribution (Elhage et al. 2021), each prompt token's
influence by three methods (ui/llm/influence.py) and the information-flow graph (Ferrando & Voita 2024) on
SmolLM2-135M."""
import streamlit as st

from i18n import tr
from ui.presenter import chart_first, explanation, page_title
from ui.llm.answer import LENS_MAX_TOKENS, answer_model, lens_input, patching_input, show_lens, show_patching
from ui.llm.attribution import show_attribution, show_head_patching
from ui.llm.influence import show_influence
from ui.llm.flow import flow_input, show_flow
from ui.page_sections import page_sections
from ui.warm_notice import warming_notice

page_title(tr("llm_answer.title"))
warming_notice()  # a lesson stop opened while the server warms: its first results wait for the model
with explanation(tr("projected_lesson.about_page")):  # presenter mode: folded, the first map higher up
    st.write(tr("llm_answer.intro"))

lab = answer_model()  # the shared model, loaded on the first visit; None (with a message) where it cannot be
if lab is not None:
    sections = page_sections("llm_answer")  # a lesson stop's section first (ui/page_sections.py)
    drawn, request = sections.drawn, None  # a section held for a later question is neither drawn nor computed
    lens = shown = None  # the lens's (prompt, token) and what it drew: the influence section reads both
    if "lens" in drawn:
        with sections["lens"]:
            sections.header("lens", tr("llm_answer.lens_title"))
            charts, controls = chart_first()  # a projected stop: the map first, the text fields under it
            lens = lens_input(controls, lab)
            if lens is not None:
                shown = show_lens(charts, lab, *lens)
    if "patching" in drawn:
        with sections["patching"]:
            sections.header("patching", tr("llm_answer.patching_title"))
            charts, controls = chart_first()
            request = patching_input(controls, lab)  # the sweeps run on the Run button only
            if request.asked:
                show_patching(charts, lab, request.inputs)
            elif request.inputs is not None:
                charts.info(tr("llm_answer.press_run"))
    if "heads" in drawn:
        with sections["heads"]:
            sections.header("heads", tr("llm_answer.heads_title"))
            if request is None or request.inputs is None:
                st.info(tr("llm_answer.needs_prompts"))
            elif not request.asked:
                st.info(tr("llm_answer.press_run"))
            else:
                show_head_patching(st.container(), lab, request.inputs)  # the patching section's prompts and Run
    if "attribution" in drawn:
        with sections["attribution"]:
            sections.header("attribution", tr("llm_answer.attribution_title"))
            if request is None or request.clean is None:  # one prompt is enough: no pair, no Run
                st.info(tr("llm_answer.attribution_needs_prompt", limit=LENS_MAX_TOKENS))
            else:
                show_attribution(st.container(), lab, request.clean)
    if "influence" in drawn:
        with sections["influence"]:
            sections.header("influence", tr("llm_influence.title"))
            show_influence(st.container(), lab, None if lens is None else lens[0], shown)  # the lens's prompt
    if "flow" in drawn:
        with sections["flow"]:
            sections.header("flow", tr("llm_flow.title"))
            charts, controls = chart_first()
            flow_text = flow_input(controls, lab)
            if flow_text is not None:
                show_flow(charts, controls, lab, flow_text)

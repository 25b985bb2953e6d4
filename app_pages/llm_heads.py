"""Inside an LLM: attention sinks (Xiao et al. 2023), induction heads (Olsson et al. 2022), a head finder and a head
across many texts (Yeh et al. 2023) in SmolLM2-135M."""
import streamlit as st

from i18n import tr
from ui.presenter import chart_first, explanation, page_title
from ui.llm_heads.finder import show_finder_sections
from ui.llm_heads.view import (induction_controls, induction_of, induction_values, show_copy, show_induction,
                               show_sinks, show_window, sink_ids, sink_input, smollm2)
from ui.page_sections import page_sections

page_title(tr("llm_heads.title"))
with explanation(tr("projected_lesson.about_page")):  # presenter mode: folded, the first chart higher up
    st.write(tr("llm_heads.intro"))
smollm2()  # the shared model, loaded once per process with a spinner the first time

# A lesson stop draws its own section, the others when asked (each is a dozen charts of 270 heads for the browser);
# a section needs what an undrawn one reads (the window: the sinks' text; the copy: the top induction head) from the
# view, without that section's widgets.
sections = page_sections("llm_heads", rest_on_request=True)
drawn = sections.drawn
ids = induction = None
with sections["sinks"]:
    if "sinks" in drawn:
        st.header(tr("llm_heads.sinks_title"))
        charts, controls = chart_first()  # a projected stop: the maps first, the text box under them
        ids = sink_input(controls)
        if ids is not None:
            show_sinks(charts, ids)
with sections["window"]:
    if "window" in drawn:
        ids = ids if "sinks" in drawn else sink_ids(st)
        if ids is not None:
            show_window(st, ids)
with sections["induction"]:
    if "induction" in drawn:
        sections.header("induction", tr("llm_heads.induction_title"))
        charts, controls = chart_first()
        induction = show_induction(charts, *induction_controls(controls))
with sections["copy"]:
    if "copy" in drawn:
        st.subheader(tr("llm_heads.copy_title"))
        induction = induction if "induction" in drawn else induction_of(st, *induction_values())
        if induction is not None:  # None: past the analysis time limit, with a message saying so
            show_copy(st, induction)
show_finder_sections(sections)  # find a head; a head across many texts (ui/llm_heads/finder.py)

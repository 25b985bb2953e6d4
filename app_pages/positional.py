"""Positional encoding: the sinusoidal table, its curves, dials vs a binary counter, similarity, the rotation fact,
RoPE."""
from i18n import tr
from ui.presenter import chart_first, explanation, page_title, presenting
from ui.page_sections import page_sections
from ui.specs.positional import POSITION
from ui.widget_spec import prepare
from ui.positional_view import (positional_controls, show_curves, show_dials, show_formula, show_matrix,
                                show_rope, show_rotation, show_similarity, show_trained_table,
                                sinusoidal)

page_title(tr("positional.title"))
introduction = explanation()  # presenter mode: the introduction and the formula folded, the matrix above the fold
introduction.write(tr("positional.intro"))
presenter = presenting()
charts, controls = chart_first()  # a projected stop: its section first, the sliders under it
with controls:
    length, d_model, k = positional_controls()
pe = sinusoidal(length, d_model, k)

with charts:
    sections = page_sections("positional")  # a lesson stop's section first (ui/page_sections.py)
    show_formula(introduction if presenter else sections["matrix"])
    if "matrix" in sections.drawn:
        with sections["matrix"]:
            show_matrix(pe, length, d_model)
    if "curves" in sections.drawn:
        with sections["curves"]:
            show_curves(pe, length, d_model, presenter)
    drawn = sections.drawn  # a section held for a later question is neither drawn nor computed
    # the example position the rotation check shows (kept while the dials are not drawn)
    position = show_dials(sections["dials"], pe, length, d_model) if "dials" in drawn else prepare(POSITION)
    if "similarity" in drawn:
        show_similarity(sections["similarity"], pe, length, d_model, presenter)
    if "rotation" in drawn:
        show_rotation(sections["rotation"], pe, length, d_model, k, position)
    if "rope" in drawn:
        show_rope(sections["rope"], length, d_model, k)  # the LLM's rotary positions (Su et al. 2021)
    if "trained" in drawn:
        show_trained_table(sections["trained"])

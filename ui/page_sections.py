"""A page's sections, and the one a lesson stop is about shown first.

A page declares its sections once, in ui/specs/<page>.py (SECTIONS, PageSection in page order); a lesson stop may
name one (`section = "row"`, checked by classroom/lessons.py). The page writes each section into the container
page_sections() gives it. The containers are made in the order they are shown, the open stop's section first and
the others in page order after it, so a stop about the third section opens on that section (projected at
1280×720, its chart starts above the fold) and the rest of the page is still there below it. The page's code keeps
its own order: a section may use a value a section shown after it has set (the d_k slider of section 1).
While a stop shows a section first, the page's explanations fold (ui/presenter.explanation), as in presenter mode.

A page whose sections are each heavy for the browser (the LLM heads page: a dozen charts of SmolLM2's 270 heads)
draws the others only when asked (`rest_on_request`): at a stop it draws the stop's section and, under it, a toggle
that draws the rest; it asks `sections.drawn` which sections to compute and draw in this run.

A section that answers a later question (classroom/answers_ahead.py, set by the lesson bar) is not in `drawn` either:
its container says which stop it opens at. Every page with sections draws only `sections.drawn`.
"""
from __future__ import annotations

from collections.abc import Callable

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from i18n import tr
from serving.internals import StreamlitAPIException
from ui.presenter import projected_stop
from ui.session import WidgetKey, lab_session
from ui.specs import SECTIONS
from ui.view import page_specs
from ui.widget_spec import prepare


def section_names(page: str) -> tuple[str, ...]:
    """The ids of the page's sections, in page order (none: a stop shows the page from its top)."""
    return tuple(section.name for section in SECTIONS.get(page, ()))


def open_stop_section(page: str, name: str | None) -> None:
    """When a lesson stop opens (before the page's widgets are drawn): unfold its section if the page folds it.
    Only then: a student who folds it again keeps it folded."""
    for section in SECTIONS.get(page, ()):
        if section.name == name and section.folded_key:
            WidgetKey(section.folded_key).set(True)


class PageSections(dict[str, DeltaGenerator]):
    """{section id: container} in page order; `drawn`: the ids whose content this run draws (all, unless the page
    draws the others on request and the stop's section is alone)."""

    drawn: frozenset[str]
    first: str | None  # the section the open stop is about, drawn first; None outside a stop naming one

    def header(self, name: str, title: str, sub: bool = False) -> None:
        """Section `name`'s header (`sub`: a subheader), in its container; left out where a projected stop opens on
        it: the stop's title above names it, and its 80 px kept the section's chart under the first screen at
        1280×720 (issue 51)."""
        if not (name == self.first and projected_stop()):
            (self[name].subheader if sub else self[name].header)(title)


def page_sections(page: str, rest_on_request: bool = False) -> PageSections:
    """{section id: container}, one per declared section of `page`; write a section's content `with sections[id]:`,
    if its id is in `sections.drawn`.

    The containers' keys give each a CSS class (st-key-section_<id>), which the browser tests find it by.
    rest_on_request: at a stop naming a section, the other sections are drawn only once the toggle under it is on.
    """
    names = section_names(page)
    first = lab_session().lesson.stop_section  # the section the open stop is about (set by ui/lesson_bar/bar)
    shown = sorted(names, key=lambda name: name != first)  # stable: the others keep their page order
    containers = {name: st.container(key=f"section_{name}") for name in shown[:1]}
    drawn = frozenset(names)
    if rest_on_request and first in names:
        # one toggle per page and section: the next stop's section opens alone again (a widget left undrawn is
        # forgotten by Streamlit, so coming back to this stop opens it alone too)
        if not st.toggle(tr("page_sections.show_rest"), key=WidgetKey(f"sections_rest_{page}_{first}").key,
                         help=tr("page_sections.show_rest_help")):
            drawn = frozenset((first,))
            _prepare_undrawn(page)
    containers |= {name: st.container(key=f"section_{name}") for name in shown[1:]}
    # a later question's section (classroom/answers_ahead.py): a line where it will be, none of its results
    held = {name: stop for name, stop in lab_session().lesson.held_sections.items() if name in names}
    for name, stop in held.items():
        containers[name].info(tr("page_sections.held", stop=stop), icon=":material/hourglass_top:")
    if held.keys() & drawn:
        drawn -= held.keys()
        _prepare_undrawn(page)  # their values in the view (and the address) as by Next, which writes them
    sections = PageSections((name, containers[name]) for name in names)
    sections.drawn, sections.first = drawn, first if first in names else None
    return sections


def _prepare_undrawn(page: str) -> None:
    """The undrawn sections' values as their widgets would set them: the view (and the address) is the same by a
    link as by Next, which writes the page's values when the stop opens, and a section drawn may read them."""
    for spec in page_specs(page):
        if spec.drawn():
            try:
                prepare(spec)
            except StreamlitAPIException:  # drawn already in this run (the sidebar's sentence): its value is set
                pass


def section_alone(page: str, name: str | None) -> Callable[[], None] | None:
    """What draws section `name` of `page` alone, without the page around it (PageSection.alone), or None."""
    return next((section.alone for section in SECTIONS.get(page, ()) if section.name == name), None)

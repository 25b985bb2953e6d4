"""A page's sections, and the one a lesson stop is about shown first.

A page declares its sections once, in ui/specs/<page>.py (SECTIONS, PageSection in page order); a lesson stop may
name one (`section = "row"`, checked by classroom/lessons.py). The page writes each section into the container
page_sections() gives it. The containers are made in the order they are shown, the open stop's section first and
the others in page order after it, so a stop about the third section opens on that section (projected at
1280×720, its chart starts above the fold) and the rest of the page is still there below it. The page's code keeps
its own order: a section may use a value a section shown after it has set (the d_k slider of section 1).
While a stop shows a section first, the page's explanations fold (ui/display.explanation), as in presenter mode.
"""
from __future__ import annotations

from collections.abc import Callable

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from ui.session import WidgetKey, lab_session
from ui.specs import SECTIONS


def section_names(page: str) -> tuple[str, ...]:
    """The ids of the page's sections, in page order (none: a stop shows the page from its top)."""
    return tuple(section.name for section in SECTIONS.get(page, ()))


def open_stop_section(page: str, name: str | None) -> None:
    """When a lesson stop opens (before the page's widgets are drawn): unfold its section if the page folds it.
    Only then: a student who folds it again keeps it folded."""
    for section in SECTIONS.get(page, ()):
        if section.name == name and section.folded_key:
            WidgetKey(section.folded_key).set(True)


def page_sections(page: str) -> dict[str, DeltaGenerator]:
    """{section id: container}, one per declared section of `page`; write a section's content `with sections[id]:`.

    The containers' keys give each a CSS class (st-key-section_<id>), which the browser tests find it by.
    """
    names = section_names(page)
    first = lab_session().lesson.stop_section  # the section the open stop is about (set by ui/lessons/bar)
    shown = sorted(names, key=lambda name: name != first)  # stable: the others keep their page order
    containers = {name: st.container(key=f"section_{name}") for name in shown}
    return {name: containers[name] for name in names}


def section_alone(page: str, name: str | None) -> Callable[[], None] | None:
    """What draws section `name` of `page` alone, without the page around it (PageSection.alone), or None."""
    return next((section.alone for section in SECTIONS.get(page, ()) if section.name == name), None)

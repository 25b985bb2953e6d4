"""Presenter mode and what it changes in a page's layout: presenting(), the page's title, where its explanation goes
(folded, or in the sidebar for a projected stop), the chart before its controls, the shade words of the colour scale.

The choice lives in this user's session (ui/session.py; and the URL, see ui/share.py), so one teacher projecting
changes nothing for anyone else.
"""
from __future__ import annotations

import streamlit as st

from i18n import tr
from ui.session import WidgetKey, lab_session

PRESENTER = "presenter"  # widget key (its spec: ui/specs/common.py's PRESENTER_SPEC, which imports this module)
_PRESENTER = WidgetKey(PRESENTER)


def presenting() -> bool:
    """Presenter mode: large text, colour-blind-safe scales, fewer controls (no downloads, fewer knobs)."""
    return bool(_PRESENTER.get(False))


def page_title(title: str) -> None:
    """The page's title, left out under a lesson stop's bar, which names the view (its stop title), in presenter mode
    and wherever the stop shows a section of the page first (ui/lesson_bar/bar decides): at 1280×720 the bar and a
    repeated title pushed the chart the stop is about below the fold."""
    if not lab_session().lesson.titled_by_lesson:
        st.title(title)


def explanation(title: str | None = None):
    """Where a page's opening explanation goes: the page itself, or, in presenter mode, a folded section ("How to
    read these maps" unless `title` says otherwise), so that the main chart starts above the fold of a 1280×720
    projector (the teacher explains). Folded too while a lesson stop shows a section of the page first
    (ui/page_sections.py): the stop's text explains, and the section's chart starts above the fold. A stop projected
    puts it in the sidebar: the stop's text is the explanation, and the 66 px of a folded section on the page were
    what kept several stops' charts under the fold (tests/test_browser_projected_stops.py)."""
    if projected_stop():
        return st.sidebar.expander(title or tr("lecture.how_to_read"), icon=":material/help:")
    return st.expander(title or tr("lecture.how_to_read")) if explanations_folded() else st.container()


def projected_stop() -> bool:
    """A lesson stop on its own page, projected: the page puts the chart the stop is about first, its controls and
    asides after it (the stop's bar already says what is shown)."""
    return presenting() and lab_session().lesson.titled_by_lesson


def chart_first(where=None):
    """-> (chart, controls) containers in `where` (default: the page), in the order they are shown: the chart above
    its controls for a projected stop, below them otherwise. The page draws the controls first in its code either way
    (their values pick the chart); only where they appear changes."""
    where = where or st
    first, second = where.container(), where.container()
    return (first, second) if projected_stop() else (second, first)


def explanations_folded() -> bool:
    """Whether explanations give way to the charts (explanation() folds them): projected, or under a lesson stop
    that shows a section of the page first."""
    return presenting() or bool(lab_session().lesson.stop_section)


def strongest_shade() -> str:
    """How the largest weight looks in the colour scale in use, for explanations: dark in Blues (the default),
    bright yellow in Cividis (presenter mode, viz/presentation.py)."""
    return tr("lecture.shade_bright" if presenting() else "lecture.shade_dark")

"""A lesson stop's claims (classroom/lessons.Claim): each measured on the model and view the stop shows (the
registry of classroom/measures, through ui/lessons/measured.py) and shown under the stop's text with its figure, ✓
when it holds, ✗ when it does not."""
from __future__ import annotations

from dataclasses import dataclass

import streamlit as st

from classroom.lessons import Claim, Stop, localized
from classroom.measures import MeasureError
from i18n import current_language, tr
from i18n.particles import attach_particles
from model.claims import holds
from ui.presenter import presenting
from ui.lessons.measured import claim_figure, worded


@dataclass(frozen=True)
class Measured:
    claim: Claim
    value: float | None  # None: it could not be measured (error says why)
    holds: bool
    error: str | None = None


def check(stop: Stop) -> list[Measured]:
    checked = []
    for claim in stop.claims:
        try:
            value = claim_figure(stop, claim)
        except (MeasureError, KeyError, ValueError, IndexError, TypeError) as error:
            reason = worded(error) if isinstance(error, MeasureError) else str(error)
            checked.append(Measured(claim, None, False, f"{type(error).__name__}: {reason}"))
            continue
        checked.append(Measured(claim, value, holds(value, claim.at_least, claim.at_most)))
    return checked


def figure_text(value: float, form: str) -> str:
    if form == "percent":
        return f"{value:.0%}"
    if form == "count":
        return f"{value:.0f}"
    return f"{value:.2f}"


def claim_line(measured: Measured, language: str) -> str:
    """'✓ L2 H1 puts 0.99 on …' (or ✗, with the bound it misses; or why it could not be measured)."""
    text = localized(measured.claim.text, language)
    if measured.value is None:
        return tr("lessons.claim_unmeasured", text=text.replace("{value}", "?"), reason=measured.error)
    # the figure is put into the lesson's own text: a Korean particle after it is chosen for the figure as read
    line = attach_particles(text.replace("{value}", figure_text(measured.value, measured.claim.format)))
    if measured.holds:
        return f"✓ {line}"
    claim = measured.claim
    bounds = ([f"≥ {figure_text(claim.at_least, claim.format)}"] if claim.at_least is not None else []) + (
        [f"≤ {figure_text(claim.at_most, claim.format)}"] if claim.at_most is not None else [])
    return tr("lessons.claim_fails", line=line, bound=", ".join(bounds))


def show_claims(stop: Stop) -> None:
    """Under the stop's text, once its page is shown: each claim with the figure measured now."""
    language = current_language()
    checked = check(stop)
    if not checked:
        return
    failing = sum(not measured.holds for measured in checked)
    title = (tr("lessons.claims_fail", failing=failing, claims=len(checked)) if failing
             else tr("lessons.claims_hold", claims=len(checked)))
    # one line while projected (the chart stays above the fold); open to read, and open wherever one fails
    with st.expander(title, expanded=bool(failing) or not presenting(), key="lesson_claims"):
        st.markdown("  \n".join(claim_line(measured, language) for measured in checked))

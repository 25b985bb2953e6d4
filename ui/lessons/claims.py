"""A lesson stop's claims (classroom/lessons.Claim): each measured on the model and view the stop shows
(model/claims.py) and shown under the stop's text with its figure, ✓ when it holds, ✗ when it does not."""
from __future__ import annotations

from dataclasses import dataclass

import streamlit as st

from classroom.lessons import Claim, Stop, localized
from i18n import current_language, tr
from model import claims as measures
from model.foundations.normalization import normalization_demo
from ui.display import presenting
from ui.lessons.questions import QuestionError, stop_decoded
from ui.models import shipped_model_info
from ui.specs import SPECS


@dataclass(frozen=True)
class Measured:
    claim: Claim
    value: float | None  # None: it could not be measured (error says why)
    holds: bool
    error: str | None = None


def _state(stop: Stop, name: str):
    """A stop's view value as the page reads it: the state's, else the spec's default."""
    spec = SPECS[name]
    return spec.convert(stop.state[name]) if name in stop.state else spec.initial({})


def _weights(stop: Stop, kind: str):
    return stop_decoded(stop)[1].attention[kind]  # (L, h, T_q, T_k)


def measure(stop: Stop, claim: Claim) -> float:
    """The claim's figure on the stop's model and view. Raises QuestionError, KeyError, ValueError, IndexError."""
    args, name = claim.args, claim.measure
    if name == "position_share":
        return measures.position_share(_weights(stop, args["kind"]), args["layer"], args["head"], int(args["offset"]))
    if name == "row_peak":
        return measures.row_peak(_weights(stop, args["kind"]), args["layer"], args["head"])
    if name == "linking_weight":
        result = stop_decoded(stop)[1]
        query, key = result.output_tokens.index(args["target"]), result.source.tokens.index(args["source"])
        return measures.linking_weight(result.attention["cross"], query, key, args["layer"], args["head"])
    if name == "exact_match_at_length":
        return measures.exact_match_at_length(shipped_model_info(args["model"])["metrics"]["by_length"],
                                              int(args["words"]))
    if name in ("zeroed_fraction", "pooled_count"):
        demo = normalization_demo(_state(stop, "batch"), _state(stop, "len"), _state(stop, "features"),
                                  args.get("norm") or _state(stop, "norm"), _state(stop, "norm_seed"))
        return getattr(measures, name)(demo)
    if name in ("sink_share", "window_gain", "induction_score", "rope_distance_spread", "copy_probability"):
        from ui.lessons import llm_measures  # the LLM lesson's measures (SmolLM2, loaded with the first one)

        if name == "sink_share":
            return llm_measures.sink_share(stop, int(args["from_layer"]))
        if name == "window_gain":
            return llm_measures.window_gain(stop)
        if name == "induction_score":
            return llm_measures.induction_best_score(stop)
        if name == "copy_probability":
            return llm_measures.copy_probability(stop, str(args["token"]))
        return llm_measures.rope_distance_spread(stop)
    raise ValueError(name)


def check(stop: Stop) -> list[Measured]:
    checked = []
    for claim in stop.claims:
        try:
            value = measure(stop, claim)
        except (QuestionError, KeyError, ValueError, IndexError, TypeError) as error:
            checked.append(Measured(claim, None, False, f"{type(error).__name__}: {error}"))
            continue
        checked.append(Measured(claim, value, measures.holds(value, claim.at_least, claim.at_most)))
    return checked


def figure(value: float, form: str) -> str:
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
    line = text.replace("{value}", figure(measured.value, measured.claim.format))
    if measured.holds:
        return f"✓ {line}"
    claim = measured.claim
    bounds = ([f"≥ {figure(claim.at_least, claim.format)}"] if claim.at_least is not None else []) + (
        [f"≤ {figure(claim.at_most, claim.format)}"] if claim.at_most is not None else [])
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

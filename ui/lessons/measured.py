"""A stop's measures (classroom/measures) as the lesson bar, the teacher's page and the claims take them: the stop's
view resolved through the widget specs, the model fetched from the server's cache (ui/state.get_model) and each
result kept in the server-wide store (runtime/result_cache.py), so a class at a stop costs one computation."""
from __future__ import annotations

from classroom.lessons import Claim, Question, Stop
from classroom.measures import (MEASURES, Asked, Expected, Measure, MeasureError, Phrase, Said, StopView, as_answer,
                                as_figure, model_id, take, view_names)
from i18n import tr
from model.checkpoint import CheckpointError
from model.families import LabModel
from runtime.result_cache import memoized
from ui.specs import SPECS
from ui.state import get_model
from ui.view import from_link_text


def stop_view(stop: Stop, names) -> StopView:
    """The stop's values of these share-link parameters as their pages read them: the stop's state through the
    parameter's spec, else the spec's default (a name no spec knows: the stop's text, if it gives one). A layer or
    head number is 1-based in the lesson file, 0-based here, as the page reads it; a list (the heads switched off) is
    a tuple here, so that the view can key a result."""
    values = {}
    for name in names:
        spec = SPECS.get(name)
        if spec is not None:
            values[name] = (spec.convert(from_link_text(spec, stop.state[name], one_based=True))
                            if name in stop.state else spec.initial({}))
        elif name in stop.state:
            values[name] = stop.state[name]
    return StopView.of({name: _frozen(value) for name, value in values.items()})


def stop_model(model_id: str) -> LabModel:
    """The model a measure reads, from the server's cache (or the user's own); MeasureError when there is none."""
    try:
        return get_model(model_id)
    except (CheckpointError, KeyError) as error:
        raise MeasureError(Phrase.of("lessons.no_model", model=model_id)) from error


def asked(question: Question) -> Asked:
    fixed = str(question.answer) if question.kind == "cell" and question.answer is not None else None
    return Asked(question.tolerance, tuple(question.misconceptions), question.top, question.row, fixed)


def _frozen(value):
    """A lesson file's args as a key: tables and lists as tuples."""
    if isinstance(value, dict):
        return tuple(sorted((key, _frozen(item)) for key, item in value.items()))
    if isinstance(value, (list, tuple)):
        return tuple(_frozen(item) for item in value)
    return value


def _inputs(measure: Measure, stop: Stop, args: dict) -> tuple[str | None, LabModel | None, StopView]:
    view = stop_view(stop, view_names(measure, args))
    needed = model_id(measure, view)
    return needed, None if needed is None else stop_model(needed), view


@memoized
def _found(name: str, model: str | None, view: StopView, args: tuple, _lab: LabModel | None, _args: dict):
    """What the measure finds at the stop, once per server: a stop's question and its claims of one measure share
    it, and the sessions of every language too (what it says in words it says as Phrase, worded on the page)."""
    return take(MEASURES[name], _lab, view, _args)


def worded(said: Said | MeasureError | None) -> str:
    """What a measure said, in the reader's language: a sentence of the table, several joined, or text as it is (a
    number, a model's own message); a MeasureError's reason."""
    if isinstance(said, MeasureError):
        said = said.reason
    if said is None:
        return ""
    if isinstance(said, Phrase):
        return tr(said.key, **dict(said.values))
    if isinstance(said, tuple):
        return "; ".join(worded(words) for words in said)
    return str(said)


def computed_answer(stop: Stop) -> Expected:
    """The right answer of the stop's computed question, measured at the stop's view."""
    question = stop.question
    measure = MEASURES[question.compute]
    needed, lab, view = _inputs(measure, stop, question.args)
    found = _found(measure.name, needed, view, _frozen(question.args), lab, question.args)
    return as_answer(measure, found, asked(question))


def claim_figure(stop: Stop, claim: Claim) -> float:
    """A claim's figure on the model and view the stop shows."""
    measure = MEASURES[claim.measure]
    needed, lab, view = _inputs(measure, stop, claim.args)
    return as_figure(measure, _found(measure.name, needed, view, _frozen(claim.args), lab, claim.args))

"""The registry of the lecture's measures: each measure is one function, declared once with @measure (its name, the
schema of its arguments, what it answers or that a claim may bound it, the model and the view values it reads).

A measure is called as `function(model, view, args)`: `model` is the LabModel (model/families.py) the caller fetched
for it (`model_id` says which; None for a measure that reads none), `view` the stop's view values (a StopView: the
stop's state resolved through the widget specs' defaults, `view_names` says which) and `args` what the lesson file
gives it, as `checked_args` returned them. It returns:

- a question's measure: the Expected answer (choice, token), a HeadValues (head: the registry accepts the best head
  and those within the question's tolerance of it), a CellMap (cell: classroom/measures/cells.py, its right cells) or
  a float (number: the registry writes it as declared);
- a claim's measure: its figure, a float (the lesson file bounds it).

Everything reads this one registry: the lesson validator (classroom/lessons.py), a stop's question and its
teacher's peek (ui/lessons/questions.py), its claims (ui/lessons/claims.py). The UI fetches the model from its own
cache and keeps each result in the server-wide store; nothing here imports streamlit or ui/.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from classroom.text_answers import text_key
from model.explain.kinds import head_label

ANSWER_KINDS = ("choice", "head", "number", "token", "cell")
STOP_MODEL = "stop"  # a measure of the model the stop shows (its view's "model"), not of one fixed model


@dataclass(frozen=True)
class Phrase:
    """A sentence for the interface to write: a key of i18n's table and the values it names (texts and numbers as the
    sentence shows them). Hashable and the same in every language: the page words it in the reader's."""
    key: str
    values: tuple[tuple[str, str], ...] = ()

    @classmethod
    def of(cls, key: str, **values: object) -> Phrase:
        return cls(key, tuple(sorted((name, str(value)) for name, value in values.items())))


# What a result says in words: a sentence, several (the page joins them), or text that is the same in every language
# (a number as it is shown).
Said = Phrase | tuple[Phrase, ...] | str


class MeasureError(ValueError):
    """The measure cannot be taken at this stop (shown at the stop, in the reader's language; the page is then shown
    as usual). reason: the Phrase that says why, or a message of the model's own (its text as it is)."""

    def __init__(self, reason: Phrase | str):
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class StopView:
    """The view values a measure reads: share-link parameter -> the value its page reads (the stop's state through
    the parameter's spec, else the spec's default). Hashable, so a result can be kept under it."""
    values: tuple[tuple[str, Any], ...] = ()

    @classmethod
    def of(cls, values: Mapping[str, Any]) -> StopView:
        return cls(tuple(sorted(values.items())))

    def __getitem__(self, name: str) -> Any:
        for key, value in self.values:
            if key == name:
                return value
        raise KeyError(name)

    def get(self, name: str, default: Any = None) -> Any:
        try:
            return self[name]
        except KeyError:
            return default


@dataclass(frozen=True)
class Expected:
    """A question's right answer, as canonical text (the same in every language): a choice is its 1-based option
    number, a head "L2 H3" (1-based, as on screen), a number its value, a token its text."""
    shown: str  # the right answer, canonical text
    accepted: frozenset[str] = field(default_factory=frozenset)  # canonical answers counted right
    number: float | None = None  # number questions: the value, right within the tolerance
    tolerance: float = 0.0
    measured: Said | None = None  # the measurement the answer rests on, as the feedback states it ("0.43", "layer 19")
    separation: float | None = None  # gap between the accepted answers and the best rejected one (measure's units)
    by_model: bool = True  # read from a model; False: worked out from the question itself (softmax of given scores)
    text: bool = False  # a text question's: `accepted` holds groups (text_key), an answer is right when its group is
    # among them
    cells: Any = None  # cell questions: the CellMap tapped (its tokens name a cell, its cells are the answers taken)

    def is_right(self, answer: str) -> bool:
        if self.text:
            return text_key(answer) in self.accepted
        if self.number is not None:
            try:
                return math.isclose(float(answer), self.number, abs_tol=self.tolerance + 1e-9)
            except ValueError:
                return False
        return answer in self.accepted


@dataclass(frozen=True)
class HeadValues:
    """A head question's measurement: one value per head, and which end is best."""
    values: np.ndarray  # (L, h)
    best_is_low: bool
    measured: str  # the key of the lessons.measured_* sentence that states the best head's value


@dataclass(frozen=True)
class Asked:
    """What a question adds to its measure's result: how near the right value an answer may be, and the wrong
    answers the lesson names (a number's gap is how far the nearest of them lies outside the tolerance)."""
    tolerance: float = 0.0
    misconceptions: tuple[str, ...] = ()
    top: int = 1  # cell questions: the largest cells counted right
    row: int | str | None = None  # cell questions: the named query row (a token's text or a 1-based position)
    fixed: str | None = None  # cell questions: the lesson's fixed cell instead of the measured ones


# --- the schema of a measure's arguments ------------------------------------------------------------------------

def _text(value: object) -> str:
    if isinstance(value, str):
        return value
    raise ValueError


def _texts(value: object) -> list[str]:
    if isinstance(value, list) and value and all(isinstance(x, str) for x in value):
        return list(value)
    raise ValueError


def _flag(value: object) -> bool:
    if isinstance(value, bool):
        return value
    raise ValueError


def _whole(value: object) -> int:
    if isinstance(value, int) and not isinstance(value, bool) and value >= 1:
        return value
    raise ValueError


def finite_number(value: object) -> float:
    """A TOML number (not true/false) that is finite as a float; ValueError otherwise."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        try:
            if math.isfinite(value):
                return float(value)
        except OverflowError:  # an integer too large for a float
            pass
    raise ValueError


def _numbers(value: object) -> list[float]:
    if isinstance(value, list) and value:
        return [finite_number(x) for x in value]
    raise ValueError


def _layer(value: object) -> int:
    return _whole(value) - 1  # 1-based in the file, 0-based here


def _head(value: object) -> int | str:
    return value if value in ("max", "min") else _whole(value) - 1


def _offset(value: object) -> object:
    if value in (-1, 0, 1):
        return value
    raise ValueError


def _bands(value: object) -> list:
    if isinstance(value, list) and value and all(
            isinstance(b, list) and len(b) == 2 and _whole(b[0]) <= _whole(b[1]) for b in value):
        return value
    raise ValueError


def _layer_sets(value: object) -> list:
    if isinstance(value, list) and value and all(isinstance(o, list) and all(_whole(x) for x in o) for o in value):
        return value
    raise ValueError


@dataclass(frozen=True)
class Arg:
    """One argument of a measure, as the lesson file gives it in `args`."""
    name: str
    kind: Callable[[object], Any]  # file value -> the value the measure reads; ValueError when it does not fit
    what: str  # what it must be, as the lesson's problem says
    required: bool = True
    per_option: bool = False  # a choice's: one entry per option of the question


def _arg_of(kind: Callable[[object], Any], default_what: str) -> Callable[..., Arg]:
    """A constructor of one kind of argument: `text("token", "a token's text", required=False)`."""
    def make(name: str, what: str = default_what, **kwargs) -> Arg:
        return Arg(name, kind, what, **kwargs)
    return make


text, texts = _arg_of(_text, "a text"), _arg_of(_texts, "a list of texts")
flag = _arg_of(_flag, "true or false")
whole, number, numbers = (_arg_of(_whole, "a whole number >= 1"), _arg_of(finite_number, "a finite number"),
                          _arg_of(_numbers, "a list of numbers"))


LAYER = Arg("layer", _layer, "a layer number (1-based)")
HEAD = Arg("head", _head, 'a head number (1-based, or "max"/"min" over the layer\'s heads)')
OFFSET = Arg("offset", _offset, "-1 (previous), 0 (same) or 1 (next)")
BANDS = Arg("bands", _bands, "one [first, last] layer pair per option (1-based, first <= last)", per_option=True)
LAYER_SETS = Arg("option_layers", _layer_sets, "one list of layers (1-based) per option", per_option=True)


# --- the registry -----------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Measure:
    name: str
    function: Callable[[Any, StopView, Mapping[str, Any]], Any]
    answers: str | None = None  # the question kind it answers (ANSWER_KINDS), or None: claims only
    bounds: bool = False  # a claim may bound it (it measures one number)
    args: tuple[Arg, ...] = ()
    model: str | None = None  # STOP_MODEL, a model id, or None (it reads no model)
    reads: tuple[str, ...] = ()  # the view values it reads (share-link parameter names)
    view_args: tuple[str, ...] = ()  # args whose value names a view value it reads too (factor_param = "v1x")
    check: Callable[[dict], None] | None = None  # what the args must satisfy together; ValueError if not
    shown: str = "g"  # a number answer: its format (".2f": 0.43)
    states_value: bool = False  # a number answer: the feedback states the measured value
    by_model: bool = True  # a number answer: read from a model (False: worked out from the question)


MEASURES: dict[str, Measure] = {}


def measure(name: str, *, answers: str | None = None, bounds: bool = False, args: tuple[Arg, ...] = (),
            model: str | None = None, reads: tuple[str, ...] = (), **declared) -> Callable:
    """Register the decorated function as the measure `name` (module docstring: how it is called)."""
    if name in MEASURES:
        raise ValueError(f"measure {name!r} is declared twice")
    if answers is None and not bounds:
        raise ValueError(f"measure {name!r} answers no question and bounds no claim")
    if answers is not None and answers not in ANSWER_KINDS:
        raise ValueError(f"measure {name!r}: answers must be one of {', '.join(ANSWER_KINDS)}")
    if model == STOP_MODEL and "model" not in reads:
        reads = ("model", *reads)

    def register(function: Callable) -> Callable:
        MEASURES[name] = Measure(name, function, answers, bounds, args, model, reads, **declared)
        return function

    return register


def answering(kind: str | None = None) -> dict[str, Measure]:
    """The measures a question may compute (of that kind)."""
    return {n: m for n, m in MEASURES.items() if m.answers is not None and kind in (None, m.answers)}


def bounding() -> dict[str, Measure]:
    """The measures a claim may bound."""
    return {n: m for n, m in MEASURES.items() if m.bounds}


def checked_args(measure: Measure, raw: object, what: str = "args") -> dict:
    """The file's args of the measure, each checked against its schema and converted (a claim's layer and head to
    0-based); ValueError naming the first that does not fit. Args the measure does not read are kept as written."""
    if not isinstance(raw, dict):
        raise ValueError(f"{what} must be a table")  # noqa: TRY004
    args = dict(raw)
    missing = [arg.name for arg in measure.args if arg.required and arg.name not in args]
    if missing:
        first = next(arg for arg in measure.args if arg.name == missing[0])
        raise ValueError(f"{measure.name!r} needs args.{', args.'.join(missing)}" + (
            f" ({first.what})" if len(missing) == 1 else ""))
    for arg in measure.args:
        if arg.name in args:
            try:
                args[arg.name] = arg.kind(args[arg.name])
            except (ValueError, TypeError):
                raise ValueError(f"{measure.name!r}: args.{arg.name} must be {arg.what}") from None
    if measure.check is not None:
        measure.check(args)
    return args


def check_option_count(measure: Measure, args: Mapping, option_count: int) -> None:
    """A choice's args that give one entry per option have as many as the question's options."""
    for arg in measure.args:
        if arg.per_option and arg.name in args and len(args[arg.name]) != option_count:
            raise ValueError(f"args.{arg.name} needs one entry per option ({option_count})")


def view_names(measure: Measure, args: Mapping) -> tuple[str, ...]:
    """The share-link parameters whose values the measure reads at a stop."""
    named = tuple(args[name] for name in measure.view_args if isinstance(args.get(name), str))
    return tuple(dict.fromkeys(measure.reads + named))


def model_id(measure: Measure, view: StopView) -> str | None:
    """The model the measure reads at a stop of this view (None: none)."""
    return view["model"] if measure.model == STOP_MODEL else measure.model


def number_answer(shown: str, value: float, asked: Asked, measured: Said | None = None,
                  by_model: bool = True) -> Expected:
    """A number answer; its gap is how far the nearest wrong answer the lesson names (a misconception) lies outside
    the tolerance."""
    wrong = [abs(float(key) - value) - asked.tolerance for key in asked.misconceptions]
    return Expected(shown, number=value, tolerance=asked.tolerance, measured=measured,
                    separation=min(wrong) if wrong else None, by_model=by_model)


def heads_near_best(found: HeadValues, tolerance: float) -> Expected:
    """The best head, and every head within the tolerance of it also counts as right."""
    values, low = found.values, found.best_is_low
    best = values.min() if low else values.max()
    near = abs(values - best) <= tolerance
    flat = int(values.argmin() if low else values.argmax())
    layer, head = divmod(flat, values.shape[1])
    accepted = frozenset(head_label(l, h) for l in range(values.shape[0]) for h in range(values.shape[1]) if near[l, h])
    rejected = values[~near]
    separation = None if rejected.size == 0 else float(
        rejected.min() - values[near].max() if low else values[near].min() - rejected.max())
    measured = Phrase.of(found.measured, value=f"{values[layer, head]:.2f}")
    return Expected(head_label(layer, head), accepted, measured=measured, separation=separation)


def take(measure: Measure, model: Any, view: StopView, args: Mapping) -> Any:
    """What the measure finds at a stop of this view (module docstring: a question's or a claim's result)."""
    return measure.function(model, view, args)


def as_answer(measure: Measure, found: Any, asked: Asked) -> Expected:
    """The right answer of a question that computes `measure`, from what the measure found."""
    if measure.answers is None:
        raise ValueError(f"measure {measure.name!r} answers no question")
    if measure.answers == "number":
        value = float(found)
        shown = format(value, measure.shown)
        return number_answer(shown, value, asked, shown if measure.states_value else None, measure.by_model)
    if measure.answers == "head":
        return heads_near_best(found, asked.tolerance)
    if measure.answers == "cell":
        return found.expected(asked)  # a CellMap (classroom/measures/cells.py)
    return found


def as_figure(measure: Measure, found: Any) -> float:
    """A claim's figure, from what the measure found."""
    if not measure.bounds:
        raise ValueError(f"measure {measure.name!r} is not one a claim may bound")
    return float(found)


def answer(measure: Measure, model: Any, view: StopView, args: Mapping, asked: Asked) -> Expected:
    """The right answer of a question that computes `measure`, at a stop of this view."""
    return as_answer(measure, take(measure, model, view, args), asked)


def figure(measure: Measure, model: Any, view: StopView, args: Mapping) -> float:
    """A claim's figure: the measure at a stop of this view."""
    return as_figure(measure, take(measure, model, view, args))


def second_gap(values) -> float | None:
    """The largest value's lead over the next one (None with fewer than two)."""
    ordered = sorted((float(v) for v in values), reverse=True)
    return ordered[0] - ordered[1] if len(ordered) > 1 else None


def option_of(sets: list, value, shown: str) -> str:
    """The 1-based number of the option whose entry (a set of layers, a band) holds `value` (`shown`: as text), as
    canonical text."""
    matches = [i for i, entry in enumerate(sets) if entry(value)]
    if len(matches) != 1:
        raise MeasureError(Phrase.of("lessons.no_option_fits", value=shown))
    return str(matches[0] + 1)


def choice(number: str, measured: Said | None, separation: float | None) -> Expected:
    """A choice answer: one right option."""
    return Expected(number, frozenset({number}), measured=measured, separation=separation)

"""One spec per shareable widget: its key, its name in links, its page, its default and its bounds or options.

The widget is drawn from the spec (spec_slider, spec_select, ... below) and the link parser (ui/share.py) reads
the same spec, so a bound or a default is written once. Bounds, options and defaults may be functions of the
session's state (a position slider ends at the chosen length; a layer picker at the chosen model's depth): they
get the widgets' values (ui.session.widget_values(), or any mapping) and are read when needed.

The widgets take their value from the session (their key), never from value=/index= (Streamlit warns when a widget has
both, and a link may have set the value before the widget is drawn): prepare() puts the default there on the
first run and brings a value that no longer fits (a shorter length, another model) back inside the bounds.
"""
from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, MutableMapping
from dataclasses import dataclass
from typing import Any

import streamlit as st

from ui.presenter import presenting
from ui.session import widget_values
from ui.text import MAX_INPUT_CHARS

State = Mapping[str, Any]
Bound = int | Callable[[State], int]


def _read(value, state: State):
    return value(state) if callable(value) else value


def boolean(text: str) -> bool:
    """Link text of a switch: true/false (True/False from Python's str() too)."""
    if text not in ("true", "false", "True", "False"):
        raise ValueError(f"{text!r} is not true or false")
    return text.lower() == "true"


@dataclass(frozen=True)
class WidgetSpec:
    key: str  # the widget's key, under which the session keeps its value
    url: str  # the parameter's name in links and lesson files
    default: Any  # the value on a first visit; or a function of the state
    pages: tuple[str, ...] = ()  # url paths of the pages it belongs to; empty: every page
    low: Bound | None = None  # an integer between low and high (inclusive), every `step`-th ...
    high: Bound | None = None
    step: int = 1
    options: Collection | Callable[[State], Collection] | None = None  # ... or one of these
    convert: Callable[[str], Any] = str  # link text -> value; raises ValueError (KeyError, TypeError) if none
    counted: bool = False  # a layer or head number: 1-based in links (0-based in the session)
    refit: Any = None  # the value taken when the current one is no longer offered (None: the default)
    text: Callable[[Any], str] | None = None  # value -> link text where str() is not it (a list of heads)
    # whether the page draws the widget with these values (None: always); a link to a page's first visit names the
    # defaults of the widgets it will draw, no more (the padding count only under a padding mask)
    drawn_when: Callable[[State], bool] | None = None

    def get(self, state: State | None = None):
        """The value in `state` (the session's widget values by default), or None before the widget has one."""
        return (widget_values() if state is None else state).get(self.key)

    def set(self, value, state: MutableMapping | None = None) -> None:
        """Give the widget this value (in `state`, the session's widget values by default) before it is drawn."""
        (widget_values() if state is None else state)[self.key] = value

    def is_set(self, state: State | None = None) -> bool:
        return self.key in (widget_values() if state is None else state)

    def forget(self, state: MutableMapping | None = None) -> None:
        (widget_values() if state is None else state).pop(self.key, None)

    def drawn(self, state: State | None = None) -> bool:
        return self.drawn_when is None or self.drawn_when(widget_values() if state is None else state)

    def bounds(self, state: State | None = None) -> tuple[int, int]:
        state = widget_values() if state is None else state
        return _read(self.low, state), _read(self.high, state)

    def choices(self, state: State | None = None) -> list:
        """What the widget offers now (in `state`, the session's widget values by default): its options, or every
        step of its range."""
        state = widget_values() if state is None else state
        if self.options is not None:
            return list(_read(self.options, state))
        low, high = self.bounds(state)
        return list(range(low, high + 1, self.step))

    def allows(self, value, state: State) -> bool:
        if self.options is not None:
            return value in _read(self.options, state)
        if self.low is None:  # free text (the sentence, a training id): convert checks it
            return True
        low, high = self.bounds(state)
        return isinstance(value, int) and low <= value <= high and (value - low) % self.step == 0

    def parse(self, text: str, state: State):
        """Link text -> a value this widget offers now; ValueError when it does not fit."""
        value = self.convert(text)
        if not self.allows(value, state):
            raise ValueError(f"{self.url}={text!r} is not offered")
        return value

    def initial(self, state: State):
        return _read(self.default, state)

    def current(self, state: State):
        """The value in the state, or the default before the widget was first drawn."""
        return state[self.key] if self.key in state else self.initial(state)

    def fitted(self, value, state: State):
        """The offered value nearest to `value`: a number is clamped into the range, an option no longer offered
        becomes `refit` (or the default)."""
        if self.allows(value, state):
            return value
        if self.options is None and isinstance(value, int):
            low, high = self.bounds(state)
            return min(max(value, low), high)
        return _read(self.default if self.refit is None else self.refit, state)


@dataclass(frozen=True)
class PageSection:
    """A part of a page (its subheader and what follows) that a lesson stop may name: `section = "row"` shows that
    part first when the stop opens (ui/page_sections.py). Declared in ui/specs/<page>.py as SECTIONS, in page order."""
    name: str  # the id lesson files use; also the container's key: CSS class st-key-section_<name>
    folded_key: str | None = None  # a folded section's expander key (ui/charts.folded_section): the stop opens it
    # The section alone, as its page draws it from the view (no value the page computes before it): a student's live
    # question draws it under her answer at the class's Reveal, in that fragment's own rerun (ui/live_class/
    # live_question.py). None: the section needs the page around it, and the Reveal reruns her whole page.
    alone: Callable[[], None] | None = None


SEED_MAX = 10_000  # the pages' random seeds: 0..SEED_MAX


def seed_spec(key: str, url: str, pages: tuple[str, ...]) -> WidgetSpec:
    """A page's random seed, drawn with secondary_number (presenter mode hides it)."""
    return WidgetSpec(key, url, 0, pages, low=0, high=SEED_MAX, convert=int)


def prepare(spec: WidgetSpec, offered: list | None = None):
    """Before the widget is drawn: its value in the session, inside its bounds; -> that value.

    offered: the part of the spec's choices that this input allows (the attention views a model's analysis can
    show); a value outside it becomes the spec's default, or the first offered.
    A page that hides the widget (presenter mode) reads this instead of drawing it; ui.share.keep_view_state puts
    back the value Streamlit drops at the end of a run that does not draw the widget."""
    state = widget_values()
    value = spec.fitted(spec.current(state), state)
    if offered is not None and value not in offered:
        default = spec.initial(state)
        value = default if default in offered else offered[0]
    # Set in every run that prepares it, even when unchanged: Streamlit tells the browser a widget's value only in a
    # run that sets it. A value set in a run that does not draw the widget (a lesson's Next whose stop hides the page
    # behind its question, a link, Back, another page, a view of the page not shown) would otherwise reach a widget
    # the session has drawn before as the widget's default ("Encoder self-attention", no View chosen) while the
    # charts follow the value (tests/app_links.BrowserPickers models the browser).
    state[spec.key] = value
    return value


def spec_slider(spec: WidgetSpec, label: str, *, where=st, **kwargs):
    prepare(spec)
    low, high = spec.bounds(widget_values())
    return where.slider(label, low, high, step=spec.step, key=spec.key, **kwargs)


def spec_number(spec: WidgetSpec, label: str, *, where=st, **kwargs):
    low, high = spec.bounds(widget_values())
    if low is None or high is None:  # a typed number is always bounded (tests/test_hostile_inputs.py)
        raise ValueError(f"{spec.key}: a number input needs both bounds")
    prepare(spec)
    return where.number_input(label, min_value=low, max_value=high, step=spec.step, key=spec.key, **kwargs)


def knob_columns(shown: int) -> list:
    """A row of columns for `shown` knobs and, last, one for the secondary knob (secondary_number), which presenter
    mode hides."""
    return st.columns(shown if presenting() else shown + 1)


def secondary_number(spec: WidgetSpec, label: str, *, where=st, **kwargs):
    """A secondary knob (a page's random seed): hidden in presenter mode, where the value chosen before stays
    (prepare reads it; ui.share.keep_view_state keeps it while the widget is not drawn)."""
    if presenting():
        return prepare(spec)
    return spec_number(spec, label, where=where, **kwargs)


def spec_select(spec: WidgetSpec, label: str, *, where=st, **kwargs):
    prepare(spec)
    return where.selectbox(label, spec.choices(widget_values()), key=spec.key, **kwargs)


def _narrowed(spec: WidgetSpec, offered: list | None) -> list:
    """The spec's choices, kept to those offered (in the spec's order)."""
    choices = spec.choices(widget_values())
    return choices if offered is None else [choice for choice in choices if choice in offered]


def spec_select_slider(spec: WidgetSpec, label: str, *, where=st, **kwargs):
    prepare(spec)
    return where.select_slider(label, options=spec.choices(widget_values()), key=spec.key, **kwargs)


def spec_radio(spec: WidgetSpec, label: str, *, where=st, **kwargs):
    prepare(spec)
    return where.radio(label, spec.choices(widget_values()), key=spec.key, **kwargs)


def spec_segmented(spec: WidgetSpec, label: str, *, where=st, offered: list | None = None, **kwargs):
    """A required segmented control (one choice always on); its value, or the one prepared in the instant a click
    has cleared it. offered: as in prepare()."""
    prepared = prepare(spec, offered)
    choices = _narrowed(spec, offered)
    value = where.segmented_control(label, choices, key=spec.key, required=True, **kwargs)
    return prepared if value is None else value


def spec_toggle(spec: WidgetSpec, label: str, *, where=st, **kwargs) -> bool:
    prepare(spec)
    return where.toggle(label, key=spec.key, **kwargs)


def sentence_text(text: str) -> str:
    """A linked sentence, cut to the input limit (as typed text is)."""
    return text[:MAX_INPUT_CHARS]


# The sidebar's sentence, which the analysing pages read: declared here, below ui.state and ui.vocabulary, so that
# they too read its key from the spec (ui/specs/common.py lists it with the other shared widgets). The sidebar sets
# the model's first example on its first run.
SENTENCE = WidgetSpec("sentence", "sentence", None, ("attention", "decoding", "compare"), convert=sentence_text)

"""A view is one value: the page, the model, the language, presenter mode and the page's own controls (the sentence,
kind, layer, head, view ... each declared once as a WidgetSpec in ui/specs/).

resolve_view() makes it from what a source names, in the same order for every source (a link or the browser's
Back and Forward, a lesson stop by Next, Previous or its bar, the teacher's move):

1. the shared values (the model before anything of the page: the model bounds its layers and heads);
2. the page's values the source names, each checked against the model the view has by then;
3. nothing else: a value of the page that the source leaves open is absent, and the page opens it on the model's
   own default when it draws (prepare(): the spec's default fitted to the model; the attention page: the encoder's
   sharpest word-to-word head, chosen from the data). Never a value left over from another stop or another model.

A value that does not fit is dropped before anything is drawn and named in the resolution's `unfit`; only a link
(an address a person opened or edited) says so on screen (Resolution.say_on_screen).

It is pure: it reads a mapping of the widgets' values and returns a new View, so a unit test can resolve every stop
by every path without a browser (tests/test_view_resolution.py). install_view() then writes the View into the
widgets' values, the one place a resolution changes them; current_view() reads the View a page draws from.
"""
from __future__ import annotations

import enum
from collections.abc import Collection, Mapping, MutableMapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from ui.language import LANGUAGE
from ui.presenter import PRESENTER
from ui.session import widget_values
from ui.specs import SPECS
from ui.specs.common import LANGUAGE_SPEC, MODEL, PRESENTER_SPEC
from ui.widget_spec import SENTENCE, WidgetSpec

LINK_VERSION = "2"  # the `v` of links whose layer/head numbers count from 1 (no `v`: an old, 0-based link)


class Source(enum.Enum):
    """Where a view comes from."""
    LINK = "link"  # an address opened: a shared link, a reload, the browser's Back or Forward, an edited address
    STOP = "stop"  # a lesson stop opened by Next, Previous, the lesson picker or the stop's own link
    TEACHER = "teacher"  # the stop the teacher moved her class to


def page_specs(page: str | None) -> list[WidgetSpec]:
    """The specs of `page`'s own values (not the language, presenter mode or model, which every page shares); every
    page's, for page None."""
    return [spec for spec in SPECS.values() if spec.pages and (page is None or page in spec.pages)]


def tab_specs() -> list[WidgetSpec]:
    """Values every page carries besides the model, language and presenter mode (the training running in this
    tab): part of every View, never forgotten by a resolution."""
    return [spec for spec in SPECS.values() if not spec.pages and spec not in (MODEL, LANGUAGE_SPEC, PRESENTER_SPEC)]


def _frozen(value: Any) -> Any:
    """A control's value as an immutable one (a list of heads becomes a tuple of tuples)."""
    if isinstance(value, (list, tuple)):
        return tuple(_frozen(item) for item in value)
    return value


@dataclass(frozen=True)
class View:
    """What a page draws: equal views draw the same controls with the same values.

    controls: {link name: value} of the page's own values that are set, in the specs' order; a name that is absent
    is opened by the page on the model's default. Layer and head numbers count from 0, as in the session."""
    page: str | None  # None: a link's view before its page is known (every page's values it names)
    model: str
    language: str = LANGUAGE_SPEC.default
    presenter: bool = False
    controls: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        frozen = {name: _frozen(value) for name, value in self.controls.items()}
        object.__setattr__(self, "controls", MappingProxyType(frozen))

    def __hash__(self) -> int:
        return hash((self.page, self.model, self.language, self.presenter, tuple(self.controls.items())))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, View) and (self.page, self.model, self.language, self.presenter,
                                            dict(self.controls)) == (other.page, other.model, other.language,
                                                                     other.presenter, dict(other.controls))

    def value(self, spec: WidgetSpec) -> Any:
        """The view's value of that spec (None: the page opens it on the model's default)."""
        shared = {MODEL.url: self.model, LANGUAGE_SPEC.url: self.language, PRESENTER_SPEC.url: self.presenter}
        return shared[spec.url] if spec.url in shared else self.controls.get(spec.url)

    @property
    def sentence(self) -> str | None:
        return self.controls.get(SENTENCE.url)

    def query(self) -> dict[str, str]:
        """The view as a link's query string, in the specs' order (layer and head numbers from 1, with `v`); the
        defaults every page shares (English, presenter mode off) and empty values are left out."""
        values = {}
        for name, spec in SPECS.items():
            value = self.value(spec)
            if value in (None, "", (), []) or (spec is PRESENTER_SPEC and not value) or (
                    spec is LANGUAGE_SPEC and value == LANGUAGE_SPEC.default):
                continue
            if spec.pages and (self.page is None or self.page not in spec.pages):
                continue
            values[name] = link_text(spec, value)
            if spec.counted:
                values["v"] = LINK_VERSION
        return values


@dataclass(frozen=True)
class Resolution:
    """A resolved view and what did not fit in it."""
    view: View
    unfit: tuple[str, ...] = ()  # the names whose values did not fit (unknown, of another page, not offered)
    source: Source = Source.LINK
    elsewhere: Mapping[str, Any] = field(default_factory=dict)  # {widget key: value} a link gave other pages

    @property
    def say_on_screen(self) -> bool:
        """Only a link a person opened names what did not fit; a lesson stop or the teacher's move opens silently."""
        return bool(self.unfit) and self.source is Source.LINK


def from_link_text(spec: WidgetSpec, text: str, one_based: bool) -> str:
    """A link's text in the session's counting: a 1-based layer/head number becomes 0-based."""
    if spec.counted and one_based and text.lstrip("-").isdigit():
        return str(int(text) - 1)
    return text


def link_text(spec: WidgetSpec, value: object) -> str:
    """A value as a link's text (a layer or head number counted from 1)."""
    if spec.counted and isinstance(value, int) and not isinstance(value, bool):
        return str(value + 1)
    return spec_text(spec, value)


def spec_text(spec: WidgetSpec, value: object) -> str:
    if spec.text is not None:
        return spec.text(_thawed(value))
    return str(value).lower() if isinstance(value, bool) else str(value)  # true/false, as parsed


def _thawed(value: Any) -> Any:
    """A frozen control's value as the widget holds it: a list (of tuples, for a list of heads)."""
    return list(value) if isinstance(value, tuple) else value


def parse_named(named: Mapping[str, str], one_based: bool, state: MutableMapping) -> list[str]:
    """Parse each named value into `state` in the specs' order (the model before its layers); -> the names that do
    not fit. one_based: layer/head numbers count from 1 (links with `v`, lesson files), else from 0 (old links)."""
    unfit = []
    for name, spec in SPECS.items():
        if name not in named:
            continue
        try:
            spec.set(spec.parse(from_link_text(spec, named[name], one_based), state), state)
        except (ValueError, KeyError, TypeError):
            unfit.append(name)
    return unfit


def link_values(query: Mapping[str, str]) -> tuple[dict[str, str], bool]:
    """A query string's view values (other parameters, such as the lesson's stop or the class code, are not the
    view's) and whether its layer and head numbers count from 1 (its `v`)."""
    return {name: query[name] for name in SPECS if name in query}, "v" in query


def resolve_view(page: str | None, named: Mapping[str, str], source: Source, current: Mapping[str, Any], *,
                 keep: Collection[str] = (), one_based: bool = True) -> Resolution:
    """The view that `named` (link names -> link text) opens on `page`, given the widgets' values `current` (read,
    never changed): the shared values of `current` and `named`, then the page's values `named` gives, nothing left
    over from `current`. page None: the page the address opens, not known yet when the link is read (its path
    chooses it after the language the page titles are drawn in): nothing is forgotten.

    keep: names whose values in `current` stand although `named` leaves them out (a stop's link that names a head:
    the link was read into `current` first). A link (Source.LINK) may also carry other pages' values (addresses
    written before each page wrote only its own): they are kept for their pages (Resolution.elsewhere), never
    named as unfit; a lesson stop or the teacher's move names its page's values only."""
    state = dict(current)
    for spec in page_specs(page) if page is not None else ():
        if spec.url not in named and spec.url not in keep:
            state.pop(spec.key, None)
    other_page = [name for name in named
                  if page is not None and name in SPECS and SPECS[name].pages and page not in SPECS[name].pages]
    unknown = [name for name in named if name not in SPECS]
    foreign = unknown + ([] if source is Source.LINK else other_page)
    unfit = foreign + parse_named({name: text for name, text in named.items() if name not in foreign}, one_based,
                                  state)
    elsewhere = {SPECS[name].key: state[SPECS[name].key] for name in other_page
                 if source is Source.LINK and name not in unfit and SPECS[name].key in state}
    return Resolution(view_in(page, state), tuple(unfit), source, elsewhere)


def view_in(page: str | None, state: Mapping[str, Any]) -> View:
    """The View that the widgets' values `state` hold for `page`."""
    model = MODEL.get(state)
    # an empty value (no sentence yet, no head switched off) is the page's own default, as a link leaves it out
    controls = {spec.url: spec.get(state) for spec in page_specs(page) + tab_specs()
                if spec.get(state) not in (None, "", [], ())}
    return View(page, model if model is not None else MODEL.initial(state),
                language=state.get(LANGUAGE, LANGUAGE_SPEC.default), presenter=bool(state.get(PRESENTER, False)),
                controls=controls)


def install_view(resolved: Resolution | View, state: MutableMapping[str, Any] | None = None,
                 kept: MutableMapping | None = None) -> None:
    """Write the view into the widgets' values (the session's by default): the one place a resolution changes them.
    A page value the view leaves open is forgotten (and its kept copy, ui/share.keep_view_state's)."""
    state = widget_values() if state is None else state
    view = resolved.view if isinstance(resolved, Resolution) else resolved
    if isinstance(resolved, Resolution):
        state.update(resolved.elsewhere)
    MODEL.set(view.model, state)
    LANGUAGE_SPEC.set(view.language, state)
    PRESENTER_SPEC.set(view.presenter, state)
    for spec in page_specs(view.page) + tab_specs():
        if spec.url in view.controls:
            spec.set(_thawed(view.controls[spec.url]), state)
        elif view.page is not None and spec.pages:
            spec.forget(state)
            if kept is not None:
                kept.pop(spec.key, None)


def current_view(page: str) -> View:
    """The View this run draws `page` from (the session's widget values as they stand)."""
    return view_in(page, widget_values())

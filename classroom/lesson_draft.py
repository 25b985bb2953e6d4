"""A teacher's lesson while she builds it (issue 57): its title and stops as the lesson file's own tables, kept in her
session until she saves it (classroom/saved_lessons.LessonShelf.save), written by classroom/lesson_toml.write_toml.
Pure Python, no Streamlit: the builder's room (ui/lesson_builder/) draws it.

A stop is added from the view on screen: its page, its state as the share link holds it (layer and head 1-based, as
in links and lesson files), a section of that page, a title and a text in English and/or Korean, and optionally a
question: a fixed answer (choice, number, text) or a measure of classroom/measures that answers its kind and reads
only values the page has (fitting_measures), its arguments filled from the view's state where they share a name.
A draft opened from a lesson's TOML keeps every field it has (claims, check questions), so saving it again loses
nothing."""
from __future__ import annotations

import tomllib
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field

from classroom.lesson_toml import write_toml
from classroom.measures import Measure, answering, check_option_count, checked_args
from classroom.saved_lessons import MAX_STOPS

FIXED_KINDS = ("choice", "number", "text")  # a fixed answer the teacher writes
LANGUAGES = ("en", "ko")


def texts(**by_language: str) -> dict[str, str]:
    """A text in the languages written (a blank one left out: the lesson falls back to English)."""
    return {language: text.strip() for language, text in by_language.items() if text and text.strip()}


def lines(text: str) -> list[str]:
    """One option a line, blank lines left out."""
    return [line.strip() for line in text.splitlines() if line.strip()]


def fitting_measures(kind: str | None, page_parameters: Collection[str]) -> dict[str, Measure]:
    """The measures that answer a question of `kind` (None: any) and read only view values the page has (the
    registry's `reads`): those a stop of that page may compute."""
    parameters = set(page_parameters)
    return {name: m for name, m in answering(kind).items() if set(m.reads) <= parameters}


def file_value(text: str) -> object:
    """What the teacher typed for an argument, as the lesson file holds it: a TOML value (3, 0.5, true, [1, 2],
    "a text"), else the text itself."""
    try:
        return tomllib.loads(f"value = {text}")["value"]
    except tomllib.TOMLDecodeError:
        return text


def measure_args(measure: Measure, typed: Mapping[str, str], state: Mapping[str, str],
                 option_count: int = 0) -> dict:
    """A measure's args from what the teacher typed, each one left blank filled from the view's state value of the
    same name (the layer the view shows, its token...); checked against the measure's schema (ValueError naming the
    argument), kept as the file writes them."""
    args = {}
    for arg in measure.args:
        text = (typed.get(arg.name) or "").strip() or state.get(arg.name, "")
        if text:
            args[arg.name] = file_value(text)
    checked_args(measure, args)
    if option_count:
        check_option_count(measure, checked_args(measure, args), option_count)
    return args


def fixed_question(kind: str, prompt: Mapping[str, str], *, options: Mapping[str, list[str]] | None = None,
                   answer: object = None, tolerance: float = 0.0) -> dict:
    """A question with the answer the teacher writes: choice (the right option's number), number (within the
    tolerance), text (the accepted answers by language; none: an open question)."""
    question: dict = {"kind": kind, "prompt": dict(prompt)}
    if kind == "choice":
        question["options"] = {language: list(texts) for language, texts in (options or {}).items() if texts}
    if answer not in (None, "", {}):
        question["answer"] = answer
    if kind == "number" and tolerance:
        question["tolerance"] = tolerance
    return question


def measured_question(measure: Measure, prompt: Mapping[str, str], args: Mapping,
                      options: Mapping[str, list[str]] | None = None) -> dict:
    """A question whose answer the measure computes from the live model at the stop's view."""
    question: dict = {"kind": measure.answers, "prompt": dict(prompt), "compute": measure.name}
    if measure.answers == "choice":
        question["options"] = {language: list(texts) for language, texts in (options or {}).items() if texts}
    if args:
        question["args"] = dict(args)
    return question


def view_stop(page: str, state: Mapping[str, str], section: str | None, title: Mapping[str, str],
              text: Mapping[str, str], question: Mapping | None = None) -> dict:
    """One stop, as a [[stop]] table of the lesson file."""
    stop: dict = {"page": page, "title": dict(title), "text": dict(text) or {"en": ""}, "state": dict(state)}
    if section:
        stop["section"] = section
    if question:
        stop["question"] = dict(question)
    return stop


@dataclass
class Draft:
    """The lesson being built: its title and its stops (each a [[stop]] table), and, once saved or opened from a
    saved lesson, its id and the version it was last saved as."""
    title: dict[str, str] = field(default_factory=dict)
    stops: list[dict] = field(default_factory=list)
    lesson_id: str | None = None
    version: int | None = None

    def source(self) -> str:
        """The lesson file's TOML."""
        return write_toml({"title": dict(self.title) or {"en": ""}, "stop": list(self.stops)})

    def add(self, stop: dict) -> None:
        if len(self.stops) >= MAX_STOPS:
            raise ValueError(f"at most {MAX_STOPS} stops")
        self.stops.append(stop)

    def move(self, index: int, by: int) -> None:
        """Move stop `index` (0-based) up (by = -1) or down (+1); past either end nothing moves."""
        to = index + by
        if 0 <= index < len(self.stops) and 0 <= to < len(self.stops):
            self.stops[index], self.stops[to] = self.stops[to], self.stops[index]

    def remove(self, index: int) -> None:
        if 0 <= index < len(self.stops):
            del self.stops[index]

    @classmethod
    def from_source(cls, source: str, lesson_id: str | None = None, version: int | None = None) -> Draft:
        """A draft of a lesson's TOML (a saved lesson, to save a new version of; a lesson file, to save a copy of)."""
        data = tomllib.loads(source)
        title = data.get("title")
        return cls({"en": title} if isinstance(title, str) else dict(title or {}),
                   [dict(stop) for stop in data.get("stop", [])], lesson_id, version)

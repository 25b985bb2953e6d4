"""Lesson files: TOML in lessons/, read into Lesson objects (pure Python, no Streamlit).

A lesson file holds a title and an ordered list of stops, both languages inside one file (a text is either a
plain string, the same in every language, or a table {en = "...", ko = "..."}; a missing language falls back to
English):

    title = { en = "Attention, from seq2seq to the Transformer", ko = "..." }

    [[stop]]
    page = "attention"                       # the page's url path (the file name in app_pages/, no .py)
    title = { en = "...", ko = "..." }
    text = { en = "Markdown, no HTML", ko = "..." }
    state = { model = "transformer_en-fr", sentence = "the red cat", kind = "cross", layer = 2, head = 1 }
    section = "..."                          # optional: the part of the page the stop is about, shown first when
                                             # the stop opens; a page's ids are SECTIONS in ui/specs/<page>.py
                                             # (softmax_scaling: dot_products, saturation, row); none: the top

    [stop.question]                          # optional, one per stop
    kind = "head"                            # choice | head | number | token | text | cell | view
    prompt = { en = "...", ko = "..." }
    compute = "sharpest_cross_head"          # the right answer from the live model (a measure of classroom/measures
                                             # that answers this kind of question, with the args it declares), or
    answer = "L2 H1"                         # a fixed answer where nothing is computed
    # choice: options = { en = [...], ko = [...] } (answer: 1-based option number); number: tolerance = 0.01
    # cell (tap a cell of an attention map, its weights hidden): compute = a measure that gives the map (attention_cell:
    # the attention page's kind/layer/head; decoding_cross_cell; induction_copy_cell), row = "it" (the query token,
    # its first occurrence, or its 1-based position: tap a key of that row), top = 2 (the largest cells counted
    # right; default 1, the argmax); answer = "9,3" fixes the right cell (1-based query,key) instead
    margin = 0.05                            # computed answers: the least gap the lesson promises between the
                                             # accepted answer and the best rejected one, in the measure's units
                                             # (tests/test_question_rules.py measures it on the shipped models)
    peer = true                              # optional: in a live class, peer instruction by default (vote alone,
                                             # discuss, vote again; the teacher may still choose one round)
    misconceptions = { "2" = { en = "attention weight = importance", ko = "..." } }
                                             # optional: a wrong answer (choice: its option number; number: its value,
                                             # within the tolerance) -> the idea it catches (the class report counts it)

    # text: a prompt and optionally `answer = { en = ["keys"], ko = ["키"] }`, the accepted answers (right after
    # NFKC, case and space normalisation; none: neither right nor wrong); one round, moderated before the room sees
    # any (classroom/text_answers.py)
    # view (explain with a view): a prompt only; the page shows while it is asked, the student sets it and sends the
    # view's link, neither right nor wrong; the teacher may project one without a name (classroom/showcase.py)

    [[stop.check]]                           # optional, first and last stop only: a check question of the lecture
    id = "scale"                             # pairs a pre question with the post question of the same id
    check = "pre"                            # "pre" (first stop: before the lecture) or "post" (last stop: after)
    kind = "choice"                          # choice or number, with a fixed answer (no compute: no model needed)
    prompt = ...; options = ...; answer = 2; misconceptions = ...   # as a question's

    [[stop.claim]]                           # optional, any number: a fact the text states, measured live
    measure = "position_share"               # a measure of classroom/measures that a claim may bound
    args = { kind = "encoder_self", layer = 1, head = "max", offset = -1 }
    at_most = 0.5                            # the bound the figure must keep: at_least and/or at_most
    format = "number"                        # how the figure is written: number (0.62) | percent (62%) | count (6)
    text = { en = "the layer-1 head that looks most at the previous word puts {value} on it", ko = "..." }

A claim is shown under the stop's text with its figure, ✓ when it holds on the model the stop shows, ✗ when not
(ui/lessons/claims.py); tests/test_lesson_claims.py checks every claim of every shipped lesson. Layer and head
numbers in args are 1-based, as on screen; a head may be "max" or "min" (over the layer's heads).

`state` holds the view state as share-link parameters: the names and the text ui/share.py puts in the
URL, one per widget spec in ui/specs/ (values may be TOML numbers or booleans; they are turned into the URL's text).
Layer and head numbers are written as shown on screen: 1-based (layer = 1 is the first layer).

Every field's type is checked (texts, numbers finite, a fixed answer of its kind's shape: choice an option number,
head "L2 H1", number a number, token a text; a compute only for the kind its measure answers, with the args its
schema declares: classroom/measures is the one list of measures and of their arguments).
A file that cannot be read (TOML syntax, no stops, stops that are not tables, a title that is not a text) becomes a
LessonFileError naming the file and the line;
a stop with a problem (unknown page or section, a question that does not fit) keeps its place and carries the problem,
so the lesson bar shows it at that stop and the rest of the lesson works.
"""
from __future__ import annotations

import os
import re
import tomllib
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

from classroom.lesson_questions import (CHECK_KINDS, CHECK_WHEN, OWN_WORK_KINDS, QUESTION_KINDS, Check,  # noqa: F401
                                        Question, Text, check_question_id, finite_field, misconception_of, read_check,
                                        read_question, table_naming, text_field)
from classroom.measures import bounding, checked_args

LESSONS = Path(__file__).resolve().parents[1] / "lessons"
LESSONS_ENV = "ATTENTION_LAB_LESSONS"  # another folder of lesson files (default: lessons/ beside app.py)
CLAIM_FORMATS = ("number", "percent", "count")
_STOP_HEADER = re.compile(r"^\s*\[\[\s*stop\s*\]\]")
_TOML_LINE = re.compile(r"line (\d+)")


class LessonFileError(ValueError):
    def __init__(self, file: str, line: int | None, reason: str):
        self.file, self.line, self.reason = file, line, reason
        super().__init__(f"{file}, line {line}: {reason}" if line else f"{file}: {reason}")

    def __reduce__(self):  # picklable (st.cache_data keeps the list of errors)
        return LessonFileError, (self.file, self.line, self.reason)


@dataclass(frozen=True)
class Claim:
    measure: str
    text: Text  # each language's text holds {value}, the measured figure
    args: dict = field(default_factory=dict)  # layer/head 0-based here (1-based in the file), "max"/"min" heads
    at_least: float | None = None
    at_most: float | None = None
    format: str = "number"


@dataclass(frozen=True)
class Stop:
    number: int  # 1-based
    line: int | None  # line of its [[stop]] header in the file
    page: str
    title: Text
    text: Text
    state: dict[str, str]  # share-link parameter -> URL text
    question: Question | None = None
    problem: str | None = None  # why this stop cannot be shown as written (shown at the stop)
    section: str | None = None  # the section of its page it is about (shown first), or the whole page
    claims: tuple[Claim, ...] = ()
    checks: tuple[Check, ...] = ()  # check questions (first stop: "pre", last stop: "post")


@dataclass(frozen=True)
class Lesson:
    id: str  # the file name without .toml (the ?lesson= value)
    title: Text
    stops: list[Stop]
    version: int | None = None  # a teacher's saved lesson: its version (classroom/saved_lessons.py); None: a file


def question_id(lesson_id: str, stop: Stop) -> str:
    """The id a stop's question is stored, revealed and answered under: "<lesson>:<stop number>"."""
    return f"{lesson_id}:{stop.number}"


def localized(text: Text | str | None, language: str) -> str:
    if text is None:
        return ""
    if isinstance(text, str):
        return text
    return text.get(language) or text.get("en") or next(iter(text.values()), "")


def _url_text(value: object) -> str:
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, (int, float)):
        finite_field(value, "a state number")
        return str(value)
    if isinstance(value, str):
        return value
    raise ValueError(f"state values must be texts, numbers or true/false, not {type(value).__name__}")


def _claim(raw: object) -> Claim:
    if not isinstance(raw, dict):
        raise ValueError("each claim must be a table ([[stop.claim]])")  # noqa: TRY004
    measures = bounding()
    raw, measure = table_naming(raw, "claim", "measure", measures)
    text = text_field(raw.get("text"), "claim text")
    if not all("{value}" in t for t in text.values()):
        raise ValueError("a claim's text must show its figure: write {value} in every language")
    bounds = {name: finite_field(raw[name], f"claim {name}") for name in ("at_least", "at_most") if name in raw}
    if not bounds:
        raise ValueError("a claim needs a bound: at_least, at_most or both")
    form = raw.get("format", "number")
    if form not in CLAIM_FORMATS:
        raise ValueError(f"claim format must be one of {', '.join(CLAIM_FORMATS)}")
    return Claim(measure, text, checked_args(measures[measure], raw.get("args", {}), "claim args"), bounds.get("at_least"),
                 bounds.get("at_most"), form)


def _stop_lines(source: str) -> list[int]:
    return [i + 1 for i, line in enumerate(source.splitlines()) if _STOP_HEADER.match(line)]


def _key_line(source: str, key: str) -> int | None:
    """The line where a top-level key is given (`key = ...`, `[key]`, `[[key]]`), if it is written plainly."""
    pattern = re.compile(rf"^\s*(\[\[?\s*)?[\"']?{re.escape(key)}[\"']?\s*(=|\]|\.)")
    return next((i + 1 for i, line in enumerate(source.splitlines()) if pattern.match(line)), None)


def _section(raw: object, page: str, sections: Collection[str]) -> str | None:
    """A stop's `section`: one of its page's section ids, or None (the whole page)."""
    if raw is None:
        return None
    if not isinstance(raw, str):
        raise ValueError("section must be the text id of one of the page's sections")  # noqa: TRY004
    if raw not in sections:
        named = f"sections: {', '.join(sections)}" if sections else "it has no sections"
        raise ValueError(f"unknown section {raw!r} of page {page!r} ({named})")
    return raw


def _stop(number: int, line: int | None, raw: dict, known_pages: Mapping[str, Collection[str]],
          last: int = 0) -> Stop:
    """One [[stop]] table (`last`: the number of the lesson's last stop); a problem in it is kept at the stop (the
    rest of the lesson works)."""
    page = raw.get("page", "")
    page_name = page if isinstance(page, str) else ""
    problem, question, section, claims, checks = None, None, None, (), ()
    stop_title, text, state = {"en": page_name or f"{number}"}, {"en": ""}, {}
    try:
        stop_title = text_field(raw.get("title", page_name or f"{number}"), "title")
        text = text_field(raw.get("text", ""), "text")
        if not isinstance(page, str):
            raise ValueError("page must be the text name of one of the app's pages")  # noqa: TRY004
        if page not in known_pages:
            raise ValueError(f"unknown page {page!r} (pages: {', '.join(sorted(known_pages))})")
        section = _section(raw.get("section"), page, known_pages[page])
        raw_state = raw.get("state", {})
        if not isinstance(raw_state, dict):
            raise ValueError("state must be a table of share-link parameters")  # noqa: TRY004
        state = {name: _url_text(value) for name, value in raw_state.items()}
        if "question" in raw:
            question = read_question(raw["question"])
        raw_claims = raw.get("claim", [])
        if not isinstance(raw_claims, list):
            raise ValueError("claims are written [[stop.claim]], one table each")  # noqa: TRY004
        claims = tuple(_claim(item) for item in raw_claims)
        raw_checks = raw.get("check", [])
        if not isinstance(raw_checks, list):
            raise ValueError("check questions are written [[stop.check]], one table each")  # noqa: TRY004
        checks = tuple(read_check(item, number, last) for item in raw_checks)
        ids = [(c.id, c.when) for c in checks]
        if len(set(ids)) != len(ids):
            raise ValueError("two check questions of a stop have the same id")
    except ValueError as error:
        problem, question, section, claims, checks = str(error), None, None, (), ()
    return Stop(number, line, page_name, stop_title, text, state, question, problem, section, claims, checks)


def _pair_checks(stops: list[Stop]) -> list[Stop]:
    """Every post check question needs the pre one of its id (the gain compares them): the last stop says so."""
    pre = {c.id for c in stops[0].checks if c.when == "pre"}
    unpaired = [c.id for c in stops[-1].checks if c.when == "post" and c.id not in pre]
    if not unpaired:
        return stops
    problem = (f"post check question {', '.join(map(repr, unpaired))} has no pre question of the same id on the "
               "first stop")
    return [*stops[:-1], replace(stops[-1], problem=problem, question=None, section=None, claims=(), checks=())]


def _answered_early(stops: list[Stop]) -> list[Stop]:
    """A stop's own section is never held back for a later question (classroom/answers_ahead.py: its question hides
    it until answered): a later question about the same section of the same page in the same view would have its
    answer on that earlier stop's page. Such a later stop says so, and which stop gives it away."""
    checked = []
    for stop in stops:
        earlier = next((e for e in checked if stop.question is not None and stop.section is not None
                        and (e.page, e.section, e.state) == (stop.page, stop.section, stop.state)), None)
        if earlier is not None:
            stop = replace(stop, problem=f"its question is about the {stop.section!r} section of {stop.page!r} in the "
                                         f"same view as stop {earlier.number}, whose page shows that section first: "
                                         "it gives the answer away; give this stop its own view (state) or section",
                           question=None, claims=())
        checked.append(stop)
    return checked


def parse_lesson(lesson_id: str, source: str, known_pages: Mapping[str, Collection[str]]) -> Lesson:
    """Read one lesson's TOML text. Raises LessonFileError for a file that cannot be used at all.

    known_pages: {page: its section ids, in page order} (ui/lessons/catalogue.known_pages)."""
    file = f"{lesson_id}.toml"
    try:
        data = tomllib.loads(source)
    except tomllib.TOMLDecodeError as error:
        match = _TOML_LINE.search(str(error))
        line = int(match.group(1)) if match else (
            max(1, len(source.rstrip().splitlines())) if "end of document" in str(error) else None)
        raise LessonFileError(file, line, str(error)) from None
    except (ValueError, RecursionError) as error:  # TOML that Python cannot hold: a 5000-digit integer, deep nesting
        reason = "nested too deeply" if isinstance(error, RecursionError) else str(error)
        raise LessonFileError(file, None, reason) from None
    try:
        title = text_field(data.get("title"), "title")
    except ValueError as error:
        raise LessonFileError(file, _key_line(source, "title"), str(error)) from None
    raw_stops = data.get("stop")
    if not isinstance(raw_stops, list) or not raw_stops:
        raise LessonFileError(file, _key_line(source, "stop"), "a lesson needs at least one [[stop]]")
    if not all(isinstance(raw, dict) for raw in raw_stops):
        raise LessonFileError(file, _key_line(source, "stop"),
                              "each stop must be a table: write [[stop]] and its fields below it, not a list of texts")
    lines = _stop_lines(source)
    stops = [_stop(index + 1, lines[index] if index < len(lines) else None, raw, known_pages, len(raw_stops))
             for index, raw in enumerate(raw_stops)]
    return Lesson(lesson_id, title, _answered_early(_pair_checks(stops)))


# The shipped lessons in the order a course teaches them (the Teacher page's list, its first one preselected); any
# other lesson file follows, by name.
COURSE = ("intro", "llm", "answer")


def lessons_folder() -> Path:
    return Path(os.environ.get(LESSONS_ENV) or LESSONS)


def load_lessons(known_pages: Mapping[str, Collection[str]], folder: Path | None = None,
                 saved: Mapping[str, tuple[int, str]] | None = None) -> tuple[dict[str, Lesson], list[LessonFileError]]:
    """Every lesson file in the folder -> ({lesson id: Lesson} in COURSE order, then by name; errors of the files
    that could not be read). `saved`: the teachers' lessons, {id: (version, TOML)} (classroom/saved_lessons.py),
    after the files; a saved id never shadows a file's."""
    folder = folder or lessons_folder()
    lessons, errors = {}, []
    paths = sorted(folder.glob("*.toml"), key=lambda path: (
        COURSE.index(path.stem) if path.stem in COURSE else len(COURSE), path.name))
    for path in paths:
        try:
            lessons[path.stem] = parse_lesson(path.stem, path.read_text(encoding="utf-8"), known_pages)
        except LessonFileError as error:
            errors.append(error)
        except UnicodeDecodeError:
            errors.append(LessonFileError(path.name, None, "not UTF-8 text"))
        except OSError as error:  # a folder named *.toml, a file removed or unreadable
            errors.append(LessonFileError(path.name, None, f"cannot be read ({error.strerror or error})"))
    files = {path.stem for path in paths}
    for lesson_id, (version, source) in (saved or {}).items():
        if lesson_id in files:
            continue
        try:
            lessons[lesson_id] = replace(parse_lesson(lesson_id, source, known_pages), version=version)
        except LessonFileError as error:  # checked when saved; an update of the app may have dropped a page since
            errors.append(error)
    return lessons, errors

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
    kind = "head"                            # choice | head | number | token
    prompt = { en = "...", ko = "..." }
    compute = "sharpest_cross_head"          # the right answer from the live model (see COMPUTED), or
    answer = "L2 H1"                         # a fixed answer where nothing is computed
    # choice: options = { en = [...], ko = [...] } (answer: 1-based option number); number: tolerance = 0.01

`state` holds the view state as share-link parameters: the names and the text ui/share.py puts in the
URL, one per widget spec in ui/specs/ (values may be TOML numbers or booleans; they are turned into the URL's text).
Layer and head numbers are written as shown on screen: 1-based (layer = 1 is the first layer).

A file that cannot be read (TOML syntax, no stops) becomes a LessonFileError naming the file and the line;
a stop with a problem (unknown page or section, a question that does not fit) keeps its place and carries the problem,
so the lesson bar shows it at that stop and the rest of the lesson works.
"""
from __future__ import annotations

import os
import re
import tomllib
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from pathlib import Path

LESSONS = Path(__file__).resolve().parents[1] / "lessons"
LESSONS_ENV = "ATTENTION_LAB_LESSONS"  # another folder of lesson files (default: lessons/ beside app.py)
QUESTION_KINDS = ("choice", "head", "number", "token")
# compute names a question may use; ui/lesson_questions.py maps each to a function of model/questions.py
COMPUTED = ("sharpest_cross_head", "head_linking", "alignment_source_token", "softmax_weight",
            "lowest_long_sentence_model", "causal_visible_keys")
_STOP_HEADER = re.compile(r"^\s*\[\[\s*stop\s*\]\]")
_TOML_LINE = re.compile(r"line (\d+)")


class LessonFileError(ValueError):
    def __init__(self, file: str, line: int | None, reason: str):
        self.file, self.line, self.reason = file, line, reason
        super().__init__(f"{file}, line {line}: {reason}" if line else f"{file}: {reason}")

    def __reduce__(self):  # picklable (st.cache_data keeps the list of errors)
        return LessonFileError, (self.file, self.line, self.reason)


Text = dict[str, str]  # language -> text


@dataclass(frozen=True)
class Question:
    kind: str
    prompt: Text
    options: dict[str, list[str]] = field(default_factory=dict)  # choice: language -> option labels
    answer: object = None  # fixed answer (choice: 1-based option number; head: "L2 H3"; number; token text)
    compute: str | None = None
    args: dict = field(default_factory=dict)
    tolerance: float = 0.0


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


@dataclass(frozen=True)
class Lesson:
    id: str  # the file name without .toml (the ?lesson= value)
    title: Text
    stops: list[Stop]


def localized(text: Text | str | None, language: str) -> str:
    if text is None:
        return ""
    if isinstance(text, str):
        return text
    return text.get(language) or text.get("en") or next(iter(text.values()), "")


def _text(value: object, what: str) -> Text:
    if isinstance(value, str):
        return {"en": value}
    if isinstance(value, dict) and value and all(isinstance(v, str) for v in value.values()):
        return dict(value)
    raise ValueError(f"{what} must be a text or a table of texts by language")


def _url_text(value: object) -> str:
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, (int, float, str)):
        return str(value)
    raise ValueError(f"state values must be texts, numbers or true/false, not {type(value).__name__}")


def _question(raw: object) -> Question:
    if not isinstance(raw, dict):
        raise ValueError("question must be a table")
    kind = raw.get("kind")
    if kind not in QUESTION_KINDS:
        raise ValueError(f"question kind {kind!r} is not one of {', '.join(QUESTION_KINDS)}")
    compute, answer = raw.get("compute"), raw.get("answer")
    if compute is None and answer is None:
        raise ValueError("question needs an answer or a compute")
    if compute is not None and compute not in COMPUTED:
        raise ValueError(f"compute {compute!r} is not one of {', '.join(COMPUTED)}")
    options: dict[str, list[str]] = {}
    if kind == "choice":
        raw_options = raw.get("options")
        if isinstance(raw_options, list):
            raw_options = {"en": raw_options}
        if not isinstance(raw_options, dict) or not raw_options or not all(
                isinstance(o, list) and len(o) >= 2 and all(isinstance(x, str) for x in o)
                for o in raw_options.values()):
            raise ValueError("a choice question needs options: a list of at least two texts (per language)")
        if len({len(o) for o in raw_options.values()}) != 1:
            raise ValueError("every language needs the same number of options")
        options = dict(raw_options)
        count = len(next(iter(options.values())))
        if answer is not None and not (isinstance(answer, int) and 1 <= answer <= count):
            raise ValueError(f"a choice answer is an option number from 1 to {count}")
    tolerance = raw.get("tolerance", 0.0)
    if not isinstance(tolerance, (int, float)) or tolerance < 0:
        raise ValueError("tolerance must be a number >= 0")
    args = raw.get("args", {})
    if not isinstance(args, dict):
        raise ValueError("args must be a table")
    return Question(kind, _text(raw.get("prompt"), "prompt"), options, answer, compute, dict(args), float(tolerance))


def _stop_lines(source: str) -> list[int]:
    return [i + 1 for i, line in enumerate(source.splitlines()) if _STOP_HEADER.match(line)]


def _section(raw: object, page: str, sections: Collection[str]) -> str | None:
    """A stop's `section`: one of its page's section ids, or None (the whole page)."""
    if raw is None:
        return None
    if not isinstance(raw, str):
        raise ValueError("section must be the text id of one of the page's sections")
    if raw not in sections:
        named = f"sections: {', '.join(sections)}" if sections else "it has no sections"
        raise ValueError(f"unknown section {raw!r} of page {page!r} ({named})")
    return raw


def parse_lesson(lesson_id: str, source: str, known_pages: Mapping[str, Collection[str]]) -> Lesson:
    """Read one lesson's TOML text. Raises LessonFileError for a file that cannot be used at all.

    known_pages: {page: its section ids, in page order} (ui/lesson_bar.known_pages)."""
    file = f"{lesson_id}.toml"
    try:
        data = tomllib.loads(source)
    except tomllib.TOMLDecodeError as error:
        match = _TOML_LINE.search(str(error))
        line = int(match.group(1)) if match else (
            max(1, len(source.rstrip().splitlines())) if "end of document" in str(error) else None)
        raise LessonFileError(file, line, str(error)) from None
    try:
        title = _text(data.get("title"), "title")
    except ValueError as error:
        raise LessonFileError(file, None, str(error)) from None
    raw_stops = data.get("stop")
    if not isinstance(raw_stops, list) or not raw_stops:
        raise LessonFileError(file, None, "a lesson needs at least one [[stop]]")
    lines = _stop_lines(source)
    stops = []
    for index, raw in enumerate(raw_stops):
        line = lines[index] if index < len(lines) else None
        page, problem, question, section = str(raw.get("page", "")), None, None, None
        stop_title, text, state = {"en": page}, {"en": ""}, {}
        try:
            stop_title = _text(raw.get("title", page), "title")
            text = _text(raw.get("text", ""), "text")
            if page not in known_pages:
                raise ValueError(f"unknown page {page!r} (pages: {', '.join(sorted(known_pages))})")
            section = _section(raw.get("section"), page, known_pages[page])
            raw_state = raw.get("state", {})
            if not isinstance(raw_state, dict):
                raise ValueError("state must be a table of share-link parameters")
            state = {name: _url_text(value) for name, value in raw_state.items()}
            if "question" in raw:
                question = _question(raw["question"])
        except ValueError as error:
            problem = str(error)
        stops.append(Stop(index + 1, line, page, stop_title, text, state, question, problem, section))
    return Lesson(lesson_id, title, stops)


def lessons_folder() -> Path:
    return Path(os.environ.get(LESSONS_ENV) or LESSONS)


def load_lessons(known_pages: Mapping[str, Collection[str]], folder: Path | None = None) -> tuple[dict[str, Lesson], list[LessonFileError]]:
    """Every lesson file in the folder -> ({lesson id: Lesson}, errors of the files that could not be read)."""
    folder = folder or lessons_folder()
    lessons, errors = {}, []
    for path in sorted(folder.glob("*.toml")):
        try:
            lessons[path.stem] = parse_lesson(path.stem, path.read_text(encoding="utf-8"), known_pages)
        except (LessonFileError, UnicodeDecodeError) as error:
            errors.append(error if isinstance(error, LessonFileError)
                          else LessonFileError(path.name, None, "not UTF-8 text"))
    return lessons, errors

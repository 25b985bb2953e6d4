"""A lesson file's questions (a stop's question and the lecture's check questions), read and checked field by field
(pure Python, no Streamlit): the file format is in classroom/lessons.py, which reads the rest of the file."""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

from classroom.measures import answering, check_option_count, checked_args
from classroom.measures.registry import finite_number
from classroom.text_answers import text_key, text_problem

QUESTION_KINDS = ("choice", "head", "number", "token", "text", "cell", "view")
# The students' own work: a text in their words, a view of a page they set (explain with a view). No page gives such
# an answer away (classroom/answers_ahead.py holds nothing back for them), and they are asked in one round.
OWN_WORK_KINDS = ("text", "view")
CHECK_WHEN = ("pre", "post")
CHECK_KINDS = ("choice", "number")  # check questions need no model: a fixed answer
_CHECK_ID = re.compile(r"[a-z0-9_-]{1,40}")

Text = dict[str, str]  # language -> text


@dataclass(frozen=True)
class Question:
    kind: str
    prompt: Text
    options: dict[str, list[str]] = field(default_factory=dict)  # choice: language -> option labels
    answer: object = None  # fixed answer (choice: 1-based option number; head: "L2 H3"; number; token text; cell "9,3";
    # text: the accepted answers by language, {"en": ("key", ...)}, or None: an open question, neither right nor wrong)
    compute: str | None = None
    args: dict = field(default_factory=dict)
    tolerance: float = 0.0
    margin: float = 0.0  # the least gap between the accepted answers and the best rejected one (0: none stated)
    peer: bool = False  # peer instruction by default in a live class (vote, discuss, vote again)
    misconceptions: dict[str, Text] = field(default_factory=dict)  # wrong answer (canonical text) -> the idea it catches
    row: int | str | None = None  # cell: the query row the student taps a key of (its token's text or 1-based position)
    top: int = 1  # cell: the largest cells of the map (or of the row) counted right


@dataclass(frozen=True)
class Check:
    """A check question of the lecture: asked at the first stop ("pre") and again, the same or a parallel one with
    the same id, at the last stop ("post"); the class report's normalized gain pairs them (Hake 1998)."""
    id: str
    when: str  # "pre" or "post"
    question: Question


# A field that does not fit raises ValueError (TypeError included, hence the noqa: TRY004): classroom/lessons._stop
# keeps it as the stop's problem, parse_lesson turns one in the file's head into a LessonFileError.
def text_field(value: object, what: str) -> Text:
    if isinstance(value, str):
        return {"en": value}
    if isinstance(value, dict) and value and all(isinstance(v, str) for v in value.values()):
        return dict(value)
    raise ValueError(f"{what} must be a text or a table of texts by language")


def finite_field(value: object, what: str) -> float:
    """A TOML number (not true/false) that is finite as a float (the registry's check, with what the file calls it)."""
    try:
        return finite_number(value)
    except ValueError:
        raise ValueError(f"{what} must be a finite number") from None


_HEAD = re.compile(r"L[1-9]\d* H[1-9]\d*")
_CELL = re.compile(r"[1-9]\d{0,4},[1-9]\d{0,4}")


def _fixed_answer(kind: str, answer: object, option_count: int) -> object:
    """A question's fixed answer, of the shape its kind needs."""
    if kind == "choice":
        if isinstance(answer, int) and not isinstance(answer, bool) and 1 <= answer <= option_count:
            return answer
        raise ValueError(f"a choice answer is an option number from 1 to {option_count}")
    if kind == "number":
        finite_field(answer, "a number question's answer")
        return answer
    if kind == "head":
        if isinstance(answer, str) and _HEAD.fullmatch(answer):
            return answer
        raise ValueError('a head answer is written as on screen, e.g. "L2 H1"')
    if kind == "cell":
        if isinstance(answer, str) and _CELL.fullmatch(answer):
            return answer
        raise ValueError('a cell answer is its 1-based query and key positions, e.g. "9,3"')
    if isinstance(answer, str) and answer:
        return answer
    raise ValueError("a token answer is the token's text")


def table_naming(raw: object, what: str, field: str, known) -> tuple[dict, str]:
    """-> (raw, raw[field]) when raw is a table whose `field` names one of `known`; else ValueError saying which."""
    if not isinstance(raw, dict):
        raise ValueError(f"{what} must be a table")  # noqa: TRY004
    value = raw.get(field)
    if not isinstance(value, str) or value not in known:
        raise ValueError(f"{what.split()[-1]} {field} {value!r} is not one of {', '.join(known)}")
    return raw, value


def _accepted_texts(answer: object) -> dict[str, tuple[str, ...]]:
    """A text question's accepted answers: a text, a list of texts, or a table of them by language."""
    by_language = answer if isinstance(answer, dict) else {"en": answer}
    accepted = {}
    for language, texts in by_language.items():
        texts = [texts] if isinstance(texts, str) else texts
        if not isinstance(texts, list) or not texts or not all(isinstance(t, str) for t in texts):
            raise ValueError("a text question's answer is the accepted answers: a text or a list of texts (per "
                             "language)")
        for text in texts:
            if text_problem(text):
                raise ValueError(f"accepted answer {text!r} is blank or longer than a student may type")
        accepted[language] = tuple(texts)
    return accepted


def _text_question(raw: dict) -> Question:
    """kind = "text": a prompt, optionally the accepted answers (`answer`); asked in one round, nothing computed."""
    unknown = sorted(set(raw) - {"kind", "prompt", "answer"})
    if unknown:
        raise ValueError(f"a text question takes a prompt and optionally its accepted answers, not {', '.join(unknown)}")
    answer = None if raw.get("answer") is None else _accepted_texts(raw["answer"])
    return Question("text", text_field(raw.get("prompt"), "prompt"), answer=answer)


def _view_question(raw: dict) -> Question:
    """kind = "view" (explain with a view): a prompt only; the student sends the link of the view she set on the stop's
    page (classroom/showcase.view_link), neither right nor wrong, asked in one round."""
    unknown = sorted(set(raw) - {"kind", "prompt"})
    if unknown:
        raise ValueError(f"a view question (explain with a view) takes a prompt only, not {', '.join(unknown)}")
    return Question("view", text_field(raw.get("prompt"), "prompt"))


def shows_page_while_asked(question: Question) -> bool:
    """Whether the stop's page shows while its question is asked: a view question's answer is a view of that page."""
    return question.kind == "view"


def accepted_keys(question: Question) -> frozenset[str]:
    """A text question's accepted answers as groups (classroom/text_answers.text_key), every language's together."""
    return frozenset(text_key(text) for texts in (question.answer or {}).values() for text in texts)


def read_question(raw: object) -> Question:
    raw, kind = table_naming(raw, "question", "kind", QUESTION_KINDS)
    if kind == "text":
        return _text_question(raw)
    if kind == "view":
        return _view_question(raw)
    compute, answer = raw.get("compute"), raw.get("answer")
    if compute is None and answer is None:
        raise ValueError("question needs an answer or a compute")
    computes = answering()
    if compute is not None and (not isinstance(compute, str) or compute not in computes):
        raise ValueError(f"compute {compute!r} is not one of {', '.join(computes)}")
    if compute is not None and computes[compute].answers != kind:
        raise ValueError(f"compute {compute!r} answers a {computes[compute].answers} question, not a {kind} question")
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
    count = len(next(iter(options.values()))) if options else 0
    if answer is not None:
        answer = _fixed_answer(kind, answer, count)
    tolerance = raw.get("tolerance", 0.0)
    if finite_field(tolerance, "tolerance") < 0:
        raise ValueError("tolerance must be a number >= 0")
    args = {}
    if compute:
        args = checked_args(computes[compute], raw.get("args", {}))
        check_option_count(computes[compute], args, count)
    margin = raw.get("margin", 0.0)
    if finite_field(margin, "margin") < 0:
        raise ValueError("margin must be a number >= 0")
    peer = raw.get("peer", False)
    if not isinstance(peer, bool):
        raise ValueError("peer must be true or false (peer instruction by default in a live class)")
    misconceptions = _misconceptions(kind, raw.get("misconceptions", {}), count, answer, float(tolerance))
    row, top = _cell_fields(kind, raw, compute, answer)
    return Question(kind, text_field(raw.get("prompt"), "prompt"), options, answer, compute, args, float(tolerance),
                    float(margin), peer, misconceptions, row, top)


def _cell_fields(kind: str, raw: dict, compute: object, answer: object) -> tuple[int | str | None, int]:
    """A cell question's row and top (the map is its compute's: a cell question needs one, even with a fixed cell)."""
    row, top = raw.get("row"), raw.get("top", 1)
    if kind != "cell":
        if "row" in raw or "top" in raw:
            raise ValueError("row and top are for cell questions")
        return None, 1
    if compute is None:
        raise ValueError("a cell question needs a compute: the measure that gives its map (answer may fix the cell)")
    if row is not None and not ((isinstance(row, str) and row) or (
            isinstance(row, int) and not isinstance(row, bool) and row >= 1)):
        raise ValueError("row must be the query token's text or its 1-based position")
    if not isinstance(top, int) or isinstance(top, bool) or not 1 <= top <= 10:
        raise ValueError("top must be a whole number from 1 to 10 (the largest cells counted right)")
    if answer is not None and isinstance(row, int) and int(str(answer).split(",")[0]) != row:
        raise ValueError(f"the cell answer {answer!r} is not on row {row}")
    return row, top


def _misconceptions(kind: str, raw: object, option_count: int, answer: object, tolerance: float) -> dict[str, Text]:
    """{wrong answer: the idea it catches}: a choice's option number or a number question's value (as text)."""
    if not isinstance(raw, dict):
        raise ValueError("misconceptions must be a table: wrong answer = the idea it catches")  # noqa: TRY004
    if raw and kind not in ("choice", "number"):
        raise ValueError("misconceptions are for choice and number questions")
    tagged = {}
    for key, text in raw.items():
        if kind == "choice":
            if not (re.fullmatch(r"[0-9]{1,3}", key) and 1 <= int(key) <= option_count):
                raise ValueError(f"misconception {key!r}: a choice's wrong option number, from 1 to {option_count}")
            if answer is not None and int(key) == answer:
                raise ValueError(f"misconception {key!r} is the right answer")
        else:
            try:
                value = float(key)
            except ValueError:
                value = math.nan
            if not math.isfinite(value):
                raise ValueError(f"misconception {key!r}: a number question's wrong value")
            if answer is not None and abs(value - float(answer)) <= tolerance + 1e-9:
                raise ValueError(f"misconception {key!r} is the right answer")
        tagged[key] = text_field(text, f"misconception {key!r}")
    return tagged


def misconception_of(question: Question, answer: str) -> str | None:
    """The misconception key a canonical answer falls under (a number within the question's tolerance), or None."""
    if question.kind == "number":
        try:
            value = float(answer)
        except ValueError:
            return None
        return next((key for key in question.misconceptions
                     if abs(float(key) - value) <= question.tolerance + 1e-9), None)
    return answer if answer in question.misconceptions else None


def check_question_id(lesson_id: str, when: str, check_id: str) -> str:
    """The store's question id of a check question: 'intro:pre:scale' (the class report pairs pre and post by id)."""
    return f"{lesson_id}:{when}:{check_id}"


def read_check(raw: object, number: int, last: int) -> Check:
    if not isinstance(raw, dict):
        raise ValueError("each check question is a table ([[stop.check]])")  # noqa: TRY004
    check_id, when = raw.get("id"), raw.get("check")
    if not isinstance(check_id, str) or not _CHECK_ID.fullmatch(check_id):
        raise ValueError("a check question needs an id: lower-case letters, digits, - or _ (pairs pre with post)")
    if when not in CHECK_WHEN:
        raise ValueError(f'check question {check_id!r}: check must be "pre" or "post"')
    if (when == "pre" and number != 1) or (when == "post" and number != last):
        raise ValueError(f'check question {check_id!r}: "pre" goes on the first stop, "post" on the last stop')
    fields = {k: v for k, v in raw.items() if k not in ("id", "check")}
    if fields.get("kind") not in CHECK_KINDS or "compute" in fields:
        raise ValueError(f"check question {check_id!r}: kind choice or number, with a fixed answer")
    if "answer" not in fields:
        raise ValueError(f"check question {check_id!r} needs its answer")
    try:
        question = read_question(fields)
    except ValueError as error:  # say which check question
        raise ValueError(f"check question {check_id!r}: {error}") from None
    return Check(check_id, when, question)

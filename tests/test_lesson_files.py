"""Lesson files of any shape: whatever parses as TOML but is not a lesson is listed as a problem with its file and
line, never an exception; the other lessons and every page keep working (classroom/lessons.py, ui/lesson_bar/bar.py)."""
import json
import math
import re
import tempfile
import tomllib
from datetime import UTC, date, datetime
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from classroom.lessons import (
    QUESTION_KINDS,
    Lesson,
    LessonFileError,
    load_lessons,
    parse_lesson,
)
from tests.app_links import assert_healthy, open_from_link
from ui.lessons.catalogue import known_pages

PAGES = known_pages()
GOOD = """title = { en = "Good", ko = "좋음" }

[[stop]]
page = "softmax_scaling"
state = { dk = 16 }
text = "Look."
"""
# A lesson that uses every field, as a value: the near-valid documents below change one field of it.
VALID = {
    "title": {"en": "Every field", "ko": "모든 칸"},
    "stop": [
        {"page": "softmax_scaling", "title": "Scaling", "text": {"en": "Look.", "ko": "보세요."},
         "state": {"dk": 64, "v1x": 10, "scale": 1.0}, "section": "saturation",
         "question": {"kind": "number", "prompt": {"en": "Weight?", "ko": "가중치?"}, "compute": "softmax_weight",
                      "args": {"scores": [0.3, 0.4], "index": 2, "factor_param": "v1x"}, "tolerance": 0.01}},
        {"page": "compare", "title": "Choice", "state": {"sentence": "i am a student", "compare_len": 24},
         "question": {"kind": "choice", "prompt": "Which?", "options": {"en": ["a", "b"], "ko": ["가", "나"]},
                      "answer": 2}},
        {"page": "attention", "state": {"model": "transformer_en-fr", "sentence": "the red cat", "layer": 1},
         "question": {"kind": "head", "prompt": "Which head?", "answer": "L1 H2"}},
        {"page": "attention", "state": {"model": "bahdanau_en-fr", "sentence": "i am a student"},
         "question": {"kind": "token", "prompt": "Which word?", "compute": "alignment_source_token",
                      "args": {"target": "étudiant"}}},
        {"page": "attention", "state": {"model": "transformer_en-fr", "sentence": "the red cat", "kind": "cross",
                                        "layer": 2, "head": 1},
         "question": {"kind": "cell", "prompt": "Where?", "compute": "attention_cell", "row": "rouge", "top": 2}},
        {"page": "residual", "state": {"depth": 32, "act": "tanh", "ln": False}},
        {"page": "softmax_scaling", "state": {"dk": 32},
         "question": {"kind": "text", "prompt": {"en": "In one word?", "ko": "한 단어로?"},
                      "answer": {"en": ["keys", "relevant keys"], "ko": ["키"]}}},
    ],
}


# ------------------------------------------------------------------------------ a small TOML writer (no tomli_w)

def toml_string(text: str) -> str:
    # JSON's escapes are TOML's, but for DEL, which TOML does not allow bare in a basic string
    return json.dumps(text, ensure_ascii=False).replace("\x7f", "\\u007f")


def toml_value(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf") if math.isinf(value) else repr(value)
    if isinstance(value, str):
        return toml_string(value)
    if isinstance(value, (datetime, date)):
        return value.isoformat()
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    return "{" + ", ".join(f"{toml_string(k)} = {toml_value(v)}" for k, v in value.items()) + "}"


def toml_document(data: dict, stop_headers: bool) -> str:
    """Top-level keys as `key = value`; with stop_headers, a `stop` array of tables as [[stop]] blocks."""
    lines = []
    stops = data.get("stop")
    as_headers = stop_headers and isinstance(stops, list) and stops and all(isinstance(s, dict) for s in stops)
    for key, value in data.items():
        if not (as_headers and key == "stop"):
            lines.append(f"{toml_string(key)} = {toml_value(value)}")
    if as_headers:
        for stop in stops:
            lines += ["", "[[stop]]"] + [f"{toml_string(k)} = {toml_value(v)}" for k, v in stop.items()]
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------------------ documents of random shapes

KEYS = st.sampled_from(["title", "stop", "page", "text", "state", "question", "kind", "prompt", "compute", "answer",
                        "row", "top", "options", "tolerance", "args", "section", "en", "ko", "model", "sentence", "layer",
                        "scores", "index", "factor", "factor_param", "models", "query", "target", "source"])
SCALARS = st.one_of(
    st.text(st.characters(exclude_categories=("Cs",)), max_size=12),
    st.sampled_from(["attention", "softmax_scaling", "choice", "head", "number", "token", "softmax_weight",
                     "head_linking", "causal_visible_keys", "lowest_long_sentence_model", "L2 H1", "L0 H0", "en",
                     "saturation", "", "<img src=x>", "[x](http://evil)"]),
    st.integers(), st.integers(min_value=10 ** 300, max_value=10 ** 400), st.floats(), st.booleans(),
    st.sampled_from([date(1979, 5, 27), datetime(1979, 5, 27, 7, 32, tzinfo=UTC)]))
VALUES = st.recursive(SCALARS, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(st.one_of(KEYS, st.text(max_size=4)), inner, max_size=5)),
    max_leaves=20)
TABLES = st.dictionaries(st.one_of(KEYS, st.text(max_size=4)), VALUES, max_size=6)
# any document, and documents with a title and stops of any shape (which reach the parser's stops)
DOCUMENTS = st.one_of(TABLES, st.fixed_dictionaries(
    {"title": st.one_of(st.text(max_size=8), VALUES), "stop": st.lists(st.one_of(TABLES, VALUES), max_size=4)}))


def _paths(value, path=()):
    """Every place in a nested value: (path of keys and indexes)."""
    yield path
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _paths(item, path + (key,))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _paths(item, path + (index,))


VALID_PATHS = [p for p in _paths(VALID) if p]


@st.composite
def near_valid(draw):
    """VALID with one field replaced by a value of a random shape (or dropped)."""
    data = json.loads(json.dumps(VALID))
    path = draw(st.sampled_from(VALID_PATHS))
    parent = data
    for step in path[:-1]:
        parent = parent[step]
    if draw(st.booleans()) and isinstance(parent, dict):
        del parent[path[-1]]
    else:
        parent[path[-1]] = draw(VALUES)
    return data


def assert_usable(lesson: Lesson) -> None:
    """What the lesson bar and the questions rely on, for every stop that carries no problem."""
    assert isinstance(lesson.title, dict) and all(isinstance(t, str) for t in lesson.title.values())
    assert lesson.stops
    for stop in lesson.stops:
        assert isinstance(stop.title, dict) and all(isinstance(t, str) for t in stop.title.values())
        assert isinstance(stop.text, dict) and all(isinstance(t, str) for t in stop.text.values())
        if stop.problem:
            assert isinstance(stop.problem, str)
            continue
        assert stop.page in PAGES and (stop.section is None or stop.section in PAGES[stop.page])
        assert all(isinstance(k, str) and isinstance(v, str) for k, v in stop.state.items())
        question = stop.question
        if question is None:
            continue
        assert question.kind in QUESTION_KINDS and all(isinstance(t, str) for t in question.prompt.values())
        assert math.isfinite(question.tolerance) and question.tolerance >= 0
        if question.kind == "cell":  # its map is a measure's, its row a token or a position, its top a whole number
            assert question.compute is not None and isinstance(question.top, int) and question.top >= 1
            assert question.row is None or isinstance(question.row, str) or question.row >= 1
        if question.kind == "choice":
            counts = {len(o) for o in question.options.values()}
            assert len(counts) == 1 and counts.pop() >= 2
            assert all(isinstance(x, str) for o in question.options.values() for x in o)
        if question.compute is None:
            answer = question.answer
            assert not isinstance(answer, bool)
            if question.kind == "choice":
                assert isinstance(answer, int) and 1 <= answer <= len(next(iter(question.options.values())))
            elif question.kind == "number":
                assert isinstance(answer, (int, float)) and math.isfinite(answer)
            elif question.kind == "head":
                assert isinstance(answer, str) and re.fullmatch(r"L[1-9]\d* H[1-9]\d*", answer)
            elif question.kind == "text":  # the accepted answers by language, or None: an open question
                assert answer is None or all(texts and all(isinstance(t, str) and t.strip() for t in texts)
                                             for texts in answer.values())
            elif question.kind == "view":  # explain with a view: neither right nor wrong
                assert answer is None
            else:
                assert isinstance(answer, str)


def check_file(source: str) -> None:
    """load_lessons on a folder holding this file: a usable lesson or a LessonFileError, never an exception."""
    with tempfile.TemporaryDirectory() as folder:
        (Path(folder) / "lesson.toml").write_text(source, encoding="utf-8")
        lessons, errors = load_lessons(PAGES, Path(folder))
    assert len(lessons) + len(errors) == 1
    for lesson in lessons.values():
        assert_usable(lesson)
    for error in errors:
        assert isinstance(error, LessonFileError) and error.file == "lesson.toml" and error.reason
        assert error.line is None or 1 <= error.line <= max(1, len(source.splitlines()))


def test_the_valid_lesson_is_valid():
    for headers in (True, False):
        lesson = parse_lesson("valid", toml_document(VALID, headers), PAGES)
        assert [s.problem for s in lesson.stops] == [None] * len(VALID["stop"])
        assert_usable(lesson)


def test_a_list_of_texts_where_stops_belong_is_a_file_problem_with_its_line(tmp_path):
    (tmp_path / "good.toml").write_text(GOOD, encoding="utf-8")
    (tmp_path / "texts.toml").write_text('title = "Texts"\n\nstop = ["attention", "decoding"]\n', encoding="utf-8")
    lessons, errors = load_lessons(PAGES, tmp_path)
    assert list(lessons) == ["good"]
    assert [(e.file, e.line) for e in errors] == [("texts.toml", 3)] and "[[stop]]" in errors[0].reason


def test_toml_that_python_cannot_hold_is_a_file_problem(tmp_path):
    (tmp_path / "digits.toml").write_text(GOOD + "tolerance = " + "1" * 5000 + "\n", encoding="utf-8")
    (tmp_path / "deep.toml").write_text(GOOD + "deep = " + "[" * 3000 + "]" * 3000 + "\n", encoding="utf-8")
    (tmp_path / "folder.toml").mkdir()
    lessons, errors = load_lessons(PAGES, tmp_path)
    assert not lessons and sorted(e.file for e in errors) == ["deep.toml", "digits.toml", "folder.toml"]


@pytest.mark.slow
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(DOCUMENTS, st.booleans())
def test_toml_of_any_shape_gives_a_lesson_or_a_file_problem(data, stop_headers):
    source = toml_document(data, stop_headers)
    tomllib.loads(source)  # the writer writes TOML
    check_file(source)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(near_valid(), st.booleans())
def test_a_lesson_with_one_field_of_the_wrong_shape_gives_a_lesson_or_a_file_problem(data, stop_headers):
    source = toml_document(data, stop_headers)
    tomllib.loads(source)
    check_file(source)


def test_a_bad_lesson_file_leaves_every_page_working_and_is_listed(tmp_path, monkeypatch):
    (tmp_path / "good.toml").write_text(GOOD, encoding="utf-8")
    (tmp_path / "texts.toml").write_text('title = "Texts"\nstop = ["attention", "decoding"]\n', encoding="utf-8")
    monkeypatch.setenv("ATTENTION_LAB_LESSONS", str(tmp_path))
    at, _ = open_from_link("softmax_scaling", {"lesson": "good"})
    assert_healthy(at)
    assert at.title or at.markdown  # the page is drawn
    assert "stop 1 of 1" in at.markdown[0].value
    problems = " ".join(w.value for w in at.sidebar.warning)
    assert "texts" in problems and "(line 2)" in problems, problems
    at2, _ = open_from_link("residual", {"lesson": "texts"})
    assert_healthy(at2)
    assert at2.title and "texts" in " ".join(w.value for w in at2.warning)


# ------------------------------------------------------------------- links and questions that cannot be asked

def test_a_stop_number_that_is_not_ascii_digits_or_out_of_range_opens_stop_1_with_a_notice():
    for stop in ("²", "٣", "1" * 5000, "0", "99", "-1", " 2"):
        at, notices = open_from_link(None, {"lesson": "intro", "stop": stop})
        assert_healthy(at)
        assert "stop 1 of" in at.markdown[0].value, stop
        assert "stop" in notices, (stop, notices)
    at, notices = open_from_link(None, {"lesson": "intro", "stop": "2"})
    assert "stop 2 of" in at.markdown[0].value and "stop" not in notices


def test_questions_that_cannot_be_asked_say_so_at_the_stop_and_show_the_page(tmp_path, monkeypatch):
    (tmp_path / "unaskable.toml").write_text(GOOD + """
[[stop]]
page = "attention"
state = { model = "no_such_model", sentence = "the red cat" }
[stop.question]
kind = "head"
prompt = "Which head?"
answer = "L1 H1"

[[stop]]
page = "attention"
state = { model = "transformer_en-fr", sentence = "the red cat" }
[stop.question]
kind = "head"
prompt = "Which head?"
answer = "L9 H9"

[[stop]]
page = "attention"
state = { model = "transformer_en-fr" }
[stop.question]
kind = "token"
prompt = "Which word?"
answer = "cat"
""", encoding="utf-8")
    monkeypatch.setenv("ATTENTION_LAB_LESSONS", str(tmp_path))
    at, _ = open_from_link(None, {"lesson": "unaskable", "stop": "2"})
    for expected in ("no_such_model", "L9 H9", "no sentence"):
        assert_healthy(at)
        warnings = " ".join(w.value for w in at.warning)
        assert "cannot be computed" in warnings and expected in warnings.replace("\\", ""), warnings
        assert at.title, f"{expected}: the page is not shown"
        if expected != "no sentence":
            at.button(key="lesson_next").click().run()


def test_a_question_whose_section_and_view_an_earlier_stop_opens_on_is_a_problem_at_its_stop():
    """An earlier stop's own section is never held back (classroom/answers_ahead.py): a later question about the same
    section in the same view would be answered there first, so the later stop says so; another view is fine."""
    question = '[stop.question]\nkind = "number"\nprompt = "How many?"\nanswer = 16\n'
    stop = '[[stop]]\npage = "attention_steps"\nsection = "steps"\nstate = {{ tokens = {tokens} }}\n'
    source = 'title = "t"\n' + stop.format(tokens=4) + stop.format(tokens=4) + question + stop.format(tokens=5) + question
    first, same, other = parse_lesson("t", source, PAGES).stops
    assert first.problem is None and other.problem is None and other.question is not None
    assert "same view as stop 1" in same.problem and same.question is None


TEXT_STOP = '[[stop]]\npage = "softmax_scaling"\nstate = { dk = 16 }\ntext = "Say it."\n[stop.question]\nkind = "text"\n'


@pytest.mark.parametrize(("fields", "problem"), [
    ('prompt = "One word?"\nanswer = 3', "accepted answers"),
    ('prompt = "One word?"\nanswer = ["keys", 4]', "accepted answers"),
    ('prompt = "One word?"\nanswer = { en = [] }', "accepted answers"),
    ('prompt = "One word?"\nanswer = ["\\u200b "]', "blank or longer"),
    (f'prompt = "One word?"\nanswer = ["{"k" * 101}"]', "blank or longer"),
    ('prompt = "One word?"\npeer = true', "not peer"),
    ('prompt = "One word?"\ncompute = "softmax_weight"', "not compute"),
    ('prompt = "One word?"\noptions = ["a", "b"]', "not options"),
    ("answer = \"keys\"", "prompt"),
])
def test_a_malformed_text_question_is_a_problem_at_its_stop_with_its_line(tmp_path, fields, problem):
    source = GOOD + "\n" + TEXT_STOP + fields + "\n"
    lesson = parse_lesson("texts", source, PAGES)
    first, second = lesson.stops
    assert first.problem is None and second.question is None and problem in second.problem, second.problem
    assert second.line == source.splitlines().index("[[stop]]", 3) + 1  # the lesson bar says the stop's line


def test_a_text_question_reads_its_prompt_and_accepted_answers():
    source = GOOD + "\n" + TEXT_STOP + 'prompt = { en = "One word?", ko = "한 단어?" }\nanswer = "Keys"\n'
    question = parse_lesson("texts", source, PAGES).stops[1].question
    assert question.kind == "text" and question.answer == {"en": ("Keys",)} and not question.peer
    open_question = parse_lesson("texts", GOOD + "\n" + TEXT_STOP + 'prompt = "Why?"\n', PAGES).stops[1].question
    assert open_question.kind == "text" and open_question.answer is None


def test_a_malformed_cell_question_is_a_problem_at_its_stop_with_its_line():
    """Issue 55: a cell question needs the measure that gives its map; its row, top and fixed cell are checked as the
    file is read, and each problem names the field at the stop's line (the bar says "lesson file <name>.toml, line N")."""
    stop = ('[[stop]]\npage = "attention"\nstate = {{ model = "transformer_en-fr", sentence = "the red cat" }}\n'
            '[stop.question]\nkind = "{kind}"\nprompt = "Where?"\n{fields}\n')
    cases = [("cell", 'compute = "attention_cell"\nrow = 0', "row must be"),
             ("cell", 'compute = "attention_cell"\nrow = true', "row must be"),
             ("cell", 'compute = "attention_cell"\ntop = 0', "top must be"),
             ("cell", 'compute = "attention_cell"\ntop = 2.5', "top must be"),
             ("cell", 'answer = "2,1"', "needs a compute"),
             ("cell", 'compute = "attention_cell"\nanswer = "2;1"', "a cell answer is"),
             ("cell", 'compute = "attention_cell"\nanswer = "0,1"', "a cell answer is"),
             ("cell", 'compute = "attention_cell"\nrow = 3\nanswer = "2,1"', "not on row 3"),
             ("cell", 'compute = "sharpest_cross_head"', "answers a head question"),
             ("head", 'compute = "attention_cell"', "answers a cell question"),
             ("head", 'answer = "L1 H1"\nrow = "it"', "row and top are for cell questions"),
             ("cell", 'compute = "attention_cell"\nrow = "it"\ntop = 2', None)]
    source = GOOD + "".join(stop.format(kind=kind, fields=fields) for kind, fields, _ in cases)
    lines = [number for number, line in enumerate(source.splitlines(), start=1) if line == "[[stop]]"]
    lesson = parse_lesson("cells", source, PAGES)
    for (_, fields, reason), found, line in zip(cases, lesson.stops[1:], lines[1:], strict=True):
        assert found.line == line, (fields, found.line, line)
        if reason is None:
            assert found.problem is None and found.question.row == "it" and found.question.top == 2
        else:
            assert found.problem and reason in found.problem and found.question is None, (fields, found.problem)

"""Lesson files' peer-instruction settings: `peer`, misconception tags on wrong answers, pre/post check questions
paired by id; a setting that does not fit is a clear problem at its stop; the shipped lesson has them."""
import pytest

from classroom.lessons import misconception_of, parse_lesson
from ui.lessons.catalogue import known_pages

PAGES = {"attention": (), "compare": ()}
QUESTION = """
[stop.question]
kind = "choice"
prompt = "Which?"
options = { en = ["a", "b", "c"], ko = ["가", "나", "다"] }
answer = 2
"""
CHECK = """
[[stop.check]]
id = "{id}"
check = "{when}"
kind = "choice"
prompt = "Why?"
options = ["x", "y"]
answer = 1
"""


def _lesson(first: str = "", last: str = "", middle: str = ""):
    source = f'title = "t"\n[[stop]]\npage = "attention"\n{first}\n[[stop]]\npage = "compare"\n{middle}\n' \
             f'[[stop]]\npage = "attention"\n{last}\n'
    return parse_lesson("t", source, PAGES)


def test_peer_misconceptions_and_paired_checks_are_read():
    lesson = _lesson(first=QUESTION + 'peer = true\nmisconceptions."3" = { en = "c is b", ko = "다는 나" }\n'
                     + CHECK.format(id="scale", when="pre"), last=CHECK.format(id="scale", when="post"))
    first, _, last = lesson.stops
    assert not first.problem and not last.problem
    assert first.question.peer and first.question.misconceptions == {"3": {"en": "c is b", "ko": "다는 나"}}
    assert [(c.id, c.when, c.question.answer) for c in first.checks + last.checks] == [("scale", "pre", 1),
                                                                                      ("scale", "post", 1)]
    assert misconception_of(first.question, "3") == "3" and misconception_of(first.question, "1") is None


def test_a_number_misconception_matches_within_the_tolerance():
    question = _lesson(first='[stop.question]\nkind = "number"\nprompt = "n"\nanswer = 16\ntolerance = 0.5\n'
                       'misconceptions."12" = "T times d_k"\n').stops[0].question
    assert misconception_of(question, "12.4") == "12" and misconception_of(question, "13") is None


@pytest.mark.parametrize(("first", "last", "problem_at", "words"), [
    (QUESTION + 'misconceptions."2" = "b"\n', "", 0, "is the right answer"),
    (QUESTION + 'misconceptions."7" = "b"\n', "", 0, "from 1 to 3"),
    (QUESTION + 'peer = "yes"\n', "", 0, "peer must be true or false"),
    ("", CHECK.format(id="scale", when="pre"), 2, '"pre" goes on the first stop'),
    ("", CHECK.format(id="scale", when="post"), 2, "has no pre question"),
    (CHECK.format(id="Bad Id", when="pre"), "", 0, "needs an id"),
    (CHECK.format(id="s", when="pre").replace('kind = "choice"', 'kind = "head"'), "", 0, "kind choice or number"),
    (CHECK.format(id="s", when="pre").replace("answer = 1\n", ""), "", 0, "needs its answer"),
])
def test_a_setting_that_does_not_fit_is_a_problem_at_its_stop(first, last, problem_at, words):
    stops = _lesson(first=first, last=last).stops
    assert words in (stops[problem_at].problem or ""), stops[problem_at].problem
    assert [s.problem for i, s in enumerate(stops) if i != problem_at] == [None, None]  # the rest of the lesson works


def test_the_shipped_lesson_has_peer_questions_misconceptions_and_paired_checks():
    from classroom.lessons import load_lessons

    lessons, errors = load_lessons(known_pages())
    assert not errors
    stops = lessons["intro"].stops
    assert not [s.problem for s in stops if s.problem]
    questions = [s.question for s in stops if s.question]
    assert sum(q.peer for q in questions) >= 5
    tagged = [q for q in questions if q.misconceptions]
    assert len(tagged) >= 5
    for question in tagged + [c.question for c in stops[0].checks]:
        assert all(set(text) == {"en", "ko"} for text in question.misconceptions.values())  # both languages
    pre = {c.id: c for c in stops[0].checks if c.when == "pre"}
    post = {c.id: c for c in stops[-1].checks if c.when == "post"}
    assert len(pre) >= 3 and set(pre) == set(post)
    assert "attention weight = importance" in [t["en"] for c in pre.values()
                                               for t in c.question.misconceptions.values()]

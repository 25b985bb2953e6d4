"""Every claim of a lesson stop is true of the model it shows: claims ([[stop.claim]]) are parsed and checked like
questions, measured on the shipped checkpoints, and shown with their figures; questions discriminate (a right answer
is not half of the options); a causal mask's visible keys are read from the mask the page draws."""
import numpy as np
import pytest

from classroom.lessons import load_lessons, parse_lesson
from model.foundations.attention_steps import build_mask
from model.questions import causal_visible_keys
from tests.app_links import assert_healthy, open_from_link
from ui.lessons.catalogue import known_pages

PAGES = known_pages()
LESSONS = load_lessons(PAGES)[0]
HEAD = """
title = "Claims"
[[stop]]
page = "attention"
state = { model = "transformer_en-fr", sentence = "the small cat eats the red apple", kind = "cross", layer = 2, head = 1, view = "Head" }
text = "Look."
"""


def _claim(**fields) -> str:
    lines = [f"{name} = {value}" for name, value in fields.items()]
    return HEAD + "[[stop.claim]]\n" + "\n".join(lines) + "\n"


def test_every_claim_of_every_shipped_lesson_holds_on_the_shipped_models():
    from ui.lessons.claims import check

    checked = [(lesson.id, stop.number, measured) for lesson in LESSONS.values() for stop in lesson.stops
               for measured in check(stop)]
    assert len(checked) >= 10  # the stops whose texts state figures: 2, 9, 10, 11, 14
    broken = [(lesson, number, m.claim.text["en"], m.value, m.error) for lesson, number, m in checked if not m.holds]
    assert not broken, broken
    intro = {stop.number: stop for stop in LESSONS["intro"].stops}
    assert {2, 9, 10, 11, 14} <= {number for number, stop in intro.items() if stop.claims}


def test_a_bad_claim_is_a_problem_at_its_stop():
    good = _claim(measure='"row_peak"', args='{ kind = "cross", layer = 2, head = "min" }', at_least=0.9,
                  text='"every head {value}"')
    assert parse_lesson("ok", good, PAGES).stops[0].problem is None
    assert parse_lesson("ok", good, PAGES).stops[0].claims[0].args == {"kind": "cross", "layer": 1, "head": "min"}
    for fields, reason in [
        (dict(measure='"vibes"', text='"{value}"', at_least=0), "not one of"),
        (dict(measure='"row_peak"', args='{ kind = "cross", layer = 2, head = 1 }', text='"no figure"', at_least=0),
         "{value}"),
        (dict(measure='"row_peak"', args='{ kind = "cross", layer = 2, head = 1 }', text='"{value}"'), "bound"),
        (dict(measure='"row_peak"', args='{ kind = "cross", head = 1 }', text='"{value}"', at_most=1), "args.layer"),
        (dict(measure='"position_share"', args='{ kind = "encoder_self", layer = 1, head = 1, offset = 2 }',
              text='"{value}"', at_most=1), "offset"),
        (dict(measure='"row_peak"', args='{ kind = "cross", layer = 0, head = 1 }', text='"{value}"', at_most=1),
         "1-based"),
    ]:
        problem = parse_lesson("bad", _claim(**fields), PAGES).stops[0].problem
        assert problem and reason in problem, (fields, problem)


def test_a_claim_the_model_contradicts_is_shown_crossed_with_its_bound(tmp_path, monkeypatch):
    false = _claim(measure='"row_peak"', args='{ kind = "cross", layer = 1, head = "max" }', at_least=0.95,
                   text='{ en = "layer 1 is sharp: {value}", ko = "1층은 뚜렷함: {value}" }')
    (tmp_path / "false.toml").write_text(false, encoding="utf-8")
    monkeypatch.setenv("ATTENTION_LAB_LESSONS", str(tmp_path))
    at, _ = open_from_link(None, {"lesson": "false", "stop": "1"})
    assert_healthy(at)
    shown = " ".join(m.value for m in at.markdown)
    assert "✗ layer 1 is sharp: 0.78" in shown and "≥ 0.95" in shown


def test_a_stop_shows_its_claims_with_their_figures_once_its_page_is_shown():
    at, _ = open_from_link(None, {"lesson": "intro", "stop": "9"})  # no question: the page and the claims at once
    shown = " ".join(m.value for m in at.markdown)
    assert "✓ The layer-1 head that looks most at the previous word puts 0.17 of each row on it." in shown
    at, _ = open_from_link(None, {"lesson": "intro", "stop": "10", "lang": "ko"})  # predict first: no figure yet
    assert "✓" not in " ".join(m.value for m in at.markdown)


def _option_count(stop) -> int:
    from ui.lessons.questions import _shape

    if stop.question.kind == "choice":
        return len(next(iter(stop.question.options.values())))
    layers, heads = _shape(stop)
    return layers * heads


def test_choice_and_head_questions_discriminate():
    """A question whose right answers are half of its options or more tests nothing (stop 11 accepted all four
    layer-2 heads, each >= 0.989, of eight): the accepted answers are fewer than half of the options."""
    from ui.lessons.questions import expected_answer

    for lesson in LESSONS.values():
        for stop in lesson.stops:
            if stop.question and stop.question.kind in ("choice", "head"):
                accepted, options = len(expected_answer(stop).accepted), _option_count(stop)
                assert 1 <= accepted and 2 * accepted < options, (lesson.id, stop.number, accepted, options)


def test_a_fixed_arithmetic_answer_is_shown_as_its_value():
    from ui.lessons.questions import answer_label, expected_answer

    stop = LESSONS["intro"].stops[3]  # the size of QKᵀ
    assert answer_label(stop.question, expected_answer(stop).shown) == "16"


def test_causal_visible_keys_are_counted_on_the_mask_the_page_draws():
    assert causal_visible_keys(build_mask("causal", 5, 5), 3) == 3
    assert causal_visible_keys(build_mask("none", 5, 5), 3) == 5
    assert causal_visible_keys(build_mask("padding", 5, 5, padded_keys=2), 1) == 3
    with pytest.raises(ValueError):
        causal_visible_keys(np.ones((4, 4), bool), 5)

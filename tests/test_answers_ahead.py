"""classroom/answers_ahead.held_back: which sections of a page answer a later question, alone and in a class, on the
shipped lessons (the answer lesson's four stops share one page, each about one section)."""
from classroom.answers_ahead import WHOLE_PAGE, held_back
from ui.lessons.catalogue import lessons


def _lesson(name):
    return lessons()[0][name]


def test_alone_a_stop_holds_the_later_questions_sections_until_she_answers_them():
    answer = _lesson("answer")
    assert held_back("llm_answer", answer, 1, set()) == {"patching": 2, "heads": 3, "attribution": 4}
    assert held_back("llm_answer", answer, 1, {"answer:2"}) == {"heads": 3, "attribution": 4}
    assert held_back("llm_answer", answer, 4, set()) == {}  # the last stop: nothing after it
    assert held_back("llm", _lesson("llm"), 2, set()) == {"kv_cache": 3, "gqa": 4}
    # intro stop 4 and 7 are both about the steps: the open stop's own section is never held; 8's multi-head is
    assert held_back("attention_steps", _lesson("intro"), 4, set()) == {"multi_head": 8}
    assert held_back("attention", _lesson("intro"), 9, set()) == {}  # stops without a section hold no page alone
    assert held_back("llm_answer", None, None, set()) == {}  # no lesson, no class: the page as it is


def test_in_a_class_every_unrevealed_question_from_the_class_stop_on_is_held_on_every_page():
    answer, intro = _lesson("answer"), _lesson("intro")
    everything = {"lens": 1, "patching": 2, "heads": 3, "attribution": 4}
    assert held_back("llm_answer", None, None, set(), [(answer, 1, ())]) == everything  # a plain /llm_answer in a new tab
    assert held_back("llm_answer", None, None, set(), [(answer, 1, {"answer:1"})]) == {"patching": 2, "heads": 3,
                                                                                  "attribution": 4}
    assert held_back("llm_answer", None, None, set(), [(answer, 3, {"answer:1"})]) == {"heads": 3, "attribution": 4}
    # at the class's stop on its page the bar hides the page itself: its own section is not held twice
    assert held_back("llm_answer", answer, 1, set(), [(answer, 1, ())]) == {"patching": 2, "heads": 3, "attribution": 4}
    # her own answers alone do not open a class's question
    assert held_back("llm_answer", answer, 1, {"answer:2"}, [(answer, 1, ())])["patching"] == 2
    # the class's stop names no section: its whole page is held off the stop, not on it
    assert held_back("attention", None, None, set(), [(intro, 3, ())]) == {WHOLE_PAGE: 3}
    assert held_back("attention", intro, 3, set(), [(intro, 3, ())]) == {}
    assert held_back("attention", None, None, set(), [(intro, 3, {"intro:3"})]) == {}

"""In a lesson the lesson bar's Next is the only button called Next, and the only primary one: a page's own stepper
says what it steps (issue 38: on llm stops 2-3 and intro stop 12 the page's "Next ▸" stood beside the bar's Next, both
다음 in Korean, and the wrong one moved the whole class)."""
import pytest

from classroom.lessons import load_lessons
from i18n import translate
from tests.app_links import assert_healthy, open_page
from tests.test_lessons import _answer
from ui.lessons.catalogue import known_pages

LESSONS = load_lessons(known_pages())[0]


@pytest.mark.parametrize(("lesson", "stop", "language"),
                         [("llm", 2, "en"), ("llm", 3, "ko"), ("intro", 12, "en"), ("intro", 12, "ko"),
                          ("choices", 2, "ko")])
def test_a_stop_with_a_stepper_has_one_next(lesson, stop, language):
    at = open_page(None, {"lesson": lesson, "stop": str(stop), "lang": language})
    question = LESSONS[lesson].stops[stop - 1].question
    if question is not None:  # the stop's page is drawn once its question is answered (any answer)
        _answer(at, f"q_{lesson}_{stop}", question.kind, None)
        assert_healthy(at)
    lesson_next = translate(language, "lessons.next")
    labels = [button.label for button in at.button]
    steppers = [label for label in labels if label.startswith(lesson_next) and label != lesson_next]
    assert labels.count(lesson_next) == 1, labels
    assert steppers, f"{lesson} stop {stop} draws no stepper of its own: {labels}"
    named_steppers = {translate(language, "llm.next"), translate(language, "decoding.next")}
    assert set(steppers) <= named_steppers, steppers
    assert all(label.strip(" ▸▶◀") != lesson_next for label in steppers), steppers  # it says what it steps
    primary = [button.label for button in at.button if button.proto.type == "primary"]
    assert set(primary) <= {lesson_next}, primary

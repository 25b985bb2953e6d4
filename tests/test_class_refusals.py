"""The store's one error style: every refusal is a ClassStoreError (classroom/errors.py), and ui/live_class/refusals.py is
the one place that turns each into the words a student or the teacher reads, in both languages."""
import inspect
import re

import pytest

import classroom.errors as errors
from classroom.errors import (ClassElsewhere, ClassEnded, ClassStoreError, LessonRefused, NoSuchClass, NotAnAuthor,
                              NotOpenYet, NotTheTeacher, StoreBusy, TextTooLong, TooManyLessons, TooManyTries)
from classroom.store import ClassStore
from i18n import strings, using_language
from ui.lesson_builder.words import refusal_words
from ui.live_class.refusals import ANSWER, JOIN, TEACHER, message

REFUSALS = [kind for _, kind in inspect.getmembers(errors, inspect.isclass)
            if issubclass(kind, ClassStoreError) and kind is not ClassStoreError]


def _instance(kind: type[ClassStoreError]) -> ClassStoreError:
    if kind is StoreBusy:
        return StoreBusy("database is locked")
    if kind is ClassElsewhere:
        return ClassElsewhere("ABCDEF", 4)
    if kind is TooManyTries:
        return TooManyTries("ABCDEF", 12)
    if kind is TextTooLong:
        return TextTooLong("ABCDEF", 120, 360, (100, 300))
    if kind is LessonRefused:
        return LessonRefused(2, "text", "longer than 2000 characters")
    if kind is TooManyLessons:
        return TooManyLessons(50)
    return kind("ABCDEF")


# The lesson builder's own refusals (a teacher saving a lesson): no class path raises them, and the builder words them
BUILDER_ONLY = (NotAnAuthor, LessonRefused, TooManyLessons)


@pytest.mark.parametrize("messages", [ANSWER, JOIN, TEACHER, None], ids=["answer", "join", "teacher", "builder"])
def test_every_refusal_has_words_in_every_language(messages):
    assert len(REFUSALS) >= 8
    for kind in REFUSALS:
        if (kind in BUILDER_ONLY) != (messages is None) and kind is not StoreBusy:
            continue  # the class's words for the class's refusals; the builder's for its own and a busy store
        for language in ("en", "ko"):
            with using_language(language):
                error = _instance(kind)
                text = refusal_words(error) if messages is None else message(error, messages, here=2)
            # tr() raises on a key that does not exist; every value the words ask for is filled in
            assert text and "{" not in text, (kind, language)
            assert language == "en" or re.search("[\uac00-\ud7a3]", text), (kind, text)


def test_a_student_and_the_teacher_read_their_own_words_for_the_same_refusal():
    ended = ClassEnded("ABCDEF")
    with using_language("en"):
        assert message(ended, ANSWER) == strings("en")["lessons.class_ended"]
        assert message(ended, JOIN) == strings("en")["lessons.bad_code"]  # a join: the code names no live class
        assert message(ended, TEACHER) == strings("en")["class_teacher.expired"].format(code="ABCDEF")
        assert message(NoSuchClass("ZZZZZZ"), TEACHER) == strings("en")["class_teacher.no_such_class"]
        assert message(StoreBusy("locked"), ANSWER) == strings("en")["lessons.busy"]
        assert message(StoreBusy("locked"), JOIN) == strings("en")["lessons.busy_join"]
        assert message(StoreBusy("locked"), TEACHER) == strings("en")["class_teacher.busy"]
        assert message(ClassElsewhere("ABCDEF", 4), here=2) == strings("en")["lessons.not_class_stop"].format(
            stop=4, here=2)
        assert "ABCDEF" in message(NotTheTeacher("ABCDEF"), TEACHER)
        assert message(NotOpenYet("ABCDEF")) == strings("en")["lessons.round_not_open"]


def test_the_teacher_handle_is_her_class_and_keeps_its_token_out_of_sight(tmp_path):
    store = ClassStore(tmp_path / "db")
    teacher = store.create_class("intro", stop=2)
    assert teacher.token not in repr(teacher) and teacher.code in repr(teacher)  # a log line names no token
    again = store.teacher(teacher.code, teacher.token, teacher.lesson)  # rebuilt from what the session keeps
    assert again == teacher and again.session().stop == 2
    again.move(3)
    assert teacher.session().stop == 3
    elsewhere = store.create_class("llm")
    with pytest.raises(NotTheTeacher):  # a handle is one class's: its token opens no other
        store.teacher(elsewhere.code, teacher.token, "llm").move(1)
    teacher.end()
    with pytest.raises(ClassEnded):
        again.move(1)
    assert teacher.report_answers().ended  # her report stays readable

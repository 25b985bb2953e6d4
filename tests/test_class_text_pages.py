"""A text question in the live class, in AppTest: a student's field takes every hostile input, stored as typed or
refused with a clear message and kept in the field; a flood of resubmits is refused; the teacher moderates the texts
in her private view (en and ko) and the projector shows only what she approved, after the Reveal."""
import hashlib

import pytest

from classroom.errors import TextEmpty
from classroom.store import ClassStore
from classroom.text_answers import TEXT_BYTES, TEXT_CHARS, TEXT_TRIES, stored_text, text_key, visible_text
from i18n import translate
from tests.app_links import altair_text, assert_healthy, lab_session_of, open_from_link
from tests.bad_inputs import load_bad_inputs
from tests.test_class_pages import _texts
from tests.test_hidden_answers import _start
from ui.text import escape_markdown, isolated_markdown

LESSON = """title = { en = "Texts", ko = "글" }

[[stop]]
page = "softmax_scaling"
title = { en = "One word", ko = "한 단어" }
state = { dk = 16 }
text = { en = "Look.", ko = "보세요." }
[stop.question]
kind = "text"
prompt = { en = "In one word: what does a query ask for?", ko = "한 단어로: 쿼리는 무엇을 묻나요?" }
answer = { en = ["keys", "relevant keys"], ko = ["키"] }

[[stop]]
page = "softmax_scaling"
state = { dk = 32 }
text = "Next."
"""
Q, FIELD = "texts:1", "q_texts_1_text"


@pytest.fixture(autouse=True)
def text_lesson(tmp_path, monkeypatch):
    monkeypatch.setenv("ATTENTION_LAB_DATA", str(tmp_path))
    monkeypatch.delenv("ATTENTION_LAB_TEACHER_PASSWORD", raising=False)
    lessons = tmp_path / "lessons"
    lessons.mkdir()
    (lessons / "texts.toml").write_text(LESSON, encoding="utf-8")
    monkeypatch.setenv("ATTENTION_LAB_LESSONS", str(lessons))


def _send(student, text: str) -> None:
    student.text_input(key=FIELD).set_value(text)
    next(b for b in student.form_submit_button if b.form_id == "q_texts_1_form").click().run()
    assert_healthy(student)


def _as_seat(student, store: ClassStore, code: str, seat: str) -> None:
    """The same page as another student (a seat of its own, nothing answered): one session walks many students."""
    store.join(code, seat)
    session = lab_session_of(student)
    session.seat.student_id = seat
    session.lesson.answers.clear()
    student.run()


@pytest.mark.slow
def test_every_bad_input_in_the_text_field_is_stored_or_refused_with_a_message():
    _, code = _start("texts", "en")
    store = ClassStore()
    student, _ = open_from_link(None, {"class": code})
    field = student.text_input(key=FIELD)
    assert not field.max_chars and f"{TEXT_CHARS} characters and {TEXT_BYTES} bytes" in field.help  # never cut
    stored = 0
    for n, text in enumerate(load_bad_inputs()):
        _as_seat(student, store, code, f"seat-{n}")
        _send(student, text)
        saved = store.student_answer(code, f"seat-{n}", Q)
        warnings = " ".join(w.value for w in student.warning)
        if saved is None:  # refused whole: said, and the text is still in her field
            assert "Type your answer first" in warnings or "Not sent: your answer has" in warnings, repr(text)
            assert student.text_input(key=FIELD).value == text, repr(text)
            continue
        stored += 1
        assert saved == stored_text(text) and not warnings, repr(text)  # stored as typed (controls as spaces)
        infos = " ".join(i.value for i in student.info)
        assert f"Your answer is taken: {isolated_markdown(visible_text(text))}." in infos, repr(text)
    assert stored >= 18
    # a flood of resubmits from one seat (the store counts refused ones too): past the limit the next is refused with
    # the wait, said, and kept in her field
    _as_seat(student, store, code, "flood")
    for _ in range(TEXT_TRIES):
        with pytest.raises(TextEmpty):
            store.answer_text(code, "flood", Q, "\u200b", None, stop=1)
    _send(student, "keys")
    assert "Not sent: too many answers from this device" in " ".join(w.value for w in student.warning)
    assert student.text_input(key=FIELD).value == "keys" and store.student_answer(code, "flood", Q) is None


def _digest(text: str) -> str:
    return hashlib.sha256(text_key(text).encode("utf-8")).hexdigest()[:16]


@pytest.mark.parametrize("language", ["en", "ko"])
def test_the_teacher_moderates_in_her_private_view_and_the_room_sees_only_what_she_approved(language):
    teacher, code = _start("texts", language)
    store = ClassStore()
    texts = ["Relevant Keys", "relevant  keys", "<b>relevance</b>", "fuck you", "씨발", "مرحبا\u202e", "spam spam"]
    for n, text in enumerate(texts):
        store.join(code, f"s{n}")
        store.answer_text(code, f"s{n}", Q, text, text_key(text) in ("keys", "relevant keys", "키"), stop=1)

    def room_sees(text: str) -> bool:
        return visible_text(text) in _texts(teacher) or escape_markdown(visible_text(text)) in _texts(teacher) \
            or visible_text(text) in altair_text(teacher)

    def label(key: str, **values) -> str:
        return translate(language, f"class_teacher.{key}", **values)

    teacher.run()
    answered = next(m.value for m in teacher.metric if m.label == translate(language, "class_teacher.answered"))
    assert answered == str(len(texts))
    assert not [t for t in texts if room_sees(t)], "the projector shows a text before her approval and the Reveal"
    assert label("text_hidden_room") in _texts(teacher)

    teacher.toggle(key="teacher_private").set_value(True).run()  # her phone or a second window
    shown = _texts(teacher)
    for text in texts[1:]:  # every group listed, escaped, the bidi override gone (the second spelling of the first)
        assert escape_markdown(visible_text(text)) in shown, text
    assert "\u202e" not in shown and "<b>" not in shown
    assert label("text_flagged", languages="en") in shown and label("text_flagged", languages="ko") in shown
    approve_all = teacher.button(key="text_approve_all")
    assert approve_all.label == label("text_approve_all", count=4)  # all but the two flagged
    approve_all.click().run()
    teacher.button(key=f"text_hide_{_digest('spam spam')}").click().run()  # one click takes a group down
    assert teacher.button(key=f"text_approve_{_digest('Relevant Keys')}").disabled
    assert not teacher.button(key=f"text_approve_{_digest('fuck you')}").disabled

    teacher.toggle(key="teacher_private").set_value(False).run()
    assert not [t for t in texts if room_sees(t)], "approved, but not revealed: the projector shows a text"
    teacher.button(key="class_reveal").click().run()
    assert_healthy(teacher)
    room = _texts(teacher)
    assert "Relevant Keys" in room and escape_markdown("<b>relevance</b>") in room and "مرحبا" in room
    assert "<b>" not in room and "\u202e" not in room
    for text in ("fuck you", "씨발", "spam spam"):  # flagged and never approved, or hidden by her
        assert not room_sees(text), text
    share = next(m.value for m in teacher.metric if m.label == translate(language, "class_teacher.correct"))
    assert share == f"{2 / len(texts):.0%}"  # the accepted answers' share, after the Reveal
    assert "Relevant Keys" in altair_text(teacher) and "spam" not in altair_text(teacher)

    teacher.session_state["report_open"] = True  # her class report: the approved texts with their counts
    teacher.run()
    column = translate(language, "report.col_text")
    reported = next(d.value for d in teacher.dataframe if column in d.value.columns)
    assert reported[column].tolist() == ["Relevant Keys", "<b>relevance</b>", "مرحبا"]
    assert reported[translate(language, "report.col_students")].tolist() == [2, 1, 1]

    teacher.button(key="class_next").click().run()  # the earlier question's most common answer: an approved text
    top = translate(language, "class_teacher.table_top")
    earlier = next(d.value for d in teacher.dataframe if top in d.value.columns)
    assert earlier[top].tolist() == ["Relevant Keys"]

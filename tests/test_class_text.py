"""Open-text answers (classroom/text_answers.py) in the store: grouped after NFKC, case and spaces, bounded in
characters and bytes, rate-limited per seat, moderated before the room reads any (approved groups of a revealed
question only, the flagged ones never approved in bulk), nothing of another class; a flood of 300 texts stored whole.

The store tests run on SQLite and PostgreSQL (tests/conftest.py's store_location)."""
import time

import pytest

from classroom.errors import (AnsweredAlready, ClassElsewhere, NotAdmitted, NotTheTeacher, TextEmpty, TextTooLong,
                              TooManyTries)
from classroom.lesson_questions import accepted_keys
from classroom.lessons import parse_lesson
from classroom.measures import Expected
from classroom.report import build_report, reportable
from classroom.store import ClassStore
from classroom.text_answers import (APPROVED, HIDDEN, TEXT_BYTES, TEXT_CHARS, TEXT_TRIES, TEXT_TRY_SECONDS, WAITING,
                                    flagged, group_texts, stored_text, text_key, visible_text)
from tests.bad_inputs import load_bad_inputs
from ui.lessons.catalogue import known_pages
from ui.live_class.report import report_csv, report_tables

Q = "intro:16"  # a question of the class's stop (the store does not read the lesson)
STOP = 16


@pytest.fixture()
def store(store_location):
    store = ClassStore(store_location)
    yield store
    store.close()


def _class(store: ClassStore, students: int):
    teacher = store.create_class("intro", stop=STOP, class_size=max(students, 1))
    for n in range(students):
        store.join(teacher.code, f"s{n}")
    return teacher


def test_texts_are_one_group_after_nfkc_case_spaces_and_invisible_characters():
    same = ["Key", "key", "  KEY ", "ＫＥＹ", "ke\u200by", "\u202ekey\u202c", "k\u00adey", "\u2066key\u2069"]
    assert {text_key(t) for t in same} == {"key"}
    assert text_key("query  vector") == text_key("Query vector") != text_key("query vectors")
    assert text_key("\u3164") == text_key("\u200b \u200d") == ""  # blank letters and zero-width only: nothing
    # shown: the bidi controls and zero-width characters gone, the letters, emoji and right-to-left text kept
    assert visible_text("\u202etxet\u202c") == "txet" and visible_text("مرحبا\u200f بالعالم") == "مرحبا بالعالم"
    assert visible_text("😀 🐈\u200d⬛") == "😀 🐈⬛" and visible_text("i\x00am\x1bhere") == "i am here"
    assert stored_text("i\x00am\na\tstudent") == "i am a student" and stored_text("키 😀") == "키 😀"
    groups = group_texts([("Key", None), ("key", None), ("KEY", None), ("value", None), ("  ", None)])
    assert [(g.key, g.shown, g.students, g.spellings) for g in groups] == [
        ("key", "Key", 3, ("Key", "key", "KEY")), ("value", "value", 1, ("value",))]


def test_the_word_lists_flag_english_and_korean_abuse_and_leave_ordinary_words():
    for text in ("fuck", "FUCKING hell", "sh1t", "f u c k", "you idiot", "kill   yourself", "ｆｕｃｋ", "bull$hit"):
        assert flagged(text) == ("en",), text
    for text in ("씨발", "씨 발", "병신아", "개새끼들", "ㅅㅂ", "존나 어렵다"):
        assert flagged(text) == ("ko",), text
    for text in ("key", "class", "assume", "Scunthorpe", "keys and values", "쿼리", "키", "관련성", "유사도",
                 "skill yourself", "cocktail"):
        assert flagged(text) == (), text


def test_a_text_answer_is_stored_once_per_seat_whole_or_refused_whole(store):
    teacher = _class(store, 4)
    code = teacher.code
    assert store.answer_text(code, "s0", Q, "  Keys 🔑 ", None, stop=STOP) == "  Keys 🔑 "
    with pytest.raises(AnsweredAlready):  # the first answer counts
        store.answer_text(code, "s0", Q, "values", None, stop=STOP)
    assert store.student_answer(code, "s0", Q) == "  Keys 🔑 "
    korean = "가" * TEXT_CHARS  # 100 characters, 300 bytes: the limits exactly
    assert store.answer_text(code, "s1", Q, korean, None, stop=STOP) == korean
    later = (time.time() + TEXT_TRY_SECONDS * n for n in range(1, 10))  # a try a window: no rate limit here
    for text, chars, size in (("a" * (TEXT_CHARS + 1), TEXT_CHARS + 1, TEXT_CHARS + 1),
                              ("😀" * 76, 76, 304)):  # under the characters, over the bytes
        with pytest.raises(TextTooLong) as refused:
            store.answer_text(code, "s2", Q, text, None, now=next(later), stop=STOP)
        assert refused.value.values() == {"typed_chars": chars, "typed_bytes": size, "chars": TEXT_CHARS,
                                          "bytes": TEXT_BYTES}
    for blank in ("", "   ", "\u200b\u200d", "\u3164"):
        with pytest.raises(TextEmpty):
            store.answer_text(code, "s2", Q, blank, None, now=next(later), stop=STOP)
    assert store.student_answer(code, "s2", Q) is None  # nothing cut, nothing stored
    assert store.answer_text(code, "s2", Q, "i\x00am", None, now=next(later), stop=STOP) == "i am"  # a NUL: PostgreSQL takes it so
    with pytest.raises(ClassElsewhere):  # only the class's stop takes answers
        store.answer_text(code, "s3", "intro:3", "ahead", None, stop=3)
    with pytest.raises(NotAdmitted):
        store.answer_text(code, "nobody", Q, "forged", None, stop=STOP)
    assert teacher.results(Q).answered == 3


def test_a_flood_of_resubmits_from_one_seat_is_refused_and_other_seats_are_not(store):
    teacher = _class(store, 2)
    code, now = teacher.code, time.time()
    store.answer_text(code, "s0", Q, "keys", None, now=now, stop=STOP)
    for n in range(1, TEXT_TRIES):
        with pytest.raises(AnsweredAlready):
            store.answer_text(code, "s0", Q, f"again {n}", None, now=now + n, stop=STOP)
    for _ in range(20):  # past the limit: refused before anything else, with the wait
        with pytest.raises(TooManyTries) as refused:
            store.answer_text(code, "s0", Q, "x" * 500, None, now=now + 5, stop=STOP)
        assert 1 <= refused.value.seconds <= TEXT_TRY_SECONDS
    store.answer_text(code, "s1", Q, "Keys", None, now=now + 5, stop=STOP)  # her neighbour is not slowed
    with pytest.raises(AnsweredAlready):  # the window passed: heard again (and the first answer still counts)
        store.answer_text(code, "s0", Q, "values", None, now=now + 5 + TEXT_TRY_SECONDS + 1, stop=STOP)
    assert teacher.results(Q).counts == {"keys": 1, "Keys": 1}


def test_the_room_reads_only_approved_groups_of_a_revealed_question_and_flags_stop_the_bulk(store):
    teacher = _class(store, 6)
    code = teacher.code
    for student, text in enumerate(("Key", "key ", "KEY", "fuck this", "values", "씨발")):
        store.answer_text(code, f"s{student}", Q, text, None, stop=STOP)
    groups = {g.key: g for g in teacher.text_groups(Q)}
    assert groups["key"].students == 3 and groups["key"].state == WAITING and groups["key"].shown == "Key"
    assert groups["fuck this"].flags == ("en",) and groups["씨발"].flags == ("ko",)
    assert store.approved_texts(code, Q) == []  # nothing approved, nothing revealed
    assert teacher.approve_texts(Q) == 2  # every group waiting and not flagged: key, values
    assert store.approved_texts(code, Q) == []  # approved, but not revealed: nothing yet
    teacher.reveal(Q)
    assert {(g.shown, g.students) for g in store.approved_texts(code, Q)} == {("Key", 3), ("values", 1)}
    assert teacher.approve_texts(Q) == 0  # the flagged ones never go in bulk
    assert teacher.approve_texts(Q, ["씨발"]) == 1  # her click on that group does
    assert teacher.hide_texts(Q, ["key", "values"]) == 2  # one click takes a group down, approved or not
    assert [g.shown for g in store.approved_texts(code, Q)] == ["씨발"]
    states = {g.key: g.state for g in teacher.text_groups(Q)}
    assert states == {"key": HIDDEN, "values": HIDDEN, "씨발": APPROVED, "fuck this": WAITING}
    assert teacher.approve_texts(Q, ["no such group"]) == 0


def test_the_room_reads_the_text_she_approved_not_a_later_spelling(store):
    teacher = _class(store, 4)
    code = teacher.code
    store.answer_text(code, "s0", Q, "Key", None, stop=STOP)
    teacher.approve_texts(Q)
    for student in ("s1", "s2", "s3"):  # the same group, spelt otherwise by more students after her approval
        store.answer_text(code, student, Q, "ＫＥＹ", None, stop=STOP)
    teacher.reveal(Q)
    assert [(g.shown, g.students) for g in store.approved_texts(code, Q)] == [("Key", 4)]
    assert teacher.text_groups(Q)[0].spellings == ("ＫＥＹ", "Key")


def test_another_class_reads_and_moderates_nothing_of_this_one(store):
    mine, other = _class(store, 2), _class(store, 2)
    store.answer_text(mine.code, "s0", Q, "keys", None, stop=STOP)
    mine.approve_texts(Q)
    mine.reveal(Q)
    other.reveal(Q)
    assert store.approved_texts(other.code, Q) == [] and other.text_groups(Q) == []
    impostor = store.teacher(mine.code, other.token, "intro")  # her token opens only her class
    for action in (lambda: impostor.text_groups(Q), lambda: impostor.approve_texts(Q),
                   lambda: impostor.hide_texts(Q, ["keys"])):
        with pytest.raises(NotTheTeacher):
            action()
    with pytest.raises(NotAdmitted):  # a student of the other class answers nothing here
        store.answer_text(mine.code, "other-student", Q, "x", None, stop=STOP)
    assert [g.shown for g in store.approved_texts(mine.code, Q)] == ["keys"]


def test_every_bad_input_is_stored_as_typed_or_refused_whole(store):
    inputs = load_bad_inputs()
    teacher = _class(store, len(inputs))
    stored = 0
    for n, text in enumerate(inputs):
        try:
            kept = store.answer_text(teacher.code, f"s{n}", Q, text, None, stop=STOP)
        except (TextEmpty, TextTooLong):
            assert store.student_answer(teacher.code, f"s{n}", Q) is None
            continue
        stored += 1
        assert kept == stored_text(text) and store.student_answer(teacher.code, f"s{n}", Q) == kept
    assert stored >= 18 and teacher.results(Q).answered == stored
    shown = {g.shown for g in teacher.text_groups(Q)}
    assert "<script>alert(1)</script>" in shown and "😀 🐈⬛ 👩👩👧" in shown


@pytest.mark.slow  # 300 writes: about 5 s on SQLite (each its own transaction, as 300 students' are)
def test_a_flood_of_300_texts_is_stored_whole_and_the_moderation_list_reads_quickly(store):
    teacher = _class(store, 300)
    words = ("keys", "Keys", "relevance", "match", "similarity", "context", "관련성", "키", "information", "😀")
    for n in range(300):
        store.answer_text(teacher.code, f"s{n}", Q, f"{words[n % 10]} {n // 10 % 7}", None, stop=STOP)
    assert store.stored_answers(teacher.code) == 300
    started = time.perf_counter()
    groups = teacher.text_groups(Q)
    listed = time.perf_counter() - started
    assert sum(g.students for g in groups) == 300 and len(groups) == 63  # "keys 1" and "Keys 1" are one group
    assert listed < 1.0, f"the moderation list of 300 texts took {listed:.2f} s"
    assert teacher.approve_texts(Q) == 63
    teacher.reveal(Q)
    assert sum(g.students for g in store.approved_texts(teacher.code, Q)) == 300


REPORTED = """title = "Texts"
[[stop]]
page = "softmax_scaling"
text = "Look."
[stop.question]
kind = "text"
prompt = "In one word: what does a query ask for?"
answer = ["keys", "relevant keys"]
"""


def test_the_report_and_its_csv_carry_approved_texts_only_and_the_share_right(store):
    lesson = parse_lesson("texts", REPORTED, known_pages())
    teacher = store.create_class("texts", stop=1)
    for student, text in enumerate(("Keys", "keys", "fuck", "values")):
        store.join(teacher.code, f"s{student}")
        right = Expected("keys", accepted_keys(lesson.stops[0].question), text=True).is_right(text)
        store.answer_text(teacher.code, f"s{student}", "texts:1", text, right, stop=1)
    teacher.approve_texts("texts:1")
    read = teacher.report_answers()
    assert build_report(lesson, reportable(read), approved_texts=read.approved_texts).questions == []  # not revealed: nothing
    teacher.reveal("texts:1")
    read = teacher.report_answers()
    question = build_report(lesson, reportable(read), approved_texts=read.approved_texts).questions[0]
    assert question.first.answered == 4 and question.first.share == 0.5
    assert question.texts == (("Keys", 2), ("values", 1))  # "fuck" is flagged: never approved in bulk
    tables = report_tables(build_report(lesson, reportable(read), approved_texts=read.approved_texts), "en")
    assert tables["texts"]["text"].tolist() == ["Keys", "values"]
    text = report_csv(tables).decode()
    assert "Keys" in text and "fuck" not in text

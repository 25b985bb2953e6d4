"""Whether an answer is right is decided once, when it is stored (ClassStore.answer's `correct`): the teacher's
coloured bars (ui/live_class/peer_teacher.answer_rows) and her "% right" (Results.correct) read that one stored judgement
(issue 37), and a number question's bars come in numeric order, not as text (issue 38 item 8: "12, 16, 8")."""
from classroom.lessons import load_lessons
from classroom.measures import MEASURES
from classroom.store import ClassStore
from ui.lessons.catalogue import known_pages
from ui.live_class.peer_teacher import answer_rows

INTRO = load_lessons(known_pages())[0]["intro"]
NUMBER_STOP = next(stop for stop in INTRO.stops if stop.question is not None and stop.question.kind == "number")


def _class(tmp_path, students: str):
    store = ClassStore(tmp_path / "db")
    teacher = store.create_class("intro", stop=NUMBER_STOP.number)
    code = teacher.code
    for student in students:
        store.join(code, student)
    return store, teacher


def test_the_bars_and_the_share_right_read_the_judgement_stored_with_each_answer(tmp_path):
    store, teacher = _class(tmp_path, "abcde")
    code = teacher.code
    qid = f"intro:{NUMBER_STOP.number}"
    # the judgements as the students' pages stored them; "12" was judged wrong when given (say the lesson's
    # expected answer was another then): it stays wrong here, whatever the lesson file says now
    for student, given, right in zip("abcde", ("16", "8", "12", "16", "8"), (True, False, False, True, False),
                                     strict=True):
        store.answer(code, student, qid, given, right, stop=NUMBER_STOP.number)
    results = teacher.results(qid)
    assert results.right == {"12": False, "16": True, "8": False}
    hidden = answer_rows(NUMBER_STOP, results, revealed=False)
    assert hidden["right"].isna().all()  # before Reveal the bars say nothing about right or wrong
    shown = answer_rows(NUMBER_STOP, results, revealed=True)
    assert list(shown["answer"]) == ["8", "12", "16"]  # numeric order
    assert list(shown["students"]) == [2, 1, 2] and list(shown["right"]) == [False, False, True]
    right_students = int(shown.loc[shown["right"] == True, "students"].sum())  # noqa: E712 (a column of bools)
    assert right_students == results.correct == 2  # the bars' share is the "% right" share


def test_an_answer_stored_without_a_judgement_is_neither_right_nor_wrong(tmp_path):
    store, teacher = _class(tmp_path, "ab")
    code = teacher.code
    qid = f"intro:{NUMBER_STOP.number}"
    store.answer(code, "a", qid, "16", None, stop=NUMBER_STOP.number)
    store.answer(code, "b", qid, "8", None, stop=NUMBER_STOP.number)
    results = teacher.results(qid)
    assert results.correct is None and results.right == {"16": None, "8": None}
    assert answer_rows(NUMBER_STOP, results, revealed=True)["right"].isna().all()


def test_an_answer_worked_out_from_the_question_is_not_called_the_models():
    """intro's stop on the causal mask counts visible keys (no model gives that number): 'The answer: 3', while a
    question a model answers keeps 'The model's answer' (issue 38 item 8)."""
    from i18n import using_language
    from ui.lessons.questions import expected_answer, right_answer

    arithmetic = [stop for stop in INTRO.stops if stop.question is not None and stop.question.compute
                  and not MEASURES[stop.question.compute].by_model]  # softmax weights, a mask's visible keys
    measured = next(stop for stop in INTRO.stops if stop.question is not None
                    and stop.question.compute == "lowest_long_sentence_model")
    assert arithmetic
    for language, worked, model in (("en", "The answer: ", "The model's answer: "), ("ko", "정답: ", "모델의 답: ")):
        with using_language(language):
            for stop in arithmetic:
                assert right_answer(stop.question, expected_answer(stop)).startswith(worked), stop.number
            assert right_answer(measured.question, expected_answer(measured)).startswith(model)

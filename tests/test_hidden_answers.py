"""No answer before its time (issue 51): every screen that can show a question's right answer, a judgement (right or
wrong, a share right, the rule of thumb on it) or its measured value shows none of them before the class's Reveal,
except the teacher's private screen; after the Reveal each of them does. One walk per lesson, language and mode (one
round, peer instruction) over the paths: the teacher projected, her private view, two students in the class, a
student alone on the same stop, and "Open this stop here" on the teacher's own page; checked after each round.
The rule they all follow is ui/lessons/questions.answer_shown."""
import json
import re
from dataclasses import dataclass

import pytest

from classroom.lessons import localized
from i18n import translate, using_language
from tests.app_links import altair_text, assert_healthy, chart_specs, chart_titles, go_to, open_from_link
from tests.test_class_pages import _texts, _walk
from ui.lessons.catalogue import lessons
from ui.lessons.measured import worded
from ui.lessons.questions import expected_answer, right_answer

# (lesson, language, mode): the intro lesson's model question in both languages and both modes; the LLM lesson's
# worked number and the answer lesson's measured choice, each in the peer instruction its file opens them in.
WALKS = [("intro", "en", "one"), ("intro", "ko", "peer"), ("intro", "en", "peer"), ("intro", "ko", "one"),
         ("answer", "en", "peer"), ("llm", "ko", "peer")]


@pytest.fixture(autouse=True)
def data_folder(tmp_path, monkeypatch):
    monkeypatch.setenv("ATTENTION_LAB_DATA", str(tmp_path))
    monkeypatch.delenv("ATTENTION_LAB_TEACHER_PASSWORD", raising=False)


@dataclass(frozen=True)
class Secret:
    """What a screen must not show before the Reveal: the right-answer line and the measured value, as the
    language words them; and the right and a wrong answer to give."""
    line: str
    measured: str | None
    right: str
    wrong: str


def _secret(lesson_id: str, language: str) -> Secret:
    stop = lessons()[0][lesson_id].stops[0]
    with using_language(language):
        expected = expected_answer(stop)
        line = right_answer(stop.question, expected)
        measured = worded(expected.measured)  # as the session's screen words it
    if stop.question.kind == "choice":
        options = range(1, len(stop.question.options["en"]) + 1)
        wrong = next(str(o) for o in options if not expected.is_right(str(o)))
    else:
        wrong = f"{float(expected.shown) + 7:g}"
    return Secret(line, measured, expected.shown, wrong)


def _leaks(at, secret: Secret, language: str, *, student: bool) -> list[str]:
    """Every way this screen gives the answer away now (outside popovers, which the room does not see opened)."""
    text = _texts(at)
    found = [f"the answer line {secret.line!r}"] if secret.line in text else []
    if secret.measured and secret.measured in text:
        found.append(f"the measured value {secret.measured!r}")
    if translate(language, "peer.rule_source") in text:
        found.append("the rule of thumb on the share right")
    for key in ("peer.groups_right", "peer.groups_few_right"):  # how many discussion groups have a right answer
        if re.search(re.escape(translate(language, key, with_right="@", groups="@", right="@")).replace("@", r"\d+"),
                     text):
            found.append(f"the groups with a right answer ({key})")
    for label in ("class_teacher.correct", "peer.before", "peer.after"):
        found += [f"{m.label} = {m.value}" for m in at.metric
                  if m.label == translate(language, label) and m.value not in ("–", "")]
    found += ["a chart coloured by verdict" for c in at.get("vega_lite_chart") if '"field": "verdict"' in c.proto.spec]
    if student:
        found += [f"a verdict: {s.value}" for s in at.success]
        found += ["the stop's chart" for _ in chart_specs(at)]
    return found


def _shows(at, secret: Secret) -> bool:
    return secret.line in _texts(at) or any(secret.line in str(getattr(n, "value", "")) for n in _walk(at._tree))


def _start(lesson_id: str, language: str):
    teacher, _ = open_from_link("teacher", {"lang": language})
    from classroom.teacher_password import teacher_password

    teacher.text_input(key="class_start_password").input(teacher_password())
    lesson_box = next(s for s in teacher.selectbox if s.label == translate(language, "class_teacher.lesson"))
    lesson_box.set_value(lesson_id)
    next(b for b in teacher.form_submit_button
         if b.label == translate(language, "class_teacher.start")).click().run()
    assert_healthy(teacher)
    code = next(m.value for m in teacher.metric if m.label == translate(language, "class_teacher.code"))
    return teacher, code


def _answer(at, lesson_id: str, kind: str, value: str, round: int = 1) -> None:
    key = f"q_{lesson_id}_1" + ("_round2" if round == 2 else "")
    if kind == "choice":
        at.radio(key=f"{key}_choice").set_value(int(value))
    else:
        at.number_input(key=f"{key}_number").set_value(float(value))
    next(b for b in at.form_submit_button if b.form_id == f"{key}_form").click().run()
    assert_healthy(at)


@pytest.mark.slow
@pytest.mark.parametrize("lesson_id,language,mode", WALKS)
def test_no_screen_shows_the_answer_before_the_reveal(lesson_id, language, mode):
    secret = _secret(lesson_id, language)
    stop = lessons()[0][lesson_id].stops[0]
    kind, qid = stop.question.kind, f"{lesson_id}:1"
    seen: dict[str, list[str]] = {}

    def check(name: str, at, *, student: bool, rerun: bool = True) -> None:
        if rerun:  # as her class watch or the teacher's read-outs rerun it
            at.run()
        assert_healthy(at)
        leaks = _leaks(at, secret, language, student=student)
        if leaks:
            seen[name] = leaks

    teacher, code = _start(lesson_id, language)
    teacher.button_group(key=f"peer_mode_{qid}").set_value(mode).run()
    check("the projector, nobody answered", teacher, student=False)
    students = [open_from_link(None, {"class": code, "lang": language})[0] for _ in range(2)]
    for student, value, name in zip(students, (secret.wrong, secret.right), ("wrong", "right"), strict=True):
        _answer(student, lesson_id, kind, value)
        check(f"a student who answered {name}, round 1", student, student=True)
    check("the projector after round 1's answers", teacher, student=False)

    # the stop's page opened plainly in a new tab or a private window (a session outside the class): the stop's
    # section waits for the Reveal, the rest of the page is there (classroom/answers_ahead.py)
    plain, _ = open_from_link(stop.page, {"lang": language})
    held_line = translate(language, "page_sections.held", stop=1)
    assert held_line in " ".join(i.value for i in plain.info)
    check("the stop's page opened outside the class", plain, student=False, rerun=False)
    alone, _ = open_from_link(None, {"lesson": lesson_id, "stop": "1", "lang": language})  # a new session, no class
    check("a student alone on the class's stop", alone, student=True)
    _answer(alone, lesson_id, kind, secret.right)
    check("a student alone who answered the class's stop", alone, student=True)

    if mode == "peer":
        teacher.toggle(key=f"peer_shown_{qid}").set_value(True).run()
        check("the projector showing round 1", teacher, student=False)
        teacher.button(key="peer_discuss").click().run()
        check("the projector in the discussion", teacher, student=False)
        teacher.button(key="peer_pair").click().run()  # the two voters paired by disagreement (A2 and C2)
        check("the projector with discussion groups", teacher, student=False, rerun=False)
        for student, other in zip(students, ("C2", "A2"), strict=True):
            check("a student in the discussion", student, student=True)
            assert translate(language, "peer.talk_with", names=other) in " ".join(i.value for i in student.info)
        teacher.button(key="peer_round2").click().run()
        for student, value in zip(students, (secret.right, secret.wrong), strict=True):
            student.run()
            _answer(student, lesson_id, kind, value, round=2)
            check("a student after round 2", student, student=True)
        check("the projector after round 2", teacher, student=False)

    teacher.toggle(key="teacher_private").set_value(True).run()
    assert _shows(teacher, secret), "her private view shows the answer before the Reveal"
    teacher.toggle(key="teacher_private").set_value(False).run()
    check("the projector, back from her private view", teacher, student=False)
    teacher.button(key="class_open_stop").click().run()  # "Open this stop here": the stop's page on her screen
    assert localized(stop.title, language) in _texts(teacher)
    check("the stop opened here by the teacher", teacher, student=True, rerun=False)

    assert not seen, json.dumps(seen, ensure_ascii=False, indent=1)
    teacher.button(key="stop_reveal").click().run()  # her Reveal on the stop's page, the class's Reveal
    go_to(teacher, stop.page)  # AppTest runs the page it was opened on again; the browser stays on the stop's page
    assert _shows(teacher, secret) and chart_specs(teacher), "her page shows the answer and the chart after it"
    for student in students:
        student.run()
        assert _shows(student, secret) or student.success, "a student sees the answer after the Reveal"
    plain, _ = open_from_link(stop.page, {"lang": language})  # (a rerun of AppTest's Korean selectboxes fails)
    assert held_line not in " ".join(i.value for i in plain.info), "revealed: the page outside the class opens"


@pytest.mark.slow
def test_a_stop_alone_holds_the_sections_that_answer_the_stops_after_it():
    """The answer lesson's four stops share one page: after answering stop 1, the page under the lens says where the
    patching map, the strongest head and the attribution bars open, and draws none of them; answering stop 2 opens
    the patching map on stop 2's page and still holds stops 3 and 4."""
    at, _ = open_from_link(None, {"lesson": "answer", "stop": "1"})
    _answer(at, "answer", "choice", "3")
    infos = " ".join(i.value for i in at.info)
    for later in (2, 3, 4):
        assert translate("en", "page_sections.held", stop=later) in infos
    # the lens's map and its answer's rank by layer, then the two sections no stop asks about, which read the lens's
    # prompt (its tokens' influence, its information flow); nothing of the sections the later stops ask about
    titles = chart_titles(at)
    assert len(titles) == 4 and all(any(part in t for part in (
        "Logit lens", "rank and probability by layer", "by three methods", "Information flow to ' Paris'"))
        for t in titles), titles
    at.button(key="lesson_next").click().run()
    at.radio(key="q_answer_2_choice").set_value(1)
    next(b for b in at.form_submit_button if b.form_id == "q_answer_2_form").click().run()
    infos = " ".join(i.value for i in at.info)
    assert translate("en", "page_sections.held", stop=2) not in infos
    assert all(translate("en", "page_sections.held", stop=later) in infos for later in (3, 4))


def test_no_screen_shows_a_students_text_before_the_teacher_approves_it_and_reveals_the_question():
    """The intro's text question (stop 16): another student's text reaches no student, and the projector shows a
    text only once she approved its group and revealed the question (classroom/text_answers.py)."""
    from classroom.store import ClassStore

    teacher, code = _start("intro", "en")
    handle = ClassStore().take_back(code)  # her second device
    handle.move(16)
    students = [open_from_link(None, {"class": code})[0] for _ in range(2)]
    markers = ("Keys marker one", "<i>marker two</i>")
    for student, text in zip(students, markers, strict=True):
        student.text_input(key="q_intro_16_text").input(text)
        next(b for b in student.form_submit_button if b.form_id == "q_intro_16_form").click().run()
        assert_healthy(student)
    assert "marker two" not in _texts(students[0]) and "marker one" not in _texts(students[1])

    def projected() -> str:
        teacher.run()
        assert_healthy(teacher)
        return _texts(teacher) + altair_text(teacher)

    assert "marker" not in projected()
    assert handle.approve_texts("intro:16") == 2
    assert "marker" not in projected(), "approved, not revealed"
    handle.hide_texts("intro:16", ["<i>marker two</i>"])
    handle.reveal("intro:16")
    shown = projected()
    assert "Keys marker one" in shown and "marker two" not in shown
    students[1].run()  # after the Reveal: her own answer (hidden from the room, never from her), and no other's
    assert_healthy(students[1])
    assert "marker two" in _texts(students[1]) and "marker one" not in _texts(students[1])


@pytest.mark.slow
def test_a_cell_questions_taps_over_the_real_map_wait_for_the_reveal():
    """Issue 55: the class's taps are drawn over the real map (the answer itself) on her private screen and, after
    her Reveal, on the projector; before it the projector shows the answer bars only, and a student who tapped sees
    her pick as tokens and no map of weights."""
    from classroom.store import ClassStore
    from tests.test_lessons import CELL_STOP, _answer as answer_stop

    stop = lessons()[0]["intro"].stops[CELL_STOP - 1]
    expected = expected_answer(stop)
    teacher, code = _start("intro", "en")
    ClassStore().take_back(code).move(CELL_STOP)  # the class at the cell stop (as her Next stop)
    teacher.run()
    student = open_from_link(None, {"class": code})[0]
    answer_stop(student, f"q_intro_{CELL_STOP}", "cell", expected.shown)
    assert_healthy(student)
    assert expected.cells.label(expected.shown) in _texts(student).replace("\\", "")  # her pick, as tokens
    assert not chart_specs(student) and not student.success  # no map of weights, no verdict before the Reveal

    def taps(at) -> list[str]:
        return [t for t in chart_titles(at) if "taps over the real map" in t]

    teacher.run()
    assert not taps(teacher), "the projector shows the taps over the real map before the Reveal"
    teacher.toggle(key="teacher_private").set_value(True).run()
    assert [t for t in taps(teacher) if "100% right (1 answered)" in t], chart_titles(teacher)
    teacher.toggle(key="teacher_private").set_value(False).run()
    assert not taps(teacher)
    teacher.button(key="class_reveal").click().run()
    assert taps(teacher), "after the Reveal the projector shows the taps over the real map"
    student.run()
    assert student.success and chart_specs(student), "after the Reveal the student sees her verdict and the map"

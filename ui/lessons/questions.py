"""A lesson stop's question: its right answer (measured by the registry of classroom/measures where the lesson says
`compute`, through ui/lessons/measured.py) and the widget that asks it. Answers are kept as canonical text, the same
in every language: a choice is its 1-based option number, a head is "L2 H3" (1-based, as on screen), a number is its
value, a token is its text, a cell its 1-based "query,key" positions (ui/lessons/cell_question.py asks it), a text
what the student typed (classroom/text_answers.stored_text), shown by its visible_text (no bidi control or zero-width
character reaches a screen) and always escaped, a view the link of the view she sent (ui/lessons/view_question.py),
shown as its page and values in words."""
from __future__ import annotations

import streamlit as st

from classroom.lessons import Question, Stop, localized
from classroom.lesson_questions import accepted_keys
from classroom.text_answers import TEXT_BYTES, TEXT_CHARS, stored_text, text_problem, visible_text
from classroom.measures import Expected, MeasureError, head_label, number_answer
from classroom.measures.translation import TRANSLATION_VIEW, checked_sentence, word_position
from i18n import current_language, tr
from ui.lessons.cell_question import ask_cell
from ui.lessons.view_question import ask_view, sent_view_words
from ui.lessons.measured import asked, computed_answer, stop_model, stop_view, worded
from ui.state import shared_analysis
from ui.text import escape_markdown, isolated_markdown



def answer_shown(revealed: bool, private: bool = False) -> bool:
    """The one rule for every right answer, judgement (right or wrong, a share right, the rule of thumb on it) and
    measured value a lesson's question has, on every screen: `revealed` (to a class: the teacher pressed Reveal; to a
    student alone: she has answered, and no live class on this server holds the stop back), or `private`, the
    teacher's private screen (ui/live_class/private_view.py), which the room never sees. Every path that draws one of
    them asks this, so no screen shows one before its time (tests/test_hidden_answers.py walks them)."""
    return revealed or private


def right_answer(question: Question, expected: Expected) -> str:
    """'The model's answer: 16' where a model gave it, 'The answer: 16' where arithmetic did (markdown-safe)."""
    key = "class_teacher.right_answer" if expected.by_model else "class_teacher.right_answer_worked"
    return tr(key, answer=answer_markdown(question, expected.shown, expected))


def answer_markdown(question: Question, answer: str, expected: Expected | None = None) -> str:
    """A canonical answer as a line of Markdown shows it: answer_label, escaped; a student's text also isolated from
    the words around it (a right-to-left answer cannot reorder them)."""
    label = answer_label(question, answer, expected)
    return isolated_markdown(label) if question.kind == "text" else escape_markdown(label)


def _stop_tokens(stop: Stop) -> list[str]:
    """The stop's sentence as its model reads it (the source of its greedy decode), from the pages' shared cache."""
    view = stop_view(stop, ("model", *TRANSLATION_VIEW))
    loaded = stop_model(view["model"])
    return shared_analysis(view["model"], checked_sentence(loaded, view), loaded).decode.source.tokens


def expected_answer(stop: Stop) -> Expected | None:
    """The right answer of the stop's question: measured by its compute (classroom/measures) where the file says
    so, else the fixed one; a text question's accepted answers (None: an open question, neither right nor wrong)."""
    question = stop.question
    assert question is not None
    if question.kind == "view":  # explain with a view: neither right nor wrong
        return None
    if question.kind == "text":
        if question.answer is None:
            return None
        shown = ", ".join(localized(question.answer, current_language()))
        return Expected(shown, accepted_keys(question), by_model=False, text=True)
    if question.compute:
        try:
            return computed_answer(stop)
        except MeasureError:
            raise
        except (KeyError, ValueError, TypeError, IndexError) as error:
            raise MeasureError(f"{question.compute}: {type(error).__name__} {error}") from error
    if question.kind == "number":
        try:
            return number_answer(f"{float(question.answer):g}", float(question.answer), asked(question))
        except (TypeError, ValueError) as error:
            raise MeasureError(tr("lessons.bad_fixed_answer")) from error
    answer = str(question.answer)
    # A fixed answer the widget cannot offer would hide the page for good: say so at the stop instead.
    if question.kind == "head":
        layers, heads = _shape(stop)
        if answer not in {head_label(layer, head) for layer in range(layers) for head in range(heads)}:
            raise MeasureError(tr("lessons.no_such_head", answer=answer, layers=layers, heads=heads))
    elif question.kind == "token":
        word_position(_stop_tokens(stop), answer)
    return Expected(answer, frozenset({answer}))


def answer_label(question: Question, answer: str, expected: Expected | None = None) -> str:
    """A canonical answer as the reader's language shows it (a choice's option text; a text's visible text; a cell as
    its tokens, "it → animal", from the map of `expected`)."""
    if question.kind == "text":
        return visible_text(answer)
    if question.kind == "view":
        return sent_view_words(answer)
    if question.kind == "cell" and expected is not None and expected.cells is not None:
        return expected.cells.label(answer) or answer
    if question.kind == "choice" and answer.isdigit():
        options = localized(question.options, current_language())
        if 1 <= int(answer) <= len(options):
            return options[int(answer) - 1]
    return answer


def stop_answer_label(stop: Stop, answer: str) -> str:
    """answer_label of a stop's question; a cell question's from its map (the stop's measure, kept per server)."""
    expected = None
    if stop.question.kind == "cell":
        try:
            expected = expected_answer(stop)
        except MeasureError:
            pass  # its positions, as stored
    return answer_label(stop.question, answer, expected)


GRID_WORDED_HEADS = 6  # a head question's grid words its buttons "Head n" up to this many heads a layer


def _shape(stop: Stop) -> tuple[int, int]:
    """(layers, heads) of the stop's model, which a head question's grid offers: its layout's, for the kind of heads
    the stop's view shows (its first kind when the view names none the model has)."""
    view = stop_view(stop, ("model", "kind"))
    layout = stop_model(view["model"]).layout
    kind = view.get("kind")
    return layout.get(kind) or next(iter(layout.values()), (1, 1))


def ask(stop: Stop, key: str, submit: str | None = None) -> str | None:
    """Draw the question's widget; -> the canonical answer when the student submits it in this run. `submit`: the
    button's label (default "Answer"; a check question's says another word, so the stop's own Answer stays one)."""
    question = stop.question
    assert question is not None
    prompt = localized(question.prompt, current_language())
    if question.kind == "cell":
        return ask_cell(stop, key, prompt, submit)
    if question.kind == "view":
        return ask_view(stop, key, prompt, submit)
    if question.kind == "head":
        st.markdown(f"**{prompt}**")
        layers, heads = _shape(stop)
        st.caption(tr("lessons.head_grid_help"))
        for layer in range(layers):
            columns = st.columns(heads + 1)
            columns[0].markdown(tr("lessons.layer_label", layer=layer + 1))
            for head in range(heads):
                # past GRID_WORDED_HEADS columns "Head 12" is cut to "He…" (12 columns at 1280 px projected): the
                # number alone, under the caption that says columns are heads
                label = tr("lessons.head_label", head=head + 1) if heads <= GRID_WORDED_HEADS else str(head + 1)
                if columns[head + 1].button(label, key=f"{key}_L{layer}_H{head}", width="stretch"):
                    return head_label(layer, head)
        return None
    with st.form(f"{key}_form", border=False):
        if question.kind == "choice":
            options = localized(question.options, current_language())
            chosen = st.radio(prompt, range(1, len(options) + 1), index=None, key=f"{key}_choice",
                              format_func=lambda n: options[n - 1])
            answer = None if chosen is None else str(chosen)
        elif question.kind == "number":
            value = st.number_input(prompt, min_value=-1e6, max_value=1e6, value=None, format="%.4g",
                                    key=f"{key}_number", placeholder=tr("lessons.number_placeholder"))
            answer = None if value is None else f"{value:g}"
        elif question.kind == "text":  # no max_chars: Streamlit would cut a longer text (a paste) without a word;
            # it is refused whole below, said, and stays in the field
            answer = st.text_input(prompt, key=f"{key}_text",
                                   placeholder=tr("lessons.text_placeholder"),
                                   help=tr("lessons.text_help", chars=TEXT_CHARS, bytes=TEXT_BYTES))
        else:  # token: the stop's sentence as the model reads it
            tokens = [t for t in _source_tokens(stop) if t != "<eos>"]
            answer = st.pills(prompt, tokens, key=f"{key}_token")
        submitted = st.form_submit_button(submit or tr("lessons.submit"), type="primary")
    if submitted and question.kind == "text":  # said here, before anything is sent; the text stays in its field
        answer = stored_text(answer or "")
        if problem := text_problem(answer):
            st.warning(tr(f"lessons.text_{problem}", chars=TEXT_CHARS, bytes=TEXT_BYTES, typed_chars=len(answer),
                          typed_bytes=len(answer.encode("utf-8"))))
            return None
    if submitted and answer is None:
        st.warning(tr("lessons.pick_first"))
    return answer if submitted else None


def _source_tokens(stop: Stop) -> list[str]:
    try:
        return _stop_tokens(stop)
    except MeasureError:
        return []


def feedback(question: Question, given: str | None, expected: Expected | None) -> tuple[str, str] | None:
    """-> (verdict: "right", "wrong" or "info", the Markdown line): the student's answer, right or not, and the right
    one; where the answer rests on a measurement, the measured value too ("Right: 0.5 (measured: 0.43)")."""
    if given is None and expected is None:
        return None
    def measured(beside: str) -> str:  # the measured value, unless the line already says it
        said = "" if expected is None else worded(expected.measured)
        if not said or said == beside:
            return ""
        return tr("lessons.measured", value=escape_markdown(said))

    if given is None:
        right = answer_label(question, expected.shown, expected)
        return "info", tr("lessons.revealed", right=answer_markdown(question, expected.shown, expected)) + measured(right)
    label = answer_label(question, given, expected)
    if expected is None:
        return "info", tr("lessons.your_answer", answer=answer_markdown(question, given))
    if expected.is_right(given):
        return "right", tr("lessons.right", answer=answer_markdown(question, given, expected)) + measured(label)
    right = answer_label(question, expected.shown, expected)
    return "wrong", tr("lessons.wrong", answer=answer_markdown(question, given, expected),
                       right=right_answer(question, expected)) + measured(
        right)


def show_answer(question: Question, given: str | None, expected: Expected | None) -> None:
    """After answering (or when the teacher revealed it): the feedback line; the words say right or not, and the
    ✓/✗ icon too, not the colour alone."""
    shown = feedback(question, given, expected)
    if shown is None:
        return
    verdict, line = shown
    if verdict == "right":
        st.success(line, icon=":material/check:")
    elif verdict == "wrong":
        st.warning(line, icon=":material/close:")
    else:
        st.info(line)

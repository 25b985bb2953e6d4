"""A lesson stop's question: its right answer computed from the live model (model/questions.py) and the widget
that asks it. Answers are kept as canonical text, the same in every language: a choice is its 1-based option
number, a head is "L2 H3" (1-based, as on screen), a number is its value, a token is its text."""
from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

import streamlit as st

from classroom.lessons import Question, Stop, localized
from i18n import current_language, tr
from model.checkpoint import CheckpointError
from model.families import STEPS
from model.foundations.attention_steps import build_mask
from model.metrics import head_entropy
from model.questions import causal_visible_keys, lowest_metric, most_attended_key, softmax_weight
from ui.models import shipped_model_info
from ui.state import DEFAULT_MODEL, analyse, get_model
from ui.text import escape_markdown
from ui.widget_spec import SENTENCE


class QuestionError(ValueError):
    """The right answer cannot be computed for this stop (shown at the stop; the page is then shown as usual)."""


@dataclass(frozen=True)
class Expected:
    shown: str  # the right answer, canonical text
    accepted: frozenset[str] = field(default_factory=frozenset)  # canonical answers counted right
    number: float | None = None  # number questions: the value, right within the tolerance
    tolerance: float = 0.0
    measured: str | None = None  # the measurement the answer rests on, as the feedback states it ("0.43", "layer 19")
    separation: float | None = None  # gap between the accepted answers and the best rejected one (measure's units)
    by_model: bool = True  # read from a model; False: worked out from the question itself (softmax of given scores)

    def right_answer(self, question: Question) -> str:
        """'The model's answer: 16' where a model gave it, 'The answer: 16' where arithmetic did (markdown-safe)."""
        key = "class_teacher.right_answer" if self.by_model else "class_teacher.right_answer_worked"
        return tr(key, answer=escape_markdown(answer_label(question, self.shown)))

    def is_right(self, answer: str) -> bool:
        if self.number is not None:
            try:
                return math.isclose(float(answer), self.number, abs_tol=self.tolerance + 1e-9)
            except ValueError:
                return False
        return answer in self.accepted


def head_name(layer: int, head: int) -> str:
    """0-based (layer, head) -> 'L2 H3' as on screen."""
    return f"L{layer + 1} H{head + 1}"


def stop_decoded(stop: Stop):
    """(the loaded model, its analysis of the stop's sentence): what a question or a claim of the stop reads."""
    model_id = stop.state.get("model", DEFAULT_MODEL)
    sentence = stop.state.get(SENTENCE.url)
    if not sentence:
        raise QuestionError(tr("lessons.needs_sentence"))
    try:
        loaded = get_model(model_id)
    except (CheckpointError, KeyError) as error:
        raise QuestionError(tr("lessons.no_model", model=model_id)) from error
    if not loaded.can(STEPS):  # no greedy decode to read (an encoder, a transformers model)
        raise QuestionError(tr("lessons.needs_transformer"))
    return loaded, analyse(model_id, sentence, loaded).decode


def _cross(stop: Stop):
    loaded, result = stop_decoded(stop)
    if result is None or "cross" not in result.attention:  # a model without cross-attention heads
        raise QuestionError(tr("lessons.needs_transformer"))
    return result, result.attention["cross"]  # (L, h, T_q, T_k)


def _index(tokens: list[str], word: str) -> int:
    if word not in tokens:
        raise QuestionError(tr("lessons.word_missing", word=word, tokens=" ".join(tokens)))
    return tokens.index(word)


def _heads_near_best(values, best_is_low: bool, tolerance: float, measure: str) -> Expected:
    """values (L, h): the best head, and every head within the tolerance of it also counts as right; `measure`: the
    lessons.measured_* text that states the best head's value."""
    best = values.min() if best_is_low else values.max()
    near = abs(values - best) <= tolerance
    flat = int(values.argmin() if best_is_low else values.argmax())
    layer, head = divmod(flat, values.shape[1])
    accepted = frozenset(head_name(l, h) for l in range(values.shape[0]) for h in range(values.shape[1]) if near[l, h])
    rejected = values[~near]
    separation = None if rejected.size == 0 else float(
        rejected.min() - values[near].max() if best_is_low else values[near].min() - rejected.max())
    measured = tr(measure, value=f"{values[layer, head]:.2f}")
    return Expected(head_name(layer, head), accepted, measured=measured, separation=separation)


def _second_gap(values) -> float | None:
    """The largest value's lead over the next one (None with fewer than two)."""
    ordered = sorted((float(v) for v in values), reverse=True)
    return ordered[0] - ordered[1] if len(ordered) > 1 else None


def _option_of(sets: list, value, shown: str) -> str:
    """The 1-based number of the option whose entry (a set of layers, a band) holds `value` (`shown`: as text), as
    canonical text."""
    matches = [i for i, entry in enumerate(sets) if entry(value)]
    if len(matches) != 1:
        raise QuestionError(tr("lessons.no_option_fits", value=shown))
    return str(matches[0] + 1)


def _aligned_cross_layers(stop: Stop, question: Question) -> Expected:
    """Which layers' cross-attention heads all put at least args.at_least of each row, on average, on one source
    token: the option whose set of layers is that set. The gap: the head nearest the bound, either side of it."""
    _, cross = _cross(stop)
    peaks = cross.max(-1).mean(-1)  # (L, h): each head's mean row peak
    at_least = float(question.args["at_least"])
    aligned = frozenset(layer + 1 for layer in range(peaks.shape[0]) if peaks[layer].min() >= at_least)
    sets = [lambda found, layers=frozenset(o): found == layers for o in question.args["option_layers"]]
    number = _option_of(sets, aligned, ", ".join(map(str, sorted(aligned))) or "-")
    measured = "; ".join(tr("lessons.measured_peaks", layer=layer + 1, low=f"{peaks[layer].min():.2f}",
                            high=f"{peaks[layer].max():.2f}") for layer in range(peaks.shape[0]))
    return Expected(number, frozenset({number}), measured=measured,
                    separation=float(abs(peaks - at_least).min()))


def _compute(stop: Stop, question: Question) -> Expected:
    args, name = question.args, question.compute
    if name == "sharpest_cross_head":
        _, cross = _cross(stop)
        return _heads_near_best(head_entropy(cross), True, question.tolerance, "lessons.measured_entropy")
    if name == "head_linking":
        result, cross = _cross(stop)
        query = _index(result.output_tokens, str(args.get("target")))  # the cross row that writes the target
        key = _index(result.source.tokens, str(args.get("source")))
        return _heads_near_best(cross[:, :, query, key], bool(args.get("least")), question.tolerance,
                                "lessons.measured_weight")
    if name == "alignment_source_token":
        _, result = stop_decoded(stop)
        if "alignment" not in result.attention:
            raise QuestionError(tr("lessons.needs_alignment"))
        query = _index(result.output_tokens, str(args.get("target")))
        row = result.attention["alignment"][query]  # alignment (T, S): the row that writes the target
        token = result.source.tokens[most_attended_key(result.attention["alignment"], query)]
        return Expected(token, frozenset({token}), measured=tr("lessons.measured_weight", value=f"{row.max():.2f}"),
                        separation=_second_gap(row))
    if name == "softmax_weight":
        factor = float(stop.state.get(args["factor_param"], 1)) if "factor_param" in args else float(
            args.get("factor", 1))
        value = softmax_weight(list(args["scores"]), factor, int(args["index"]) - 1)
        return replace(_number(f"{value:.3f}", value, question), by_model=False)
    if name == "lowest_long_sentence_model":
        models = list(args["models"])
        metrics = {m: shipped_model_info(m)["metrics"]["long_test"]["exact_match"] for m in models}
        lowest = lowest_metric(metrics)
        number = str(models.index(lowest) + 1)
        return Expected(number, frozenset({number}), measured=tr("lessons.measured_exact_match",
                                                                 value=f"{metrics[lowest]:.0%}"),
                        separation=_second_gap([-v for v in metrics.values()]))
    if name == "causal_visible_keys":
        tokens = int(stop.state.get("tokens", 4))  # the mask the attention_steps page draws for the stop
        value = causal_visible_keys(build_mask(stop.state.get("mask", "causal"), tokens, tokens), int(args["query"]))
        return replace(_number(str(value), float(value), question), by_model=False)
    if name == "aligned_cross_layers":
        return _aligned_cross_layers(stop, question)
    if name in LLM_COMPUTES:
        return _llm_compute(stop, question)
    raise QuestionError(name)


LLM_COMPUTES = ("llm_next_token", "kv_cache_key_vectors", "query_heads_per_kv_head", "sink_share", "induction_layer",
                "induction_layer_band")


def _llm_compute(stop: Stop, question: Question) -> Expected:
    """The LLM lesson's answers, measured on SmolLM2 at the stop's view (ui/lessons/llm_measures.py)."""
    from ui.lessons import llm_measures  # loads nothing until asked: the model comes with the first answer

    args, name = question.args, question.compute
    if name == "llm_next_token":
        token, probabilities = llm_measures.greedy_next_token(stop, list(args["option_tokens"]))
        if token not in args["option_tokens"]:
            raise QuestionError(tr("lessons.llm_token_not_offered", token=repr(token)))
        number = str(args["option_tokens"].index(token) + 1)
        return Expected(number, frozenset({number}), measured=tr("lessons.measured_probability",
                                                                        probability=f"{probabilities[token]:.2f}"),
                        separation=_second_gap(probabilities.values()))
    if name == "induction_layer_band":
        layer, scores = llm_measures.induction_best_layer(stop), llm_measures.induction_layer_scores(stop)
        bands = [lambda found, band=band: band[0] <= found <= band[1] for band in args["bands"]]
        number = _option_of(bands, layer, str(layer))
        first, last = args["bands"][int(number) - 1]
        outside = [score for at, score in enumerate(scores, start=1) if not first <= at <= last]
        return Expected(number, frozenset({number}), measured=tr("lessons.measured_layer", layer=layer),
                        separation=float(max(scores) - max(outside)) if outside else None)
    if name == "kv_cache_key_vectors":
        value = float(llm_measures.key_vectors(stop, int(args["step"]), bool(args["cached"])))
    elif name == "query_heads_per_kv_head":
        value = float(llm_measures.query_heads_per_kv_head())
    elif name == "sink_share":
        value = llm_measures.sink_share(stop, int(args["from_layer"]))
        return _number(f"{value:.2f}", value, question, measured=f"{value:.2f}")
    else:
        value = float(llm_measures.induction_best_layer(stop))
        return _number(f"{value:g}", value, question, measured=f"{value:g}")
    return _number(f"{value:g}", value, question)


def _number(shown: str, value: float, question: Question, measured: str | None = None) -> Expected:
    """A number answer; its gap is how far the nearest wrong answer the lesson names (a misconception) lies outside
    the tolerance."""
    wrong = [abs(float(key) - value) - question.tolerance for key in question.misconceptions]
    return Expected(shown, number=value, tolerance=question.tolerance, measured=measured,
                    separation=min(wrong) if wrong else None)


def expected_answer(stop: Stop) -> Expected:
    """The right answer of the stop's question: computed where the file says so, else the fixed one."""
    question = stop.question
    assert question is not None
    if question.compute:
        try:
            return _compute(stop, question)
        except QuestionError:
            raise
        except (KeyError, ValueError, TypeError, IndexError) as error:
            raise QuestionError(f"{question.compute}: {type(error).__name__} {error}") from error
    if question.kind == "number":
        try:
            return _number(f"{float(question.answer):g}", float(question.answer), question)
        except (TypeError, ValueError) as error:
            raise QuestionError(tr("lessons.bad_fixed_answer")) from error
    answer = str(question.answer)
    # A fixed answer the widget cannot offer would hide the page for good: say so at the stop instead.
    if question.kind == "head":
        layers, heads = _shape(stop)
        if answer not in {head_name(layer, head) for layer in range(layers) for head in range(heads)}:
            raise QuestionError(tr("lessons.no_such_head", answer=answer, layers=layers, heads=heads))
    elif question.kind == "token":
        _index(stop_decoded(stop)[1].source.tokens, answer)
    return Expected(answer, frozenset({answer}))


def answer_label(question: Question, answer: str) -> str:
    """A canonical answer as the reader's language shows it (a choice's option text)."""
    if question.kind == "choice" and answer.isdigit():
        options = localized(question.options, current_language())
        if 1 <= int(answer) <= len(options):
            return options[int(answer) - 1]
    return answer


def _shape(stop: Stop) -> tuple[int, int]:
    """(layers, heads) of the stop's model, which a head question's grid offers."""
    model_id = stop.state.get("model", DEFAULT_MODEL)
    try:
        loaded = get_model(model_id)
    except (CheckpointError, KeyError) as error:
        raise QuestionError(tr("lessons.no_model", model=model_id)) from error
    return getattr(loaded.config, "num_layers", 1), getattr(loaded.config, "num_heads", 1)


def ask(stop: Stop, key: str, submit: str | None = None) -> str | None:
    """Draw the question's widget; -> the canonical answer when the student submits it in this run. `submit`: the
    button's label (default "Answer"; a check question's says another word, so the stop's own Answer stays one)."""
    question = stop.question
    assert question is not None
    prompt = localized(question.prompt, current_language())
    if question.kind == "head":
        st.markdown(f"**{prompt}**")
        layers, heads = _shape(stop)
        st.caption(tr("lessons.head_grid_help"))
        for layer in range(layers):
            columns = st.columns(heads + 1)
            columns[0].markdown(tr("lessons.layer_label", layer=layer + 1))
            for head in range(heads):
                if columns[head + 1].button(tr("lessons.head_label", head=head + 1), key=f"{key}_L{layer}_H{head}",
                                            width="stretch"):
                    return head_name(layer, head)
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
        else:  # token: the stop's sentence as the model reads it
            tokens = [t for t in _source_tokens(stop) if t != "<eos>"]
            answer = st.pills(prompt, tokens, key=f"{key}_token")
        submitted = st.form_submit_button(submit or tr("lessons.submit"), type="primary")
    if submitted and answer is None:
        st.warning(tr("lessons.pick_first"))
    return answer if submitted else None


def _source_tokens(stop: Stop) -> list[str]:
    try:
        return stop_decoded(stop)[1].source.tokens
    except QuestionError:
        return []


def feedback(question: Question, given: str | None, expected: Expected | None) -> tuple[str, str] | None:
    """-> (verdict: "right", "wrong" or "info", the Markdown line): the student's answer, right or not, and the right
    one; where the answer rests on a measurement, the measured value too ("Right: 0.5 (measured: 0.43)")."""
    if given is None and expected is None:
        return None
    def measured(beside: str) -> str:  # the measured value, unless the line already says it
        if expected is None or not expected.measured or expected.measured == beside:
            return ""
        return tr("lessons.measured", value=escape_markdown(expected.measured))

    if given is None:
        right = answer_label(question, expected.shown)
        return "info", tr("lessons.revealed", right=escape_markdown(right)) + measured(right)
    label = answer_label(question, given)
    if expected is None:
        return "info", tr("lessons.your_answer", answer=escape_markdown(label))
    if expected.is_right(given):
        return "right", tr("lessons.right", answer=escape_markdown(label)) + measured(label)
    right = answer_label(question, expected.shown)
    return "wrong", tr("lessons.wrong", answer=escape_markdown(label), right=expected.right_answer(question)) + measured(
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

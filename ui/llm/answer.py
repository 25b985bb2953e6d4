"""The page "How an LLM finds its answer" (app_pages/llm_answer.py): the logit lens (nostalgebraist 2020) of a prompt
and activation patching of the residual stream (Meng et al. 2022; Wang et al. 2022) on SmolLM2-135M-Instruct, computed
by model/explain/logit_lens.py and patching.py on a model with RESIDUAL_STREAM.

Every result is kept for the whole server (runtime/result_cache.py, keyed by the model and the inputs), so a class
opening the page costs one computation, and a sweep never runs twice for the same input (the sweeps are the lesson
measures' own, classroom/measures/llm_answer.py: a stop's question reads the entry the page draws): while one runs, a
second page asking for it waits for it (runtime/fair_queue.py's job, the store's per-key lock). A sweep is hundreds of
runs of the model's blocks: it goes to the process's analysis worker at once (runtime/analysis_worker.py), and its page
waits under a progress bar fed by the sweep's progress callback.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

import numpy as np
from streamlit.delta_generator import DeltaGenerator

from classroom.measures.llm_answer import residual_sweep
from i18n import tr
from model.capabilities import RESIDUAL_STREAM
from model.explain.logit_lens import LogitLens, logit_lens
from model.explain.patching import PatchingSweep, ResidualPatching
from model.families import ResidualModel, ResidualStream
from model.gguf_weights import SMOLLM2_NAME
from runtime.analysis_worker import KNOWN_HEAVY, report_progress
from ui.analysis_queue import heavy
from ui.charts import shared_figure, show_chart
from ui.language import words_for
from ui.llm.lens import MAP_KEY as LENS_MAP_KEY, cell_clicked, lens_opening, show_cell, show_last_position
from ui.presenter import presenting
from ui.screen import page_width
from ui.models import capable_model
from runtime.result_cache import memoized
from ui.session import lab_session
from ui.specs.llm_answer import ANSWER, CLEAN, CORRUPT, DIFFERENCE, LENS_MAX_TOKENS, LENS_TEXT, LENS_TOKEN, WRONG
from ui.text import MAX_INPUT_CHARS, check_sentence, escape_markdown
from ui.widget_spec import WidgetSpec, prepare, spec_toggle
from viz.attention import html_escaped
from viz.llm_answer import lens_map, patching_map

LATIN_LAST = 0x24F  # the end of Unicode's Latin Extended-B: letters past it are another script
LLM_ID = SMOLLM2_NAME  # the page's model: an LLM that reads its residual stream (model/adapters/llama.py)
# The longest prompts a sweep patches: L × T runs, each of up to L blocks over T positions, so its time grows with T²;
# 20 tokens stay well inside the analysis time limit on a 2-core server (bench/llm.py times the 16-token sweep).
PATCH_MAX_TOKENS = 20
RUN_KEY = "answer_patching_run"  # the Run button's key: in no link (a press is not a view)
# The sections whose lesson stops open with their sweeps shown: the stop's prompts count as asked (patching_input).
PATCHING_SECTIONS = ("patching", "heads")
Sweep = TypeVar("Sweep", bound=PatchingSweep)  # ResidualPatching or HeadPatching: what run_sweep's sweep returns


def answer_model() -> ResidualModel | None:
    """The shared LLM; None (with a message) where it cannot be loaded or cannot read its residual stream."""
    return capable_model(LLM_ID, RESIDUAL_STREAM, "llm_answer.unavailable", "llm_answer.no_residual_stream")


def token_list(tokens: list[str]) -> str:
    """Tokens as a message shows them: each quoted (a leading space shows), escaped for markdown."""
    return escape_markdown(", ".join(repr(token) for token in tokens))


def _token_field(spec: WidgetSpec, label: str, help_text: str, where: DeltaGenerator) -> str:
    """A one-token field: its text as typed, leading space kept, control characters made spaces (a link may hold
    them)."""
    prepare(spec)
    typed = where.text_input(label, key=spec.key, max_chars=MAX_INPUT_CHARS, help=help_text) or ""
    return "".join(ch if ch.isprintable() else " " for ch in typed)


def _one_token(lab: ResidualModel, text: str, where: DeltaGenerator, message: str) -> bool:
    """Whether `text` is one token of the model; if not, `message` (an i18n key) with its tokens named."""
    ids = lab.encode(text)
    if len(ids) == 1:
        return True
    where.info(tr(message, text=escape_markdown(repr(text)), count=len(ids), tokens=token_list(lab.token_texts(ids))))
    return False


def _prompt(spec: WidgetSpec, label: str, help_text: str, where: DeltaGenerator) -> str | None:
    """A prompt field -> its text, or None with a message when there is nothing to read."""
    prepare(spec)
    typed = where.text_input(label, key=spec.key, max_chars=MAX_INPUT_CHARS, help=help_text)
    text, notices = check_sentence(typed, "llm_answer.empty_prompt")  # control characters become spaces; past MAX_INPUT_CHARS it is cut
    for notice in notices:
        where.info(notice)
    if text is not None and written_in_another_script(text):
        where.info(tr("llm_answer.not_english"))
    return text


def written_in_another_script(text: str) -> bool:
    """Whether `text` has letters beyond the Latin script (Hangul, Cyrillic, Han…): SmolLM2 read English mostly, and
    it splits such letters into bytes, so its lens and its patching say little there."""
    return any(character.isalpha() and ord(character) > LATIN_LAST for character in text)


# --- the logit lens -------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class LensView:
    lens: LogitLens  # with the chosen token's ranks and probabilities
    top_tokens: np.ndarray  # (L+1, T, k) object: lens.top_ids as text
    token: str  # the chosen token as text
    predicted: bool  # whether it is the model's own prediction after the text (no token was typed)


@memoized
def lens_view(model_id: str, text: str, token: str, _lab: ResidualModel) -> LensView:
    """The lens of `text` with `token`'s rank and probability in every cell; "" chooses the model's prediction (as
    the section's opening read it, ui/llm/lens.py)."""
    opening = lens_opening(model_id, text, token, _lab)  # its stream: the grid runs no second forward
    stream = ResidualStream(opening.ids, opening.tokens, opening.hidden)
    lens = logit_lens(_lab, text, opening.column.token_id, stream=stream)
    texts = _lab.token_texts(lens.top_ids.ravel().tolist())
    top_tokens = np.array(texts, dtype=object).reshape(lens.top_ids.shape)
    return LensView(lens, top_tokens, opening.token, opening.predicted)


def lens_input(where: DeltaGenerator, lab: ResidualModel) -> tuple[str, str] | None:
    """The lens's text and token fields -> (text, token; "" for the model's prediction), or None with a message."""
    left, right = where.columns([3, 1])
    text = _prompt(LENS_TEXT, tr("llm_answer.lens_text_label"), tr("llm_answer.lens_text_help",
                                                                   limit=LENS_MAX_TOKENS), left)
    token = _token_field(LENS_TOKEN, tr("llm_answer.lens_token_label"), tr("llm_answer.lens_token_help"), right)
    if text is None:
        return None
    length = len(lab.encode(text))
    if length > LENS_MAX_TOKENS:
        where.info(tr("llm_answer.lens_too_long", tokens=length, limit=LENS_MAX_TOKENS))
        return None
    if length == 0:  # text the tokenizer reads as nothing
        where.info(tr("llm_answer.empty_prompt"))
        return None
    if token and not _one_token(lab, token, where, "llm_answer.token_not_one"):
        return None
    return text, token


def show_lens(where: DeltaGenerator, lab: ResidualModel, text: str, token: str) -> LensView | None:
    """The lens section: what it opens with first (the last position across every row: one forward and L+1
    unembeddings), then the whole grid's map above it, then the picked cell's top tokens."""
    key = ("llm_lens", LLM_ID, text, token)
    opening = heavy(key + ("opening",), lambda: lens_opening(LLM_ID, text, token, lab), where=where)
    if opening is None:
        return None
    grid = where.container()  # the map, drawn once the grid is ready: the numbers under it come first
    show_last_position(where, opening, key)
    show_cell(where, lab, opening)
    if not presenting():
        where.write(tr("llm_answer.lens_text"))
    view = heavy(key, lambda: lens_view(LLM_ID, text, token, lab), where=grid)
    if view is None:
        return None
    lens = view.lens
    show_chart(shared_figure(key + ("map",), lambda: lens_map(
                   view.top_tokens, lens.top_probs, lens.tokens, lens.commitment,
                   tr("llm_answer.chart.lens_title", rows=lens.layers + 1), words=words_for("llm_answer"))),
               "llm_logit_lens", key=LENS_MAP_KEY, where=grid, on_select=cell_clicked,
               width=page_width())  # the section spans the page: titles wrap at its width, not a column's
    return view


# --- activation patching --------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class PatchingInputs:
    clean: str
    corrupt: str
    answer: str  # one token
    wrong: str | None  # one token, or None: no logit difference (its switch is off)


@dataclass(frozen=True)
class PatchingRequest:
    clean: str | None  # the clean prompt, where direct logit attribution can read it (1 … LENS_MAX_TOKENS tokens)
    inputs: PatchingInputs | None  # the sweeps' inputs, None while the fields do not make a pair (a message says why)
    asked: bool  # whether the sweeps of `inputs` are shown: Run was pressed on them, or a stop about them opened


def patching_input(where: DeltaGenerator, lab: ResidualModel) -> PatchingRequest:
    """The four fields and the Run button -> what the patching sections show. The sweeps (about a minute of the
    worker's time together on a loaded server) run only on a press, never on an edit: a press is kept for its inputs
    (the session's patching_asked), so that the result stays on every rerun while the fields keep them, and an edit
    asks for another press. A lesson stop about patching counts as pressed on the prompts it opens with."""
    inputs = _checked_inputs(where, lab)
    pressed = where.button(tr("llm_answer.run_patching"), key=RUN_KEY, type="primary", disabled=inputs is None,
                           help=tr("llm_answer.run_patching_help"))
    explorer, position = lab_session().explorer, lab_session().lesson
    asked = None if inputs is None else (inputs.clean, inputs.corrupt, inputs.answer, inputs.wrong)
    stop = (position.lesson_id, position.stop) if position.stop_section in PATCHING_SECTIONS else None
    if stop != explorer.patching_stop:  # a stop about patching just opened, with its own prompts in the fields
        explorer.patching_stop = stop
        if stop is not None and asked is not None:
            explorer.patching_asked = asked
    if pressed and asked is not None:
        explorer.patching_asked = asked
    clean = check_sentence(CLEAN.get())[0]  # as the field's own check reads it (its notices are shown already)
    readable = clean is not None and 0 < len(lab.encode(clean)) <= LENS_MAX_TOKENS
    return PatchingRequest(clean if readable else None, inputs,
                           asked is not None and explorer.patching_asked == asked)


def forget_patching_request() -> None:
    """A sweep that stopped at the time limit (or was replaced) is not run again by the next rerun: by a press only."""
    lab_session().explorer.patching_asked = None


def _checked_inputs(where: DeltaGenerator, lab: ResidualModel) -> PatchingInputs | None:
    """The four fields -> the sweep's inputs, or None with a message: prompts of different token counts (both
    tokenizations shown), an answer or wrong token that is not one token (its tokens named), a prompt too long."""
    top, bottom = where.columns([3, 1, 1], vertical_alignment="bottom"), where.columns([3, 1, 1])
    clean = _prompt(CLEAN, tr("llm_answer.clean_label"), tr("llm_answer.clean_help"), top[0])
    answer = _token_field(ANSWER, tr("llm_answer.answer_label"), tr("llm_answer.answer_help"), top[1])
    difference = spec_toggle(DIFFERENCE, tr("llm_answer.difference_label"), where=top[2],
                             help=tr("llm_answer.difference_help"))
    corrupt = _prompt(CORRUPT, tr("llm_answer.corrupt_label"), tr("llm_answer.corrupt_help"), bottom[0])
    wrong = None
    if difference:
        wrong = _token_field(WRONG, tr("llm_answer.wrong_label"), tr("llm_answer.wrong_help"), bottom[1])
    if clean is None or corrupt is None:
        return None
    clean_ids, corrupt_ids = lab.encode(clean), lab.encode(corrupt)
    if len(clean_ids) != len(corrupt_ids):
        where.info(tr("llm_answer.counts_differ", clean=len(clean_ids), corrupt=len(corrupt_ids),
                      clean_tokens=token_list(lab.token_texts(clean_ids)),
                      corrupt_tokens=token_list(lab.token_texts(corrupt_ids))))
        return None
    if not clean_ids:
        where.info(tr("llm_answer.empty_prompt"))
        return None
    if len(clean_ids) > PATCH_MAX_TOKENS:
        where.info(tr("llm_answer.patch_too_long", tokens=len(clean_ids), limit=PATCH_MAX_TOKENS))
        return None
    if not answer:
        where.info(tr("llm_answer.no_answer"))
        return None
    if not _one_token(lab, answer, where, "llm_answer.answer_not_one"):
        return None
    if wrong is not None and not wrong:
        where.info(tr("llm_answer.no_wrong"))
        return None
    if wrong is not None and not _one_token(lab, wrong, where, "llm_answer.wrong_not_one"):
        return None
    return PatchingInputs(clean, corrupt, answer, wrong)


def run_sweep(where: DeltaGenerator, name: str, sweep: Callable[..., Sweep], lab: ResidualModel,
              inputs: PatchingInputs) -> tuple[tuple, Sweep | None]:
    """A patching sweep's key, (name, the model, the inputs), and the sweep (residual_sweep or head_sweep: L × T or
    L × H runs of the model's blocks, the lesson measures' own, classroom/measures/llm_answer.py, so a stop's question
    reads the entry the page draws), cached for the server: it goes to the analysis worker at once
    and the page waits under a progress bar the sweep feeds; None (heavy's message shown) past the time limit or when
    another tab replaced it."""
    key = (name, LLM_ID, inputs.clean, inputs.corrupt, inputs.answer, inputs.wrong)
    result = heavy(key, lambda: sweep(lab, inputs.clean, inputs.corrupt, inputs.answer, inputs.wrong,
                                      report_progress(key)), where=where, work=KNOWN_HEAVY)
    return key, result


def _patching_metrics(where: DeltaGenerator, result: ResidualPatching, answer: str, wrong: str | None) -> None:
    """p(answer) after each prompt, and their logit differences with a wrong token."""
    metrics = where.columns(4 if wrong else 2)
    shown = escape_markdown(repr(answer))
    metrics[0].metric(tr("llm_answer.clean_prob", answer=shown), f"{result.clean_prob:.1%}",
                      help=tr("llm_answer.clean_prob_help"))
    metrics[1].metric(tr("llm_answer.corrupt_prob", answer=shown), f"{result.corrupt_prob:.1%}",
                      help=tr("llm_answer.corrupt_prob_help"))
    if wrong:
        metrics[2].metric(tr("llm_answer.clean_diff"), f"{result.clean_logit_diff:+.2f}")
        metrics[3].metric(tr("llm_answer.corrupt_diff"), f"{result.corrupt_logit_diff:+.2f}")


def show_patching(where: DeltaGenerator, lab: ResidualModel, inputs: PatchingInputs) -> ResidualPatching | None:
    key, result = run_sweep(where, "llm_patching", residual_sweep, lab, inputs)
    if result is None:
        forget_patching_request()
        return None
    answer, wrong = inputs.answer, inputs.wrong
    projected = presenting()  # the map first, the four numbers under it: the map answers a stop's question
    if not projected:
        _patching_metrics(where, result, answer, wrong)
    answer_text, wrong_text = html_escaped(repr(answer)), html_escaped(repr(wrong))  # in plotly's labels
    probability, words = tr("llm_answer.chart.answer_probability", answer=answer_text), words_for("llm_answer")
    show_chart(shared_figure(key + ("probs", projected), lambda: patching_map(
                   result.patched_probs, result.clean_tokens, result.corrupt_tokens,
                   tr("llm_answer.chart.patching_title", answer=answer_text), probability, compact=projected,
                   words=words)),
               "llm_patching_probability", key="llm_patching_probs", where=where,
               width=page_width())
    layer, position = np.unravel_index(int(np.argmax(result.patched_probs)), result.patched_probs.shape)
    where.caption(tr("llm_answer.patching_caption", answer=escape_markdown(repr(answer)), layer=int(layer) + 1,
                     position=int(position), token=escape_markdown(repr(result.clean_tokens[position])),
                     prob=f"{result.patched_probs[layer, position]:.1%}"))
    if projected:
        _patching_metrics(where, result, answer, wrong)
    if wrong:
        difference = tr("llm_answer.chart.logit_difference", answer=answer_text, wrong=wrong_text)
        show_chart(shared_figure(key + ("diffs", projected), lambda: patching_map(
                       result.patched_logit_diffs, result.clean_tokens, result.corrupt_tokens,
                       tr("llm_answer.chart.difference_title", answer=answer_text, wrong=wrong_text), difference,
                       difference=True, compact=projected, words=words)),
                   "llm_patching_logit_difference", key="llm_patching_diffs", where=where,
                   width=page_width())
    if not presenting():
        where.write(tr("llm_answer.patching_text"))
    return result

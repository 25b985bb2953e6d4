"""The LLM heads page's sections: attention sinks (Xiao et al. 2023) and induction heads (Olsson et al. 2022) in
SmolLM2-135M-Instruct (model/llama.py), computed by model/explain/sinks.py and induction.py.

Every analysis is cached for the whole server (runtime/result_cache.py, keyed by the token ids or the sequence's length
and seed): a class opening the page costs one computation. One not cached yet is heavy (up to seconds of model work): it
is computed by the process's analysis worker while the page waits off its turn (runtime/analysis_worker.py). The model
itself is the process's one shared copy (load_smollm2), read-only.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from i18n import tr
from classroom.measures.llm import shared_copy_map, shared_induction, shared_sinks, shared_window
from model.explain.induction import COPY_PROMPT, top_heads
from model.explain.kinds import head_label
from model.generation import generate
from model.llama import MAX_TOKENS, LoadedLlama, load_smollm2
from runtime.analysis_worker import parameters, size
from ui.analysis_queue import heavy
from ui.charts import shared_figure, show_chart
from ui.language import words_for
from ui.presenter import chart_first, presenting, projected_stop
from ui.screen import page_width
from ui.llm_heads.specs import INDUCTION_LENGTH, INDUCTION_SEED, SINK_TEXT, WINDOW
from ui.text import MAX_INPUT_CHARS, check_sentence, escape_markdown
from ui.widget_spec import prepare, secondary_number, spec_select_slider, spec_slider
from runtime.result_cache import memoized
from viz.attention import attention_heatmap, html_escaped, probability_bars
from viz.llm_heads import attention_row_bars, layer_means, layers_by_heads_map, ranked_next_tokens, window_loss_bars

COPY_TOKENS = 6  # greedy continuation length
TOP_HEADS = 5  # induction heads labelled on the map


def smollm2() -> LoadedLlama:
    with st.spinner(tr("llm_heads.loading")):
        return load_smollm2()  # once per process (seconds), then shared


# --- attention sinks ------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class SinkView:
    tokens: list[str]  # the analysed tokens as text
    share: np.ndarray  # (L, h) mean weight on the first token over queries 1 … T − 1
    norm_share: np.ndarray  # (L, h) the first token's share of the value-weighted norms
    uniform: float  # the share a head spreading its weight evenly over what it sees would give
    next_tokens: dict[str, tuple[list[str], list[float]]]  # "plain" / "switched_off" / "removed" -> top-5
    kl_switched_off: float
    kl_removed: float


@memoized
def sink_view(ids: tuple[int, ...]) -> SinkView:
    loaded = load_smollm2()
    result = shared_sinks(loaded, ids)  # the lesson's measures read this one too
    change = result.change
    texts = {name: (loaded.token_texts(top), probs) for name, top, probs in (
        ("plain", change.top_ids, change.top_probs), ("switched_off", change.switched_off_ids,
                                                      change.switched_off_probs),
        ("removed", change.removed_ids, change.removed_probs))}
    uniform = float(np.mean([1 / (q + 1) for q in range(1, len(ids))]))
    return SinkView(loaded.token_texts(list(ids)), result.share, result.norm_share, uniform, texts,
                    change.kl_switched_off, change.kl_removed)


@memoized
def window_view(ids: tuple[int, ...], window: int):
    return shared_window(load_smollm2(), ids, window)  # one full-attention pass per text for every window


def sink_input(where: DeltaGenerator) -> tuple[int, ...] | None:
    """The text box -> its token ids (at most model.llama.MAX_TOKENS: a longer text is cut, with a message), or None
    with a message when there is nothing to analyse. Control characters become spaces (ui/text.check_sentence)."""
    prepare(SINK_TEXT)
    typed = where.text_area(tr("llm_heads.text"), key=SINK_TEXT.key, max_chars=MAX_INPUT_CHARS,
                            help=tr("llm_heads.text_help", limit=MAX_TOKENS))
    text, notices = check_sentence(typed)
    for notice in notices:
        where.info(notice)
    return _checked_ids(text, where)


def sink_ids(where: DeltaGenerator) -> tuple[int, ...] | None:
    """The view's text as sink_input reads it, without its text box (a stop about the window), or None with a
    message."""
    text, _ = check_sentence(str(prepare(SINK_TEXT)))
    return _checked_ids(text, where)


def _checked_ids(text: str | None, where: DeltaGenerator) -> tuple[int, ...] | None:
    if text is None:
        return None
    ids = load_smollm2().encode(text)
    if len(ids) > MAX_TOKENS:
        where.info(tr("llm_heads.too_long", tokens=len(ids), limit=MAX_TOKENS))
        ids = ids[:MAX_TOKENS]
    if len(ids) < 3:
        where.info(tr("llm_heads.too_short", tokens=len(ids)))
        return None
    return tuple(ids)


def show_sinks(where: DeltaGenerator, ids: tuple[int, ...]) -> None:
    view = heavy(("llm_sinks", ids), lambda: sink_view(ids), where=where, work=size(len(ids), parameters(load_smollm2().model)))
    if view is None:
        return
    key = ("llm_sinks", ids)
    if not projected_stop():  # a projected stop's own text explains; its maps start higher
        where.write(tr("llm_heads.sinks_text", first=escape_markdown(repr(view.tokens[0])), tokens=len(ids)))
    late = view.share[3:]  # past the first layers, where the sink forms
    metrics = where.columns(3)
    metrics[0].metric(tr("llm_heads.sink_metric"), f"{late.mean():.2f}", help=tr("llm_heads.sink_metric_help"))
    metrics[1].metric(tr("llm_heads.norm_metric"), f"{view.norm_share[3:].mean():.2f}",
                      help=tr("llm_heads.norm_metric_help"))
    metrics[2].metric(tr("llm_heads.uniform_metric"), f"{view.uniform:.3f}", help=tr("llm_heads.uniform_help"))
    left, right = where.columns(2)
    show_chart(shared_figure(key + ("share",), lambda: layers_by_heads_map(
                   view.share, tr("llm_heads.chart.sink_title"), tr("llm_heads.chart.weight_share"),
                   words=words_for("llm_heads"))),
               "llm_sink_share", key="llm_sink_share", where=left)
    show_chart(shared_figure(key + ("norms",), lambda: layers_by_heads_map(
                   view.norm_share, tr("llm_heads.chart.norm_title"), tr("llm_heads.chart.norm_share"),
                   words=words_for("llm_heads"))),
               "llm_sink_norm_share", key="llm_sink_norm_share", where=right)
    show_chart(shared_figure(key + ("means",), lambda: layer_means(
                   {tr("llm_heads.chart.weight_share"): view.share, tr("llm_heads.chart.norm_share"): view.norm_share},
                   tr("llm_heads.chart.means_title"), view.uniform, words=words_for("llm_heads"))),
               "llm_sink_layer_means", key="llm_sink_means", where=where)
    where.subheader(tr("llm_heads.change_title"))
    where.write(tr("llm_heads.change_text"))
    columns = {tr("llm_heads.column_plain"): view.next_tokens["plain"],
               tr("llm_heads.column_switched_off"): view.next_tokens["switched_off"],
               tr("llm_heads.column_removed"): view.next_tokens["removed"]}
    where.dataframe(ranked_next_tokens(columns, words=words_for("llm_heads")))
    kl = where.columns(2)
    kl[0].metric(tr("llm_heads.kl_switched_off"), f"{view.kl_switched_off:.4f}")
    kl[1].metric(tr("llm_heads.kl_removed"), f"{view.kl_removed:.4f}")
    if not presenting():
        where.caption(tr("llm_heads.change_caption"))


def show_window(where: DeltaGenerator, ids: tuple[int, ...]) -> None:
    where.subheader(tr("llm_heads.window_title"))
    # A projected stop (llm stop 7): the three losses first, as short lying bars, and the slider under them, so that
    # at 1280×720 all three values are on the first screen.
    compact = projected_stop()
    chart_place, controls = chart_first(where)
    window = spec_slider(WINDOW, tr("llm_heads.window"), where=controls, help=tr("llm_heads.window_help"))
    if len(ids) <= window + 1:
        controls.info(tr("llm_heads.window_too_short", tokens=len(ids), window=window))
        return
    losses = heavy(("window_losses", ids, window), lambda: window_view(ids, window), where=chart_place,
                   work=size(len(ids), parameters(load_smollm2().model)))
    if losses is None:
        return
    show_chart(shared_figure(("window_losses", ids, window, compact), lambda: window_loss_bars(
                   losses.full, losses.window_only, losses.window_with_sink, window,
                   tr("llm_heads.chart.window_title", window=window), compact, words=words_for("llm_heads"))),
               f"llm_window_{window}", key="llm_window_losses", where=chart_place,
               width=page_width())  # a container across the page, not a column: its title on one line
    where.write(tr("llm_heads.window_text", full=f"{losses.full:.2f}", window_only=f"{losses.window_only:.2f}",
                   with_sink=f"{losses.window_with_sink:.2f}", window=window))


# --- induction heads ------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class InductionView:
    length: int  # n: the random sequence is n tokens, then the same n again
    tokens: list[str]  # the 2n tokens as text
    scores: np.ndarray  # (L, h) induction score per head
    top: list[tuple[int, int, float]]  # (layer, head, score), highest first, 0-based
    top_map: np.ndarray  # (2n, 2n) the top head's attention weights
    first_copy_loss: float
    second_copy_loss: float


@memoized
def induction_view(length: int, seed: int) -> InductionView:
    loaded = load_smollm2()
    result, top_map = shared_induction(loaded, length, seed)  # the lesson's measures read this one too
    return InductionView(length, loaded.token_texts(result.tokens), result.scores, top_heads(result.scores, TOP_HEADS),
                         top_map, result.first_copy_loss, result.second_copy_loss)


def induction_controls(where: DeltaGenerator) -> tuple[int, int]:
    columns = where.columns(2)
    length = spec_select_slider(INDUCTION_LENGTH, tr("llm_heads.induction_length"), where=columns[0])
    seed = int(secondary_number(INDUCTION_SEED, tr("llm_heads.induction_seed"), where=columns[1]))
    return int(length), seed


def induction_of(where: DeltaGenerator, length: int, seed: int) -> InductionView | None:
    """The induction analysis of the view's sequence, computed off the page's turn when new; None: past the time
    limit, with a message in `where`."""
    return heavy(("llm_induction", length, seed), lambda: induction_view(length, seed), where=where,
                 work=size(2 * length, parameters(load_smollm2().model)))  # the random sequence, then it again


def induction_values() -> tuple[int, int]:
    """The sequence's length and seed as the view has them, without drawing their widgets (a stop about the copy)."""
    return int(prepare(INDUCTION_LENGTH)), int(prepare(INDUCTION_SEED))


def show_induction(where: DeltaGenerator, length: int, seed: int) -> InductionView | None:
    view = induction_of(where, length, seed)
    if view is None:
        return None
    layer, head, best = view.top[0]
    if not projected_stop():
        where.write(tr("llm_heads.induction_text", n=length))

    def metrics() -> None:  # above the maps; under the first when projected, so that it starts on the first screen
        columns = where.columns(3)
        columns[0].metric(tr("llm_heads.top_head"), head_label(layer, head), f"{best:.2f}", delta_color="off",
                          delta_arrow="off")
        columns[1].metric(tr("llm_heads.first_copy_loss"), f"{view.first_copy_loss:.2f}")
        columns[2].metric(tr("llm_heads.second_copy_loss"), f"{view.second_copy_loss:.2f}")
    if not presenting():
        metrics()
    key = ("llm_induction", length, seed)
    show_chart(shared_figure(key + ("scores",), lambda: layers_by_heads_map(
                   view.scores, tr("llm_heads.chart.induction_title", n=length), tr("llm_heads.chart.induction_score"),
                   labelled=view.top, words=words_for("llm_heads"))),
               f"llm_induction_scores_n{length}_seed{seed}", key="llm_induction_scores", where=where)
    if presenting():
        metrics()
    labels = [f"{i}:{token}" for i, token in enumerate(view.tokens)]  # the same token twice: numbered apart
    show_chart(shared_figure(key + ("map",), lambda: attention_heatmap(
                   view.top_map, labels, labels, tr("llm_heads.chart.top_map_title", head=head_label(layer, head),
                                                    n=length), words=words_for("attention"))),
               f"llm_induction_{head_label(layer, head).replace(' ', '_')}", key="llm_induction_map", where=where,
               width=page_width())  # `where` is the page's width (chart_first), not a column
    where.caption(tr("llm_heads.stripe_caption", n=length, offset=length - 1))
    return view


@dataclass(frozen=True)
class CopyView:
    prompt_tokens: list[str]
    continuation: str
    top_tokens: list[str]  # the 5 most likely first new tokens
    top_probs: list[float]
    head_row: np.ndarray  # (T,) the chosen head's attention from the prompt's last token


@memoized
def copy_view(layer: int, head: int) -> CopyView:
    """The greedy continuation of COPY_PROMPT, computed live, and one head's attention from its last token."""
    loaded = load_smollm2()
    ids = loaded.encode(COPY_PROMPT)
    generation = generate(loaded.model, ids, COPY_TOKENS)
    first = generation.steps[0]
    row = shared_copy_map(loaded, layer, head)[-1]  # (T,): the copy stop's cell question reads the same map
    return CopyView(loaded.token_texts(ids), loaded.decode(generation.new_ids), loaded.token_texts(first.top_ids),
                    first.top_probs, row)


def show_copy(where: DeltaGenerator, induction: InductionView) -> None:
    layer, head, _ = induction.top[0]
    view = heavy(("llm_copy", layer, head), lambda: copy_view(layer, head), where=where)
    if view is None:
        return
    if not projected_stop():  # the stop's text says it
        where.write(tr("llm_heads.copy_text"))
    where.code(COPY_PROMPT + "▌" + view.continuation, language=None, wrap_lines=True)
    left, right = where.columns(2)
    show_chart(shared_figure(("llm_copy_next",), lambda: probability_bars(
                   view.top_tokens, view.top_probs, tr("llm_heads.chart.copy_next_title"),
                   words=words_for("attention"))),
               "llm_copy_next_tokens", key="llm_copy_next", where=left)
    labels = [f"{i}:{token}" for i, token in enumerate(view.prompt_tokens)]
    # the key the head reads most on top: "mat", the word it copies, before the sink on the first token
    show_chart(shared_figure(("llm_copy_row", layer, head), lambda: attention_row_bars(
                   labels, view.head_row.tolist(), tr("llm_heads.chart.copy_row_title",
                                                      head=head_label(layer, head), token=html_escaped(view.prompt_tokens[-1])),
                   largest_first=True, words=words_for("llm_heads"))),
               f"llm_copy_{head_label(layer, head).replace(' ', '_')}", key="llm_copy_row", where=right)
    strongest = int(np.argmax(view.head_row))
    where.caption(tr("llm_heads.copy_caption", head=head_label(layer, head),
                     token=escape_markdown(repr(view.prompt_tokens[strongest])),
                     weight=f"{view.head_row[strongest]:.2f}"))

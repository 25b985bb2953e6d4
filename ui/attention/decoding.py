"""The decoding page's step explorer: Previous / Next / step, layer and head, and the step's charts, as a fragment.

A class steps through a translation one click at a time; as a fragment, a click reruns only this part of the page
(not the sidebar, the navigation or the title above it), a good part less of the server's work than a full rerun.
"""
from __future__ import annotations

import numpy as np
import streamlit as st

from i18n import tr
from model.capabilities import ALIGNMENT
from model.data import Vocabulary
from model.decode import DecodeResult
from model.sources import AnalysedInput, as_float32
from ui.attention.view import cached_figure
from ui.charts import show_chart
from ui.language import words_for
from ui.presenter import chart_first, presenting
from ui.share import view_fragment
from ui.attention.decoding_specs import ALL_HEADS, HEAD, LAYER, STEP
from ui.widget_spec import prepare, spec_select
from viz.attention import html_escaped, probability_bars


def _head_name(head: int | str) -> str:
    return tr("decoding.all_heads") if head == ALL_HEADS else f"{head + 1}"


@view_fragment
def decoding_explorer(page: str, written_words: Vocabulary, analysed: AnalysedInput) -> None:
    """The step and head pickers and their charts: a fragment of the view (ui.share.view_fragment). The arguments are
    those of the last full run (a change of model or sentence reruns the whole page)."""
    _explore(written_words, analysed)


def _explore(written_words: Vocabulary, analysed: AnalysedInput) -> None:
    result, maps = analysed.decode, analysed.maps  # the decode's steps; its maps, one per kind
    steps = len(result.step_probs)  # one step per output token, plus the step that writes <eos>
    produced = result.written_tokens  # the token each step writes (the rows of every decoder chart)
    STEP.set(min(prepare(STEP), steps))  # a linked step, within this sentence's translation
    # a projected stop: the step's maps first, its stepper under them (a stop's question and its answer take the
    # first screen's top, and the maps must start on it)
    charts, stepper = chart_first()
    # Previous and Next beside the step slider: one row, so the maps start above the fold when projected
    c = stepper.columns([2, 2, 5], vertical_alignment="bottom")  # wide enough for "◀ Previous token" uncut
    if c[0].button(tr("decoding.previous"), disabled=STEP.get() <= STEP.low):
        STEP.set(STEP.get() - 1)
    if c[1].button(tr("decoding.next"), disabled=STEP.get() >= steps):
        STEP.set(STEP.get() + 1)
    step = c[2].slider(tr("decoding.step"), STEP.low, max(steps, 2), key=STEP.key, disabled=steps < 2) - 1
    if not presenting():  # projected, the slider shows the step
        stepper.markdown(tr("decoding.step_of", step=step + 1, steps=steps))
    stepper.code(" ".join(["<bos>"] + produced[:step]) + f"  →  {produced[step]}", language=None)
    writing = html_escaped(produced[step])  # model output shown in a plotly title: escaped like every token
    left, right = charts.columns(2)
    with left:
        if analysed.can(ALIGNMENT):  # one additive alignment, no heads: (1, 1, T_out + 1, T_src)
            (alignment,) = maps.values()
            show_chart(cached_figure("heatmap", alignment.weights[0, 0, step:step + 1], [produced[step]],
                                     result.source.tokens, tr("decoding.alignment_title", token=writing),
                                     height=180),
                       f"decoding_bahdanau_step{step + 1}", key="dec_align")
            if not presenting():
                st.caption(tr("decoding.alignment_caption"))
        elif maps:  # heads: the decode's cross-attention (L, h, T_out, T_src) and the decoder's own
            chart, controls = chart_first()  # a projected stop: the maps first, the layer and head under them
            c2 = controls.columns(2)
            layer = spec_select(LAYER, tr("decoding.layer"), where=c2[0], format_func=lambda i: f"{i + 1}")
            # another model with fewer heads was chosen: back to every head (HEAD's default)
            head = spec_select(HEAD, tr("decoding.head"), where=c2[1], format_func=_head_name)
            with chart:
                cross = as_float32(maps["cross"].weights[layer, :, step])  # (h, S)
                heads = list(range(cross.shape[0])) if head == ALL_HEADS else [head]
                rows = cross[heads]
                labels = [tr("decoding.head_row", head=h + 1) for h in heads]
                # cached_figure: a class steps through the same sentences, so each step's charts are built once.
                show_chart(cached_figure("heatmap", rows, labels, result.source.tokens,
                                         tr("decoding.cross_title", token=writing, layer=layer + 1),
                                         height=140 + 40 * len(labels), rows_title=tr("decoding.heads_axis")),
                           f"decoding_cross_step{step + 1}_L{layer + 1}_"
                           f"{'all' if head == ALL_HEADS else f'H{head + 1}'}",
                           key="dec_cross")
                if not presenting():
                    st.caption(tr("decoding.cross_caption"))
                so_far = as_float32(maps["decoder_self"].weights[layer, :, : step + 1, : step + 1])  # (h, s+1, s+1)
                self_w = so_far.mean(0) if head == ALL_HEADS else so_far[head]
                # rows: the token each step writes; columns: the decoder's inputs (<bos> and what was written before)
                rows_written, inputs = result.written_tokens[: step + 1], result.decoder_input_tokens[: step + 1]
                title = tr("decoding.self_title_mean" if head == ALL_HEADS else "decoding.self_title", step=step + 1)
                show_chart(cached_figure("heatmap", self_w, rows_written, inputs, title,
                                         masked=np.triu(np.ones((step + 1, step + 1), bool), 1)),
                           f"decoding_self_step{step + 1}_L{layer + 1}_"
                           f"{'mean' if head == ALL_HEADS else f'H{head + 1}'}",
                           key="dec_self")
                st.caption(tr("decoding.mask_caption"))
                st.caption(tr("lecture.rows_written"))
        else:  # a decode without attention: nothing to draw but its odds
            st.info(tr("decoding.no_attention"))
    with right:
        show_top_tokens(result, step, written_words, key="dec_topk")
        if not presenting():
            st.caption(tr("decoding.top_caption"))


def show_top_tokens(result: DecodeResult, step: int, tgt_vocab, k: int = 5, key: str = "topk") -> None:
    probs = result.step_probs[step]
    top = np.argsort(probs)[::-1][:k]
    show_chart(probability_bars([tgt_vocab.itos[i] for i in top], [float(probs[i]) for i in top],
                                tr("decoding.top_title", k=k, step=step + 1), words=words_for("attention")),
               f"decoding_top{k}_step{step + 1}", key=key)

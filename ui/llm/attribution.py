"""The answer page's last two sections (app_pages/llm_answer.py), on the patching section's prompts: per-head
activation patching at the last position (Wang et al. 2022) and direct logit attribution (Elhage et al. 2021), computed
by model/explain/patching.head_patching and model/explain/attribution.py on a model with RESIDUAL_STREAM.

Cached for the whole server per input (runtime/result_cache.py, through the lesson measures' own sweeps,
classroom/measures/llm_answer.py, so a stop's question and the page share one computation); the head sweep (L × H runs) goes to the analysis worker at
once and its page waits under a progress bar, as the residual sweep does (ui/llm/answer.py).
"""
from __future__ import annotations

import numpy as np
from streamlit.delta_generator import DeltaGenerator

from classroom.measures.llm_answer import head_sweep, logit_attribution
from i18n import tr
from model.explain.attribution import LogitAttribution
from model.explain.kinds import head_label
from model.explain.patching import HeadPatching
from model.families import ResidualModel
from ui.analysis_queue import heavy
from ui.charts import shared_figure, show_chart
from ui.language import words_for
from ui.presenter import presenting
from ui.screen import page_width
from ui.llm.answer import LLM_ID, PatchingInputs, forget_patching_request, run_sweep
from ui.text import escape_markdown
from viz.attention import html_escaped
from viz.llm_answer import attribution_bars, heads_map, sink_heads_table

TOP_PARTS = 15  # bars of the attribution chart: the parts with the largest contributions in size
SINK_HEADS = 10  # rows of the sink table: the heads with the most weight on the first token, as many as the
# answer lesson's sink claims measure ("the 10 heads…"), so the table under them shows those heads


def show_head_patching(where: DeltaGenerator, lab: ResidualModel, inputs: PatchingInputs) -> HeadPatching | None:
    key, result = run_sweep(where, "llm_head_patching", head_sweep, lab, inputs)
    if result is None:
        forget_patching_request()
        return None
    answer, wrong = inputs.answer, inputs.wrong
    words = words_for("llm_answer")
    answer_text = html_escaped(repr(answer))  # in plotly's labels
    probability = tr("llm_answer.chart.answer_probability", answer=answer_text)
    show_chart(shared_figure(key + ("probs",), lambda: heads_map(
                   result.patched_probs, tr("llm_answer.chart.heads_title", answer=answer_text), probability,
                   words=words)),
               "llm_head_patching_probability", key="llm_head_patching_probs", where=where,
               width=page_width())
    layer, head = np.unravel_index(int(np.argmax(result.patched_probs)), result.patched_probs.shape)
    where.caption(tr("llm_answer.heads_caption", answer=escape_markdown(repr(answer)), head=head_label(layer, head),
                     prob=f"{result.patched_probs[layer, head]:.1%}", clean=f"{result.clean_prob:.1%}",
                     corrupt=f"{result.corrupt_prob:.1%}"))
    if wrong is not None:
        wrong_text = html_escaped(repr(wrong))
        difference = tr("llm_answer.chart.logit_difference", answer=answer_text, wrong=wrong_text)
        show_chart(shared_figure(key + ("diffs",), lambda: heads_map(
                       result.patched_logit_diffs, tr("llm_answer.chart.heads_difference_title", answer=answer_text,
                                                      wrong=wrong_text), difference, difference=True, words=words)),
                   "llm_head_patching_logit_difference", key="llm_head_patching_diffs", where=where,
                   width=page_width())
    if not presenting():
        where.write(tr("llm_answer.heads_text"))
    return result


def show_attribution(where: DeltaGenerator, lab: ResidualModel, text: str) -> LogitAttribution | None:
    key = ("llm_attribution", LLM_ID, text)
    result = heavy(key, lambda: logit_attribution(lab, text), where=where)
    if result is None:
        return None
    words = words_for("llm_answer")
    token = lab.token_texts([result.token_id])[0]
    parts = result.embedding + float(result.heads.sum()) + float(result.mlps.sum())

    def metrics() -> None:  # the logit and the sum of its parts: above the bars, under them when projected
        columns = where.columns(2)
        columns[0].metric(tr("llm_answer.attributed_logit", token=escape_markdown(repr(token))),
                          f"{result.logit:.2f}", help=tr("llm_answer.attributed_logit_help"))
        columns[1].metric(tr("llm_answer.parts_sum"), f"{parts:.2f}", help=tr("llm_answer.parts_sum_help"))
    if not presenting():
        metrics()
    show_chart(shared_figure(key + ("bars",), lambda: attribution_bars(
                   result.heads, result.mlps, result.embedding,
                   tr("llm_answer.chart.attribution_title", count=TOP_PARTS, token=html_escaped(repr(token))),
                   TOP_PARTS, words=words)),
               "llm_direct_logit_attribution", key="llm_attribution_bars", where=where,
               width=page_width())
    if presenting():
        metrics()
    where.subheader(tr("llm_answer.sinks_title"))
    where.dataframe(sink_heads_table(result.heads, result.attention_to_first, SINK_HEADS, words=words),
                    hide_index=True)
    largest = float(np.abs(result.heads).max())
    where.caption(tr("llm_answer.sinks_caption", largest=f"{largest:.2f}"))
    if not presenting():
        where.write(tr("llm_answer.attribution_text"))
    return result

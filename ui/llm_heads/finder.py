"""The LLM heads page's last two sections (issue 41) on SmolLM2-135M-Instruct: find a head (the finder and one head on
two texts, ui/attention/finder.py) and a head across many texts (AttentionViz, Yeh et al. 2023; its q·k split into
RoPE pairs, Su et al. 2021), computed by model/explain/head_finder.py and qk_embedding.py.

Heavy work goes through the analysis queue (ui/analysis_queue.heavy) and the process's byte-bounded result store
(runtime/result_cache.memoized), shared by every session: the fixed texts' queries and keys once per server, then one
small picture per head; nothing here is kept per session.
"""
from __future__ import annotations

import numpy as np
import streamlit as st

from i18n import tr
from model.capabilities import QUERIES_KEYS
from model.explain.fixed_sets import LANGUAGE_MODEL_TEXTS
from model.explain.head_finder import default_kind
from model.explain.kinds import head_label
from model.explain.qk_embedding import QKEmbedding, RotaryPairScores, embed_head, read_texts, rotary_pair_scores
from model.families import LabModel, ReadsQueriesKeys
from model.gguf_weights import SMOLLM2_NAME
from model.sources import AnalysedInput, as_float32
from runtime.analysis_worker import size
from ui.analysis_queue import heavy
from ui.attention.finder import chart_above, second_analysis, show_finder, show_two_texts
from ui.charts import shared_figure, show_chart
from ui.language import words_for
from ui.presenter import projected_stop
from ui.page_sections import PageSections
from runtime.result_cache import memoized
from ui.llm_heads.specs import COLOUR_BY, FIND_TEXT, FIND_TEXT_B, QK_COLOUR, QK_HEAD
from ui.state import analysis_of, checked_input, get_model
from ui.widget_spec import prepare, spec_segmented
from viz.head_finder import qk_scatter, rotary_share_bars

MODEL_ID = SMOLLM2_NAME  # the page's model: its sections ask its capabilities


def _head_of(name: str, layout: tuple[int, int]) -> tuple[int, int] | None:
    """"L4 H2" -> (3, 1), or None when the model has no such head."""
    layer, head = (int(part[1:]) - 1 for part in name.split())
    return (layer, head) if 0 <= layer < layout[0] and 0 <= head < layout[1] else None


def _open_head(layer: int, head: int) -> None:
    QK_HEAD.set(head_label(layer, head))


def finder_section(lab: LabModel) -> tuple[AnalysedInput, str, tuple[int, int]] | None:
    """The text box, the finder on it, the head picker and the head on two texts -> (the analysis, its kind, the
    chosen head), or None when there is nothing to show."""
    if not projected_stop():
        st.write(tr("head_finder.finder_text"))
    prepare(FIND_TEXT)
    text = checked_input(st.text_input(tr("head_finder.find_text"), key=FIND_TEXT.key))
    analysed = None if text is None else analysis_of(MODEL_ID, text)
    if analysed is None:
        return None
    kind = default_kind(analysed, lab.layout)
    layers, heads = lab.layout[kind]
    named = _head_of(QK_HEAD.get(), (layers, heads)) if QK_HEAD.get() else None
    ranking = show_finder(MODEL_ID, lab, analysed, kind, _open_head, selected=named)
    if ranking is None:
        return None
    chosen = named or ranking.by_weight[0]  # no head named: the finder's first
    names = [head_label(layer, head) for layer in range(layers) for head in range(heads)]
    QK_HEAD.set(head_label(*chosen))
    st.subheader(tr("head_finder.pair_title"))
    chosen = _head_of(st.selectbox(tr("head_finder.head"), names, key=QK_HEAD.key), (layers, heads)) or chosen
    chart, controls = chart_above()
    second, query, key = second_analysis(MODEL_ID, FIND_TEXT_B, analysed.maps[kind], controls, pickers=False)
    if second is not None:
        with chart:
            show_two_texts(analysed, second, kind, *chosen, query, key)
    return analysed, kind, chosen


@memoized
def fixed_readings(model_id: str, _lab: ReadsQueriesKeys) -> list:
    """The fixed texts' queries and keys in every layer (QueriesKeys, (L, h, T, d_k) each): once per server."""
    return read_texts(_lab, LANGUAGE_MODEL_TEXTS)


@memoized
def head_embedding(model_id: str, layer: int, head: int, _lab: ReadsQueriesKeys) -> QKEmbedding:
    return embed_head(fixed_readings(model_id, _lab), layer, head)


@memoized
def head_pairs(model_id: str, text: str, layer: int, head: int, _lab: ReadsQueriesKeys) -> RotaryPairScores:
    """The head's scores of `text` split into RoPE pairs: a forward through layers 0 … layer only."""
    return rotary_pair_scores(_lab.queries_keys(text, layer + 1), layer, head)


def across_section(lab: LabModel, analysed: AnalysedInput, kind: str, chosen: tuple[int, int]) -> None:
    """The chosen head's queries and keys over the fixed texts in 2-D, and its q·k of the finder's text split into
    RoPE pairs (a model with QUERIES_KEYS)."""
    if not lab.can(QUERIES_KEYS):
        return
    layer, head = chosen
    name = head_label(layer, head)
    chart, controls = chart_above()
    below = st.container()  # the RoPE pairs, under the picture whichever comes first
    if not projected_stop():
        controls.write(tr("head_finder.across_text"))
    colour = spec_segmented(QK_COLOUR, tr("head_finder.colour_by"), where=controls, offered=list(COLOUR_BY),
                            format_func=lambda by: tr(f"head_finder.colour_{by}"))
    tokens = sum(len(text.split()) for text in LANGUAGE_MODEL_TEXTS)  # at least a token a word
    embedding = heavy(("qk_embedding", MODEL_ID, layer, head), lambda: head_embedding(MODEL_ID, layer, head, lab),
                      where=chart, work=size(tokens, lab.parameter_count))
    if embedding is None:
        return
    title = tr("head_finder.embedding_title", head=name, texts=len(LANGUAGE_MODEL_TEXTS),
               points=len(embedding.token) // 2)
    figure = shared_figure(("qk_embedding", MODEL_ID, layer, head, colour, title), lambda: qk_scatter(
        embedding.points, embedding.is_query, embedding.position, embedding.context, title, colour,
        embedding.explained, words=words_for("head_finder")))
    show_chart(figure, f"qk_embedding_{name.replace(' ', '_')}", key="qk_embedding", where=chart)
    pairs = heavy(("rope_pairs", MODEL_ID, analysed.text, layer, head),
                  lambda: head_pairs(MODEL_ID, analysed.text, layer, head, lab), where=below,
                  work=size(len(analysed.input_tokens), lab.parameter_count))
    if pairs is None:
        return
    show_chart(rotary_share_bars(pairs.mean_shares, pairs.frequencies, tr("head_finder.rope_title", head=name),
                                 words=words_for("head_finder")),
               f"rope_pairs_{name.replace(' ', '_')}", key="rope_pairs", where=below)
    below.write(tr("head_finder.rope_text"))
    scores = analysed.maps[kind].scores
    if scores is not None and scores.dtype == np.float32:  # a long text's float16 maps are too coarse to check
        seen = np.tril(np.ones(pairs.terms.shape[:2], dtype=bool))  # (T, T): the cells a causal query sees
        gap = np.abs(pairs.scores - as_float32(scores[layer, head]))[seen].max()
        below.caption(tr("head_finder.rope_check", gap=f"{gap:.1e}", cells=int(seen.sum())))
    below.page_link("app_pages/positional.py", label=tr("head_finder.rope_link"), icon=":material/rotate_right:")


def show_finder_sections(sections: PageSections) -> None:
    """The page's "finder" and "across" sections, each in its container (ui/page_sections.py), where drawn."""
    if not {"finder", "across"} & sections.drawn:
        return
    lab = get_model(MODEL_ID)
    with sections["finder"]:  # drawn with the head across many texts too: that section reads its text and head
        st.header(tr("head_finder.finder_title"))
        found = finder_section(lab)
    with sections["across"]:
        if "across" in sections.drawn:
            st.header(tr("head_finder.across_title"))
            if found is not None:
                across_section(lab, *found)

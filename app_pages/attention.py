"""Transformer attention: every head and layer, compare, statistics, ablation, rescaling."""
import streamlit as st

from i18n import tr
from model.capabilities import ALIGNMENT, EMBEDDING, STEPS, TRANSLATION, VOCABULARY
from model.sources import as_float32
from ui.attention.defaults import (TEACHING_KIND, open_encoder_on_teaching_head, open_on_source_block_head,
                                   open_on_teaching_view)
from ui.attention.view import attention_explorer
from ui.charts import show_chart
from ui.language import words_for
from ui.presenter import chart_first, explanation, page_title, strongest_shade
from ui.state import current_attention
from ui.text import escape_markdown
from ui.view import current_view
from ui.vocabulary import show_translation
from viz.attention import attention_heatmap, attention_table

page_title(tr("attention.title"))
with explanation():  # presenter mode: folded, the chart above the fold at 1280×720
    st.write(tr("attention.intro", shade=strongest_shade()))

view = current_view("attention")  # what this page draws (ui/view.py)
analysis = current_attention(view.model, view.sentence)  # model.families: the maps of whatever model is chosen
if analysis is not None:
    model_id, _, analysed = analysis
    if analysed.can(TRANSLATION):
        translation = " ".join(analysed.output_tokens) or tr("attention.empty")
        # One line of text, not a code block: the chart sits higher, and a shared link's first view loads no code
        # highlighter (its size: bench/README.md, "A shared link's view").
        if analysed.can(VOCABULARY) and analysed.unknown:  # a closed vocabulary: unknown words greyed, with the reason
            st.markdown(tr("attention.translation"))
            show_translation(analysed.decode, translation)
        elif analysed.can(VOCABULARY):
            st.markdown(f"{tr('attention.translation')} **{escape_markdown(translation)}**")
        else:
            st.markdown(tr("attention.translation"))
            st.code(translation, language=None)
    if analysed.can(ALIGNMENT) and analysed.maps:  # one additive alignment, no heads (Bahdanau et al. 2015, §3.1)
        chart, aside = chart_first()  # a projected stop: the alignment first, the note under it
        aside.info(tr("attention.rnn_bahdanau"))
        (alignment,) = analysed.maps.values()  # (1, 1, T_out + 1, T_src): no heads
        rows, columns, weights = alignment.query_tokens, alignment.key_tokens, alignment.weights[0, 0]
        with chart:
            show_chart(attention_heatmap(weights, rows, columns, tr("attention.alignment_title"),
                                         words=words_for("attention")),
                       "bahdanau_alignment", key="alignment",
                       table=lambda: attention_table(weights, rows, columns, words=words_for("attention")))
    elif not analysed.maps:  # a model without attention: nothing to draw but the translation
        st.info(tr("attention.rnn_plain"))
    else:
        if analysed.can(STEPS):  # decoded step by step through heads (an alignment is drawn above): a first visit
            # opens its cross-attention on the sharpest head
            open_on_teaching_view(as_float32(analysed.maps[TEACHING_KIND].weights))
        elif analysed.can(EMBEDDING):  # an encoder: the sharpest word-to-word head, not a [SEP] sink
            open_encoder_on_teaching_head(as_float32(analysed.maps["encoder_self"].weights), analysed.special)
        elif any(maps.source_block for maps in analysed.maps.values()):  # a decoder-only translator's one map
            open_on_source_block_head(next(maps for maps in analysed.maps.values() if maps.source_block))
        # A fragment: a change of kind, layer, head or view reruns only the explorer (not the sidebar or the above).
        attention_explorer("attention", model_id, analysed.text)

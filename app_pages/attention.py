"""Transformer attention: every head and layer, compare, statistics, ablation, rescaling."""
import streamlit as st

from i18n import tr
from model.sources import TRANSLATION
from ui.attention_view import attention_explorer
from ui.display import show_chart
from ui.state import analyse_ablated, current_attention
from viz.attention import attention_heatmap, attention_table

st.title(tr("attention.title"))
st.write(tr("attention.intro"))

analysis = current_attention()  # model.sources: the maps of whatever model is chosen
if analysis is not None:
    model_id, loaded, analysed = analysis
    if analysed.can(TRANSLATION):
        st.markdown(tr("attention.translation"))
        st.code(" ".join(analysed.output_tokens) or tr("attention.empty"), language=None)
    if not analysed.maps:  # a GRU seq2seq: one additive alignment, or no attention at all
        result = analysed.decode
        if "alignment" in result.attention:
            st.info(tr("attention.rnn_bahdanau"))
            rows, columns = result.output_tokens + ["<eos>"], result.source.tokens
            alignment = result.attention["alignment"]
            show_chart(attention_heatmap(alignment, rows, columns, tr("attention.alignment_title")),
                       "bahdanau_alignment", key="alignment", table=lambda: attention_table(alignment, rows, columns))
        else:
            st.info(tr("attention.rnn_plain"))
    else:
        # A fragment: a change of kind, layer, head or view reruns only the explorer (not the sidebar or the above).
        attention_explorer("attention", model_id, loaded, analysed, st.session_state["sentence"], analyse_ablated)

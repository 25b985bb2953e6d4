"""Transformer attention: every head and layer, compare, statistics, ablation, rescaling."""
import streamlit as st

from i18n import tr
from model.config import TransformerConfig
from ui.attention_view import (KINDS, VIEWS, AttentionMaps, head_picker, kind_label, show_ablation, show_compare,
                               show_grid, show_head, show_rescale, show_statistics, view_label)
from ui.display import show_chart
from ui.state import analyse_ablated, current_analysis
from viz.attention import attention_heatmap, attention_table

st.title(tr("attention.title"))
st.write(tr("attention.intro"))

analysis = current_analysis()
if analysis is not None:
    model_id, loaded, result = analysis
    st.markdown(tr("attention.translation"))
    st.code(" ".join(result.output_tokens) or tr("attention.empty"), language=None)
    if not isinstance(loaded.config, TransformerConfig):
        if "alignment" in result.attention:
            st.info(tr("attention.rnn_bahdanau"))
            rows, columns = result.output_tokens + ["<eos>"], result.source.tokens
            alignment = result.attention["alignment"]
            show_chart(attention_heatmap(alignment, rows, columns, tr("attention.alignment_title")),
                       "bahdanau_alignment", key="alignment", table=lambda: attention_table(alignment, rows, columns))
        else:
            st.info(tr("attention.rnn_plain"))
    else:
        c = st.columns([2, 1, 1])
        kind = c[0].selectbox(tr("attention.kind"), list(KINDS), key="attn_kind", format_func=kind_label)
        maps = AttentionMaps.of(result, kind)
        layer, head = head_picker(maps, "attn", c[1:])
        # Only the chosen view is computed and drawn (st.tabs would render all six on every rerun).
        st.session_state.setdefault("attn_view", VIEWS[0])
        view = st.segmented_control(tr("attention.view"), VIEWS, key="attn_view", format_func=view_label,
                                    required=True) or VIEWS[0]
        if view == "Head":
            show_head(maps, layer, head)
        elif view == "All heads":
            show_grid(maps, layer, head)
        elif view == "Compare":
            show_compare(result, maps, layer, head)
        elif view == "Statistics":
            show_statistics(maps)
        elif view == "Ablation":
            show_ablation(result, maps, model_id, st.session_state["sentence"], loaded, analyse_ablated)
        else:
            show_rescale(maps, layer, head, loaded.config.d_model // loaded.config.num_heads)

"""Transformer attention: every head and layer, compare, statistics, ablation, rescaling."""
import streamlit as st

from model.config import TransformerConfig
from ui.attention_view import (KINDS, VIEWS, AttentionMaps, head_picker, show_ablation, show_compare, show_grid,
                               show_head, show_rescale, show_statistics)
from ui.state import analyse_ablated, current_analysis
from viz.attention import attention_heatmap

st.title("Transformer attention")
st.write("Each head turns every query token into a probability distribution over the key tokens. Pick the kind of "
         "attention, a layer and a head; rows are queries (what is attending), columns are keys (what is attended to).")

analysis = current_analysis()
if analysis is not None:
    model_id, loaded, result = analysis
    st.markdown("**Translation:** ")
    st.code(" ".join(result.output_tokens) or "(empty)", language=None)
    if not isinstance(loaded.config, TransformerConfig):
        if "alignment" in result.attention:
            st.info("This is an RNN model with Bahdanau attention: it has one alignment, no layers or heads.")
            st.plotly_chart(attention_heatmap(result.attention["alignment"], result.output_tokens + ["<eos>"],
                                              result.source.tokens, "Bahdanau alignment (rows: output words)"))
        else:
            st.info("This RNN model has no attention at all: the decoder sees one fixed vector for the whole "
                    "sentence. Choose a Transformer model in the sidebar to explore heads.")
    else:
        c = st.columns([2, 1, 1])
        kind = c[0].selectbox("Attention kind", list(KINDS), key="attn_kind", format_func=KINDS.get)
        maps = AttentionMaps.of(result, kind)
        layer, head = head_picker(maps, "attn", c[1:])
        # Only the chosen view is computed and drawn (st.tabs would render all six on every rerun).
        view = st.segmented_control("View", list(VIEWS), key="attn_view", default=VIEWS[0]) or VIEWS[0]
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

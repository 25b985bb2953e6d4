"""Decoding step by step: what each new word reads in the source, the causal mask growing, next-token odds."""
import numpy as np
import streamlit as st

from model.config import TransformerConfig
from ui.attention_view import show_top_tokens
from ui.state import current_analysis
from viz.attention import attention_heatmap

st.title("Decoding, one token at a time")
st.write("The decoder writes the translation one token at a time. At each step its query looks at every source "
         "word (cross-attention) and at the words it has already written (masked self-attention), then picks the "
         "most likely next token.")

analysis = current_analysis()
if analysis is not None:
    model_id, loaded, result = analysis
    steps = len(result.step_probs)  # one step per output token, plus the step that writes <eos>
    produced = result.output_tokens + ["<eos>"]
    st.session_state["decode_step"] = min(st.session_state.get("decode_step", 1), steps)
    c = st.columns([1, 1, 6])
    if c[0].button("◀ Previous", disabled=st.session_state["decode_step"] <= 1):
        st.session_state["decode_step"] -= 1
    if c[1].button("Next ▶", disabled=st.session_state["decode_step"] >= steps):
        st.session_state["decode_step"] += 1
    step = st.slider("Step", 1, max(steps, 2), key="decode_step", disabled=steps < 2) - 1
    st.markdown(f"**Step {step + 1} of {steps}:** written so far")
    st.code(" ".join(["<bos>"] + produced[:step]) + f"  →  {produced[step]}", language=None)
    left, right = st.columns(2)
    with left:
        if isinstance(loaded.config, TransformerConfig):
            cfg = loaded.config
            c2 = st.columns(2)
            layer = c2[0].selectbox("Layer", range(cfg.num_layers), key="dec_layer", format_func=lambda i: f"{i + 1}")
            head = c2[1].selectbox("Head", ["all"] + list(range(cfg.num_heads)), key="dec_head",
                                   format_func=lambda h: "all heads" if h == "all" else f"{h + 1}")
            cross = result.attention["cross"][layer, :, step]  # (h, S)
            rows, labels = (cross, [f"head {h + 1}" for h in range(cfg.num_heads)]) if head == "all" else \
                (cross[head:head + 1], [f"head {head + 1}"])
            st.plotly_chart(attention_heatmap(rows, labels, result.source.tokens,
                                              f"Cross-attention while writing “{produced[step]}” (layer {layer + 1})",
                                              height=140 + 40 * len(labels)), key="dec_cross")
            so_far = result.attention["decoder_self"][layer, :, : step + 1, : step + 1]  # (h, step+1, step+1)
            self_w = so_far.mean(0) if head == "all" else so_far[head]
            tokens = result.decoder_input_tokens[: step + 1]
            st.plotly_chart(attention_heatmap(self_w, tokens, tokens, "Decoder self-attention so far" +
                                              (" (mean of heads)" if head == "all" else ""),
                                              masked=np.triu(np.ones((step + 1, step + 1), bool), 1)),
                            key="dec_self")
            st.caption("Grey cells are hidden by the causal mask: a word can only look at itself and earlier words.")
        elif "alignment" in result.attention:
            st.plotly_chart(attention_heatmap(result.attention["alignment"][step:step + 1], [produced[step]],
                                              result.source.tokens, "Bahdanau alignment at this step", height=180),
                            key="dec_align")
        else:
            st.info("This model has no attention: every step reads the same fixed context vector.")
    with right:
        show_top_tokens(result, step, loaded.tgt_vocab, key="dec_topk")

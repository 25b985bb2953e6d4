"""Scaled dot-product attention step by step, with masking, then multi-head attention."""
import numpy as np
import pandas as pd
import streamlit as st

from model.attention_steps import MASKS, attention_stages, build_mask, multi_head_stages
from viz.matrices import matrix_figure

st.title("Scaled dot-product attention, step by step")
st.write("Attention(Q, K, V) = softmax(QKᵀ/√d_k + mask)·V. Edit Q, K and V, pick a mask, and follow each stage. "
         "Each row of the weights is one query's probability distribution over the keys; a masked key gets −∞ "
         "before softmax, so its weight is exactly 0.")
st.latex(r"\mathrm{Attention}(Q,K,V)=\mathrm{softmax}\!\left(\frac{QK^\top}{\sqrt{d_k}}+M\right)V")

c = st.columns(4)
tokens = c[0].slider("Tokens", 2, 6, 4, key="steps_tokens")
d_k = c[1].slider("d_k", 1, 6, 3, key="steps_dk")
seed = c[2].number_input("Seed", 0, 10_000, 0, key="steps_seed")
mask_kind = c[3].selectbox("Mask", MASKS, key="steps_mask")
padded = st.slider("Padded key positions", 0, tokens - 1, 1, key="steps_padded") if mask_kind == "padding" else 0

rng = np.random.default_rng(int(seed))
names = [f"t{i + 1}" for i in range(tokens)]
dims = [f"d{j + 1}" for j in range(d_k)]
editors = st.columns(3)
matrices = {}
for col, name in zip(editors, "QKV"):
    default = pd.DataFrame(rng.standard_normal((tokens, d_k)).round(2), index=names, columns=dims)
    col.markdown(f"**{name}** ({tokens} × {d_k})")
    edited = col.data_editor(default, key=f"steps_{name}_{tokens}_{d_k}_{seed}")
    values = edited.to_numpy(dtype=float, na_value=np.nan)
    if not np.isfinite(values).all():
        col.warning(f"Empty or invalid cells in {name} are read as 0.")
    matrices[name] = np.nan_to_num(values, nan=0.0, posinf=0.0, neginf=0.0)

stages = attention_stages(matrices["Q"], matrices["K"], matrices["V"], build_mask(mask_kind, tokens, tokens, padded))
show = dict(row_labels=[f"q {n}" for n in names], col_labels=[f"k {n}" for n in names], row_title="queries",
            col_title="keys")
steps = [("1 · QKᵀ", stages.qk, {}), (f"2 · ÷ √d_k = ÷ {np.sqrt(d_k):.3f}", stages.scaled, {}),
         (f"3 · mask ({mask_kind})", stages.masked, {"hidden": stages.hidden}),
         ("4 · softmax over each row", stages.weights, {"colorscale": "Blues", "zmid": None})]
for (title, values, extra), col in zip(steps, st.columns(2) + st.columns(2)):
    col.plotly_chart(matrix_figure(values, title=title, **show, **extra), key=title)
st.plotly_chart(matrix_figure(stages.output, [f"q {n}" for n in names], [f"v {d}" for d in dims],
                              "5 · weights × V: one output row per query", row_title="queries",
                              col_title="value dimensions"), key="output")

st.subheader("Multi-head attention")
st.write("d_model is split into h heads of d_k = d_model/h. Each head attends on its own; the heads' outputs are "
         "concatenated back to d_model and mixed by W_o.")
c = st.columns(3)
heads = c[0].select_slider("Heads h", options=[1, 2, 4], value=2, key="mh_heads")
d_model = c[1].select_slider("d_model", options=[4, 8, 16], value=8, key="mh_dmodel")
mh_mask = c[2].selectbox("Mask (multi-head)", MASKS, key="mh_mask")
mh = multi_head_stages(tokens, d_model, heads, mh_mask, seed=int(seed))
for h, col in enumerate(st.columns(heads)):
    col.plotly_chart(matrix_figure(mh.head_weights[h], title=f"head {h + 1} weights (d_k = {d_model // heads})",
                                   colorscale="Blues", zmid=None, **show), key=f"mh_{h}")
a, b = st.columns(2)
a.plotly_chart(matrix_figure(mh.concat, [f"t{i + 1}" for i in range(tokens)], [f"{j + 1}" for j in range(d_model)],
                             f"Concat(head₁…head_{heads}): {tokens} × {d_model}", row_title="tokens",
                             col_title="dimension (head blocks side by side)"), key="mh_concat")
b.plotly_chart(matrix_figure(mh.output, [f"t{i + 1}" for i in range(tokens)], [f"{j + 1}" for j in range(d_model)],
                             "Concat · W_oᵀ + b_o", row_title="tokens", col_title="dimension"), key="mh_out")
st.caption(f"Largest difference from the model's own MultiHeadAttention.forward on the same input: "
           f"{np.abs(mh.output - mh.module_output).max():.1e}")

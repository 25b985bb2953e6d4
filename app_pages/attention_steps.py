"""Scaled dot-product attention step by step, with masking, then multi-head attention."""
import numpy as np
import pandas as pd
import streamlit as st

from i18n import tr
from model.attention_steps import INPUT_LIMIT, MASKS, attention_stages, build_mask, multi_head_stages
from ui.display import presenting, show_chart
from viz.matrices import matrix_figure

st.title(tr("attention_steps.title"))
st.write(tr("attention_steps.intro"))
st.latex(r"\mathrm{Attention}(Q,K,V)=\mathrm{softmax}\!\left(\frac{QK^\top}{\sqrt{d_k}}+M\right)V")
presenter = presenting()
# Defaults through session_state, not value=/index=: a shared link (ui/share.py) may already have set them.
for key, default in (("steps_tokens", 4), ("steps_dk", 3), ("steps_seed", 0), ("steps_mask", "none"),
                     ("mh_heads", 2), ("mh_dmodel", 8), ("mh_mask", "none")):
    st.session_state.setdefault(key, default)


def mask_name(kind: str) -> str:
    return tr(f"attention_steps.mask_{kind}")


c = st.columns(3 if presenter else 4)
tokens = c[0].slider(tr("attention_steps.tokens"), 2, 6, key="steps_tokens")
d_k = c[1].slider("d_k", 1, 6, key="steps_dk", help=tr("attention_steps.dk_help"))
mask_kind = c[2].selectbox(tr("attention_steps.mask"), MASKS, key="steps_mask", format_func=mask_name,
                           help=tr("attention_steps.mask_help"))
if presenter:  # a secondary knob, hidden; re-assigned so the seed chosen before survives the hidden widget
    seed = st.session_state["steps_seed"]
    st.session_state["steps_seed"] = seed
else:
    seed = c[3].number_input(tr("attention_steps.seed"), 0, 10_000, key="steps_seed",
                             help=tr("attention_steps.seed_help"))
padded = 0
if mask_kind == "padding":
    st.session_state["steps_padded"] = min(st.session_state.get("steps_padded", 1), tokens - 1)
    padded = st.slider(tr("attention_steps.padded"), 0, tokens - 1, key="steps_padded",
                       help=tr("attention_steps.padded_help"))

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
        col.warning(tr("attention_steps.invalid_cells", name=name))
    values = np.nan_to_num(values, nan=0.0, posinf=0.0, neginf=0.0)
    if (np.abs(values) > INPUT_LIMIT).any():
        col.warning(tr("attention_steps.clamped_cells", name=name, limit=f"{INPUT_LIMIT:,.0f}"))
    matrices[name] = values

st.markdown(tr("attention_steps.stages_text"))
stages = attention_stages(matrices["Q"], matrices["K"], matrices["V"], build_mask(mask_kind, tokens, tokens, padded))
queries, keys = tr("attention_steps.queries"), tr("attention_steps.keys")
show = dict(row_labels=[f"q {n}" for n in names], col_labels=[f"k {n}" for n in names], row_title=queries,
            col_title=keys)
steps = [("qk", "1 · QKᵀ", stages.qk, {}), ("scaled", f"2 · ÷ √d_k = ÷ {np.sqrt(d_k):.3f}", stages.scaled, {}),
         ("masked", tr("attention_steps.step_mask", mask=tr(f"attention_steps.short_{mask_kind}")), stages.masked,
          {"hidden": stages.hidden}),
         ("weights", tr("attention_steps.step_softmax"), stages.weights, {"colorscale": "Blues", "zmid": None})]
for (stage, title, values, extra), col in zip(steps, st.columns(2) + st.columns(2)):
    show_chart(matrix_figure(values, title=title, **show, **extra), f"attention_steps_{stage}_{mask_kind}_T{tokens}",
               key=f"steps_{stage}", where=col)
show_chart(matrix_figure(stages.output, [f"q {n}" for n in names], [f"v {d}" for d in dims],
                         tr("attention_steps.step_output"), row_title=queries,
                         col_title=tr("attention_steps.value_dimensions")),
           f"attention_steps_output_{mask_kind}_T{tokens}", key="output")

st.subheader(tr("attention_steps.multi_head_title"))
st.write(tr("attention_steps.multi_head_text"))
st.latex(r"\mathrm{MultiHead}(Q,K,V)=\mathrm{Concat}(\mathrm{head}_1,\dots,\mathrm{head}_h)\,W^O,\quad "
         r"\mathrm{head}_i=\mathrm{Attention}(QW_i^Q,\,KW_i^K,\,VW_i^V)")
c = st.columns(3)
heads = c[0].select_slider(tr("attention_steps.heads"), options=[1, 2, 4], key="mh_heads")
d_model = c[1].select_slider("d_model", options=[4, 8, 16], key="mh_dmodel")
mh_mask = c[2].selectbox(tr("attention_steps.mh_mask"), MASKS, key="mh_mask", format_func=mask_name,
                         help=tr("attention_steps.mask_help"))
mh = multi_head_stages(tokens, d_model, heads, mh_mask, seed=int(seed))
for h, col in enumerate(st.columns(heads)):
    show_chart(matrix_figure(mh.head_weights[h], colorscale="Blues", zmid=None, **show,
                             title=tr("attention_steps.head_weights", head=h + 1, d_k=d_model // heads)),
               f"multi_head_H{h + 1}_of_{heads}_{mh_mask}_T{tokens}", key=f"mh_{h}", where=col)
a, b = st.columns(2)
token_rows, columns = [f"t{i + 1}" for i in range(tokens)], [f"{j + 1}" for j in range(d_model)]
show_chart(matrix_figure(mh.concat, token_rows, columns, f"Concat(head₁…head_{heads}): {tokens} × {d_model}",
                         row_title=tr("attention_steps.tokens_axis"), col_title=tr("attention_steps.concat_axis")),
           f"multi_head_concat_h{heads}_d{d_model}", key="mh_concat", where=a)
show_chart(matrix_figure(mh.output, token_rows, columns, "Concat · W_oᵀ + b_o",
                         row_title=tr("attention_steps.tokens_axis"), col_title=tr("attention_steps.dimension_axis")),
           f"multi_head_output_h{heads}_d{d_model}", key="mh_out", where=b)
if not presenter:
    st.caption(tr("attention_steps.module_check", difference=f"{np.abs(mh.output - mh.module_output).max():.1e}"))

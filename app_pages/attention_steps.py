"""Scaled dot-product attention step by step, with masking, then multi-head attention."""
import numpy as np
import pandas as pd
import streamlit as st

from i18n import tr
from model.foundations.attention_steps import INPUT_LIMIT, attention_stages, build_mask, multi_head_stages
from ui.charts import show_chart
from ui.language import words_for
from ui.presenter import chart_first, explanation, page_title, presenting, projected_stop
from ui.page_sections import page_sections
from ui.specs.attention_steps import D_K, D_MODEL, HEADS, MASK, MULTI_HEAD_MASK, PADDED, SEED, TOKENS
from ui.widget_spec import knob_columns, secondary_number, spec_select, spec_select_slider, spec_slider
from viz.matrices import matrix_figure

page_title(tr("attention_steps.title"))
with explanation(tr("projected_lesson.about_page")):  # presenter mode: folded, the formula and Q, K, V higher
    st.write(tr("attention_steps.intro"))
presenter = presenting()


def mask_name(kind: str) -> str:
    return tr(f"attention_steps.mask_{kind}")


sections = page_sections("attention_steps")  # a lesson stop's section first (ui/page_sections.py)
with sections["single_head"]:
    st.latex(r"\mathrm{Attention}(Q,K,V)=\mathrm{softmax}\!\left(\frac{QK^\top}{\sqrt{d_k}}+M\right)V")
    c = knob_columns(3)
    tokens = spec_slider(TOKENS, tr("attention_steps.tokens"), where=c[0])
    d_k = spec_slider(D_K, "d_k", where=c[1], help=tr("attention_steps.dk_help"))
    mask_kind = spec_select(MASK, tr("attention_steps.mask"), where=c[2], format_func=mask_name,
                            help=tr("attention_steps.mask_help"))
    seed = secondary_number(SEED, tr("attention_steps.seed"), where=c[-1], help=tr("attention_steps.seed_help"))
    padded = 0
    if mask_kind == "padding":  # PADDED.drawn_when says the same for links to this page
        padded = spec_slider(PADDED, tr("attention_steps.padded"), help=tr("attention_steps.padded_help"))

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

queries, keys = tr("attention_steps.queries"), tr("attention_steps.keys")  # both sections' maps
show = dict(row_labels=[f"q {n}" for n in names], col_labels=[f"k {n}" for n in names], row_title=queries,
            col_title=keys)
if "steps" in sections.drawn:  # a section held for a later question is neither drawn nor computed
    with sections["steps"]:
        grid_area, text_area = chart_first()  # a projected stop: the steps first, their key under them
        text_area.markdown(tr("attention_steps.stages_text"))
        stages = attention_stages(matrices["Q"], matrices["K"], matrices["V"],
                                  build_mask(mask_kind, tokens, tokens, padded))
        steps = [("qk", "1 · QKᵀ", stages.qk, {}),
                 ("scaled", f"2 · ÷ √d_k = ÷ {np.sqrt(d_k):.3f}", stages.scaled, {}),
                 ("masked", tr("attention_steps.step_mask", mask=tr(f"attention_steps.short_{mask_kind}")), stages.masked,
                  {"hidden": stages.hidden}),
                 ("weights", tr("attention_steps.step_softmax"), stages.weights, {"colorscale": "Blues", "zmid": None})]
        if projected_stop() and mask_kind != "none":  # a stop about the mask: its step and the softmax's first row
            steps = steps[2:] + steps[:2]  # (their titles keep their numbers: 3, 4, then 1, 2)
        for (stage, title, values, extra), col in zip(steps, grid_area.columns(2) + grid_area.columns(2)):
            show_chart(matrix_figure(values, title=title, **show, **extra, words=words_for("attention_steps")),
                       f"attention_steps_{stage}_{mask_kind}_T{tokens}", key=f"steps_{stage}", where=col)
        show_chart(matrix_figure(stages.output, [f"q {n}" for n in names], [f"v {d}" for d in dims],
                                 tr("attention_steps.step_output"), row_title=queries,
                                 col_title=tr("attention_steps.value_dimensions"), words=words_for("attention_steps")),
                   f"attention_steps_output_{mask_kind}_T{tokens}", key="output")
if "multi_head" in sections.drawn:
    with sections["multi_head"]:
        st.subheader(tr("attention_steps.multi_head_title"))
        with explanation(tr("page_sections.about_section")):  # presenter mode: folded, the heads' maps higher
            st.write(tr("attention_steps.multi_head_text"))
            st.latex(r"\mathrm{MultiHead}(Q,K,V)=\mathrm{Concat}(\mathrm{head}_1,\dots,\mathrm{head}_h)\,W^O,\quad "
                     r"\mathrm{head}_i=\mathrm{Attention}(QW_i^Q,\,KW_i^K,\,VW_i^V)")
        c = st.columns(3)
        heads = spec_select_slider(HEADS, tr("attention_steps.heads"), where=c[0])
        d_model = spec_select_slider(D_MODEL, "d_model", where=c[1])
        mh_mask = spec_select(MULTI_HEAD_MASK, tr("attention_steps.mh_mask"), where=c[2], format_func=mask_name,
                              help=tr("attention_steps.mask_help"))
        mh = multi_head_stages(tokens, d_model, heads, mh_mask, seed=int(seed))
        for h, col in enumerate(st.columns(heads)):
            show_chart(matrix_figure(mh.head_weights[h], colorscale="Blues", zmid=None, **show,
                                     title=tr("attention_steps.head_weights", head=h + 1, d_k=d_model // heads),
                                     words=words_for("attention_steps")),
                       f"multi_head_H{h + 1}_of_{heads}_{mh_mask}_T{tokens}", key=f"mh_{h}", where=col)
        a, b = st.columns(2)
        token_rows, columns = [f"t{i + 1}" for i in range(tokens)], [f"{j + 1}" for j in range(d_model)]
        show_chart(matrix_figure(mh.concat, token_rows, columns, f"Concat(head₁…head_{heads}): {tokens} × {d_model}",
                                 row_title=tr("attention_steps.tokens_axis"), col_title=tr("attention_steps.concat_axis"),
                                 words=words_for("attention_steps")),
                   f"multi_head_concat_h{heads}_d{d_model}", key="mh_concat", where=a)
        show_chart(matrix_figure(mh.output, token_rows, columns, "Concat · W_oᵀ + b_o",
                                 row_title=tr("attention_steps.tokens_axis"),
                                 col_title=tr("attention_steps.dimension_axis"), words=words_for("attention_steps")),
                   f"multi_head_output_h{heads}_d{d_model}", key="mh_out", where=b)
        if not presenter:
            st.caption(tr("attention_steps.module_check", difference=f"{np.abs(mh.output - mh.module_output).max():.1e}"))

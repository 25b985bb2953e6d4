"""Why divide by √d_k: dot products grow with d_k, softmax saturates, its gradient vanishes."""
import numpy as np
import pandas as pd
import streamlit as st

from i18n import tr
from model.foundations.scaling import (NOTES_DOT_EXAMPLES, NOTES_SOFTMAX_EXAMPLE, dot_product_samples,
                                       saturation_curve, softmax, softmax_jacobian, transformer_scale)
from model.metrics import entropy
from ui.charts import shared_figure, show_chart
from ui.language import words_for
from ui.presenter import explanation, page_title, presenting
from ui.page_sections import page_sections
from runtime.result_cache import cached
from ui.specs.softmax_scaling import D_K, SCALE, SEED, V1_FACTOR
from ui.widget_spec import prepare, secondary_number, spec_select_slider
from viz.scaling import dot_product_histogram, jacobian_heatmap, saturation_chart, softmax_bars

page_title(tr("softmax_scaling.title"))
with explanation(tr("projected_lesson.about_page")):  # presenter mode: folded, the first section higher
    st.write(tr("softmax_scaling.intro"))
presenter = presenting()


def scale_name(s: float) -> str:  # called while section 3 is drawn, when d_k is known
    return tr("softmax_scaling.scale_dk", value=f"{s:g}") if s == transformer_scale(d_k) else f"{s:g}"


# A lesson stop's section first, alone; the others when asked (ui/page_sections.py): the whole page is six charts for
# the browser to draw at a stop's first click.
sections = page_sections("softmax_scaling", rest_on_request=True)
drawn = sections.drawn
with sections["dot_products"]:
    if "dot_products" in drawn:
        st.subheader(tr("softmax_scaling.dot_title"))
        st.write(tr("softmax_scaling.dot_text"))
        cols = st.columns(2)
        for col, (a, b) in zip(cols, NOTES_DOT_EXAMPLES):
            col.metric(f"{a.astype(int).tolist()} · {b.astype(int).tolist()}", f"{float(a @ b):g}",
                       help=tr("softmax_scaling.dot_help", d_k=len(a)))
        d_k = spec_select_slider(D_K, "d_k", help=tr("softmax_scaling.dk_help"))
        # 2 × 20,000 × d_k normal numbers: most of a run's time at d_k = 512, the same for every session
        raw, scaled = cached("softmax_scaling_dot_products", (d_k,), lambda: dot_product_samples(d_k, seed=0))
        c = st.columns(3)
        c[0].metric(tr("softmax_scaling.var_raw"), f"{raw.var():.2f}", help=tr("softmax_scaling.theory_is", value=d_k))
        c[1].metric(tr("softmax_scaling.var_scaled"), f"{scaled.var():.3f}", help=tr("softmax_scaling.theory_is", value=1))
        c[2].metric(tr("softmax_scaling.theory"), tr("softmax_scaling.theory_value", d_k=d_k))
        show_chart(shared_figure(("softmax_scaling_dot_products", d_k),
                                 lambda: dot_product_histogram(raw, scaled, d_k, words=words_for("softmax_scaling"))),
                   f"softmax_scaling_dot_products_dk{d_k}", key="hist",
                   table=lambda: pd.DataFrame({"q·k": raw, "q·k / √d_k": scaled}))
    else:  # the slider undrawn: d_k as the view has it, for the row
        d_k = int(prepare(D_K))

with sections["saturation"]:
    if "saturation" in drawn:
        st.subheader(tr("softmax_scaling.saturation_title"))
        v1 = NOTES_SOFTMAX_EXAMPLE
        st.write(tr("softmax_scaling.saturation_text", v1=", ".join(f"{x:g}" for x in v1),
                    p=", ".join(f"{x:.3f}" for x in softmax(v1)), p100=", ".join(f"{x:.5f}" for x in softmax(100 * v1))))
        factor = spec_select_slider(V1_FACTOR, tr("softmax_scaling.factor"))
        a, b = st.columns(2)
        for col, key, times in ((a, "v1", 1), (b, "v1_scaled", factor)):
            p = softmax(times * v1)
            title = "softmax(v₁)" if times == 1 else f"softmax({times} · v₁)"
            show_chart(softmax_bars(p, [f"{x * times:g}" for x in v1], title, words=words_for("softmax_scaling")),
                       f"softmax_v1_times{times}", key=key,
                       where=col)
            col.metric(tr("softmax_scaling.largest_gradient"), f"{np.abs(softmax_jacobian(p)).max():.4f}",
                       help=tr("softmax_scaling.largest_gradient_help"))
        st.latex(r"\frac{\partial y_i}{\partial z_j} = y_i\,(\delta_{ij} - y_j)")
        st.write(tr("softmax_scaling.jacobian_text"))

with sections["row"]:
    if "row" in drawn:
        st.subheader(tr("softmax_scaling.row_title"))
        with explanation(tr("page_sections.about_section")):  # folded when projected: the row's charts higher
            st.write(tr("softmax_scaling.row_text"))
            seed = secondary_number(SEED, tr("softmax_scaling.seed"))
        scores = np.random.default_rng(int(seed)).standard_normal(6) * np.sqrt(d_k)  # raw q·k of width d_k
        # the scale beside what it does, in one row: at 1280×720 the charts start a row higher
        c = st.columns([3, 1, 1, 1])
        scale = spec_select_slider(SCALE, tr("softmax_scaling.scale"), where=c[0], format_func=scale_name,
                                   help=tr("softmax_scaling.scale_help"))
        p = softmax(scale * scores)
        jacobian = softmax_jacobian(p)
        labels = [f"k{j + 1}" for j in range(len(scores))]
        c[1].metric(tr("softmax_scaling.entropy"), f"{entropy(p):.3f}", help=tr("softmax_scaling.entropy_help",
                                                                               maximum=f"{np.log(6):.3f}"))
        c[2].metric(tr("softmax_scaling.max_weight"), f"{p.max():.3f}")
        c[3].metric(tr("softmax_scaling.jacobian_norm"), f"{np.linalg.norm(jacobian):.4f}")
        a, b = st.columns(2)
        show_chart(softmax_bars(p, labels, tr("softmax_scaling.row_chart", scale=f"{scale:g}"),
                                words=words_for("softmax_scaling")),
                   f"softmax_row_scale{scale:g}_dk{d_k}", key="row", where=a)
        show_chart(jacobian_heatmap(jacobian, labels, tr("softmax_scaling.jacobian_title"),
                                    words=words_for("softmax_scaling")),
                   f"softmax_jacobian_scale{scale:g}_dk{d_k}", key="jac", where=b)
        show_chart(saturation_chart(saturation_curve(scores, np.logspace(-2, 1.5, 60)), scale,
                                    words=words_for("softmax_scaling")),
                   f"softmax_saturation_dk{d_k}_seed{seed}", key="curve")
        if not presenter:
            st.caption(tr("softmax_scaling.caption", scale=f"{1 / np.sqrt(d_k):.3f}", d_k=d_k))

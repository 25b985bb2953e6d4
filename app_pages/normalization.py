"""Layer vs batch normalization: which values share one mean and variance, and what breaks at batch size 1."""
import streamlit as st

from i18n import tr
from model.foundations.normalization import NORM_KINDS, normalization_demo, pooled_cells
from ui.charts import show_chart
from ui.language import words_for
from ui.presenter import chart_first, explanation, page_title, presenting
from ui.specs.normalization import BATCH, FEATURE, FEATURES, KIND, LENGTH, POSITION, SEED, SEQUENCE
from ui.widget_spec import knob_columns, prepare, secondary_number, spec_radio, spec_select, spec_slider
from viz.normalization import (before_after_chart, cells_table, comparison_table, norm_kind_label, statistics_chart,
                               statistics_table, tensor_grid)

page_title(tr("normalization.title"))
with explanation(tr("projected_lesson.about_page")):  # presenter mode: folded, the tensors higher at 1280×720
    st.markdown(tr("normalization.intro"))
    st.markdown(tr("normalization.try_this"))

table_area, knobs_area = chart_first()  # a projected stop: the comparison table first, the knobs under it
with knobs_area:
    c = knob_columns(3)
batch_size = spec_slider(BATCH, tr("normalization.batch"), where=c[0])
max_len = spec_slider(LENGTH, tr("normalization.length"), where=c[1])
d = spec_slider(FEATURES, tr("normalization.features"), where=c[2])
seed = int(secondary_number(SEED, tr("normalization.seed"), where=c[-1], help=tr("normalization.seed_help")))
demos = {kind: normalization_demo(batch_size, max_len, d, kind, seed) for kind in NORM_KINDS}

with knobs_area:
    if batch_size == 1 and max_len == 1:
        st.error(tr("normalization.bn_fails", zeroed=f"{demos['batch'].zeroed_fraction:.0%}",
                    error=demos["batch"].torch_error))
        if not demos["layer"].collapsed.any():
            st.success(tr("normalization.ln_works", d=d))
    elif batch_size == 1:
        st.info(tr("normalization.one_sentence", length=max_len))
table_area.dataframe(comparison_table(demos, words=words_for("normalization")), hide_index=True)
if not presenting():
    table_area.caption(tr("normalization.table_caption"))

kind = spec_radio(KIND, tr("normalization.kind"),
                  format_func=lambda kind: norm_kind_label(kind, words=words_for("normalization")), horizontal=True,
                  help=tr("normalization.kind_help"))
demo, label = demos[kind], norm_kind_label(kind, words=words_for("normalization"))
f = st.columns(3)
seq = spec_select(SEQUENCE, tr("normalization.highlight_sequence"), where=f[0], format_func=lambda b: f"{b + 1}",
                  disabled=kind != "layer", help=tr("normalization.highlight_help"))
prepare(POSITION)  # within the padded length; LayerNorm offers only the highlighted sentence's real tokens
pos = f[1].selectbox(tr("normalization.highlight_position"),
                     range(int(demo.lengths[seq]) if kind == "layer" else max_len), format_func=lambda t: f"{t + 1}",
                     key=POSITION.key, disabled=kind == "batch", help=tr("normalization.highlight_help"))
feature = spec_select(FEATURE, tr("normalization.highlight_feature"), where=f[2], format_func=lambda j: f"{j + 1}",
                      disabled=kind == "layer", help=tr("normalization.highlight_help"))
cells = pooled_cells(demo.mask, d, kind, (seq, pos, feature))
name = f"{kind}_B{batch_size}_T{max_len}_d{d}_seed{seed}"
table = lambda: cells_table(demo.x, demo.output, demo.mask, cells,
                            words=words_for("normalization"))  # noqa: E731 (built only when downloaded)
show_chart(tensor_grid(demo.x, demo.mask, cells, tr("normalization.grid_title", kind=label, count=int(cells.sum())),
                       words=words_for("normalization")),
           f"norm_input_{name}", key="norm_grid", table=table)
st.markdown(tr("normalization.padding"))
if demo.collapsed.any():
    st.warning(tr("normalization.collapsed", count=int(demo.collapsed.sum()), kind=label,
                  zeroed=f"{demo.zeroed_fraction:.0%}"))
show_chart(statistics_chart(demo.mean, demo.var, demo.count, kind, tr("normalization.stats_title", kind=label),
                            words=words_for("normalization")),
           f"norm_statistics_{name}", key="norm_stats",
           table=lambda: statistics_table(demo.mean, demo.var, demo.count, kind, words=words_for("normalization")))
show_chart(before_after_chart(demo.x, demo.output, demo.mask, tr("normalization.before_after_title"),
                              words=words_for("normalization")),
           f"norm_before_after_{name}", key="norm_before_after", table=table)

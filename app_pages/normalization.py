"""Layer vs batch normalization: which values share one mean and variance, and what breaks at batch size 1."""
import streamlit as st

from i18n import tr
from model.normalization import NORM_KINDS, normalization_demo, pooled_cells
from ui.display import presenting, show_chart
from viz.normalization import (before_after_chart, cells_table, comparison_table, norm_kind_label, statistics_chart,
                               statistics_table, tensor_grid)

DEFAULTS = {"norm_batch": 4, "norm_len": 6, "norm_d": 6, "norm_seed": 0, "norm_kind": "layer"}
for key, default in DEFAULTS.items():  # a shared link may already have set them (ui/share.py)
    st.session_state.setdefault(key, default)
presenter = presenting()

st.title(tr("normalization.title"))
st.markdown(tr("normalization.intro"))
st.markdown(tr("normalization.try_this"))

c = st.columns(3 if presenter else 4)
batch_size = c[0].slider(tr("normalization.batch"), 1, 8, key="norm_batch")
max_len = c[1].slider(tr("normalization.length"), 1, 12, key="norm_len")
d = c[2].slider(tr("normalization.features"), 2, 16, key="norm_d")
if not presenter:  # a secondary knob; kept while hidden (ui/share.py keep_view_state)
    c[3].number_input(tr("normalization.seed"), 0, 10_000, key="norm_seed", help=tr("normalization.seed_help"))
seed = int(st.session_state["norm_seed"])
demos = {kind: normalization_demo(batch_size, max_len, d, kind, seed) for kind in NORM_KINDS}

if batch_size == 1 and max_len == 1:
    st.error(tr("normalization.bn_fails", zeroed=f"{demos['batch'].zeroed_fraction:.0%}",
                error=demos["batch"].torch_error))
    if not demos["layer"].collapsed.any():
        st.success(tr("normalization.ln_works", d=d))
elif batch_size == 1:
    st.info(tr("normalization.one_sentence", length=max_len))
st.dataframe(comparison_table(demos), hide_index=True)
if not presenter:
    st.caption(tr("normalization.table_caption"))

kind = st.radio(tr("normalization.kind"), NORM_KINDS, format_func=norm_kind_label, horizontal=True, key="norm_kind",
                help=tr("normalization.kind_help"))
demo, label = demos[kind], norm_kind_label(kind)
f = st.columns(3)
seq = f[0].selectbox(tr("normalization.highlight_sequence"), range(batch_size), format_func=lambda b: f"{b + 1}",
                     key="norm_seq", disabled=kind != "layer", help=tr("normalization.highlight_help"))
pos = f[1].selectbox(tr("normalization.highlight_position"),
                     range(int(demo.lengths[seq]) if kind == "layer" else max_len), format_func=lambda t: f"{t + 1}",
                     key="norm_pos", disabled=kind == "batch", help=tr("normalization.highlight_help"))
feature = f[2].selectbox(tr("normalization.highlight_feature"), range(d), format_func=lambda j: f"{j + 1}",
                         key="norm_feature", disabled=kind == "layer", help=tr("normalization.highlight_help"))
cells = pooled_cells(demo.mask, d, kind, (seq, pos, feature))
name = f"{kind}_B{batch_size}_T{max_len}_d{d}_seed{seed}"
table = lambda: cells_table(demo.x, demo.output, demo.mask, cells)  # noqa: E731 (built only when downloaded)
show_chart(tensor_grid(demo.x, demo.mask, cells, tr("normalization.grid_title", kind=label, count=int(cells.sum()))),
           f"norm_input_{name}", key="norm_grid", table=table)
st.markdown(tr("normalization.padding"))
if demo.collapsed.any():
    st.warning(tr("normalization.collapsed", count=int(demo.collapsed.sum()), kind=label,
                  zeroed=f"{demo.zeroed_fraction:.0%}"))
show_chart(statistics_chart(demo.mean, demo.var, demo.count, kind, tr("normalization.stats_title", kind=label)),
           f"norm_statistics_{name}", key="norm_stats",
           table=lambda: statistics_table(demo.mean, demo.var, demo.count, kind))
show_chart(before_after_chart(demo.x, demo.output, demo.mask, tr("normalization.before_after_title")),
           f"norm_before_after_{name}", key="norm_before_after", table=table)

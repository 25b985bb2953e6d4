"""Layer vs batch normalization: which values share one mean and variance, and what breaks at batch size 1."""
import streamlit as st

from model.normalization import NORM_KINDS, normalization_demo, pooled_cells
from viz.normalization import KIND_LABELS, before_after_chart, comparison_table, statistics_chart, tensor_grid

st.title("Layer normalization vs batch normalization")
st.write("A batch of sentences is a block of numbers: sentences × positions × features, with the shorter sentences "
         "padded. LayerNorm gives every token its own mean and variance, taken over its features; BatchNorm gives "
         "every feature one mean and variance, taken over all real tokens of the batch. Set the batch size and the "
         "length to 1: BatchNorm is left with one value per feature, its variance is 0 and every output is 0, "
         "while LayerNorm still works.")

c = st.columns(4)
batch_size = c[0].slider("Batch size (sentences)", 1, 8, 4, key="norm_batch")
max_len = c[1].slider("Longest sentence (tokens)", 1, 12, 6, key="norm_len")
d = c[2].slider("Features d", 2, 16, 6, key="norm_d")
seed = int(c[3].number_input("Seed (values and lengths)", 0, 10_000, 0, key="norm_seed"))
demos = {kind: normalization_demo(batch_size, max_len, d, kind, seed) for kind in NORM_KINDS}

if batch_size == 1 and max_len == 1:
    st.error(f"**BatchNorm fails.** One sentence of one token gives each feature a single value: its mean is that "
             f"value, its variance is 0, and {demos['batch'].zeroed_fraction:.0%} of the outputs are exactly 0, so "
             f"the input is lost. torch.nn.BatchNorm1d refuses outright: “{demos['batch'].torch_error}”.")
    if not demos["layer"].collapsed.any():
        st.success(f"**LayerNorm works.** It takes the mean and variance over the token's {d} features, which "
                   "differ from one another, so the output keeps the token's pattern.")
elif batch_size == 1:
    st.info(f"One sentence: BatchNorm over batch and time still pools its {max_len} tokens, but the per-time-step "
            "statistics a recurrent model would need have one value each and collapse to 0. Set the length to 1 "
            "to see plain BatchNorm fail too.")
st.dataframe(comparison_table(demos), hide_index=True)

kind = st.radio("Normalise over", NORM_KINDS, format_func=KIND_LABELS.get, horizontal=True, key="norm_kind")
demo = demos[kind]
f = st.columns(3)
seq = f[0].selectbox("Highlight sequence", range(batch_size), format_func=lambda b: f"{b + 1}", key="norm_seq",
                     disabled=kind != "layer")
pos = f[1].selectbox("Highlight position", range(int(demo.lengths[seq]) if kind == "layer" else max_len),
                     format_func=lambda t: f"{t + 1}", key="norm_pos", disabled=kind == "batch")
feature = f[2].selectbox("Highlight feature", range(d), format_func=lambda j: f"{j + 1}", key="norm_feature",
                         disabled=kind == "layer")
cells = pooled_cells(demo.mask, d, kind, (seq, pos, feature))
st.plotly_chart(tensor_grid(demo.x, demo.mask, cells, f"Input: the outlined cells share one {KIND_LABELS[kind]} "
                            f"mean and variance ({int(cells.sum())} values; padding grey)"), key="norm_grid")
if demo.collapsed.any():
    st.warning(f"{int(demo.collapsed.sum())} of the {KIND_LABELS[kind]} statistics pooled a single value: variance "
               f"0, so those outputs are exactly 0 ({demo.zeroed_fraction:.0%} of all outputs).")
st.plotly_chart(statistics_chart(demo.mean, demo.var, demo.count, kind, f"{KIND_LABELS[kind]} statistics"),
                key="norm_stats")
st.plotly_chart(before_after_chart(demo.x, demo.output, demo.mask, "Before and after, real tokens only"),
                key="norm_before_after")

"""Why divide by √d_k: dot products grow with d_k, softmax saturates, its gradient vanishes."""
import numpy as np
import streamlit as st

from model.scaling import (NOTES_DOT_EXAMPLES, NOTES_SOFTMAX_EXAMPLE, dot_product_samples, entropy, saturation_curve,
                           softmax, softmax_jacobian)
from viz.scaling import dot_product_histogram, jacobian_heatmap, saturation_chart, softmax_bars

st.title("Softmax scaling: why divide by √d_k")
st.write("A dot product of two d_k-dimensional vectors adds up d_k terms, so it grows with d_k. Large scores push "
         "softmax to a one-hot vector, where its gradient is almost zero and learning stalls. Dividing by √d_k keeps "
         "the scores' variance at 1 whatever the width. Move d_k and the scale and watch the variance, the "
         "bars and the Jacobian.")

st.subheader("1 · The dot product grows with the dimension")
cols = st.columns(2)
for col, (a, b) in zip(cols, NOTES_DOT_EXAMPLES):
    col.metric(f"{a.astype(int).tolist()} · {b.astype(int).tolist()}", f"{float(a @ b):g}",
               help=f"d_k = {len(a)}: each of the {len(a)} products is 2 × 2 = 4")
d_k = st.select_slider("d_k", options=[1, 2, 4, 8, 16, 32, 64, 128, 256, 512], value=64, key="scaling_dk")
raw, scaled = dot_product_samples(d_k, seed=0)
c = st.columns(3)
c[0].metric("var(q·k), measured", f"{raw.var():.2f}", help="theory: d_k")
c[1].metric("var(q·k / √d_k), measured", f"{scaled.var():.3f}", help="theory: 1")
c[2].metric("theory", f"{d_k} vs 1")
st.plotly_chart(dot_product_histogram(raw, scaled, d_k), key="hist")

st.subheader("2 · Softmax saturates")
st.write(f"The notes' example: v₁ = {NOTES_SOFTMAX_EXAMPLE.tolist()} and the same vector scaled up.")
factor = st.select_slider("Multiply v₁ by", options=[1, 2, 5, 10, 20, 50, 100], value=10, key="scaling_v1_factor")
a, b = st.columns(2)
a.plotly_chart(softmax_bars(softmax(NOTES_SOFTMAX_EXAMPLE), ["0.3", "0.4"], "softmax(v₁)"), key="v1")
b.plotly_chart(softmax_bars(softmax(factor * NOTES_SOFTMAX_EXAMPLE), [f"{0.3 * factor:g}", f"{0.4 * factor:g}"],
                            f"softmax({factor} · v₁)"), key="v1_scaled")

st.subheader("3 · A row of scores under a scale (or temperature)")
seed = st.number_input("Seed for the scores", 0, 10_000, 0, key="scaling_seed")
scores = np.random.default_rng(int(seed)).standard_normal(6) * np.sqrt(d_k)  # raw q·k of width d_k
scale = st.select_slider("Scale multiplying the raw scores", key="scaling_scale",
                         options=[0.01, 0.03, 0.1, round(1 / np.sqrt(d_k), 3), 0.3, 1.0, 3.0, 10.0], value=1.0)
p = softmax(scale * scores)
labels = [f"k{j + 1}" for j in range(len(scores))]
c = st.columns(3)
c[0].metric("entropy (nats)", f"{entropy(p):.3f}", help=f"maximum ln 6 = {np.log(6):.3f}")
c[1].metric("max weight", f"{p.max():.3f}")
c[2].metric("‖Jacobian‖", f"{np.linalg.norm(softmax_jacobian(p)):.4f}")
a, b = st.columns(2)
a.plotly_chart(softmax_bars(p, labels, f"softmax({scale} × scores)"), key="row")
b.plotly_chart(jacobian_heatmap(softmax_jacobian(p), labels, "Jacobian ∂y_i/∂z_j = y_i(δ_ij − y_j)"), key="jac")
st.plotly_chart(saturation_chart(saturation_curve(scores, np.logspace(-2, 1.5, 60)), scale), key="curve")
st.caption(f"1/√d_k = {1 / np.sqrt(d_k):.3f} is the scale the Transformer uses for these scores (d_k = {d_k}).")

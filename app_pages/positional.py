"""Positional encoding: the sinusoidal table, its curves, dials vs a binary counter, similarity, the rotation fact."""
import streamlit as st

from model.config import TransformerConfig
from model.positional import SinusoidalAnalysis, analyse_sinusoidal, summarize_position_table
from ui.state import get_model, selected_model_id
from viz.positional import (dials_and_counter, dimension_curves, dimension_name, encoding_heatmap, rotation_check,
                            rotation_matrix_heatmap, similarity_by_offset, similarity_heatmap)

st.title("Positional encoding")
st.write("Attention alone cannot tell word order, so the Transformer adds a vector PE(p) to the embedding of the "
         "word at position p. Look for dials that turn fast in the first dimensions and slowly in the last ones, "
         "like a continuous binary counter; for a similarity between positions that depends only on their distance; "
         "and for a shift by k positions being one fixed rotation.")


@st.cache_data(max_entries=64, show_spinner=False)
def sinusoidal(length: int, d_model: int, k: int) -> SinusoidalAnalysis:
    return analyse_sinusoidal(length, d_model, k)


c = st.columns(3)
d_model = c[0].slider("d_model", 4, 256, 64, step=2, key="pe_d_model")
length = c[1].slider("length (positions)", 8, 256, 64, key="pe_length")
for name, top in (("pe_position", length - 1), ("pe_k", length - 1)):  # keep old choices inside the new range
    st.session_state[name] = min(st.session_state.get(name, 5), top)
st.session_state["pe_dims"] = [d for d in st.session_state.get("pe_dims", [0, 1, 6, 7, 20]) if d < d_model]
k = c[2].slider("offset k (for the rotation)", 1, length - 1, key="pe_k")
pe = sinusoidal(length, d_model, k)

st.subheader("The formula")
st.latex(r"PE_{(pos,\,2i)} = \sin\!\left(\frac{pos}{10000^{2i/d_{model}}}\right) \qquad "
         r"PE_{(pos,\,2i+1)} = \cos\!\left(\frac{pos}{10000^{2i/d_{model}}}\right)")
st.subheader("The matrix")
st.plotly_chart(encoding_heatmap(pe.table, f"PE for {length} positions × d_model = {d_model}"), key="pe_matrix")
st.subheader("Dimensions as curves")
dims = st.multiselect("Dimensions to plot", range(d_model), key="pe_dims", format_func=dimension_name)
st.plotly_chart(dimension_curves(pe.table, dims), key="pe_curves")

st.subheader("Dials and a binary counter")
st.write("Each (sin, cos) pair is a dial whose hand turns ω_i = 1/10000^(2i/d_model) radians per position. "
         "Like the bits of a counter, low dimensions change fast and high ones slowly, but the dials turn smoothly.")
position = st.slider("Position for the dials", 0, length - 1, key="pe_position")
st.plotly_chart(dials_and_counter(pe.angles[position], pe.bits[position], pe.wavelengths, position), key="pe_dials")

st.subheader("Similarity between positions")
left, right = st.columns(2)
left.plotly_chart(similarity_heatmap(pe.similarity), key="pe_similarity")
references = sorted({0, length // 4, length // 2, length - 1})
right.plotly_chart(similarity_by_offset(pe.similarity, references), key="pe_offset")
st.caption(f"PE(p)·PE(q) = Σᵢ cos((p − q)·ωᵢ) depends on p − q only: along every diagonal the values differ "
           f"by at most {pe.diagonal_spread:.1e} (largest value {pe.similarity.max():.0f}, rounding only).")

st.subheader("A shift by k is a rotation")
st.write(f"PE(p + {k}) = M_{k} · PE(p) for every p, with one fixed matrix M_{k} that rotates each (sin, cos) pair by "
         f"{k}·ω_i. Vaswani et al. chose sinusoids for this: a fixed offset is a linear map, so they expected the "
         "model to learn easily to attend by relative position.")
error = float(pe.rotation_error.max())
st.metric(f"Largest |PE(p + {k}) − M_{k}·PE(p)| over all {length - k} positions and {d_model} dimensions",
          f"{error:.1e}")
left, right = st.columns([3, 2])
left.plotly_chart(rotation_check(pe.shifted, pe.rotated, min(position, length - k - 1), k), key="pe_rotation")
right.plotly_chart(rotation_matrix_heatmap(pe.rotation, k), key="pe_rotation_matrix")

st.subheader("What a trained model uses")
model_id = selected_model_id()
loaded = get_model(model_id)
if isinstance(loaded.config, TransformerConfig):
    # Not cached: the table is already in memory, and st.cache_data is shared by every session while the ids of
    # user-trained models are only unique within one session.
    summary = summarize_position_table(loaded.model.src_pos)
    rows = min(len(summary.table), 64)
    st.write(f"**{model_id}** uses a **{summary.kind}** position table of {summary.table.shape[0]} positions × "
             f"d_model = {summary.table.shape[1]} (the same kind for the decoder).")
    if summary.kind == "sinusoidal":
        st.metric("Max |table − sinusoidal_encoding|", f"{summary.max_diff_from_sinusoidal:.1e}")
    else:
        st.metric("Max |learned table − sinusoidal formula| (it learned its own)",
                  f"{summary.max_diff_from_sinusoidal:.2f}")
    st.plotly_chart(encoding_heatmap(summary.table[:rows], f"{model_id}: encoder position table, first {rows} rows",
                                     bound=1.0 if summary.kind == "sinusoidal" else None), key="pe_trained")
else:
    st.info(f"**{model_id}** is a GRU (RNN) model: it reads words one after another, so position comes from the "
            "recurrence itself. It has no position table.")

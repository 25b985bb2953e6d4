"""Residual connection f(x) + x: the gradient at every layer of a deep stack, with and without the skip."""
import streamlit as st

from model.residual import ACTIVATIONS, gradient_profile
from viz.residual import WIRING_STYLE, gradient_norm_chart

st.title("Residual connections: f(x) + x")
st.write("A deep stack of small layers, run once without and once with the skip connection, then one backward "
         "pass from the loss. Without the skip the gradient is multiplied by every layer's derivative on the way "
         "back and vanishes with depth; with it, ∂(x + f(x))/∂x = 1 + f′(x), so the identity path always carries "
         "at least the 1 back to the first layer. Raise the depth and compare the two curves at layer 1.")

c = st.columns(3)
depth = c[0].slider("Depth (layers)", 2, 64, 32, key="res_depth")
activation = c[1].radio("Layer f(x)", list(ACTIVATIONS), format_func=lambda a: f"{a}(W x + b)", horizontal=True,
                        key="res_activation")
seed = int(c[2].number_input("Seed (weights and input)", 0, 10_000, 0, key="res_seed"))
with_ln = st.toggle("Also show the Transformer's wiring: LayerNorm right after each residual, LN(x + f(x))",
                    key="res_ln")

profile = gradient_profile(depth, activation, seed)
shown = ["plain", "residual"] + (["residual_ln"] if with_ln else [])
st.plotly_chart(gradient_norm_chart({w: getattr(profile, w) for w in shown},
                                    f"Gradient at each layer's input, {depth} layers of {activation}"), key="res_chart")
m = st.columns(len(shown))
for column, wiring in zip(m, shown):
    column.metric(f"layer 1 ÷ layer {depth}: {WIRING_STYLE[wiring][0]}", f"{profile.first_over_last(wiring):.3g}",
                  help="Gradient norm at the first layer's input divided by that at the last layer's input: "
                       "far below 1 means the gradient vanished on its way back.")
st.caption(f"Layers use PyTorch's default initialisation (64 units wide, batch of 16); the loss is a fixed random "
           f"projection of the output, so the gradient arriving at the output has norm 1 per example. At layer 1 "
           f"the skip carries back {profile.residual[0] / profile.plain[0]:.2g}× the gradient of the plain stack.")
per_layer = profile.first_over_last("plain") ** (1 / (depth - 1))  # geometric mean factor per plain layer
st.markdown("**Why the gap.** Without the skip, the backward pass multiplies the derivative of every layer; here "
            f"each plain layer scales the gradient by {per_layer:.2f} on average, so the product shrinks "
            "exponentially with depth. With the skip, each factor is "
            "1 + f′(x): the 1 is never multiplied away, which is why deeper networks still learn (the notes call "
            "it the guaranteed gradient of at least 1). The f′ parts add on top, so without normalisation the "
            "gradient can grow with depth, most with ReLU; the Transformer puts a LayerNorm right after each "
            "residual, which keeps it within a small factor of 1 (switch it on above).")

"""Residual connection f(x) + x: the gradient at every layer of a deep stack, with and without the skip."""
import streamlit as st

from i18n import tr
from model.residual import ACTIVATIONS, gradient_profile
from ui.display import presenting, show_chart
from viz.residual import gradient_norm_chart, gradient_table, wiring_label

DEFAULTS = {"res_depth": 32, "res_activation": "tanh", "res_seed": 0, "res_ln": False}
for key, default in DEFAULTS.items():  # a shared link may already have set them (ui/share.py)
    st.session_state.setdefault(key, default)
presenter = presenting()

st.title(tr("residual.title"))
st.write(tr("residual.intro"))
st.markdown(tr("residual.try_this"))

c = st.columns(2 if presenter else 3)
depth = c[0].slider(tr("residual.depth"), 2, 64, key="res_depth")
activation = c[1].radio(tr("residual.activation"), list(ACTIVATIONS), horizontal=True, key="res_activation",
                        format_func=lambda a: tr("residual.activation_option", activation=a))
if not presenter:  # a secondary knob; kept while hidden (ui/share.py keep_view_state)
    c[2].number_input(tr("residual.seed"), 0, 10_000, key="res_seed", help=tr("residual.seed_help"))
seed = int(st.session_state["res_seed"])
with_ln = st.toggle(tr("residual.ln"), key="res_ln")

profile = gradient_profile(depth, activation, seed)
shown = ["plain", "residual"] + (["residual_ln"] if with_ln else [])
norms = {w: getattr(profile, w) for w in shown}
show_chart(gradient_norm_chart(norms, tr("residual.chart_title", depth=depth, activation=activation)),
           f"residual_gradient_{activation}_depth{depth}_seed{seed}", key="res_chart",
           table=lambda: gradient_table(norms))
m = st.columns(len(shown))
for column, wiring in zip(m, shown):
    column.metric(tr("residual.metric", depth=depth, wiring=wiring_label(wiring)),
                  f"{profile.first_over_last(wiring):.3g}", help=tr("residual.metric_help"))
st.markdown(tr("residual.look", ratio=f"{profile.residual[0] / profile.plain[0]:.2g}"))
if not presenter:
    st.caption(tr("residual.setup"))
per_layer = profile.first_over_last("plain") ** (1 / (depth - 1))  # geometric mean factor per plain layer
st.markdown(tr("residual.why", per_layer=f"{per_layer:.2f}"))

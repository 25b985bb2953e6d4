"""Residual connection f(x) + x: the gradient at every layer of a deep stack, with and without the skip."""
import streamlit as st

from i18n import tr
from model.foundations.residual import gradient_profile
from ui.charts import shared_figure, show_chart
from ui.language import words_for
from ui.presenter import explanation, page_title, presenting
from runtime.result_cache import cached
from ui.specs.residual import ACTIVATION, DEPTH, LAYER_NORM, SEED
from ui.widget_spec import knob_columns, secondary_number, spec_radio, spec_slider, spec_toggle
from viz.residual import gradient_norm_chart, gradient_table, wiring_label

page_title(tr("residual.title"))
with explanation(tr("projected_lesson.about_page")):  # presenter mode: folded, the chart above the fold at 1280×720
    st.write(tr("residual.intro"))
    st.markdown(tr("residual.try_this"))

c = knob_columns(2)
depth = spec_slider(DEPTH, tr("residual.depth"), where=c[0])
activation = spec_radio(ACTIVATION, tr("residual.activation"), where=c[1], horizontal=True,
                        format_func=lambda a: tr("residual.activation_option", activation=a))
seed = int(secondary_number(SEED, tr("residual.seed"), where=c[-1], help=tr("residual.seed_help")))
with_ln = spec_toggle(LAYER_NORM, tr("residual.ln"))

# Three backward passes through up to 64 layers: seconds on a busy server, the same for every session at a stop.
profile = cached("residual_gradient_profile", (depth, activation, seed),
                 lambda: gradient_profile(depth, activation, seed))
shown = ["plain", "residual"] + (["residual_ln"] if with_ln else [])
norms = {w: getattr(profile, w) for w in shown}
show_chart(shared_figure(("residual_gradient", depth, activation, seed, with_ln), lambda: gradient_norm_chart(
               norms, tr("residual.chart_title", depth=depth, activation=activation), words=words_for("residual"))),
           f"residual_gradient_{activation}_depth{depth}_seed{seed}", key="res_chart",
           table=lambda: gradient_table(norms, words=words_for("residual")))
m = st.columns(len(shown))
for column, wiring in zip(m, shown):
    column.metric(tr("residual.metric", depth=depth, wiring=wiring_label(wiring, words=words_for("residual"))),
                  f"{profile.first_over_last(wiring):.3g}", help=tr("residual.metric_help"))
st.markdown(tr("residual.look", ratio=f"{profile.residual[0] / profile.plain[0]:.2g}"))
if not presenting():
    st.caption(tr("residual.setup"))
per_layer = profile.first_over_last("plain") ** (1 / (depth - 1))  # geometric mean factor per plain layer
st.markdown(tr("residual.why", per_layer=f"{per_layer:.2f}"))

"""What switching heads off does to a causal language model (NEXT_TOKEN): its prediction of the token after the
text, and its next-token loss on the text itself. Computed in model/ (AnalysedInput.next_token,
model.explain.next_token), drawn by viz/llm.py; this module only picks and shows."""
from __future__ import annotations

import math

import streamlit as st

from i18n import tr
from model.explain.next_token import kl_divergence
from model.families import LabModel
from model.sources import AnalysedInput
from ui.analysis_queue import heavy
from ui.attention.encoder import head_option
from ui.attention.specs import ABLATED_HEADS
from ui.charts import show_chart
from ui.language import words_for
from ui.presenter import presenting
from ui.state import shared_analysis
from viz.llm import next_token_chart, next_token_table


def _loss(value: float) -> str:
    return "–" if math.isnan(value) else f"{value:.3f}"


def show_next_token_ablation(result: AnalysedInput, model_id: str, lab: LabModel) -> None:
    """The 5 most likely next tokens, the text's loss and the KL divergence, with and without the chosen heads."""
    if not presenting():
        st.markdown(tr("llm_explain.intro"))
    options = [(kind, l, h) for kind, (layers, heads) in lab.layout.items()
               for l in range(layers) for h in range(heads)]
    # the same key and (kind, layer, head) values as the other models' ablation: the link carries them
    ABLATED_HEADS.set([o for o in ABLATED_HEADS.get() or [] if tuple(o) in options])
    off = st.multiselect(tr("llm_explain.heads"), options, key=ABLATED_HEADS.key, format_func=head_option,
                         help=None if presenting() else tr("llm_explain.heads_help"))
    switched_off = tuple(sorted(tuple(o) for o in off))
    ablated = heavy(("analyse", model_id, result.text, switched_off),
                    lambda: shared_analysis(model_id, result.text, lab, switched_off)) if switched_off else result
    if ablated is None:  # past the time limit, with a message
        return
    on, changed = result.next_token, ablated.next_token
    c = st.columns(3)
    c[0].metric(tr("llm_explain.loss_on"), _loss(on.loss))
    c[1].metric(tr("llm_explain.loss_off", count=len(switched_off)), _loss(changed.loss),
                delta=None if math.isnan(on.loss) else f"{changed.loss - on.loss:+.3f}", delta_color="inverse")
    c[2].metric(tr("llm_explain.kl"), f"{kl_divergence(on.log_probs, changed.log_probs):.4f}")
    left, right = st.columns(2)
    show_chart(next_token_chart(on.top_tokens, on.top_probs, 0, tr("llm_explain.title_on"),
                                words=words_for("llm", "llm_explain")),
               f"{model_id}_next_token_all_heads", key="next_token_on", where=left)
    show_chart(next_token_chart(changed.top_tokens, changed.top_probs, 0,
                                tr("llm_explain.title_off", count=len(switched_off)),
                                words=words_for("llm", "llm_explain")),
               f"{model_id}_next_token_heads_off", key="next_token_off", where=right)
    st.dataframe(next_token_table(on.top_tokens, on.top_probs, changed.top_tokens, changed.top_probs,
                                  words=words_for("llm", "llm_explain")),
                 hide_index=True, width="stretch")
    if not switched_off:
        st.caption(tr("llm_explain.no_heads"))
    elif changed.top_ids[0] == on.top_ids[0]:
        st.caption(tr("llm_explain.same_top"))
    if math.isnan(on.loss):
        st.caption(tr("llm_explain.one_token"))
    if not presenting():
        st.caption(tr("llm_explain.caption", tokens=on.predicted, vocabulary=on.log_probs.size))

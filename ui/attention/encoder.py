"""What switching heads off does to a sentence encoder: its sentence embedding and its token vectors."""
from __future__ import annotations

import streamlit as st

from i18n import tr
from model.bert import cosine
from model.families import LabModel
from model.sources import AnalysedInput, token_movement
from ui.attention.specs import ABLATED_HEADS
from ui.charts import show_chart
from ui.presenter import presenting
from ui.session import WidgetKey
from ui.analysis_queue import heavy
from ui.state import shared_analysis
from ui.text import check_sentence
from viz.encoder import token_movement_bars

SECOND_SENTENCE = WidgetKey("bert_second")  # the second sentence, whose embedding the ablation compares with
# The model reads English: the default second sentence is model input, the same in every interface language.
SECOND_DEFAULT = "A tired dog stayed on the pavement instead of crossing."


def head_option(option: tuple[str, int, int]) -> str:
    _, layer, head = option
    return f"L{layer + 1} H{head + 1}"


def show_embedding_ablation(result: AnalysedInput, model_id: str, lab: LabModel) -> None:
    """What switching heads off does to the sentence embedding (compared with a second sentence's) and to each
    token's final vector."""
    sentence = result.text
    st.markdown(tr("bert.ablation.intro"))
    SECOND_SENTENCE.setdefault(SECOND_DEFAULT)
    second_text = st.text_input(tr("bert.ablation.second"), key=SECOND_SENTENCE.key, max_chars=2000,
                                help=tr("bert.ablation.second_help"))
    options = [(kind, l, h) for kind, (layers, heads) in lab.layout.items()
               for l in range(layers) for h in range(heads)]
    # the same spec (and (kind, layer, head) values) as the translation models' ablation
    ABLATED_HEADS.set([o for o in ABLATED_HEADS.get() or [] if tuple(o) in options])
    off = st.multiselect(tr("bert.ablation.heads"), options, key=ABLATED_HEADS.key, format_func=head_option)
    switched_off = tuple(sorted(tuple(o) for o in off))
    second, _ = check_sentence(second_text)

    def analysed(text: str, heads: tuple) -> AnalysedInput | None:  # a 256-token text: the analysis worker's
        return heavy(("analyse", model_id, text, heads), lambda: shared_analysis(model_id, text, lab, heads))
    ablated = analysed(sentence, switched_off) if switched_off else result
    if ablated is None:  # past the time limit, with a message
        return
    c = st.columns(3)
    if second is None:
        c[0].info(tr("bert.ablation.empty_second"))
    else:
        other = analysed(second, ())
        other_ablated = analysed(second, switched_off) if switched_off else other
        if other is None or other_ablated is None:
            return
        on = cosine(result.encoding.embedding, other.encoding.embedding)
        c[0].metric(tr("bert.ablation.similarity_on"), f"{on:.4f}")
        changed = cosine(ablated.encoding.embedding, other_ablated.encoding.embedding)
        c[1].metric(tr("bert.ablation.similarity_off", count=len(switched_off)), f"{changed:.4f}",
                    delta=f"{changed - on:+.4f}", delta_color="off")
    self_similarity = cosine(result.encoding.embedding, ablated.encoding.embedding)
    c[2].metric(tr("bert.ablation.self_similarity"), f"{self_similarity:.4f}")
    if not switched_off:
        st.caption(tr("bert.ablation.no_heads"))
        return
    movement = token_movement(result.encoding.final_vectors, ablated.encoding.final_vectors)
    show_chart(token_movement_bars(result.input_tokens, movement, tr("bert.ablation.movement_title"),
                                   tr("bert.ablation.movement_axis")), f"{model_id}_token_movement", key="movement")
    if not presenting():
        st.caption(tr("bert.ablation.movement_caption"))

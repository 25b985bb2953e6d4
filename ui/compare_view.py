"""Pieces of the seq2seq-vs-Transformer page."""
from __future__ import annotations

import streamlit as st

from model.data import detokenize, make_dataset
from ui.models import family_label, shipped_model_info
from ui.state import analyse, get_model, show_input_notices
from ui.text import check_sentence
from viz.attention import attention_heatmap
from viz.training import accuracy_by_length_chart

MODELS = {"no-attention": "no-attention_en-fr", "bahdanau": "bahdanau_en-fr", "transformer": "transformer_en-fr"}


def _translate_all(sentence: str) -> dict:
    return {family: analyse(model_id, sentence, get_model(model_id)) for family, model_id in MODELS.items()}


def _outputs(results: dict, reference: list[str] | None = None) -> None:
    cols = st.columns(3)
    for col, (family, result) in zip(cols, results.items()):
        col.markdown(f"**{family_label(family)}**")
        col.code(detokenize(result.output_tokens) or "(empty)", language=None)
        if reference is not None:
            col.caption("✅ exact match" if result.output_tokens == reference else "❌ differs from the reference")


def side_by_side() -> None:
    sentence, notices = check_sentence(st.session_state.get("sentence", ""))
    for notice in notices:
        st.info(notice)
    if sentence is None:
        return
    results = _translate_all(sentence)
    show_input_notices(results["transformer"])
    st.subheader("The sidebar's sentence through the three models")
    _outputs(results)
    transformer = get_model(MODELS["transformer"]).config
    c = st.columns(2)
    layer = c[0].selectbox("Transformer layer", range(transformer.num_layers), key="cmp_model_layer",
                           format_func=lambda i: str(i + 1))
    head = c[1].selectbox("Transformer head", ["average"] + list(range(transformer.num_heads)), key="cmp_model_head",
                          format_func=lambda h: "average of the heads" if h == "average" else str(h + 1))
    left, right = st.columns(2)
    bahdanau = results["bahdanau"]
    left.plotly_chart(attention_heatmap(bahdanau.attention["alignment"], bahdanau.output_tokens + ["<eos>"],
                                        bahdanau.source.tokens, "Bahdanau alignment (rows: word being written)"),
                      key="cmp_bahdanau")
    cross = results["transformer"].attention["cross"][layer]
    weights = cross.mean(0) if head == "average" else cross[head]
    right.plotly_chart(attention_heatmap(weights, results["transformer"].decoder_input_tokens,
                                         results["transformer"].source.tokens,
                                         f"Transformer cross-attention, layer {layer + 1}, "
                                         f"{'average of heads' if head == 'average' else f'head {head + 1}'}"),
                       key="cmp_transformer")
    st.caption("Bahdanau rows are labelled by the word being written; Transformer rows by the decoder input "
               "(<bos> writes the first word). The no-attention model has no alignment to show: one vector is "
               "all its decoder ever sees.")


def length_chart() -> None:
    st.subheader("Accuracy against sentence length")
    metric = st.radio("Metric", ["exact_match", "bleu"], horizontal=True, key="cmp_metric",
                      format_func={"exact_match": "exact match", "bleu": "BLEU"}.get)
    rows = {family_label(f): shipped_model_info(m)["metrics"].get("by_length", []) for f, m in MODELS.items()}
    st.plotly_chart(accuracy_by_length_chart(rows, metric), key="cmp_length")
    st.caption("Measured once on the held-out test and long-sentence splits (1,500 sentences) and stored with each "
               "checkpoint (`metrics.by_length`). Note the Transformer also fails past ~30 words: it rarely saw "
               "sentences that long in training.")


@st.cache_data(show_spinner=False)
def _long_examples() -> list[tuple[list[str], list[str]]]:
    data = make_dataset("en-fr", seed=0)  # the same held-out sentences the shipped models were tested on
    pairs = data.splits["test"] + data.splits["long_test"]
    by_length: dict[int, tuple] = {}
    for src, tgt in pairs:
        by_length.setdefault(len(src), (src, tgt))
    return [by_length[n] for n in sorted(by_length)]


def long_sentence_demo() -> None:
    st.subheader("One sentence, growing")
    examples = _long_examples()
    lengths = [len(src) for src, _ in examples]
    length = st.select_slider("Sentence length (words)", options=lengths, value=min(lengths, key=lambda n: abs(n - 20)),
                              key="cmp_length_slider")
    src, tgt = examples[lengths.index(length)]
    st.markdown("**English (held-out test sentence)**")
    st.code(" ".join(src), language=None)
    st.markdown("**Reference French**")
    st.code(detokenize(tgt), language=None)
    _outputs(_translate_all(" ".join(src)), reference=tgt)

"""Pieces of the Transformer attention page: which map is shown, and one function per tab."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import streamlit as st

from model.attention import rescale_softmax
from model.decode import DecodeResult
from model.metrics import head_entropy, head_statistics
from viz.attention import (attention_heatmap, attention_lines, attention_table, difference_heatmap, head_grid,
                           head_statistics_table, probability_bars)

VIEWS = ("Head", "All heads", "Compare", "Statistics", "Ablation", "Rescale")  # the attention page's views
KINDS = {"encoder_self": "Encoder self-attention", "decoder_self": "Decoder masked self-attention",
         "cross": "Encoder–decoder (cross) attention"}


@dataclass
class AttentionMaps:
    """One attention kind of one analysis: weights and scores (L, h, T_q, T_k) with their token labels."""

    kind: str
    weights: np.ndarray
    scores: np.ndarray
    query_tokens: list[str]
    key_tokens: list[str]
    masked: np.ndarray | None  # (T_q, T_k) True where the causal mask hides the key

    @classmethod
    def of(cls, result: DecodeResult, kind: str) -> "AttentionMaps":
        source, target = result.source.tokens, result.decoder_input_tokens
        queries, keys = {"encoder_self": (source, source), "decoder_self": (target, target),
                         "cross": (target, source)}[kind]
        weights = result.attention[kind]
        masked = np.triu(np.ones(weights.shape[-2:], dtype=bool), 1) if kind == "decoder_self" else None
        return cls(kind, weights, result.attention[f"{kind}_scores"], queries, keys, masked)

    def title(self, layer: int, head: int) -> str:
        return f"{KINDS[self.kind]} · layer {layer + 1} · head {head + 1}"


def head_picker(maps: AttentionMaps, prefix: str, columns) -> tuple[int, int]:
    layers, heads = maps.weights.shape[:2]
    with columns[0]:
        layer = st.selectbox("Layer", range(layers), key=f"{prefix}_layer", format_func=lambda i: f"{i + 1}")
    with columns[1]:
        head = st.selectbox("Head", range(heads), key=f"{prefix}_head", format_func=lambda i: f"{i + 1}")
    return layer, head


def show_head(maps: AttentionMaps, layer: int, head: int) -> None:
    left, right = st.columns([3, 2])
    with left:
        st.plotly_chart(attention_heatmap(maps.weights[layer, head], maps.query_tokens, maps.key_tokens,
                                          maps.title(layer, head), masked=maps.masked), key="head_heatmap")
    with right:
        st.plotly_chart(attention_lines(maps.weights[layer, head], maps.query_tokens, maps.key_tokens,
                                        "The same head as lines (thicker = more attention)"), key="head_lines")
    if maps.masked is not None:
        st.caption("Grey cells are hidden by the causal mask: a position may only look at itself and earlier "
                   "positions, so everything above the diagonal is exactly 0.")
    table = attention_table(maps.weights[layer, head], maps.query_tokens, maps.key_tokens)
    st.download_button("Download this head's weights (CSV)", table.to_csv().encode("utf-8"),
                       file_name=f"attention_{maps.kind}_layer{layer + 1}_head{head + 1}.csv", mime="text/csv",
                       key="csv_head")


def _focus(layer: int, head: int) -> None:
    st.session_state["attn_layer"], st.session_state["attn_head"] = layer, head


def show_grid(maps: AttentionMaps, layer: int, head: int) -> None:
    layers, heads = maps.weights.shape[:2]
    st.plotly_chart(head_grid(maps.weights, maps.query_tokens, maps.key_tokens,
                              f"{KINDS[maps.kind]}: every layer (rows) × head (columns)", selected=(layer, head),
                              masked=maps.masked), key="grid")
    st.caption("Pick a head to focus it (the red frame marks the one shown in the Head tab).")
    for l in range(layers):
        cols = st.columns(heads)
        for h in range(heads):
            cols[h].button(f"L{l + 1} H{h + 1}", key=f"focus_{l}_{h}", on_click=_focus, args=(l, h),
                           type="primary" if (l, h) == (layer, head) else "secondary", width="stretch")


def show_compare(result: DecodeResult, maps: AttentionMaps, layer: int, head: int) -> None:
    st.write(f"**A** is the head chosen above: {maps.title(layer, head)}. Choose **B**:")
    c = st.columns(3)
    kind_b = c[0].selectbox("Attention kind B", list(KINDS), key="cmp_kind", format_func=KINDS.get)
    maps_b = AttentionMaps.of(result, kind_b)
    with c[1]:
        layer_b = st.selectbox("Layer B", range(maps_b.weights.shape[0]), key="cmp_layer",
                               format_func=lambda i: f"{i + 1}")
    with c[2]:
        head_b = st.selectbox("Head B", range(maps_b.weights.shape[1]), key="cmp_head",
                              index=min(1, maps_b.weights.shape[1] - 1), format_func=lambda i: f"{i + 1}")
    a, b = st.columns(2)
    a.plotly_chart(attention_heatmap(maps.weights[layer, head], maps.query_tokens, maps.key_tokens,
                                     "A: " + maps.title(layer, head), masked=maps.masked), key="cmp_a")
    b.plotly_chart(attention_heatmap(maps_b.weights[layer_b, head_b], maps_b.query_tokens, maps_b.key_tokens,
                                     "B: " + maps_b.title(layer_b, head_b), masked=maps_b.masked), key="cmp_b")
    if maps_b.weights.shape[-2:] == maps.weights.shape[-2:] and maps_b.query_tokens == maps.query_tokens \
            and maps_b.key_tokens == maps.key_tokens:
        st.plotly_chart(difference_heatmap(maps.weights[layer, head], maps_b.weights[layer_b, head_b],
                                           maps.query_tokens, maps.key_tokens, "Difference A − B"), key="cmp_diff")
    else:
        st.info("A and B attend over different token axes (e.g. cross vs. self-attention), so there is no "
                "cell-by-cell difference map. Pick the same attention kind to see one.")


def show_statistics(maps: AttentionMaps) -> None:
    average = st.toggle("Average over the heads of each layer", key="stats_average")
    stats = head_statistics(maps.weights, key_tokens=maps.key_tokens)
    table = head_statistics_table(stats, average_heads=average)
    st.dataframe(table, hide_index=True, width="stretch")
    st.download_button("Download the statistics (CSV)", table.to_csv(index=False).encode("utf-8"),
                       file_name=f"head_statistics_{maps.kind}.csv", mime="text/csv", key="csv_stats")
    st.caption("Click a column header to sort. Low entropy = a sharp head that looks at one token; "
               "share on previous token near 1 = a 'previous-token head'; a large share on <eos> often means "
               "the head has nothing useful to do for this sentence.")


def show_ablation(result: DecodeResult, maps: AttentionMaps, model_id: str, sentence: str, loaded, ablate) -> None:
    layers, heads = maps.weights.shape[:2]
    options = [(kind, l, h) for kind in KINDS for l in range(layers) for h in range(heads)]
    off = st.multiselect("Switch these heads off", options, key="ablate_heads",
                         format_func=lambda o: f"{KINDS[o[0]].split(' ')[0]} {'cross' if o[0] == 'cross' else 'self'} "
                                               f"L{o[1] + 1} H{o[2] + 1}")
    original, ablated = result, ablate(model_id, sentence, tuple(sorted(off)), loaded) if off else result
    a, b = st.columns(2)
    a.metric("Original translation: probability", f"{original.sequence_probability:.3f}")
    a.code(" ".join(original.output_tokens) or "(empty)", language=None)
    b.metric("With the heads switched off", f"{ablated.sequence_probability:.3f}",
             delta=f"{ablated.sequence_probability - original.sequence_probability:+.3f}")
    b.code(" ".join(ablated.output_tokens) or "(empty)", language=None)
    if off and ablated.output_tokens == original.output_tokens:
        st.caption("Same words: the other heads make up for the missing ones (only the probability moves).")


def show_rescale(maps: AttentionMaps, layer: int, head: int, d_k: int) -> None:
    factor = st.select_slider("Scale, as a multiple of the trained 1/√d_k", key="rescale_factor",
                              options=[0.0, 0.1, 0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0, round(d_k ** 0.5, 2), 8.0, 16.0],
                              value=1.0)
    allowed = None if maps.masked is None else ~maps.masked
    scores = maps.scores[layer, head]
    weights = rescale_softmax(scores, factor, allowed)
    trained = maps.weights[layer, head]
    c = st.columns(3)
    c[0].metric("entropy (nats), trained", f"{float(head_entropy(trained)):.3f}")
    c[1].metric(f"entropy at ×{factor}", f"{float(head_entropy(weights)):.3f}",
                delta=f"{float(head_entropy(weights) - head_entropy(trained)):+.3f}", delta_color="off")
    c[2].metric("mean max weight per row", f"{float(weights.max(-1).mean()):.3f}")
    st.plotly_chart(attention_heatmap(weights, maps.query_tokens, maps.key_tokens,
                                      f"{maps.title(layer, head)} re-softmaxed at ×{factor}", masked=maps.masked),
                    key="rescaled")
    st.caption(f"×1 is what the model was trained with (scores divided by √d_k = √{d_k}). ×{round(d_k ** 0.5, 2)} "
               "removes the division: the weights get sharper (lower entropy), the softmax saturates toward one-hot. "
               "×0 makes every visible key equally likely.")


def show_top_tokens(result: DecodeResult, step: int, tgt_vocab, k: int = 5, key: str = "topk") -> None:
    probs = result.step_probs[step]
    top = np.argsort(probs)[::-1][:k]
    st.plotly_chart(probability_bars([tgt_vocab.itos[i] for i in top], [float(probs[i]) for i in top],
                                     f"Top-{k} next tokens at step {step + 1}"), key=key)

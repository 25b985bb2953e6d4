"""Pieces of the seq2seq-vs-Transformer page."""
from __future__ import annotations

import difflib

import streamlit as st

from i18n import tr
from model.data import detokenize, shipped_held_out_by_length
from model.sources import AnalysedInput
from ui.charts import shared_figure, show_chart
from ui.language import words_for
from ui.presenter import chart_first, presenting
from ui.models import family_label, shipped_model_info
from ui.state import get_model, shared_analysis, show_input_notices
from ui.text import check_sentence, escape_markdown
from ui.vocabulary import show_translation
from ui.widget_spec import PageSection, WidgetSpec, prepare, spec_radio, spec_select, spec_select_slider
from viz.attention import attention_heatmap, attention_table
from viz.training import accuracy_by_length_chart

MODELS = {"no-attention": "no-attention_en-fr", "bahdanau": "bahdanau_en-fr", "transformer": "transformer_en-fr"}
METRICS = ("exact_match", "bleu")
AVERAGE = "average"  # the head choice that averages the heads (a stable value: it is kept in links)


def _translate_all(sentence: str) -> dict[str, AnalysedInput]:
    return {family: shared_analysis(model_id, sentence, get_model(model_id)) for family, model_id in MODELS.items()}


def marked_differences(tokens: list[str], reference: list[str]) -> tuple[str, int]:
    """(markdown of tokens with the words that differ from the reference highlighted, number of reference words
    missing or replaced). Words are aligned with difflib; markdown wraps, so a long translation is shown whole."""
    parts, missing = [], 0
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(a=reference, b=tokens, autojunk=False).get_opcodes():
        words = escape_markdown(detokenize(tokens[j1:j2]))
        missing += (i2 - i1) if op in ("delete", "replace") else 0
        if op == "delete":
            parts.append(":red-background[∅]")  # reference words this translation left out
        elif words:
            parts.append(words if op == "equal" else f":red-background[{words}]")
    return " ".join(parts), missing


def _outputs(results: dict, reference: list[str] | None = None) -> None:
    cols = st.columns(3)
    for col, (family, result) in zip(cols, results.items()):
        col.markdown(f"**{family_label(family)}**")
        if reference is None:
            show_translation(result.decode, detokenize(result.output_tokens) or tr("compare.empty_output"), where=col)
            continue
        marked, missing = marked_differences(result.output_tokens, reference)
        col.markdown(marked or tr("compare.empty_output"))
        col.caption(tr("compare.exact_match") if result.output_tokens == reference else
                    tr("lecture.differs_marked", missing=missing))


def transformer_shape() -> tuple[int, int]:
    """(layers, heads) of the page's Transformer (also used to check links)."""
    config = get_model(MODELS["transformer"]).config
    return config.num_layers, config.num_heads


# The page's shareable widgets (ui/widget_spec.py; ui/specs/compare.py hands them to the link parser). Its
# Transformer is always transformer_en-fr, not the sidebar's model, so layer and head bounds are that model's.
PAGE = ("compare",)
LAYER = WidgetSpec("cmp_model_layer", "compare_layer", 0, PAGE, low=0, high=lambda state: transformer_shape()[0] - 1,
                   convert=int, counted=True)
HEAD = WidgetSpec("cmp_model_head", "compare_head", AVERAGE, PAGE,
                  options=lambda state: [AVERAGE, *range(transformer_shape()[1])],
                  convert=lambda text: AVERAGE if text == AVERAGE else int(text), counted=True)
METRIC = WidgetSpec("cmp_metric", "compare_metric", METRICS[0], PAGE, options=METRICS)
# the growing sentence opens near 20 words, where the model without attention has clearly fallen behind
LENGTH = WidgetSpec("cmp_length_slider", "compare_len",
                    lambda state: min(sentence_lengths(), key=lambda n: abs(n - 20)), PAGE,
                    options=lambda state: sentence_lengths(), convert=int)
SPECS = (LAYER, HEAD, METRIC, LENGTH)
# the three models on the sidebar's sentence, accuracy against sentence length, a growing held-out sentence
SECTIONS = (PageSection("side_by_side"), PageSection("length", alone=lambda: length_chart(controls=False)),
            PageSection("growing"))


def side_by_side(text: str | None) -> None:
    """A view's sentence through the three models, side by side."""
    sentence, notices = check_sentence(text or "")
    for notice in notices:
        st.info(notice)
    if sentence is None:
        return
    results = _translate_all(sentence)
    show_input_notices(results["transformer"].decode, get_model(MODELS["transformer"]).vocabulary)
    st.subheader(tr("compare.side_by_side_title"))
    _outputs(results)
    c = st.columns(2)
    layer = spec_select(LAYER, tr("compare.layer"), where=c[0], format_func=lambda i: str(i + 1))
    head = spec_select(HEAD, tr("compare.head"), where=c[1],
                       format_func=lambda h: tr("compare.head_average") if h == AVERAGE else str(h + 1))
    left, right = st.columns(2)
    (bahdanau,) = results["bahdanau"].maps.values()  # its one additive alignment, (1, 1, T_out + 1, T_src)
    queries, keys, alignment = bahdanau.query_tokens, bahdanau.key_tokens, bahdanau.weights[0, 0]
    # the same sentence for a whole class: each figure is built once and shared (ui/charts.shared_figure)
    figure = shared_figure(("cmp_bahdanau", MODELS["bahdanau"], sentence),
                           lambda: attention_heatmap(alignment, queries, keys, tr("compare.bahdanau_title"),
                                                     words=words_for("attention")))
    show_chart(figure, "compare_bahdanau_alignment", key="cmp_bahdanau", where=left,
               table=lambda: attention_table(alignment, queries, keys, words=words_for("attention")))
    transformer = results["transformer"].maps["cross"]
    cross = transformer.weights[layer]
    weights = cross.mean(0) if head == AVERAGE else cross[head]
    title = (tr("compare.cross_title_average", layer=layer + 1) if head == AVERAGE
             else tr("compare.cross_title_head", layer=layer + 1, head=head + 1))
    t_queries, t_keys = transformer.query_tokens, transformer.key_tokens  # rows: the token being written
    figure = shared_figure(("cmp_cross", MODELS["transformer"], sentence, layer, head),
                           lambda: attention_heatmap(weights, t_queries, t_keys, title, words=words_for("attention")))
    show_chart(figure, f"compare_transformer_cross_L{layer + 1}_{'avg' if head == AVERAGE else f'H{head + 1}'}",
               key="cmp_transformer", where=right, table=lambda: attention_table(weights, t_queries, t_keys,
                                                                                 words=words_for("attention")))
    if not presenting():
        st.caption(tr("compare.alignment_caption"))


def _rows_by_length() -> dict[str, list[dict]]:
    return {family_label(f): shipped_model_info(m)["metrics"].get("by_length", []) for f, m in MODELS.items()}


def length_chart(controls: bool = True) -> None:
    """Accuracy against sentence length. controls=False (the chart under a student's revealed answer, which 150
    students per replica draw at once after a Reveal): the view's metric without its radio, and no CSV button; her
    "Show the whole page" gives both."""
    st.subheader(tr("compare.length_title"))
    metric = (spec_radio(METRIC, tr("compare.metric"), horizontal=True, format_func=lambda m: tr(f"compare.metric_{m}"))
              if controls else prepare(METRIC))
    # the shipped models' figures: the same for every session of the process, their metrics read only to build it
    # (after a Reveal every student of a stop-1 class draws this chart)
    figure = shared_figure(("cmp_length", tuple(MODELS.values()), metric),
                           lambda: accuracy_by_length_chart(_rows_by_length(), metric,
                                                            words=words_for("train", "compare")))
    show_chart(figure, f"compare_accuracy_by_length_{metric}", key="cmp_length", offer_csv=controls)
    if not presenting():
        st.caption(tr("compare.length_caption"))


@st.cache_data(show_spinner=False)
def _long_examples() -> list[tuple[list[str], list[str]]]:
    return shipped_held_out_by_length()  # the held-out sentences the shipped models were tested on, one per length


def sentence_lengths() -> list[int]:
    """The lengths the growing-sentence slider offers (one held-out sentence each; also used to check links)."""
    return [len(src) for src, _ in _long_examples()]


def long_sentence_demo() -> None:
    st.subheader(tr("compare.growing_title"))
    examples = _long_examples()
    lengths = sentence_lengths()
    length = spec_select_slider(LENGTH, tr("compare.length_slider"), help=tr("compare.growing_help"))
    src, tgt = examples[lengths.index(length)]
    # Projected (stop 2), the three translations with their differences marked are the stop's point: under the
    # slider the stop asks the class to move, on the first screen, above the sentence and its reference (chart_first);
    # elsewhere the sentence is read first.
    outputs, sentences = chart_first()
    with sentences:
        st.markdown(f"**{tr('compare.english')}**")
        st.code(" ".join(src), language=None, wrap_lines=True)  # a 40-word sentence is shown whole
        st.markdown(f"**{tr('compare.reference')}**")
        st.code(detokenize(tgt), language=None, wrap_lines=True)
    with outputs:
        _outputs(_translate_all(" ".join(src)), reference=tgt)

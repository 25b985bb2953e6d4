"""Pieces of the Transformer attention page: which map is shown, and one function per view (the all-heads grid
in ui/attention/grid.py).

Its stable ids (VIEWS, KINDS, the encoder toggles' keys) live in ui/attention/ids.py; only their display is
translated here.
"""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
import streamlit as st

from i18n import tr
from model.attention import rescale_softmax
from model.capabilities import ABLATION, EMBEDDING, NEXT_TOKEN, RESCALE
from model.families import LabModel
from model.metrics import head_entropy, head_statistics
from model.sources import AnalysedInput, KindMaps, as_float32, source_block_shares, special_token_shares
from ui.analysis_queue import heavy
from ui.attention.maps import drawn_maps, head_file_name, head_table, head_title, weights_table
from ui.attention.defaults import why_this_encoder_head, why_this_head
from ui.attention.ids import VIEW_KEYS, VIEWS, attention_kind_label
from ui.attention.switches import tokens_changed
from ui.charts import chart_words, shared_figure, show_chart
from ui.language import words_for
from ui.presenter import chart_first, presenting
from ui.screen import page_width
from ui.attention.explain import grid_labels, show_explain
from ui.attention.finder import show_find_view, show_pair_view
from ui.attention.grid import show_grid
from ui.attention.specs import (ABLATED_HEADS, COMPARE_HEAD, COMPARE_KIND, COMPARE_LAYER, HEAD, HIDE_SPECIAL_SPEC,
                                KIND, LAYER, MERGE_WORDS_SPEC, RESCALE_FACTOR, STATS_AVERAGE, VIEW)
from ui.attention.encoder import show_embedding_ablation
from ui.attention.next_token import show_next_token_ablation
from ui.share import view_fragment
from ui.state import shared_analysis, analysis_of, get_model
from ui.widget_spec import WidgetSpec, prepare, spec_segmented, spec_select, spec_select_slider, spec_toggle
from viz.attention import attention_heatmap, attention_lines, difference_heatmap, head_statistics_table


def view_label(view: str) -> str:
    return tr(f"attention.views.{VIEW_KEYS[view]}")


LINES_MAX_TOKENS = 40  # above this many tokens the lines view is a blur: hidden, with a line saying why


def encoder_toggles(analysed: AnalysedInput) -> None:
    """The two toggles of an encoder's token view, and what they do, stated on screen."""
    c = st.columns(2)
    spec_toggle(HIDE_SPECIAL_SPEC, tr("bert.hide_special"), where=c[0], help=tr("bert.hide_special_help"))
    spec_toggle(MERGE_WORDS_SPEC, tr("bert.merge_words"), where=c[1], help=tr("bert.merge_words_help"))
    if HIDE_SPECIAL_SPEC.get():
        st.caption(tr("bert.view_caption_hidden"))
    if MERGE_WORDS_SPEC.get():
        st.caption(tr("bert.view_caption_merged"))


def head_picker(layer_spec: WidgetSpec, head_spec: WidgetSpec, labels: tuple[str, str], columns
                ) -> tuple[int, int]:
    """Layer and head pickers, offering what the specs offer: the chosen kind's layers and heads of this model."""
    layer = spec_select(layer_spec, tr(labels[0]), where=columns[0], format_func=lambda i: f"{i + 1}")
    head = spec_select(head_spec, tr(labels[1]), where=columns[1], format_func=lambda i: f"{i + 1}")
    return layer, head


@view_fragment
def attention_explorer(page: str, model_id: str, sentence: str) -> None:
    """The kind, layer, head and view pickers and the chosen view of the model's analysis of the (checked)
    sentence: a fragment of the view (ui.share.view_fragment), so a change of one of its widgets reruns only this
    function, not the sidebar, the navigation or the translation above it.

    The arguments are those of the last full run (the sidebar's model and sentence changes rerun the whole page).
    They name the analysis, they are not the analysis: Streamlit keeps a fragment's arguments in the session, and an
    analysis kept there was held by every open session outside the result store's budget (ui.state.analysis_of).
    """
    result = analysis_of(model_id, sentence)  # the store's (the full run just computed it), else again
    if result is not None:
        _explore(model_id, get_model(model_id), result)


def available_views(result: AnalysedInput) -> list[str]:
    """The views this model supports: ablation and rescaling need our own modules (head masks, stored scores)."""
    needs = {"Ablation": ABLATION, "Rescale": RESCALE}
    return [view for view in VIEWS if view not in needs or result.can(needs[view])]


def _explore(model_id: str, lab: LabModel, result: AnalysedInput) -> None:
    chart, controls = chart_first()  # a projected stop: the view first, its pickers under it
    with controls:
        kind, maps, layer, head, view = _pickers(result)
    with chart:
        _show_view(model_id, lab, result, kind, maps, layer, head, view)


def _pickers(result: AnalysedInput):
    """The kind, layer, head and view pickers -> (kind, maps, layer, head, view)."""
    c = st.columns([2, 1, 1])
    if len(KIND.choices()) > 1:
        kind = spec_select(KIND, tr("attention.kind"), where=c[0], format_func=attention_kind_label)
    else:  # one kind: said, not offered
        kind = prepare(KIND)
        c[0].markdown(tr("bert.self_only" if kind == "encoder_self" else "bert.decoder_only"))
    if result.can(EMBEDDING):
        encoder_toggles(result)
    maps = drawn_maps(result, kind)
    layer, head = head_picker(LAYER, HEAD, ("attention.layer", "attention.head"), c[1:])
    if not result.can(ABLATION):  # why the view is missing: rescaling works on our own modules, ablation needs more
        st.caption(tr("bert.ablation_hidden" if result.can(RESCALE) else "bert.views_hidden"))
    if not presenting():  # projected: the line goes under the chart, so the chart starts above the fold
        _why_this_head(result, kind, maps, layer, head)
    # Only the chosen view is computed and drawn (st.tabs would render all six on every rerun).
    view = spec_segmented(VIEW, tr("attention.view"), offered=available_views(result), format_func=view_label)
    return kind, maps, layer, head, view


def _show_view(model_id: str, lab: LabModel, result: AnalysedInput, kind: str, maps: KindMaps, layer: int,
               head: int, view: str) -> None:
    if view == "Head":
        show_head(maps, layer, head)
    elif view == "All heads":
        show_grid(maps, layer, head, grid_labels(model_id, lab, kind))
    elif view == "Compare":
        show_compare(result, maps, layer, head)
    elif view == "Statistics":
        show_statistics(maps, encoder=result.can(EMBEDDING))
    elif view == "Ablation" and lab.can(EMBEDDING):  # what switching heads off changes: the sentence embedding
        show_embedding_ablation(result, model_id, lab)
    elif view == "Ablation" and lab.can(NEXT_TOKEN):  # ... or a language model's next token and loss
        show_next_token_ablation(result, model_id, lab)
    elif view == "Ablation":  # ... or the translation
        show_ablation(result, model_id, lab)
    elif view in ("Find heads", "Two texts"):  # which heads link two tokens; one head on two texts (finder.py)
        show_find_view(model_id, lab, result, kind, layer, head) if view == "Find heads" else \
            show_pair_view(model_id, result, kind, layer, head)
    elif view == "Explain":
        # rollout, norms, importance, patterns: defined on the tokens the model computed (raw, not merged or hidden)
        show_explain(model_id, lab, result, drawn_maps(result, kind, raw=True), layer, head)
    else:
        show_rescale(drawn_maps(result, kind, raw=True), layer, head, lab.head_dim)
        if result.can(EMBEDDING) and tokens_changed():
            st.caption(tr("bert.rescale_raw"))
    if presenting():
        _why_this_head(result, kind, maps, layer, head)


def _why_this_head(result: AnalysedInput, kind: str, maps: KindMaps, layer: int, head: int) -> None:
    """The one line saying why the page opened on this head (ui/attention/defaults.py), while it is shown."""
    if result.can(EMBEDDING):
        why_this_encoder_head(as_float32(result.maps[kind].weights), result.special, layer, head)
    else:
        why_this_head(kind, maps.weights, layer, head)


_BUILDERS = {"heatmap": attention_heatmap, "lines": attention_lines}


def cached_figure(builder: str, weights: np.ndarray, query_tokens: list[str], key_tokens: list[str], title: str,
                  masked: np.ndarray | None = None, height: int | None = None,
                  block: tuple[int, int] | None = None, rows_title: str | None = None) -> go.Figure:
    """attention_heatmap / attention_lines built once per content (weights, tokens, title, language) for all
    sessions: the key is the data itself, so it is right for any model, shipped or trained by a student."""
    weights = np.ascontiguousarray(weights, dtype=float)
    extra = {name: value for name, value in (("masked", masked), ("height", height), ("block", block),
                                             ("rows_title", rows_title)) if value is not None}
    key = ("attention", builder, weights.shape, weights.tobytes(), tuple(query_tokens), tuple(key_tokens), title,
           None if masked is None else np.asarray(masked).tobytes(), height, block, rows_title)
    return shared_figure(key, lambda: _BUILDERS[builder](weights, list(query_tokens), list(key_tokens), title,
                                                         **extra, words=words_for("attention")))


def show_head(maps: KindMaps, layer: int, head: int) -> None:
    tokens = max(len(maps.query_tokens), len(maps.key_tokens))
    left, right = st.columns([3, 2]) if tokens <= LINES_MAX_TOKENS else (st.container(), None)
    heatmap = cached_figure("heatmap", maps.weights[layer, head], maps.query_tokens, maps.key_tokens,
                            head_title(maps, layer, head), masked=maps.masked, block=maps.source_block)
    # A long text: show_chart labels every k-th token, none overlapping (hover and CSV still name every one). The
    # map has 3/5 of the page beside the lines view, all of it without.
    width = page_width() * 3 // 5 if right is not None else page_width()
    show_chart(heatmap, head_file_name(maps, layer, head), key="head_heatmap", where=left,
               table=weights_table(maps, layer, head), width=width)
    if right is None:
        st.caption(tr("bert.lines_hidden", limit=LINES_MAX_TOKENS, tokens=tokens))
    else:
        show_chart(cached_figure("lines", maps.weights[layer, head], maps.query_tokens, maps.key_tokens,
                                 tr("attention.lines_title")),
                   head_file_name(maps, layer, head) + "_lines", key="head_lines", where=right,
                   table=weights_table(maps, layer, head),
                   summary=chart_words(heatmap, tr("attention.lines_title")))  # its lines are the same weights
    if maps.kind in ("decoder_self", "cross") and list(maps.query_tokens) != list(maps.key_tokens):
        st.caption(tr("lecture.rows_written"))  # a translation's decoder: rows are the tokens being written
    if maps.masked is not None:
        st.caption(tr("attention.mask_caption"))
    if maps.source_block is not None:
        share = float(source_block_shares(maps)[layer, head])
        st.caption(tr("attention.source_block_caption", share=f"{share:.0%}"))


def show_compare(result: AnalysedInput, maps: KindMaps, layer: int, head: int) -> None:
    st.markdown(tr("attention.compare_intro", title=head_title(maps, layer, head)))
    c = st.columns(3)
    # B starts on A's kind (the difference map is there at once) and on the head next to A's first
    kind_b = spec_select(COMPARE_KIND, tr("attention.kind_b"), where=c[0], format_func=attention_kind_label)
    maps_b = drawn_maps(result, kind_b)
    layer_b, head_b = head_picker(COMPARE_LAYER, COMPARE_HEAD, ("attention.layer_b", "attention.head_b"), c[1:])
    a, b = st.columns(2)
    show_chart(cached_figure("heatmap", maps.weights[layer, head], maps.query_tokens, maps.key_tokens,
                             "A: " + head_title(maps, layer, head), masked=maps.masked),
               "compare_A_" + head_file_name(maps, layer, head), key="cmp_a", where=a,
               table=weights_table(maps, layer, head))
    show_chart(cached_figure("heatmap", maps_b.weights[layer_b, head_b], maps_b.query_tokens, maps_b.key_tokens,
                             "B: " + head_title(maps_b, layer_b, head_b), masked=maps_b.masked),
               "compare_B_" + head_file_name(maps_b, layer_b, head_b), key="cmp_b", where=b,
               table=weights_table(maps_b, layer_b, head_b))
    if maps_b.weights.shape[-2:] == maps.weights.shape[-2:] and maps_b.query_tokens == maps.query_tokens \
            and maps_b.key_tokens == maps.key_tokens:
        one, other = as_float32(maps.weights[layer, head]), as_float32(maps_b.weights[layer_b, head_b])
        diff = one - other
        show_chart(difference_heatmap(one, other, maps.query_tokens, maps.key_tokens, tr("attention.difference_title"),
                                      words=words_for("attention")),
                   f"compare_difference_{maps.kind}_L{layer + 1}_H{head + 1}_vs_{maps_b.kind}_L{layer_b + 1}_H"
                   f"{head_b + 1}", key="cmp_diff", table=head_table(diff, maps.query_tokens, maps.key_tokens))
        if not presenting():
            st.caption(tr("attention.difference_caption"))
    else:
        st.info(tr("attention.no_difference"))


def show_statistics(maps: KindMaps, encoder: bool = False) -> None:
    average = st.toggle(tr("attention.stats_average"), key=STATS_AVERAGE.key)
    stats = head_statistics(maps.weights, key_tokens=maps.key_tokens)  # a layer at a time: a long text's maps stay compact
    if encoder:  # an encoder's text has no <eos>: its shares on [CLS], [SEP] and punctuation instead
        stats.pop("eos", None)
        stats.update(special_token_shares(as_float32(maps.weights), maps.key_tokens))
    table = head_statistics_table(stats, average_heads=average, words=words_for("attention"))
    st.dataframe(table, hide_index=True, width="stretch")
    if not presenting():
        st.download_button(tr("attention.stats_csv"), table.to_csv(index=False).encode("utf-8-sig"),
                           file_name=f"attention-lab_head_statistics_{maps.kind}.csv", mime="text/csv",
                           key="csv_stats", on_click="ignore", icon=":material/download:", type="tertiary")
        st.caption(tr("bert.stats_caption" if encoder else "attention.stats_caption"))


def _ablation_option(option: tuple[str, int, int]) -> str:
    kind, layer, head = option
    return tr("attention.ablation_option", kind=tr(f"attention.kinds_short.{kind}"), layer=layer + 1, head=head + 1)


def _tokens(tokens: list[str]) -> str:
    return " ".join(tokens) or tr("attention.empty")


def show_ablation(result: AnalysedInput, model_id: str, lab: LabModel) -> None:
    """The translation with the chosen heads switched off, next to the original."""
    options = [(kind, l, h) for kind, (layers, heads) in lab.layout.items()
               for l in range(layers) for h in range(heads)]
    off = st.multiselect(tr("attention.ablation_label"), options, key=ABLATED_HEADS.key, format_func=_ablation_option,
                         help=None if presenting() else tr("attention.ablation_help"))
    original = result.decode
    switched_off = tuple(sorted(off))
    ablated = heavy(("analyse", model_id, result.text, switched_off),
                    lambda: shared_analysis(model_id, result.text, lab, switched_off)) if off else result
    if ablated is None:  # past the time limit, with a message
        return
    ablated = ablated.decode
    a, b = st.columns(2)
    a.metric(tr("attention.ablation_original"), f"{original.sequence_probability:.3f}")
    a.code(_tokens(original.output_tokens), language=None)
    b.metric(tr("attention.ablation_switched_off"), f"{ablated.sequence_probability:.3f}",
             delta=f"{ablated.sequence_probability - original.sequence_probability:+.3f}")
    b.code(_tokens(ablated.output_tokens), language=None)
    if off and ablated.output_tokens == original.output_tokens:
        st.caption(tr("attention.ablation_same"))


def show_rescale(maps: KindMaps, layer: int, head: int, d_k: int) -> None:
    # the model's own multiples of 1/√d_k: one chosen for a model with another d_k goes back to ×1
    factor = spec_select_slider(RESCALE_FACTOR, tr("attention.rescale_label"), format_func=lambda f: f"×{f:g}")
    allowed = None if maps.masked is None else ~maps.masked
    scores = as_float32(maps.scores[layer, head])
    weights = rescale_softmax(scores, factor, allowed)
    trained = as_float32(maps.weights[layer, head])
    c = st.columns(3)
    c[0].metric(tr("attention.entropy_trained"), f"{float(head_entropy(trained)):.3f}")
    c[1].metric(tr("attention.entropy_at", factor=f"{factor:g}"), f"{float(head_entropy(weights)):.3f}",
                delta=f"{float(head_entropy(weights) - head_entropy(trained)):+.3f}", delta_color="off")
    c[2].metric(tr("attention.mean_max"), f"{float(weights.max(-1).mean()):.3f}")
    show_chart(attention_heatmap(weights, maps.query_tokens, maps.key_tokens,
                                 tr("attention.rescale_title", title=head_title(maps, layer, head),
                                    factor=f"{factor:g}"),
                                 masked=maps.masked, words=words_for("attention")),
               f"{head_file_name(maps, layer, head)}_rescaled_x{factor:g}", key="rescaled",
               table=head_table(weights, maps.query_tokens, maps.key_tokens))
    if not presenting():
        st.caption(tr("attention.rescale_caption", d_k=d_k, root=f"{round(d_k ** 0.5, 2):g}"))


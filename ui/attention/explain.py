"""The attention page's "Explain" view: raw weights, rollout and value-weighted norms of the same head or layer,
head importance (ablation and gradient) and head-pattern labels. Computations in model/explain/, charts in
viz/analysis.py; this module only caches, picks and draws.

PARTS, MODES, METRICS hold stable ids (the URL and tests use them); their display is translated.
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd
import streamlit as st

from i18n import tr
from model.capabilities import EMBEDDING, IMPORTANCE, NEXT_TOKEN, NORMS, PATTERNS, TRAINING
from model.explain import fixed_sets, patterns, value_norms
from model.explain import importance as head_importance_measures
from model.explain.kinds import ATTENTION_KINDS, SPECIAL_TOKENS
from model.families import ImportanceReport, LabModel, ScoresHeads, curve_counts, shipped_model_names
from model.sources import AnalysedInput, KindMaps, as_float32
from ui.analysis_queue import heavy
from ui.attention.maps import head_file_name, head_table, head_title
from ui.charts import show_chart
from ui.language import words_for
from ui.presenter import presenting
from ui.attention.ids import attention_kind_label
from ui.attention.switches import tokens_changed
from viz.analysis import (encoder_importance_table, gradient_importance_table, importance_table, layers_by_heads,
                          pattern_grid, pruning_curve_chart, survival_bars)
from ui.widget_spec import WidgetSpec, spec_segmented, spec_select
from runtime.result_cache import memoized
from ui.session import lab_session
from viz.attention import attention_heatmap, html_escaped


PARTS = ("maps", "importance", "patterns")
MODES = ("raw", "rollout", "norms")
METRICS = ("exact_match_drop", "loss_rise", "gradient")
ENCODER_METRICS = ("change", "gradient")
PATTERN_FILTERS = ("all",) + patterns.PATTERNS
# The view's shareable widgets (ui/widget_spec.py; ui/attention/specs.py hands them to the link parser)
PAGE = ("attention",)
PART = WidgetSpec("explain_part", "explain", PARTS[0], PAGE, options=PARTS)
MODE = WidgetSpec("explain_mode", "explain_mode", MODES[0], PAGE, options=MODES)
METRIC = WidgetSpec("explain_metric", "explain_metric", METRICS[0], PAGE, options=METRICS)
ENCODER_METRIC = WidgetSpec("explain_encoder_metric", "encoder_metric", ENCODER_METRICS[0], PAGE,
                            options=ENCODER_METRICS)
PATTERN = WidgetSpec("explain_pattern", "pattern", PATTERN_FILTERS[0], PAGE, options=PATTERN_FILTERS)
SPECS = (PART, MODE, METRIC, ENCODER_METRIC, PATTERN)


@memoized
def explanations(model_id: str, sentence: str, _lab: LabModel, _analysed: AnalysedInput) -> dict[str, np.ndarray]:
    """The model's raw weights (L, h, T_q, T_k), value-weighted norms value_norms_<kind> where it has NORMS, and
    rollout_<self kind> (L, T, T), of the analysed sentence; per (model id, sentence), like ui.state.analyse."""
    return _lab.explain(_analysed)


@memoized
def shared_head_importance(model_id: str, _lab: ScoresHeads) -> ImportanceReport:
    """Ablation + gradient importance and the pruning curve (model.adapters); once per model id on the server
    (shipped models: once per server)."""
    return _lab.importance()


@memoized
def head_labels(model_id: str, _lab: LabModel) -> dict[str, patterns.PatternScores]:
    """kind -> the pattern labels (L, h) of its heads over the model's labelling sentences."""
    return _lab.labels()


def _kind_rows(kinds, layers: int) -> list[str]:
    """'Encoder self L1', ...: the short kind names keep the layers × heads charts' cells wide."""
    return [tr("explain.row", kind=tr(f"attention.kinds_short.{kind}"), layer=l + 1) for kind in kinds
            for l in range(layers)]


CELL_FORMATS = {"exact_match_drop": "{:+.1%}", "loss_rise": "{:+.4f}", "gradient": "{:.1e}"}


def show_explain(model_id: str, lab: LabModel, result: AnalysedInput, maps: KindMaps, layer: int,
                 head: int) -> None:
    """maps: the page's KindMaps of the chosen kind on the model's own tokens (raw: an encoder's [CLS]/[SEP]
    not hidden, pieces not merged; norms and rollout are defined on those); layer, head: the chosen head.

    What is shown is what the model can do (model.families): norms need NORMS (our own W_V/W_O), the importance
    and pattern parts IMPORTANCE and PATTERNS; a model without them (transformers) gets raw weights and rollout."""
    part = spec_segmented(PART, tr("explain.part"), format_func=lambda p: tr(f"explain.parts.{p}"))
    if not lab.can(NORMS):
        st.caption(tr("explain_encoder.foreign"))
    if result.can(EMBEDDING) and tokens_changed():
        st.caption(tr("explain_encoder.raw_tokens"))
    if part == "maps":
        arrays = heavy(("explain", model_id, result.text),  # the text the page analysed (cleaned)
                       lambda: explanations(model_id, result.text, lab, result))
        if arrays is None:  # past the time limit, with a message
            return
        show_maps(arrays, maps, layer, head,
                  special_label=tr("explain_encoder.cls_sep" if result.can(EMBEDDING) else "explain_encoder.bos_eos"))
    elif not lab.can(IMPORTANCE if part == "importance" else PATTERNS):
        st.info(tr("explain_encoder.foreign_part"))
    elif part == "importance":
        # an encoder's heads are measured by its sentence embedding, a language model's by its next-token loss, a
        # translator's by its translations
        (show_encoder_importance if lab.can(EMBEDDING) else show_language_model_importance if lab.can(NEXT_TOKEN)
         else show_importance)(model_id, lab)
    else:
        show_patterns(model_id, lab)


def show_maps(arrays: dict[str, np.ndarray], maps: KindMaps, layer: int, head: int,
              special_label: str) -> None:
    mode = spec_segmented(MODE, tr("explain.mode"), format_func=lambda m: tr(f"explain.modes.{m}"))
    kind, queries, keys = maps.kind, maps.query_tokens, maps.key_tokens
    weights = as_float32(arrays[kind][layer, head])
    raw_title = head_title(maps, layer, head)
    has_norms = f"value_norms_{kind}" in arrays
    if mode == "rollout":
        if kind == "cross":
            st.info(tr("explain.rollout_cross"))
            return
        left, right = st.columns(2)
        mean = as_float32(arrays[kind][layer]).mean(0)
        show_chart(attention_heatmap(mean, queries, keys, tr("explain.mean_title", kind=attention_kind_label(kind),
                                                                            layer=layer + 1), masked=maps.masked,
                                                                            words=words_for("attention")),
                   f"mean_{kind}_L{layer + 1}", key="explain_mean", where=left,
                   table=head_table(mean, queries, keys))
        rolled = as_float32(arrays[f"rollout_{kind}"][layer])
        show_chart(attention_heatmap(rolled, queries, keys, tr("explain.rollout_title", kind=attention_kind_label(kind),
                                                                              layer=layer + 1), masked=maps.masked,
                                     value_name=tr("explain.chart.rollout"), words=words_for("attention")),
                   f"rollout_{kind}_L{layer + 1}", key="explain_rollout", where=right,
                   table=head_table(rolled, queries, keys))
        if not presenting():
            st.caption(tr("explain.rollout_caption"))
        return
    if mode == "raw" or not has_norms:
        show_chart(attention_heatmap(weights, queries, keys, raw_title, masked=maps.masked,
                                     words=words_for("attention")),
                   head_file_name(maps, layer, head), key="explain_raw", table=head_table(weights, queries, keys))
        if not has_norms:
            if mode == "norms":
                st.info(tr("explain_encoder.foreign_norms"))
            return
    else:
        left, right = st.columns(2)
        norms = as_float32(arrays[f"value_norms_{kind}"][layer, head])
        show_chart(attention_heatmap(weights, queries, keys, raw_title, masked=maps.masked,
                                     words=words_for("attention")),
                   head_file_name(maps, layer, head), key="explain_raw", where=left,
                   table=head_table(weights, queries, keys))
        show_chart(attention_heatmap(norms, queries, keys, tr("explain.norms_title", title=raw_title),
                                     masked=maps.masked, zmax=None, value_name=tr("explain.chart.norm"),
                                     words=words_for("attention")),
                   f"value_norms_{kind}_L{layer + 1}_H{head + 1}", key="explain_norms", where=right,
                   table=head_table(norms, queries, keys))
    # the special tokens this model's keys have (an encoder's [CLS]/[SEP], a translation model's <eos>), so the
    # captions name what is on the chart's axis; a causal map over a text without any (SmolLM2's) has its sink on
    # the first token, the one key every query sees (Xiao et al. 2023)
    found = "/".join(dict.fromkeys(t for t in keys if t in SPECIAL_TOKENS))
    first_token = not found and maps.masked is not None
    special_label = (tr("llm_explain.first_token", token=repr(keys[0])) if first_token else found or special_label)
    survival = value_norms.special_token_survival(arrays[kind], arrays[f"value_norms_{kind}"], keys,
                                                  keys=np.arange(len(keys)) == 0 if first_token else None)
    ratio = survival["survival"][layer, head]
    c = st.columns(3)
    c[0].metric(tr("llm_explain.weight_on_first" if first_token else "explain.weight_on_special"),
                f"{survival['weight_share'][layer, head]:.1%}")
    c[1].metric(tr("llm_explain.norm_on_first" if first_token else "explain.norm_on_special"),
                f"{survival['norm_share'][layer, head]:.1%}")
    c[2].metric(tr("explain.survival"), "–" if not np.isfinite(ratio) else f"{ratio:.2f}")
    show_chart(survival_bars(survival["weight_share"], survival["norm_share"],
                             tr("explain_encoder.survival_title", kind=attention_kind_label(kind),
                                special=html_escaped(special_label)),  # plotly text: "<eos>" as itself
                             (tr("explain_encoder.weight_share", special=special_label),
                              tr("explain_encoder.norm_share", special=special_label)), words=words_for("explain")),
               f"special_token_survival_{kind}", key="explain_survival")
    if not presenting():
        st.caption(tr("explain.norms_caption", special=special_label) if mode == "norms" else
                   tr("explain.raw_caption"))


def _importance_and_curve(model_id: str, lab: LabModel, waiting: str) -> tuple | None:
    """The model's head importance and its pruning curve, computed in the analysis worker once per server (a spinner
    saying `waiting` meanwhile); None past the time limit, which the worker has already told the student."""
    with st.spinner(waiting):
        found = heavy(("importance", model_id), lambda: shared_head_importance(model_id, lab))
    return None if found is None else (found.heads, found.curve)


def _flat_order_and_names(order: list[tuple[int, int]], layers: int, heads: int) -> tuple[list[int], list[str]]:
    """The report's (layer, head) order (least important first) as flat indices into the raveled (L, h) array, and
    every head's name ("L1 H1", ...) in that raveled order."""
    return ([l * heads + h for l, h in order],
            [f"L{l + 1} H{h + 1}" for l in range(layers) for h in range(heads)])


def _show_sorted_table(table: pd.DataFrame, intro: str, file_name: str) -> None:
    """The sorted importance table under its intro, and (not projected) its CSV download."""
    st.markdown(intro)
    st.dataframe(table, hide_index=True, width="stretch", height=280)
    if not presenting():
        st.download_button(tr("explain.importance_csv"), table.to_csv(index=False).encode("utf-8-sig"),
                           file_name=file_name, mime="text/csv", key="csv_importance", on_click="ignore",
                           icon=":material/download:", type="tertiary")


def show_importance(model_id: str, lab: LabModel) -> None:
    asked = lab_session().input.importance_asked
    if model_id not in shipped_model_names() and model_id not in asked:
        st.info(tr("explain.importance_ask"))
        if st.button(tr("explain.importance_run"), key="explain_importance_run"):
            asked.add(model_id)
            st.rerun(scope="fragment")
        return
    found = _importance_and_curve(model_id, lab, tr("explain.importance_wait"))
    if found is None:  # past the time limit, with a message
        return
    importance, curve = found
    cfg = lab.config
    layers, heads = cfg.num_layers, cfg.num_heads
    names = [f"{tr(f'attention.kinds_short.{kind}')} L{l + 1} H{h + 1}" for kind, l, h in importance.heads]
    c = st.columns(4)
    c[0].metric(tr("explain.baseline_exact_match"), f"{importance.baseline['exact_match']:.1%}")
    c[1].metric(tr("explain.baseline_loss"), f"{importance.baseline['loss']:.4f}")
    c[2].metric(tr("explain.spearman_loss"), f"{importance.spearman():+.2f}")
    c[3].metric(tr("explain.spearman_exact_match"),
                f"{head_importance_measures.spearman(importance.gradient, importance.exact_match_drop):+.2f}")
    metric = spec_segmented(METRIC, tr("explain.metric"), format_func=lambda m: tr(f"explain.chart.{m}"))
    values = getattr(importance, metric).reshape(len(ATTENTION_KINDS) * layers, heads)
    rows = _kind_rows(ATTENTION_KINDS, layers)
    left, right = st.columns([3, 2])
    cells = np.vectorize(CELL_FORMATS[metric].format)(values)
    show_chart(layers_by_heads(values, rows, tr("explain.importance_title", sentences=importance.sentences),
                               tr(f"explain.chart.{metric}"), text=cells,
                               zmid=None if metric == "gradient" else 0.0,
                               colorscale="Reds" if metric == "gradient" else "RdBu_r", words=words_for("explain")),
               f"head_importance_{metric}", key="explain_importance", where=left)
    show_chart(pruning_curve_chart(curve, len(importance.heads), tr("explain.curve_title"), words=words_for("explain")),
               "head_pruning_curve", key="explain_curve", where=right)
    table = importance_table(names, importance.exact_match_drop, importance.loss_rise, importance.gradient,
                             importance.order(), words=words_for("explain"))
    _show_sorted_table(table, tr("explain.sorted_intro"), "attention-lab_head_importance.csv")
    if not presenting():
        st.caption(tr("explain.importance_caption", sentences=importance.sentences))


def _pattern_filter() -> str:
    """The "show me the ... heads" picker of the pattern grid (toy models and encoders alike)."""
    return spec_select(PATTERN, tr("explain.pattern_filter"), format_func=lambda p: tr("explain.pattern_all")
                       if p == "all" else tr(f"explain.pattern_show.{p}"))


def _show_pattern_grid(labels: np.ndarray, rows: list[str], title: str, name: str,
                       table: Callable[[], pd.DataFrame], caption_key: str, sentences: int) -> None:
    """The grid of head pattern labels (rows = kind × layer, h), the picked pattern's heads named under it, and the
    labelling thresholds in a caption: the same view for toy models and encoders."""
    shown = _pattern_filter()
    show_chart(pattern_grid(labels, rows, title, None if shown == "all" else shown,
                            words=words_for("explain")), name, key="explain_patterns",
               table=table)
    if shown != "all":
        matching = [f"{rows[r]} H{h + 1}" for r, h in np.ndindex(labels.shape) if labels[r, h] == shown]
        st.markdown(tr("explain.pattern_matches", count=len(matching),
                       heads=", ".join(matching) or tr("explain.pattern_none")))
    t = patterns.PATTERN_THRESHOLDS
    st.caption(tr(caption_key, previous=f"{t['previous']:.0%}", next=f"{t['next']:.0%}", self=f"{t['self']:.0%}",
                  sink=f"{t['sink']:.0%}", broad=f"{t['broad']:.2f}", sentences=sentences, first=f"{t['first']:.0%}",
                  induction=f"{t['induction']:.0%}", length=patterns.INDUCTION_LENGTH))
    if caption_key == "explain.patterns_caption":  # a model with cross-attention
        st.caption(tr("explain.patterns_alignment", alignment=f"{t['alignment']:.2f}", peak=f"{t['alignment_peak']:.0%}"))


def show_patterns(model_id: str, lab: LabModel) -> None:
    with st.spinner(tr("explain.patterns_wait")):
        scores = heavy(("labels", model_id), lambda: head_labels(model_id, lab))
    if scores is None:  # past the time limit, with a message
        return
    kinds = tuple(scores)  # the model's kinds, in KIND_NAMES order
    labels = np.concatenate([scores[kind].labels for kind in kinds])  # (kinds × L, h)
    rows = [row for kind in kinds for row in _kind_rows((kind,), scores[kind].labels.shape[0])]
    # a model trained here is labelled on its held-out sentences; a pretrained one on fixed English sentences
    held_out = lab.can(TRAINING)
    texts = "explain" if held_out else "explain_encoder"
    # a language model's labels: the first token as the sink, and induction (model.explain.patterns)
    first_token = any(s.sink_on == "first" for s in scores.values())
    _show_pattern_grid(labels, rows, tr(f"{texts}.patterns_title", sentences=lab.label_sentences),
                       "head_patterns" if held_out else f"{model_id}_head_patterns",
                       lambda: _pattern_table(scores, rows, kinds),
                       "llm_explain.patterns_caption" if first_token else f"{texts}.patterns_caption",
                       lab.label_sentences)


def _pattern_table(scores: dict[str, patterns.PatternScores], rows: list[str],
                   kinds: tuple[str, ...] = ATTENTION_KINDS):
    records = []
    for n, kind in enumerate(kinds):
        s = scores[kind]
        for l, h in np.ndindex(s.labels.shape):
            records.append({tr("explain.chart.layer_axis"): rows[n * s.labels.shape[0] + l],
                            tr("explain.chart.head"): f"H{h + 1}",
                            tr("explain.chart.label"): tr(f"explain.patterns.{s.labels[l, h]}"),
                            **{tr(f"explain.patterns.{name}"): float(getattr(s, name)[l, h])
                               for name in ("previous", "next", "self")},
                            tr(f"explain.patterns.{s.sink_label}"): float(s.sink[l, h]),
                            **({} if s.induction is None else
                               {tr("explain.patterns.induction"): float(s.induction[l, h])}),
                            tr("explain.chart.entropy"): float(s.entropy[l, h])})
    return pd.DataFrame(records)


def show_encoder_importance(model_id: str, lab: LabModel) -> None:
    found = _importance_and_curve(model_id, lab, tr("explain_encoder.importance_wait",
                                                     sentences=len(fixed_sets.ENCODER_SENTENCES)))
    if found is None:  # past the time limit, with a message
        return
    importance, curve = found
    layers, heads = importance.change.shape
    labels = {"change": tr("explain_encoder.change"), "gradient": tr("explain_encoder.gradient")}
    c = st.columns(3)
    c[0].metric(tr("explain_encoder.sentences"), f"{importance.sentences}")
    c[1].metric(tr("explain_encoder.spearman"), f"{importance.spearman():+.2f}")
    c[2].metric(tr("explain_encoder.heads_for_99"),
                f"{max((r['k'] for r in curve if r['similarity'] >= 0.99), default=0)} / {importance.change.size}")
    metric = spec_segmented(ENCODER_METRIC, tr("explain.metric"), format_func=labels.get)
    values = getattr(importance, metric)  # (L, h)
    rows = _kind_rows(("encoder_self",), layers)
    # Full width: 12 heads a row leave the cells' numbers unreadable in a 3/5 column.
    show_chart(layers_by_heads(values, rows, tr("explain_encoder.importance_title", sentences=importance.sentences),
                               labels[metric], text=np.vectorize("{:.3f}".format)(values), words=words_for("explain")),
               f"{model_id}_head_importance_{metric}", key="explain_importance")
    show_chart(pruning_curve_chart(curve, importance.change.size, tr("explain.curve_title"), measure="similarity",
                                   measure_label=tr("explain_encoder.similarity"), words=words_for("explain")),
               f"{model_id}_head_pruning_curve", key="explain_curve")
    order, names = _flat_order_and_names(importance.order(), layers, heads)
    table = encoder_importance_table(names, importance.change.ravel(), importance.gradient.ravel(), order,
                                     labels["change"], labels["gradient"], words=words_for("explain"))
    _show_sorted_table(table, tr("explain_encoder.sorted_intro"), f"attention-lab_{model_id}_head_importance.csv")
    if not presenting():
        st.caption(tr("explain_encoder.importance_caption", sentences=importance.sentences,
                      probes=head_importance_measures.GRADIENT_PROBES))


def show_language_model_importance(model_id: str, lab: LabModel) -> None:
    """A causal language model's heads by the gradient of its next-token loss on fixed texts, and the loss with the
    k least important switched off (model.explain.importance.language_model_importance); asked for first."""
    asked = lab_session().input.importance_asked
    if model_id not in asked:
        st.info(tr("llm_explain.importance_ask", texts=len(fixed_sets.LANGUAGE_MODEL_TEXTS), points=len(curve_counts(sum(
            layers * heads for layers, heads in lab.layout.values())))))
        # a callback: the click's own rerun (of the fragment, or of the page) then draws the importance
        st.button(tr("llm_explain.importance_run"), key="explain_importance_run",
                  on_click=asked.add, args=(model_id,))
        return
    found = _importance_and_curve(model_id, lab, tr("llm_explain.importance_wait"))
    if found is None:  # past the time limit, with a message
        return
    importance, curve = found
    layers, heads = importance.gradient.shape
    within = max((r["k"] for r in curve if r["loss"] <= importance.baseline_loss + 0.1), default=0)
    c = st.columns(4)
    c[0].metric(tr("llm_explain.texts"), f"{importance.texts}")
    c[1].metric(tr("llm_explain.tokens"), f"{importance.tokens}")
    c[2].metric(tr("llm_explain.baseline_loss"), f"{importance.baseline_loss:.3f}")
    c[3].metric(tr("llm_explain.heads_within"), f"{within} / {importance.gradient.size}")
    rows = _kind_rows(("decoder_self",), layers)
    show_chart(layers_by_heads(importance.gradient, rows,
                               tr("llm_explain.importance_title", texts=importance.texts),
                               tr("llm_explain.gradient"), text=np.vectorize("{:.1e}".format)(importance.gradient),
                               words=words_for("explain")),
               f"{model_id}_head_importance_gradient", key="explain_importance")
    show_chart(pruning_curve_chart(curve, importance.gradient.size, tr("explain.curve_title"), measure="loss",
                                   measure_label=tr("llm_explain.loss"), words=words_for("explain")),
               f"{model_id}_head_pruning_curve", key="explain_curve")
    order, names = _flat_order_and_names(importance.order(), layers, heads)
    table = gradient_importance_table(names, importance.gradient.ravel(), order, tr("llm_explain.gradient"),
                                      words=words_for("explain"))
    _show_sorted_table(table, tr("llm_explain.sorted_intro"), f"attention-lab_{model_id}_head_importance.csv")
    if not presenting():
        st.caption(tr("llm_explain.importance_caption", texts=importance.texts, tokens=importance.tokens))


def grid_labels(model_id: str, lab: LabModel, kind: str) -> np.ndarray | None:
    """(L, h) short pattern names of one kind's heads for the "All heads" grid; None where the model has no pattern
    labels (PATTERNS: transformers models, GRU seq2seq) or none for this kind."""
    if not lab.can(PATTERNS):
        return None
    scores = heavy(("labels", model_id), lambda: head_labels(model_id, lab))
    if scores is None or kind not in scores:
        return None
    return np.vectorize(lambda p: tr(f"explain_encoder.short.{p}"))(scores[kind].labels)

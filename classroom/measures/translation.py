"""The measures of the intro lesson's translation models (lessons/intro.toml): read from the attention of the model
the stop shows, on the stop's sentence (its greedy decode), or from the shipped models' recorded metrics.

Layers and heads in claim args are 0-based here (1-based in the file); a head may be "max" or "min" over the layer's
heads (model/claims.py)."""
from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from classroom.measures.registry import (HEAD, LAYER, LAYER_SETS, OFFSET, STOP_MODEL, Expected, HeadValues,
                                         MeasureError, Phrase, StopView, choice, flag, measure, number, option_of,
                                         second_gap, text, texts, whole)
from model import claims
from model.capabilities import STEPS
from model.checkpoint import read_sidecar
from model.decode import DecodeResult
from model.families import CHECKPOINT_DIR, LabModel
from model.metrics import head_entropy
from model.questions import lowest_metric, most_attended_key
from model.sources import AnalysedInput, as_float32, compact_maps

TRANSLATION_VIEW = ("sentence",)  # with the model: what the stop decodes


def checked_sentence(lab: LabModel, view: StopView) -> str:
    """The stop's sentence, for a model that decodes it step by step; MeasureError saying what is missing."""
    sentence = view.get("sentence")
    if not sentence:
        raise MeasureError(Phrase.of("lessons.needs_sentence"))
    if not lab.can(STEPS):  # no greedy decode to read (an encoder, a transformers model)
        raise MeasureError(Phrase.of("lessons.needs_transformer"))
    return sentence


def analysed(lab: LabModel, view: StopView) -> AnalysedInput:
    """The model's analysis of the stop's sentence as the pages keep it (compact maps): every kind's maps, and its
    greedy decode (`.decode`)."""
    return compact_maps(lab.analyse(checked_sentence(lab, view)))


def _cross(lab: LabModel, view: StopView) -> tuple[DecodeResult, np.ndarray]:
    found = analysed(lab, view)
    if "cross" not in found.maps:  # a model without cross-attention heads
        raise MeasureError(Phrase.of("lessons.needs_transformer"))
    return found.decode, as_float32(found.maps["cross"].weights)  # (L, h, T_q, T_k)


def word_position(tokens: list[str], word: str) -> int:
    """Where `word` is among a translation's word tokens (exactly; the first), or a MeasureError naming the tokens (a
    lesson file's word the sentence lacks)."""
    if word not in tokens:
        raise MeasureError(Phrase.of("lessons.word_missing", word=word, tokens=" ".join(tokens)))
    return tokens.index(word)


def _weights(lab: LabModel, view: StopView, kind: str) -> np.ndarray:
    return as_float32(analysed(lab, view).maps[kind].weights)  # (L, h, T_q, T_k)


def _metrics(model_id: str) -> dict:
    """A shipped model's recorded metrics, from its JSON alone (no weights loaded)."""
    return read_sidecar(CHECKPOINT_DIR / model_id).get("metrics", {})


# --- questions --------------------------------------------------------------------------------------------------

@measure("sharpest_cross_head", answers="head", model=STOP_MODEL, reads=TRANSLATION_VIEW)
def sharpest_cross_head(lab: LabModel, view: StopView, args: Mapping) -> HeadValues:
    """The cross-attention head with the lowest mean entropy over its rows."""
    return HeadValues(head_entropy(_cross(lab, view)[1]), True, "lessons.measured_entropy")


@measure("head_linking", answers="head", model=STOP_MODEL, reads=TRANSLATION_VIEW,
         args=(text("target", "a token's text"), text("source", "a token's text"),
               flag("least", "true or false (the head with the least weight)", required=False)))
def head_linking(lab: LabModel, view: StopView, args: Mapping) -> HeadValues:
    """The cross-attention head that puts the most (args.least: the least) weight from the row writing the target
    on the source token."""
    result, cross = _cross(lab, view)
    query = word_position(result.output_tokens, args["target"])  # the cross row that writes the target
    key = word_position(result.source.tokens, args["source"])
    return HeadValues(cross[:, :, query, key], bool(args.get("least", False)), "lessons.measured_weight")


@measure("alignment_source_token", answers="token", model=STOP_MODEL, reads=TRANSLATION_VIEW,
         args=(text("target", "a token's text"),))
def alignment_source_token(lab: LabModel, view: StopView, args: Mapping) -> Expected:
    """The source token the target's alignment row (a GRU's attention) weighs most."""
    found = analysed(lab, view)
    if "alignment" not in found.maps:
        raise MeasureError(Phrase.of("lessons.needs_alignment"))
    result, alignment = found.decode, found.maps["alignment"].weights[0, 0]  # (T, S): a row per written token
    query = word_position(result.output_tokens, args["target"])
    row = alignment[query]  # the row that writes the target
    token = result.source.tokens[most_attended_key(alignment, query)]
    return Expected(token, frozenset({token}), measured=Phrase.of("lessons.measured_weight", value=f"{row.max():.2f}"),
                    separation=second_gap(row))


@measure("lowest_long_sentence_model", answers="choice", args=(texts("models", "a list of model names"),))
def lowest_long_sentence_model(lab: None, view: StopView, args: Mapping) -> Expected:
    """The option naming the model whose recorded exact match on long test sentences is lowest."""
    models = list(args["models"])
    metrics = {m: _metrics(m)["long_test"]["exact_match"] for m in models}
    lowest = lowest_metric(metrics)
    return choice(str(models.index(lowest) + 1), Phrase.of("lessons.measured_exact_match", value=f"{metrics[lowest]:.0%}"),
                  second_gap([-v for v in metrics.values()]))


@measure("aligned_cross_layers", answers="choice", model=STOP_MODEL, reads=TRANSLATION_VIEW,
         args=(LAYER_SETS, number("at_least", "a finite number (the mean row peak of an aligned head)")))
def aligned_cross_layers(lab: LabModel, view: StopView, args: Mapping) -> Expected:
    """Which layers' cross-attention heads all put at least args.at_least of each row, on average, on one source
    token: the option whose set of layers is that set. The gap: the head nearest the bound, either side of it."""
    _, cross = _cross(lab, view)
    peaks = cross.max(-1).mean(-1)  # (L, h): each head's mean row peak
    at_least = float(args["at_least"])
    aligned = frozenset(layer + 1 for layer in range(peaks.shape[0]) if peaks[layer].min() >= at_least)
    sets = [lambda found, layers=frozenset(o): found == layers for o in args["option_layers"]]
    answer = option_of(sets, aligned, ", ".join(map(str, sorted(aligned))) or "-")
    measured = tuple(Phrase.of("lessons.measured_peaks", layer=layer + 1, low=f"{peaks[layer].min():.2f}",
                              high=f"{peaks[layer].max():.2f}") for layer in range(peaks.shape[0]))
    return choice(answer, measured, float(abs(peaks - at_least).min()))


# --- claims -----------------------------------------------------------------------------------------------------

KIND = text("kind", "a text (the kind of attention: encoder_self, cross, ...)")


@measure("position_share", bounds=True, model=STOP_MODEL, reads=TRANSLATION_VIEW, args=(KIND, LAYER, HEAD, OFFSET))
def _position_share(lab: LabModel, view: StopView, args: Mapping) -> float:
    return claims.position_share(_weights(lab, view, args["kind"]), args["layer"], args["head"], int(args["offset"]))


@measure("row_peak", bounds=True, model=STOP_MODEL, reads=TRANSLATION_VIEW, args=(KIND, LAYER, HEAD))
def _row_peak(lab: LabModel, view: StopView, args: Mapping) -> float:
    return claims.row_peak(_weights(lab, view, args["kind"]), args["layer"], args["head"])


@measure("linking_weight", bounds=True, model=STOP_MODEL, reads=TRANSLATION_VIEW,
         args=(LAYER, HEAD, text("target", "a token's text"), text("source", "a token's text")))
def _linking_weight(lab: LabModel, view: StopView, args: Mapping) -> float:
    result, cross = _cross(lab, view)
    query = word_position(result.output_tokens, args["target"])
    key = word_position(result.source.tokens, args["source"])
    return claims.linking_weight(cross, query, key, args["layer"], args["head"])


@measure("exact_match_at_length", bounds=True, args=(text("model", "a shipped model's name"), whole("words")))
def _exact_match_at_length(lab: None, view: StopView, args: Mapping) -> float:
    return claims.exact_match_at_length(_metrics(args["model"])["by_length"], int(args["words"]))

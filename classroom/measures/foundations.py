"""The measures of the foundation pages (softmax scaling, attention step by step, normalization, positions): worked
out from the stop's view and the question itself; no trained model is read."""
from __future__ import annotations

from collections.abc import Mapping

from classroom.measures.registry import StopView, measure, number, numbers, text, whole
from model import claims
from model.foundations.attention_steps import build_mask
from model.foundations.normalization import NormalizationDemo, normalization_demo
from model.foundations.rope import analyse_rope
from model.questions import causal_visible_keys, softmax_weight

NORMALIZATION_VIEW = ("batch", "len", "features", "norm", "norm_seed")  # the normalization page's batch


def _index_within_scores(args: dict) -> None:
    if args["index"] > len(args["scores"]):
        raise ValueError(f"args.index must be from 1 to {len(args['scores'])}")


@measure("softmax_weight", answers="number", shown=".3f", by_model=False, view_args=("factor_param",),
         args=(numbers("scores"), whole("index", "a whole number >= 1 (1-based)"), number("factor", required=False),
               text("factor_param", "the name of a state value (the factor the page scales the scores by)",
                    required=False)),
         check=_index_within_scores)
def stop_softmax_weight(lab: None, view: StopView, args: Mapping) -> float:
    """softmax(factor · scores)[index]: the factor is the stop's view value args.factor_param names, else
    args.factor (1 without either)."""
    factor = view.get(args["factor_param"], 1) if "factor_param" in args else args.get("factor", 1)
    return softmax_weight(list(args["scores"]), float(factor), int(args["index"]) - 1)


@measure("causal_visible_keys", answers="number", by_model=False, reads=("tokens", "mask"),
         args=(whole("query", "a whole number >= 1 (1-based)"),))
def stop_causal_visible_keys(lab: None, view: StopView, args: Mapping) -> float:
    """How many keys query args.query may attend to under the mask the attention-steps page draws for the stop."""
    tokens = int(view["tokens"])
    return causal_visible_keys(build_mask(view["mask"], tokens, tokens), int(args["query"]))


def _normalization(view: StopView, args: Mapping) -> NormalizationDemo:
    return normalization_demo(view["batch"], view["len"], view["features"], args.get("norm") or view["norm"],
                              view["norm_seed"])


NORM = text("norm", "a text (a normalization: layer, batch, batch_per_step)", required=False)


@measure("zeroed_fraction", bounds=True, reads=NORMALIZATION_VIEW, args=(NORM,))
def _zeroed_fraction(lab: None, view: StopView, args: Mapping) -> float:
    """Share of the real outputs the normalization (args.norm, else the stop's) forces to exactly 0."""
    return claims.zeroed_fraction(_normalization(view, args))


@measure("pooled_count", bounds=True, reads=NORMALIZATION_VIEW, args=(NORM,))
def _pooled_count(lab: None, view: StopView, args: Mapping) -> float:
    """The fewest real values any one of the normalization's statistics is taken over."""
    return claims.pooled_count(_normalization(view, args))


@measure("rope_distance_spread", bounds=True, reads=("pe_len", "pe_d", "pe_k"))
def rope_distance_spread(lab: None, view: StopView, args: Mapping) -> float:
    """Largest spread of the rotated q·k along one distance on the positional page's RoPE section (0: the score
    depends on the distance only)."""
    return float(analyse_rope(int(view["pe_len"]), int(view["pe_d"]), int(view["pe_k"])).diagonal_spread)

"""The measures of the lesson "How an LLM chooses its next word" (lessons/choices.toml), on SmolLM2-135M-Instruct at
the stop's view: the LLM page's prompt with its sampling (temperature, top-k) and its branches, its heads switched off
while it writes (the copy of a repeated random sequence), and the answer page's information-flow graph. Each reads the
view as its page does (the same model functions), so the lesson's answer is what the page under it shows. Layers
count from 1; probabilities are fractions, losses nats."""
from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import torch

from classroom.measures.llm import PROMPT_VIEW, prompt_ids, shared_induction
from classroom.measures.registry import (BANDS, Arg, Expected, MeasureError, Phrase, StopView, choice, finite_number,
                                         flag, measure, option_of, text)
from classroom.shared_results import shared
from model.explain.flow import InformationFlow, information_flow
from model.explain.induction import top_heads
from model.families import LabModel
from model.generation import sampling_probabilities
from model.gguf_weights import SMOLLM2_NAME
from model.switch_off import COPY_LENGTH, COPY_SEED, INDUCTION_LENGTH, INDUCTION_SEED, CopyLosses, copy_losses

SAMPLING_VIEW = ("llm_choice", "llm_temp", "llm_top_k")  # the generation section's choice (ui/llm/specs.py)
HEADS_VIEW = ("off_heads",)  # the heads switched off (ui/llm/switch_off_specs.py)
FLOW_VIEW = ("flow_text",)  # the information-flow section's prompt (ui/llm/flow_specs.py)
SAMPLED = "sampled"  # the generation section's choice that samples (ui/llm/specs.SAMPLED)


def _probability_bands(value: object) -> list:
    """One [low, high] pair of probabilities per option, 0 <= low < high <= 1."""
    if isinstance(value, list) and value and all(isinstance(b, list) and len(b) == 2 for b in value):
        pairs = [[finite_number(low), finite_number(high)] for low, high in value]
        if all(0 <= low < high <= 1 for low, high in pairs):
            return pairs
    raise ValueError


TOKEN = text("token", "a token's text, as the tokenizer writes it (\" can\": a leading space)")
AS_SAMPLED = flag("sampled", "true (as the page's sampler draws it: the stop's temperature and top-k) or false (the "
                  "model's own probability)", required=False)
PROBABILITY_BANDS = Arg("bands", _probability_bands, "one [low, high] pair of probabilities per option "
                        "(0 <= low < high <= 1)", per_option=True)


# --- the next token's distribution, as the model gives it and as the page's sampler draws from it ------------------

def _next_logits(lab: LabModel, ids: list[int]) -> torch.Tensor:
    """(V,) the logits of the token after `ids`: one forward, once per process for a stop's question and claims."""
    def compute() -> torch.Tensor:
        with torch.no_grad():
            out = lab.network.model(torch.tensor([ids]), need_weights=False, last_logits_only=True)
        return out.logits[0, -1].float().cpu()

    return shared(("next_token_logits", lab.model_id, tuple(ids)), compute)


def _token_id(lab: LabModel, token: str) -> int:
    ids = lab.encode(token)
    if len(ids) != 1:
        raise MeasureError(Phrase.of("lesson_choices.not_one_token", token=repr(token)))
    return ids[0]


def _distribution(lab: LabModel, view: StopView, sampled: bool) -> torch.Tensor:
    """(V,) the next token's probabilities after the stop's prompt: the model's own (temperature 1, every token), or
    what the generation section's sampler draws from at the stop's temperature and top-k."""
    logits = _next_logits(lab, prompt_ids(lab, view))
    if not sampled:
        return torch.softmax(logits, dim=-1)
    if view["llm_choice"] != SAMPLED:
        raise MeasureError(Phrase.of("lesson_choices.not_sampled"))
    return sampling_probabilities(logits, float(view["llm_temp"]), int(view["llm_top_k"]))


@measure("next_token_probability", answers="number", bounds=True, shown=".2f", states_value=True,
         model=SMOLLM2_NAME, reads=PROMPT_VIEW + SAMPLING_VIEW, args=(TOKEN, AS_SAMPLED))
def next_token_probability(lab: LabModel, view: StopView, args: Mapping) -> float:
    """The probability of args.token as the next token after the stop's prompt: the model's own, or with
    `sampled = true` the generation section's sampler's (softmax(logits / T) over the top-k, Fan et al. 2018)."""
    return float(_distribution(lab, view, bool(args.get("sampled", False)))[_token_id(lab, args["token"])])


@measure("next_token_rank", bounds=True, model=SMOLLM2_NAME, reads=PROMPT_VIEW, args=(TOKEN,))
def next_token_rank(lab: LabModel, view: StopView, args: Mapping) -> float:
    """The rank of args.token among the model's next tokens after the stop's prompt (1: greedy decoding takes it)."""
    logits = _next_logits(lab, prompt_ids(lab, view))
    return float(int((logits > logits[_token_id(lab, args["token"])]).sum()) + 1)


@measure("next_token_probability_band", answers="choice", model=SMOLLM2_NAME, reads=PROMPT_VIEW + SAMPLING_VIEW,
         args=(TOKEN, PROBABILITY_BANDS, AS_SAMPLED))
def next_token_probability_band(lab: LabModel, view: StopView, args: Mapping) -> Expected:
    """The option whose band of probabilities holds args.token's (next_token_probability); the gap: how far that
    probability lies from the nearest other option's band."""
    found = next_token_probability(lab, view, args)
    bands = args["bands"]
    answer = option_of([lambda p, band=band: band[0] <= p <= band[1] for band in bands], found, f"{found:.2f}")
    others = [max(low - found, found - high, 0.0) for at, (low, high) in enumerate(bands, 1) if at != int(answer)]
    key = "lesson_choices.measured_sampled" if args.get("sampled", False) else "lessons.measured_probability"
    return choice(answer, Phrase.of(key, probability=f"{found:.2f}"), min(others) if others else None)


# --- heads switched off while it writes: the copy of a repeated random sequence (model/switch_off.py) --------------

def _off_heads(view: StopView) -> tuple[tuple[int, int], ...]:
    heads = tuple(sorted(tuple(head) for head in view["off_heads"]))
    if not heads:
        raise MeasureError(Phrase.of("lesson_choices.no_heads"))
    return heads


def _copy(lab: LabModel, view: StopView) -> CopyLosses:
    """Both models' losses on the section's repeated random sequence (two forwards), once per process."""
    heads = _off_heads(view)
    return shared(("copy_losses", lab.model_id, heads),
                  lambda: copy_losses(lab, lab.config.vocab_size, heads, COPY_LENGTH, COPY_SEED))


@measure("copy_loss_rise", answers="number", bounds=True, shown=".2f", states_value=True, model=SMOLLM2_NAME,
         reads=HEADS_VIEW)
def copy_loss_rise(lab: LabModel, view: StopView, args: Mapping) -> float:
    """How much the mean loss (nats) on the second copy rises with the stop's heads switched off."""
    copy = _copy(lab, view)
    return copy.second_half(copy.switched) - copy.second_half(copy.intact)


@measure("copy_loss", bounds=True, model=SMOLLM2_NAME, reads=HEADS_VIEW,
         args=(text("half", '"first" (the random tokens) or "second" (their copy)'),))
def copy_loss(lab: LabModel, view: StopView, args: Mapping) -> float:
    """The intact model's mean loss (nats) on one half of the section's repeated random sequence."""
    if args["half"] not in ("first", "second"):
        raise ValueError('args.half must be "first" or "second"')
    copy = _copy(lab, view)
    return copy.first_half(copy.intact) if args["half"] == "first" else copy.second_half(copy.intact)


@measure("off_heads_induction_rank", bounds=True, model=SMOLLM2_NAME, reads=HEADS_VIEW)
def off_heads_induction_rank(lab: LabModel, view: StopView, args: Mapping) -> float:
    """The lowest place (1: the highest score) any of the stop's heads has among all heads by induction score on the
    LLM heads page's first sequence (the section's one-click choice reads the same)."""
    scores = shared_induction(lab.network, INDUCTION_LENGTH, INDUCTION_SEED)[0].scores  # (L, h)
    ranked = [(layer, head) for layer, head, _ in top_heads(scores, scores.size)]
    return float(max(ranked.index(head) + 1 for head in _off_heads(view)))


# --- the information-flow graph (model/explain/flow.py) -----------------------------------------------------------

def _flow(lab: LabModel, view: StopView) -> InformationFlow:
    text_ = str(view["flow_text"])
    return shared(("information_flow", lab.model_id, text_), lambda: information_flow(lab, text_))


@measure("flow_layer_band", answers="choice", model=SMOLLM2_NAME, reads=FLOW_VIEW,
         args=(text("source", "a token of the prompt, as the tokenizer writes it (\" France\"): its first place"),
               BANDS))
def flow_layer_band(lab: LabModel, view: StopView, args: Mapping) -> Expected:
    """The option whose band of layers holds the layer whose heads carry the largest share of the last position's
    node from args.source's position (the graph's edge into the last position); the gap: that share over the
    largest share from it in a layer outside the band."""
    flow = _flow(lab, view)
    if args["source"] not in flow.tokens:
        raise MeasureError(Phrase.of("lesson_choices.not_in_prompt", token=repr(args["source"])))
    shares = flow.edges[:, -1, flow.tokens.index(args["source"])]  # (L,) block l's heads, source → last position
    layer = int(np.argmax(shares)) + 1
    bands = args["bands"]
    answer = option_of([lambda found, band=band: band[0] <= found <= band[1] for band in bands], layer, str(layer))
    first, last = bands[int(answer) - 1]
    outside = [float(share) for at, share in enumerate(shares, 1) if not first <= at <= last]
    measured = Phrase.of("lesson_choices.measured_flow_layer", layer=layer, share=f"{shares[layer - 1]:.0%}",
                         token=args["source"].strip())
    return choice(answer, measured, float(shares.max()) - max(outside) if outside else None)

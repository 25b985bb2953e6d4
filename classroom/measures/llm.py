"""The measures of the LLM lesson (lessons/llm.toml), on SmolLM2-135M-Instruct (model/llama.py, through its
LlamaAdapter) at the stop's view: the LLM page's prompt, the LLM-heads page's text, window and repeated sequence.
Each reads the view as its page does, so the lesson's answer is what the page under it shows. Layer numbers
returned for the screen count from 1."""
from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from classroom.measures.registry import (BANDS, Expected, MeasureError, Phrase, StopView, choice, flag, measure, option_of,
                                         second_gap, text, texts, whole)
from classroom.shared_results import shared
from model.explain.induction import COPY_PROMPT, InductionResult, induction_analysis_with_weights, top_heads
from model.explain.sinks import SinkResult, WindowLosses, next_token_losses, sink_analysis, window_losses
from model.families import LabModel
from model.generation import generate
from model.gguf_weights import SMOLLM2_NAME
from model.kv_cache import key_vectors_computed
from model.llama import LoadedLlama

PROMPT_VIEW = ("llm_prompt", "llm_chat")  # the LLM page's prompt, in chat form or not
SINK_VIEW = ("sink_text",)
INDUCTION_VIEW = ("ind_len", "ind_seed")  # the repeated random sequence: its length and seed


def prompt_ids(lab: LabModel, view: StopView) -> list[int]:
    """The LLM page's prompt at this stop as the model reads it (in chat form when the stop says so)."""
    prompt = str(view["llm_prompt"])
    return lab.encode(lab.chat_prompt(prompt) if view["llm_chat"] else prompt)


def _sink_ids(lab: LabModel, view: StopView) -> list[int]:
    return lab.encode(str(view["sink_text"]))


# The LLM heads page (ui/llm_heads/view.py) and these measures read one result per process for each of its analyses: the
# store's key names the model and the input, never the page, the session or its language.

def shared_sinks(loaded: LoadedLlama, ids: Sequence[int]) -> SinkResult:
    """The sink analysis of a text's token ids (three passes of the model), once per process."""
    return shared(("sink_analysis", loaded.name, tuple(ids)), lambda: sink_analysis(loaded.model, list(ids)))


def shared_full_losses(loaded: LoadedLlama, ids: Sequence[int]) -> np.ndarray:
    """(T − 1,) the text's next-token losses under full attention: every window reads them (one pass)."""
    return shared(("next_token_losses", loaded.name, tuple(ids)), lambda: next_token_losses(loaded.model, list(ids)))


def shared_window(loaded: LoadedLlama, ids: Sequence[int], window: int) -> WindowLosses:
    """A sliding window's losses on the text (two passes beside the full one), once per process."""
    return shared(("window_losses", loaded.name, tuple(ids), window),
                  lambda: window_losses(loaded.model, list(ids), window, full=shared_full_losses(loaded, ids)))


def shared_induction(loaded: LoadedLlama, length: int, seed: int) -> tuple[InductionResult, np.ndarray]:
    """The induction analysis of the repeated random sequence (n = length) and its top head's (2n, 2n) attention
    weights (the page draws its stripe), once per process; the other heads' weights are not kept."""
    def compute() -> tuple[InductionResult, np.ndarray]:
        result, weights = induction_analysis_with_weights(loaded.model, loaded.config.vocab_size, length, seed)
        layer, head, _ = top_heads(result.scores, 1)[0]
        return result, weights[layer, head].numpy()

    return shared(("induction_analysis", loaded.name, length, seed), compute)


def shared_copy_map(loaded: LoadedLlama, layer: int, head: int) -> np.ndarray:
    """(T, T) float32: head (layer, head)'s causal map on COPY_PROMPT (the page's copy row is its last row, the copy
    stop's cell question the whole map), once per process."""
    ids = loaded.encode(COPY_PROMPT)
    return shared(("copy_map", loaded.name, layer, head), lambda: loaded.run(ids).weights[layer, 0, head].float().numpy())


def _induction(lab: LabModel, view: StopView) -> InductionResult:
    """The stop's induction scores, once per process for the three measures that read them and the page (seconds on
    2 cores)."""
    return shared_induction(lab.network, int(view["ind_len"]), int(view["ind_seed"]))[0]


def _best_layer(result: InductionResult) -> int:
    """The layer (1-based) of the head with the highest induction score."""
    return top_heads(result.scores, 1)[0][0] + 1


@measure("llm_next_token", answers="choice", model=SMOLLM2_NAME, reads=PROMPT_VIEW,
         args=(texts("option_tokens", "one token per option, as the tokenizer writes it (\" can\": a leading space)",
                     per_option=True),))
def llm_next_token(lab: LabModel, view: StopView, args: Mapping) -> Expected:
    """The option whose token the model writes first after the stop's prompt (greedy): one forward pass. Each
    option's probability there, at temperature 1, gives the gap; an option outside the model's top 5 gets the
    fifth's probability, the most it can have."""
    options = list(args["option_tokens"])
    step, _ = lab.next_token(prompt_ids(lab, view), None)
    top = dict(zip(lab.token_texts(step.top_ids), step.top_probs, strict=True))
    token = lab.token_texts([step.token_id])[0]
    probabilities = {option: float(top.get(option, min(step.top_probs))) for option in options}
    if token not in options:
        raise MeasureError(Phrase.of("lessons.llm_token_not_offered", token=repr(token)))
    return choice(str(options.index(token) + 1), Phrase.of("lessons.measured_probability",
                                                    probability=f"{probabilities[token]:.2f}"),
                  second_gap(probabilities.values()))


@measure("kv_cache_key_vectors", answers="number", model=SMOLLM2_NAME, reads=PROMPT_VIEW,
         args=(whole("step", "a whole number >= 1 (1-based)"),
               flag("cached", "true (with the KV cache) or false")))
def kv_cache_key_vectors(lab: LabModel, view: StopView, args: Mapping) -> float:
    """Key vectors (over all layers and key/value heads) that generation step args.step computes for the stop's
    prompt, with the KV cache or without."""
    return key_vectors_computed(lab.config, int(args["step"]), len(prompt_ids(lab, view)), use_cache=bool(args["cached"]))


@measure("query_heads_per_kv_head", answers="number", model=SMOLLM2_NAME)
def query_heads_per_kv_head(lab: LabModel, view: StopView, args: Mapping) -> float:
    """How many query heads share one key/value head (grouped-query attention)."""
    return lab.config.group_size


@measure("sink_share", answers="number", bounds=True, shown=".2f", states_value=True, model=SMOLLM2_NAME,
         reads=SINK_VIEW, args=(whole("from_layer", "a whole number >= 1 (1-based)"),))
def _sink_share(lab: LabModel, view: StopView, args: Mapping) -> float:
    """Mean share of attention on the first token of the stop's text over the heads of layers from_layer … L."""
    share = shared_sinks(lab.network, _sink_ids(lab, view)).share  # (L, h)
    from_layer = int(args["from_layer"])
    if not 1 <= from_layer <= share.shape[0]:
        raise ValueError(f"from_layer must be 1 … {share.shape[0]}")
    return float(np.mean(share[from_layer - 1:]))


@measure("window_gain", bounds=True, model=SMOLLM2_NAME, reads=(*SINK_VIEW, "window"))
def window_gain(lab: LabModel, view: StopView, args: Mapping) -> float:
    """How much lower the loss is (nats) when a sliding window keeps the first token than when it does not."""
    losses = shared_window(lab.network, _sink_ids(lab, view), int(view["window"]))
    return float(losses.window_only - losses.window_with_sink)


@measure("induction_layer", answers="number", states_value=True, model=SMOLLM2_NAME, reads=INDUCTION_VIEW)
def induction_layer(lab: LabModel, view: StopView, args: Mapping) -> float:
    """The layer (1-based) of the head with the highest induction score on the stop's repeated sequence."""
    return _best_layer(_induction(lab, view))


@measure("induction_layer_band", answers="choice", model=SMOLLM2_NAME, reads=INDUCTION_VIEW, args=(BANDS,))
def induction_layer_band(lab: LabModel, view: StopView, args: Mapping) -> Expected:
    """The option whose band of layers holds the strongest induction head; the gap: its score over the best head's
    outside the band."""
    result = _induction(lab, view)
    layer, scores = _best_layer(result), [float(s) for s in result.scores.max(axis=1)]  # each layer's best head
    bands = [lambda found, band=band: band[0] <= found <= band[1] for band in args["bands"]]
    answer = option_of(bands, layer, str(layer))
    first, last = args["bands"][int(answer) - 1]
    outside = [score for at, score in enumerate(scores, start=1) if not first <= at <= last]
    return choice(answer, Phrase.of("lessons.measured_layer", layer=layer),
                  float(max(scores) - max(outside)) if outside else None)


@measure("induction_score", bounds=True, model=SMOLLM2_NAME, reads=INDUCTION_VIEW)
def induction_score(lab: LabModel, view: StopView, args: Mapping) -> float:
    """The highest induction score of any head on the stop's repeated sequence."""
    return float(top_heads(_induction(lab, view).scores, 1)[0][2])


@measure("copy_probability", bounds=True, model=SMOLLM2_NAME,
         args=(text("token", "a token's text, as the tokenizer writes it (\" mat\")"),))
def copy_probability(lab: LabModel, view: StopView, args: Mapping) -> float:
    """The probability of args.token as the word the model writes after the LLM-heads page's in-context copy
    prompt; 0 unless it is the model's most likely (greedy) choice."""
    first = generate(lab.network.model, lab.encode(COPY_PROMPT), 1).steps[0]
    return float(first.top_probs[0]) if lab.token_texts(first.top_ids)[0] == args["token"] else 0.0

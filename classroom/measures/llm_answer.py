"""The measures of the lesson "How an LLM finds its answer" (lessons/answer.toml), on SmolLM2-135M-Instruct at the
stop's view of the answer page (app_pages/llm_answer.py): the logit lens's text, and the patching section's clean
and corrupted prompts with their answer and wrong token. Each reads the view as its page does (the same model
functions, model/explain/), so the lesson's answer is what the page under it shows. Layers count from 1."""
from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from classroom.measures.registry import (BANDS, Expected, MeasureError, Phrase, StopView, choice, measure,
                                         numbers, option_of, whole)
from classroom.shared_results import shared
from model.explain.attribution import LogitAttribution, direct_logit_attribution
from model.explain.logit_lens import lens_column
from model.explain.patching import (HeadPatching, Progress, ResidualPatching, head_patching,
                                    residual_patching)
from model.families import LabModel
from model.gguf_weights import SMOLLM2_NAME

LENS_VIEW = ("lens_text",)
PATCHING_VIEW = ("clean", "corrupt", "answer", "difference", "wrong")


def _wrong(view: StopView) -> str | None:
    """The wrong token while the page shows the logit difference (its switch on), else None."""
    return str(view["wrong"]) if view["difference"] else None


# A stop's measures read the sweeps its page draws (its question and its claims too): each computed once per process
# and input for all of them, in the app's store (classroom/shared_results.py). The results are small ((L, T) and
# (L, H) arrays); the sweeps take seconds to a minute.
def residual_sweep(lab: LabModel, clean: str, corrupt: str, answer: str, wrong: str | None,
                   progress: Progress | None = None) -> ResidualPatching:
    """The (block, position) sweep of the answer page's patching section; `progress` (not part of the key) is told
    the sweep's progress when this call is the one that computes it."""
    return shared(("residual_patching", lab.model_id, clean, corrupt, answer, wrong),
                  lambda: residual_patching(lab, clean, corrupt, answer, wrong, progress=progress))


def head_sweep(lab: LabModel, clean: str, corrupt: str, answer: str, wrong: str | None,
               progress: Progress | None = None) -> HeadPatching:
    """Every head's patch at the last position (the answer page's heads section)."""
    return shared(("head_patching", lab.model_id, clean, corrupt, answer, wrong),
                  lambda: head_patching(lab, clean, corrupt, answer, wrong, progress=progress))


def logit_attribution(lab: LabModel, text: str) -> LogitAttribution:
    """Each part's direct contribution to the model's own next token after `text` (the answer page's last section)."""
    return shared(("logit_attribution", lab.model_id, text), lambda: direct_logit_attribution(lab, text))


def _residual(lab: LabModel, view: StopView) -> ResidualPatching:
    return residual_sweep(lab, str(view["clean"]), str(view["corrupt"]), str(view["answer"]), _wrong(view))


def _heads(lab: LabModel, view: StopView) -> HeadPatching:
    return head_sweep(lab, str(view["clean"]), str(view["corrupt"]), str(view["answer"]), _wrong(view))


def _band_gap(found: int, bands: list, chosen: int) -> int:
    """Layers from `found` to the nearest layer of a band other than the chosen one (the answer's margin)."""
    others = [layer for at, (first, last) in enumerate(bands, start=1) if at != chosen
              for layer in range(int(first), int(last) + 1)]
    return min(abs(found - layer) for layer in others) if others else 0


@measure("lens_commitment_band", answers="choice", model=SMOLLM2_NAME, reads=LENS_VIEW, args=(BANDS,))
def lens_commitment_band(lab: LabModel, view: StopView, args: Mapping) -> Expected:
    """The option whose band of layers holds the lens's commitment at the text's last position: the first layer
    from which the model's own next token stays the top token of every later layer. The gap: layers from it to the
    nearest band of another option."""
    # the last position's column alone; row l of the lens is the output of block l (row 0: the embeddings)
    layer = lens_column(lab, lab.residual_stream(str(view["lens_text"])).hidden).commitment
    bands = [lambda found, band=band: band[0] <= found <= band[1] for band in args["bands"]]
    answer = option_of(bands, layer, str(layer))
    return choice(answer, Phrase.of("lessons.measured_commitment", layer=layer),
                  float(_band_gap(layer, args["bands"], int(answer))))


@measure("lens_top_probability", bounds=True, model=SMOLLM2_NAME, reads=LENS_VIEW)
def lens_top_probability(lab: LabModel, view: StopView, args: Mapping) -> float:
    """The probability of the model's own next token after the stop's text (the lens's last row)."""
    return float(lens_column(lab, lab.residual_stream(str(view["lens_text"])).hidden).top_probs[-1, 0])


@measure("lens_rank_at_layer", bounds=True, model=SMOLLM2_NAME, reads=LENS_VIEW,
         args=(whole("layer", "a layer number (1-based)"),))
def lens_rank_at_layer(lab: LabModel, view: StopView, args: Mapping) -> float:
    """The rank (1 = top) of the model's own next token in the lens's row of args.layer, at the last position."""
    stream = lab.residual_stream(str(view["lens_text"]))
    own = int(lab.unembed(stream.hidden[-1, -1]).argmax())  # the model's own next token: the last row's top
    column = lens_column(lab, stream.hidden, token_id=own)
    layer = int(args["layer"])
    if not 1 <= layer < len(column.token_ranks):
        raise MeasureError(Phrase.of("lessons.no_option_fits", value=str(layer)))
    return float(column.token_ranks[layer])


@measure("patching_position", answers="choice", model=SMOLLM2_NAME, reads=PATCHING_VIEW,
         args=(numbers("option_positions", "one token position (1-based) of the clean prompt per option",
                       per_option=True),
               whole("from_layer", "a layer number (1-based)"), whole("to_layer", "a layer number (1-based)")))
def patching_position(lab: LabModel, view: StopView, args: Mapping) -> Expected:
    """The option whose token position, patched from the clean run into the corrupted one, brings p(answer) back
    most on average over layers from_layer … to_layer; the gap: its mean p(answer) over the next option's."""
    found = _residual(lab, view)
    length = found.patched_probs.shape[1]
    positions = [int(p) for p in args["option_positions"]]
    first, last = int(args["from_layer"]), int(args["to_layer"])
    if not all(1 <= p <= length for p in positions) or not 1 <= first <= last <= found.patched_probs.shape[0]:
        raise MeasureError(Phrase.of("lessons.no_option_fits", value=f"{positions}, {first}–{last}"))
    means = [float(found.patched_probs[first - 1:last, p - 1].mean()) for p in positions]
    best = int(np.argmax(means))
    ordered = sorted(means, reverse=True)
    return choice(str(best + 1), Phrase.of("lessons.measured_patched", token=found.clean_tokens[positions[best] - 1].strip(),
                                    probability=f"{means[best]:.2f}"), ordered[0] - ordered[1])


@measure("patching_recovered", bounds=True, model=SMOLLM2_NAME, reads=PATCHING_VIEW)
def patching_recovered(lab: LabModel, view: StopView, args: Mapping) -> float:
    """p(answer) after the clean prompt minus after the corrupted one: what patching has to bring back."""
    found = _residual(lab, view)
    return float(found.clean_prob - found.corrupt_prob)


@measure("patching_head_band", answers="choice", model=SMOLLM2_NAME, reads=PATCHING_VIEW, args=(BANDS,))
def patching_head_band(lab: LabModel, view: StopView, args: Mapping) -> Expected:
    """The option whose band of layers holds the head whose output at the last position, taken from the clean run,
    brings p(answer) back most (a band, not one of 270 heads: the lesson bar offers no 30 × 9 grid); the gap: that
    head's p(answer) over the best head's outside the band."""
    probs = _heads(lab, view).patched_probs  # (L, H)
    layer, head = (int(i) for i in np.unravel_index(int(probs.argmax()), probs.shape))
    bands = [lambda found, band=band: band[0] <= found <= band[1] for band in args["bands"]]
    answer = option_of(bands, layer + 1, str(layer + 1))
    first, last = args["bands"][int(answer) - 1]
    outside = [float(probs[at].max()) for at in range(probs.shape[0]) if not first <= at + 1 <= last]
    return choice(answer, Phrase.of("lessons.measured_head_patched", head=f"L{layer + 1} H{head + 1}",
                             probability=f"{probs[layer, head]:.2f}"),
                  float(probs.max()) - max(outside) if outside else None)


@measure("sink_heads_logit_share", bounds=True, model=SMOLLM2_NAME, reads=PATCHING_VIEW,
         args=(whole("heads", "how many heads (those with the most weight on the first token)"),))
def sink_heads_logit_share(lab: LabModel, view: StopView, args: Mapping) -> float:
    """The largest direct contribution to the predicted token's logit (after the clean prompt) of the args.heads
    heads that put the most weight on the first token, as a share of the largest contribution of any head."""
    parts = logit_attribution(lab, str(view["clean"]))
    sinks = np.argsort(-parts.attention_to_first.ravel())[:int(args["heads"])]  # flat (layer, head) indices
    largest = float(np.abs(parts.heads).max())
    return float(np.abs(parts.heads.ravel()[sinks]).max() / largest) if largest > 0 else 0.0


@measure("sink_heads_attention", bounds=True, model=SMOLLM2_NAME, reads=PATCHING_VIEW,
         args=(whole("heads", "how many heads (those with the most weight on the first token)"),))
def sink_heads_attention(lab: LabModel, view: StopView, args: Mapping) -> float:
    """The mean weight the args.heads heads with the most weight on the first token put on it (the last position
    of the clean prompt)."""
    parts = logit_attribution(lab, str(view["clean"]))
    return float(np.sort(parts.attention_to_first.ravel())[::-1][:int(args["heads"])].mean())


@measure("largest_logit_part", answers="choice", model=SMOLLM2_NAME, reads=PATCHING_VIEW)
def largest_logit_part(lab: LabModel, view: StopView, args: Mapping) -> Expected:
    """Which kind of part writes the most into the predicted token's logit after the clean prompt (direct logit
    attribution): option 1 an attention head, 2 an MLP, 3 the token embeddings. The gap: its largest contribution
    over the largest of the other two kinds, in logits."""
    parts = logit_attribution(lab, str(view["clean"]))
    largest = [float(parts.heads.max()), float(parts.mlps.max()), float(parts.embedding)]
    best = int(np.argmax(largest))
    ordered = sorted(largest, reverse=True)
    return choice(str(best + 1), Phrase.of("lessons.measured_logit_part", value=f"{largest[best]:.2f}"),
                  ordered[0] - ordered[1])

"""Greedy decoding for both model families, recording probabilities and every attention map.

Returned arrays are numpy (for viz/): L layers, h heads, S source tokens (incl. <eos>), T output steps.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import torch

from model.checkpoint import LoadedModel
from model.data import BOS_ID, EOS_ID, PAD_ID, is_punctuation, tokenize
from model.decoder_only import DecoderOnlyTranslator
from model.transformer import HeadMasks, Transformer


@dataclass
class PreparedSource:
    tokens: list[str]  # the tokens the model sees, ending in <eos>
    ids: list[int]
    unknown: list[str]  # words mapped to <unk>
    truncated_from: int | None  # original length when the input was cut to the model's limit
    punctuation: list[str] = field(default_factory=list)  # symbols left out (no model here was trained on any)


@dataclass
class DecodeResult:
    source: PreparedSource
    output_tokens: list[str]  # generated tokens, without <bos>/<eos>
    decoder_input_tokens: list[str]  # "<bos>" + outputs: the queries of the decoder's self-attention
    step_probs: np.ndarray  # (T, V) next-token distribution at each step (T = len(output) + 1 for <eos>)
    chosen_probs: np.ndarray  # (T,) probability of the token chosen at each step
    attention: dict[str, np.ndarray] = field(default_factory=dict)
    # transformer: encoder_self (L, h, S, S), decoder_self (L, h, T, T), cross (L, h, T, S), *_scores likewise
    # seq2seq with attention: alignment (T, S); without attention: nothing

    @property
    def sequence_probability(self) -> float:
        return float(np.prod(self.chosen_probs))

    @property
    def written_tokens(self) -> list[str]:
        """The token each decoder step writes, (T,): the row labels of decoder self- and cross-attention.

        Step t reads decoder_input_tokens[: t + 1] and writes the next one; the last step writes <eos> (or, when
        decoding hit its step limit, a token that was not kept: shown as "…").
        """
        last = "<eos>" if int(self.step_probs[-1].argmax()) == EOS_ID else "…"
        return self.decoder_input_tokens[1:] + [last]


def prepare_source(loaded: LoadedModel, text: str) -> PreparedSource:
    tokens = tokenize(text)
    # Punctuation that the vocabulary lacks is left out rather than read as <unk>: it is not an unknown word, and an
    # <unk> for a full stop would change the translation of a sentence the model knows.
    punctuation = [t for t in tokens if is_punctuation(t) and t not in loaded.src_vocab.stoi]
    words = [t for t in tokens if not (is_punctuation(t) and t not in loaded.src_vocab.stoi)]
    # room for <eos>; a decoder-only model's max_len holds English and French together (max_source_len: its half)
    limit = getattr(loaded.config, "max_source_len", loaded.config.max_len) - 1
    truncated_from = len(words) if len(words) > limit else None
    words = words[:limit]
    ids, unknown = loaded.src_vocab.encode(words)
    return PreparedSource(words + ["<eos>"], ids + [EOS_ID], unknown, truncated_from, punctuation)


def _max_steps(loaded: LoadedModel, source_length: int) -> int:
    # a decoder-only model's French follows its English in one sequence of max_len: <bos>, words, ⟶, French
    room = loaded.config.max_len - source_length - 1 if isinstance(loaded.model, DecoderOnlyTranslator) \
        else loaded.config.max_len - 1
    return min(room, 2 * source_length + 10)


@torch.no_grad()
def greedy_decode(loaded: LoadedModel, text: str, max_steps: int | None = None,
                  head_masks: HeadMasks | None = None) -> DecodeResult:
    """Translate one sentence; head_masks (Transformer only) switch heads off for ablation."""
    source = prepare_source(loaded, text)
    model = loaded.model
    device = next(model.parameters()).device
    src = torch.tensor([source.ids], device=device)
    steps = max_steps or _max_steps(loaded, len(source.ids))
    if isinstance(model, Transformer | DecoderOnlyTranslator):
        out_ids, probs = _greedy_transformer(model, src, steps, head_masks)
        tgt_in = torch.tensor([[BOS_ID] + out_ids], device=device)
        _, maps = model(src, tgt_in, need_weights=True, head_masks=head_masks)
        # decoder-only: decoder_self over the whole packed sequence, (L, h, N, N) with N = 1 + words + 1 + T - 1
        names = ("decoder_self", "decoder_self_scores") if isinstance(model, DecoderOnlyTranslator) else \
            ("encoder_self", "decoder_self", "cross", "encoder_self_scores", "decoder_self_scores", "cross_scores")
        attention = {name: getattr(maps, name)[:, 0].cpu().numpy() for name in names}
    else:
        out_ids, probs, alignment = _greedy_seq2seq(model, src, steps)
        attention = {} if alignment is None else {"alignment": alignment}
    chosen = [probs[t, token] for t, token in enumerate(out_ids + [EOS_ID]) if t < len(probs)]
    output_tokens = loaded.tgt_vocab.decode(out_ids)
    return DecodeResult(source, output_tokens, ["<bos>"] + loaded.tgt_vocab.decode(out_ids, strip_specials=False),
                        probs, np.array(chosen), attention)


def _next_logits(model: Transformer | DecoderOnlyTranslator, src, tgt_in, head_masks=None, memory=None):
    """Logits (B, T, V) of the next French tokens after tgt_in (B, T). memory: the Transformer's encode(src)
    (computed once per sentence); a decoder-only model reads the English again in its one causal pass."""
    if isinstance(model, DecoderOnlyTranslator):
        return model(src, tgt_in, head_masks=head_masks)[0]
    return model.decode(tgt_in, *memory, head_masks=head_masks)[0]


def _encoded(model, src, head_masks=None):
    """The Transformer's (memory, source mask) of src, once per sentence; None for a decoder-only model."""
    return None if isinstance(model, DecoderOnlyTranslator) else model.encode(src, head_masks=head_masks)[:2]


def _greedy_transformer(model: Transformer | DecoderOnlyTranslator, src, steps: int, head_masks):
    memory = _encoded(model, src, head_masks)
    out_ids: list[int] = []
    probs = []
    for _ in range(steps + 1):
        tgt_in = torch.tensor([[BOS_ID] + out_ids], device=src.device)
        logits = _next_logits(model, src, tgt_in, head_masks, memory)
        p = torch.softmax(logits[0, -1], dim=-1)
        probs.append(p.cpu().numpy())
        token = int(p.argmax())
        if token == EOS_ID or len(out_ids) >= steps:
            break
        out_ids.append(token)
    return out_ids, np.stack(probs)


def _greedy_seq2seq(model, src, steps: int):
    encoder_outputs, state, summary, mask = model.encode(src)
    keys = model.prepare_keys(encoder_outputs)
    token = torch.tensor([BOS_ID], device=src.device)
    out_ids, probs, alignments = [], [], []
    for _ in range(steps + 1):
        logits, state, alignment = model.step(token, state, encoder_outputs, keys, summary, mask)
        p = torch.softmax(logits[0], dim=-1)
        probs.append(p.cpu().numpy())
        if alignment is not None:
            alignments.append(alignment[0].cpu().numpy())
        chosen = int(p.argmax())
        if chosen == EOS_ID or len(out_ids) >= steps:
            break
        out_ids.append(chosen)
        token = torch.tensor([chosen], device=src.device)
    # alignment rows: one per decoder step; the last row is the step that produced <eos>
    return out_ids, np.stack(probs), (np.stack(alignments) if alignments else None)


@torch.no_grad()
def greedy_decode_batch(model, src: torch.Tensor, max_steps: int) -> list[list[int]]:
    """Batched greedy decoding for evaluation: src (B, S) padded -> output ids per sentence (no <eos>)."""
    batch = src.size(0)
    finished = torch.zeros(batch, dtype=torch.bool, device=src.device)
    generated = torch.full((batch, 1), BOS_ID, dtype=torch.long, device=src.device)
    if isinstance(model, Transformer | DecoderOnlyTranslator):
        memory = _encoded(model, src)
        for _ in range(max_steps):
            logits = _next_logits(model, src, generated, memory=memory)
            nxt = logits[:, -1].argmax(-1).masked_fill(finished, PAD_ID)
            generated = torch.cat([generated, nxt[:, None]], dim=1)
            finished |= nxt == EOS_ID
            if finished.all():
                break
    else:
        encoder_outputs, state, summary, mask = model.encode(src)
        keys = model.prepare_keys(encoder_outputs)
        token = generated[:, 0]
        for _ in range(max_steps):
            logits, state, _ = model.step(token, state, encoder_outputs, keys, summary, mask)
            token = logits.argmax(-1).masked_fill(finished, PAD_ID)
            generated = torch.cat([generated, token[:, None]], dim=1)
            finished |= token == EOS_ID
            if finished.all():
                break
    outputs = []
    for row in generated[:, 1:].tolist():
        outputs.append(row[: row.index(EOS_ID)] if EOS_ID in row else [t for t in row if t != PAD_ID])
    return outputs

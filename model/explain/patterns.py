"""Head-pattern labels (Clark et al. 2019, §3; Kovaleva et al. 2019, §4.1): previous, next, self, sink, alignment,
broad or block, from a head's maps over a set of sentences; see PATTERN_THRESHOLDS. For a causal language model
without special tokens, "first" (the attention sink on the first token, Xiao et al. 2023) takes the place of the
special-token sink, and "induction" (Olsson et al. 2022) is read from a repeated random sequence.

Shapes: L layers, h heads, T_q queries, T_k keys.
"""
from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import torch

from model.data import BOS_ID, EOS_ID
from model.explain.fixed_sets import ENCODER_SENTENCES, LANGUAGE_MODEL_TEXTS
from model.explain.induction import induction_analysis
from model.explain.kinds import ATTENTION_KINDS, SELF_KINDS, SPECIAL_TOKENS
from model.metrics import entropy


PATTERNS = ("previous", "next", "self", "sink", "first", "alignment", "induction", "broad", "block")
# A head gets the first positional label whose share reaches its threshold (largest share first when several
# do); otherwise, for cross-attention, "alignment" (monotone) when the key each row weighs most moves forward with
# the row (the correlation of the row's position with its top key's position reaches `alignment`) and the rows put
# on average at least `alignment_peak` on that key: Bahdanau et al. 2015's Fig. 3 diagonal, read off a Transformer;
# otherwise "broad" when its rows' normalised entropy reaches the broad threshold; otherwise "block"
# (block/heterogeneous). Shares are the mean over query rows (and sentences) of the weight on that key:
# previous j = i−1, next j = i+1, self j = i, sink = any special-token key. Previous/next/self only for
# self-attention (query and key positions are the same sentence). Normalised entropy = entropy / ln(visible keys).
# A causal language model whose text has no special token (SmolLM2) is labelled with sink_on="first": the sink share
# is the weight on key 0 (queries ≥ 1: query 0 has no other key) and its label "first"; and, where induction scores
# are given (model.explain.induction on a repeated random sequence), a head whose score reaches `induction` is
# labelled "induction" before any other label: on ordinary text, with nothing to copy, such a head often rests on
# the sink, and what sets it apart is what it does when there is something to copy.
PATTERN_THRESHOLDS = {"previous": 0.5, "next": 0.5, "self": 0.5, "sink": 0.5, "first": 0.5, "alignment": 0.9,
                      "alignment_peak": 0.9, "induction": 0.5, "broad": 0.75}


@dataclass
class PatternScores:
    """Per-head shares (L, h) averaged over sentences, and the label they give."""

    previous: np.ndarray
    next: np.ndarray
    self: np.ndarray
    sink: np.ndarray
    entropy: np.ndarray  # normalised, 0 (one key) .. 1 (uniform over the visible keys)
    labels: np.ndarray = field(default=None)  # (L, h) of PATTERNS ids
    monotone: np.ndarray = field(default=None)  # cross-attention: correlation of row position and top key position
    peak: np.ndarray = field(default=None)  # mean over rows of the largest weight
    induction: np.ndarray | None = None  # (L, h) induction scores, where measured (a causal language model)
    sink_on: str = "special"  # what `sink` measures: weight on special tokens, or on the "first" token

    @property
    def sink_label(self) -> str:
        """The label (PATTERNS) of a head whose sink share wins: "sink" or "first"."""
        return "first" if self.sink_on == "first" else "sink"


def monotone_alignment(weights: np.ndarray) -> np.ndarray:
    """weights (..., T_q, T_k) -> (...): the correlation of each query row's position with the position of the key
    it weighs most (1: the top key moves forward with every row, a diagonal alignment; NaN under 3 rows or a
    constant top key)."""
    t_q = weights.shape[-2]
    if t_q < 3:
        return np.full(weights.shape[:-2], np.nan)
    top = weights.argmax(-1).astype(np.float64)  # (..., T_q)
    rows = np.arange(t_q, dtype=np.float64)
    top_c, rows_c = top - top.mean(-1, keepdims=True), rows - rows.mean()
    spread = np.sqrt((top_c ** 2).sum(-1) * (rows_c ** 2).sum())
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(spread > 0, (top_c * rows_c).sum(-1) / spread, np.nan)


def _pattern_shares(weights: np.ndarray, key_tokens: Sequence[str], self_attention: bool,
                    sink_on: str = "special") -> dict[str, np.ndarray]:
    """weights (L, h, T_q, T_k) of one sentence -> shares (L, h) (NaN where the pattern cannot be measured)."""
    t_q, t_k = weights.shape[-2:]
    i, j = np.arange(t_q)[:, None], np.arange(t_k)[None, :]
    visible = (weights > 0).sum(-1) if not self_attention else None
    shares = {}
    nan = np.full(weights.shape[:2], np.nan)
    if self_attention:
        causal = np.allclose(np.triu(weights, 1), 0)
        visible = np.broadcast_to((np.arange(t_q) + 1) if causal else np.full(t_q, t_k), weights.shape[:-1])
        # previous: queries i ≥ 1 (the first has no previous token); next: queries that have a visible next key
        shares["previous"] = (weights * (j == i - 1)).sum(-1)[..., 1:].mean(-1) if t_q > 1 else nan
        if causal:
            shares["next"] = np.zeros(weights.shape[:2])  # a causal head cannot look ahead
        else:
            shares["next"] = (weights * (j == i + 1)).sum(-1)[..., :-1].mean(-1) if t_q > 1 else nan
        shares["self"] = (weights * (i == j)).sum(-1).mean(-1)
    else:
        shares["previous"] = shares["next"] = shares["self"] = nan
    shares["monotone"] = nan if self_attention else monotone_alignment(weights)
    shares["peak"] = weights.max(-1).mean(-1)
    if sink_on == "first":  # key 0, from queries ≥ 1 (query 0 sees only itself)
        shares["sink"] = weights[..., 1:, 0].mean(-1) if t_q > 1 else nan
    else:
        special = np.array([t in SPECIAL_TOKENS for t in key_tokens])
        shares["sink"] = weights[..., special].sum(-1).mean(-1)
    rows = visible > 1  # a row with one visible key has no choice to measure
    normalised = np.where(rows, entropy(weights) / np.log(np.maximum(visible, 2)), np.nan)  # (L, h, T_q)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        shares["entropy"] = np.nanmean(normalised, -1) if rows.any() else nan
    return shares


def label_heads(maps: Sequence[tuple[np.ndarray, Sequence[str]]], self_attention: bool,
                thresholds: dict[str, float] = PATTERN_THRESHOLDS, sink_on: str = "special",
                induction: np.ndarray | None = None) -> PatternScores:
    """maps: (weights (L, h, T_q, T_k), key tokens) for each sentence -> PatternScores with labels (L, h).

    sink_on: "special" (weight on special-token keys, label "sink") or "first" (weight on key 0, label "first");
    induction: (L, h) induction scores, or None where not measured (module comment above PATTERN_THRESHOLDS)."""
    per_sentence = [_pattern_shares(np.asarray(w, dtype=np.float64), keys, self_attention, sink_on)
                    for w, keys in maps]
    sink_label = "first" if sink_on == "first" else "sink"
    with warnings.catch_warnings():  # all-NaN (e.g. "previous" of cross-attention) stays NaN, silently
        warnings.simplefilter("ignore", RuntimeWarning)
        mean = {name: np.nanmean(np.stack([s[name] for s in per_sentence]), 0) for name in per_sentence[0]}
    labels = np.empty(mean["sink"].shape, dtype=object)
    for index in np.ndindex(labels.shape):
        positional = {name: mean[name][index] for name in ("previous", "next", "self")}
        positional[sink_label] = mean["sink"][index]
        reached = {name: share for name, share in positional.items()
                   if np.isfinite(share) and share >= thresholds[name]}
        if induction is not None and induction[index] >= thresholds["induction"]:
            labels[index] = "induction"
        elif reached:
            labels[index] = max(reached, key=reached.get)
        elif (np.isfinite(mean["monotone"][index]) and mean["monotone"][index] >= thresholds["alignment"]
              and mean["peak"][index] >= thresholds["alignment_peak"]):
            labels[index] = "alignment"
        elif np.isfinite(mean["entropy"][index]) and mean["entropy"][index] >= thresholds["broad"]:
            labels[index] = "broad"
        else:
            labels[index] = "block"
    return PatternScores(mean["previous"], mean["next"], mean["self"], mean["sink"], mean["entropy"],
                         labels.astype(str), mean["monotone"], mean["peak"],
                         None if induction is None else np.asarray(induction, dtype=np.float64), sink_on)


@torch.no_grad()
def transformer_head_labels(model, sentences: Sequence[tuple[list[int], list[int], list[str], list[str]]]
                            ) -> dict[str, PatternScores]:
    """Label every head of the encoder-decoder Transformer from its maps over a set of sentences.

    sentences: (source ids ending in <eos>, decoder input ids starting with <bos>, source tokens, decoder input
    tokens), teacher-forced one at a time (no padding in the maps). -> {kind: PatternScores with labels (L, h)}.
    """
    device = next(model.parameters()).device
    maps: dict[str, list] = {kind: [] for kind in ATTENTION_KINDS}
    for src_ids, tgt_ids, src_tokens, tgt_tokens in sentences:
        _, attention = model(torch.tensor([src_ids], device=device), torch.tensor([tgt_ids], device=device),
                             need_weights=True)
        maps["encoder_self"].append((attention.encoder_self[:, 0].cpu().numpy(), src_tokens))
        maps["decoder_self"].append((attention.decoder_self[:, 0].cpu().numpy(), tgt_tokens))
        maps["cross"].append((attention.cross[:, 0].cpu().numpy(), src_tokens))
    return {kind: label_heads(maps[kind], self_attention=kind in SELF_KINDS) for kind in ATTENTION_KINDS}


def labelling_sentences(loaded, pairs: Sequence[tuple[list[str], list[str]]]):
    """Held-out pairs as transformer_head_labels wants them, with the model's vocabularies."""
    out = []
    for src, tgt in pairs:
        src_ids, tgt_ids = loaded.src_vocab.encode(src)[0] + [EOS_ID], [BOS_ID] + loaded.tgt_vocab.encode(tgt)[0]
        out.append((src_ids, tgt_ids, list(src) + ["<eos>"], ["<bos>"] + list(tgt)))
    return out


@torch.no_grad()
def encoder_head_labels(pretrained, sentences: Sequence[str] = ENCODER_SENTENCES) -> PatternScores:
    """Label every head of a BERT encoder from its maps over the fixed sentences, one at a time (no padding)."""
    maps = []
    for sentence in sentences:
        encoded = pretrained.encode(sentence)
        maps.append((pretrained.run(encoded).weights[:, 0].cpu().numpy(), encoded.tokens))
    return label_heads(maps, self_attention=True)


INDUCTION_LENGTH = 40  # random tokens repeated twice to read the induction scores (Olsson et al. 2022)


@torch.no_grad()
def language_model_head_labels(loaded, texts: Sequence[str] = LANGUAGE_MODEL_TEXTS, length: int = INDUCTION_LENGTH,
                               seed: int = 0) -> PatternScores:
    """Label every head of a causal language model (a model.llama.LoadedLlama) from its maps over the fixed texts,
    one at a time, with the first token as the sink and induction scores from `length` random tokens said twice."""
    maps = []
    for text in texts:
        ids = loaded.encode(text)
        maps.append((loaded.run(ids).weights[:, 0].cpu().numpy(), loaded.token_texts(ids)))
    induction = induction_analysis(loaded.model, loaded.config.vocab_size, length, seed).scores  # (L, h)
    return label_heads(maps, self_attention=True, sink_on="first", induction=induction)

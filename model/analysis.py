"""Beyond raw attention weights: rollout, value-weighted norms, head importance and head-pattern labels.

Pure functions over captured attention maps and model weights (no Streamlit). Shapes: L layers, h heads,
T_q queries, T_k keys, d model width, d_k = d / h. Definitions are fixed so that numbers can be checked:

- Attention rollout (Abnar & Zuidema 2020, §3): Ā_l = mean_h A_l^h, Â_l = 0.5·Ā_l + 0.5·I, R_1 = Â_1,
  R_l = Â_l·R_{l−1}. Self-attention only (encoder self, decoder masked self); cross-attention is out of scope.
- Value-weighted norms (Kobayashi et al. 2020, eq. 6-8): f_h(x_j) = (x_j W_V^h + b_V^h) W_O^h and
  N^h[i, j] = ‖α^h_ij · f_h(x_j)‖₂, with x_j the input of the attention sublayer at key j.
- Head importance (Michel et al. 2019, §4): switch one head off on a fixed held-out set; the drop in exact match
  and the rise in teacher-forced loss. The gradient estimate I_h = |∂L/∂ξ_h| at ξ = 1 (§4.1, eq. 2).
- Head-pattern labels (Clark et al. 2019, §3; Kovaleva et al. 2019, §4.1): see PATTERN_THRESHOLDS.

Any model built on model.attention.MultiHeadAttention works: weights are read with `projection()` and the
sublayer inputs x_j are captured with forward pre-hooks (`capture_attention_inputs`), so nothing here depends on
how a module stores W_q/W_k/W_v or on the model around it.
"""
from __future__ import annotations

import contextlib
import threading
import warnings
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

import numpy as np
import torch
import torch.nn.functional as F

from model.attention import MultiHeadAttention

SPECIAL_TOKENS = ("<bos>", "<eos>", "[CLS]", "[SEP]")  # the keys an "attention sink" sits on
SELF_KINDS = ("encoder_self", "decoder_self")  # the kinds rollout is defined for
ATTENTION_KINDS = ("encoder_self", "decoder_self", "cross")


# ---------------------------------------------------------------- rollout

def attention_rollout(weights: np.ndarray) -> np.ndarray:
    """weights (L, h, T, T) of one self-attention stack -> R (L, T, T), the rolled-out matrix after each layer.

    R[l, i, j]: how much position i after layer l+1 draws from input token j. Rows sum to 1 wherever the
    attention rows did; a causal (lower-triangular) stack stays lower-triangular.
    """
    weights = np.asarray(weights, dtype=np.float64)
    layers, _, length, width = weights.shape
    if length != width:
        raise ValueError(f"rollout needs self-attention (T_q == T_k), got {length} queries and {width} keys")
    mixed = 0.5 * weights.mean(axis=1) + 0.5 * np.eye(length)  # (L, T, T): Â_l, the residual added
    rolled = np.empty_like(mixed)
    rolled[0] = mixed[0]
    for layer in range(1, layers):
        rolled[layer] = mixed[layer] @ rolled[layer - 1]
    return rolled


# ---------------------------------------------------------------- value-weighted norms

def transformed_value_norms(value_input: torch.Tensor, value_projection: tuple[torch.Tensor, torch.Tensor | None],
                            output_projection: tuple[torch.Tensor, torch.Tensor | None],
                            num_heads: int) -> torch.Tensor:
    """‖f_h(x_j)‖₂ for every head and key: value_input (..., T_k, d) -> (..., h, T_k).

    The projections are (weight, bias) in nn.Linear's layout (y = x·Wᵀ + b), as MultiHeadAttention.projection
    returns them. W_O^h is the block of W_O's input columns that head h's output occupies in the concatenation;
    the output bias is added once after all heads, so it belongs to no head.
    """
    w_v, b_v = value_projection
    w_o, _ = output_projection
    d_model = w_o.shape[0]
    d_k = w_v.shape[0] // num_heads
    values = F.linear(value_input, w_v, b_v)  # (..., T_k, h·d_k)
    values = values.unflatten(-1, (num_heads, d_k)).transpose(-3, -2)  # (..., h, T_k, d_k)
    w_o_heads = w_o.view(d_model, num_heads, d_k).permute(1, 2, 0)  # (h, d_k, d): W_O^h in x·W layout
    transformed = values @ w_o_heads  # (..., h, T_k, d): f_h(x_j)
    return transformed.norm(dim=-1)


def value_weighted_norms(weights: torch.Tensor | np.ndarray, value_input: torch.Tensor,
                         value_projection, output_projection, num_heads: int) -> np.ndarray:
    """N^h[i, j] = ‖α^h_ij · f_h(x_j)‖₂ = α^h_ij · ‖f_h(x_j)‖₂ (α ≥ 0).

    weights (..., h, T_q, T_k), value_input (..., T_k, d) -> (..., h, T_q, T_k) numpy.
    """
    with torch.no_grad():
        norms = transformed_value_norms(value_input, value_projection, output_projection, num_heads).cpu()
        weights = torch.as_tensor(weights.cpu() if isinstance(weights, torch.Tensor) else np.asarray(weights),
                                  dtype=norms.dtype)
        return (weights * norms.unsqueeze(-2)).numpy()  # (..., h, 1, T_k) broadcast over queries


def module_value_norms(module: MultiHeadAttention, weights, value_input: torch.Tensor) -> np.ndarray:
    """value_weighted_norms for one MultiHeadAttention, its weights read through its public projection()."""
    return value_weighted_norms(weights, value_input, module.projection("v"), module.projection("o"),
                                module.num_heads)


@contextlib.contextmanager
def capture_attention_inputs(modules: dict[str, MultiHeadAttention]) -> Iterator[dict[str, list[torch.Tensor]]]:
    """While open, records the value input (B, T_k, d) of every call of each named module, in call order.

    Uses public forward pre-hooks, so it works on any model built on MultiHeadAttention without changing it.
    Only calls made by this thread are recorded: a shipped model is shared by every session's script thread,
    and another session's forward pass while the hooks are on must neither be recorded nor be affected.
    """
    captured: dict[str, list[torch.Tensor]] = {name: [] for name in modules}
    handles = []
    owner = threading.get_ident()
    for name, module in modules.items():
        def hook(_module, args, kwargs, name=name):
            if threading.get_ident() != owner:
                return
            value = args[2] if len(args) > 2 else kwargs["value"]  # forward(query, key, value, mask, ...)
            captured[name].append(value.detach())
        handles.append(module.register_forward_pre_hook(hook, with_kwargs=True))
    try:
        yield captured
    finally:
        for handle in handles:
            handle.remove()


def transformer_attention_modules(model) -> dict[str, MultiHeadAttention]:
    """'encoder_self.0', 'decoder_self.1', 'cross.0', ... -> the encoder-decoder Transformer's attention modules."""
    modules = {f"encoder_self.{i}": layer.self_attn for i, layer in enumerate(model.encoder_layers)}
    for i, layer in enumerate(model.decoder_layers):
        modules[f"decoder_self.{i}"] = layer.self_attn
        modules[f"cross.{i}"] = layer.cross_attn
    return modules


@torch.no_grad()
def stack_value_norms(modules: Sequence[MultiHeadAttention], weights: torch.Tensor | np.ndarray,
                      value_inputs: Sequence[torch.Tensor]) -> np.ndarray:
    """One attention stack: modules[l] with weights (L, B, h, T_q, T_k) and value_inputs[l] (B, T_k, d)
    -> N (L, B, h, T_q, T_k). The entry point for any model on MultiHeadAttention (e.g. a BERT encoder: its
    layers' attention modules, the maps of one forward pass, and the hidden states that entered each layer)."""
    return np.stack([module_value_norms(module, weights[l], value_inputs[l]) for l, module in enumerate(modules)])


@torch.no_grad()
def transformer_explanations(model, src: torch.Tensor, tgt_in: torch.Tensor) -> dict[str, np.ndarray]:
    """One teacher-forced pass of the encoder-decoder Transformer (eval mode) -> numpy arrays:

    <kind> (L, B, h, T_q, T_k) raw weights, value_norms_<kind> likewise, for kind in encoder_self, decoder_self,
    cross; rollout_<kind> (L, B, T, T) for the two self-attention kinds.
    """
    modules = transformer_attention_modules(model)
    with capture_attention_inputs(modules) as captured:
        _, maps = model(src, tgt_in, need_weights=True)
    out: dict[str, np.ndarray] = {}
    for kind in ATTENTION_KINDS:
        weights = getattr(maps, kind)  # (L, B, h, T_q, T_k)
        layers = weights.shape[0]
        kind_modules = [modules[f"{kind}.{l}"] for l in range(layers)]
        out[kind] = weights.cpu().numpy()
        out[f"value_norms_{kind}"] = stack_value_norms(kind_modules, weights,
                                                       [captured[f"{kind}.{l}"][0] for l in range(layers)])
        if kind in SELF_KINDS:
            out[f"rollout_{kind}"] = np.stack([attention_rollout(out[kind][:, b]) for b in range(src.size(0))], 1)
    return out


def analysis_arrays(model, src_ids: Sequence[int], tgt_in_ids: Sequence[int]) -> dict[str, np.ndarray]:
    """For `python -m model.inspect --out FILE.npz`: one sentence (ids without padding) through a Transformer.

    rollout_encoder_self, rollout_decoder_self: (L, T, T), the rolled-out matrix after each layer;
    value_norms_encoder_self, value_norms_decoder_self, value_norms_cross: (L, h, T_q, T_k).
    """
    device = next(model.parameters()).device
    arrays = transformer_explanations(model, torch.tensor([list(src_ids)], device=device),
                                      torch.tensor([list(tgt_in_ids)], device=device))
    out = {f"rollout_{kind}": arrays[f"rollout_{kind}"][:, 0] for kind in SELF_KINDS}
    out.update({f"value_norms_{kind}": arrays[f"value_norms_{kind}"][:, 0] for kind in ATTENTION_KINDS})
    return out


def special_token_survival(weights: np.ndarray, norms: np.ndarray, key_tokens: Sequence[str],
                           special: Sequence[str] = SPECIAL_TOKENS) -> dict[str, np.ndarray]:
    """Per head, how much of the weight on special-token keys survives in the norms.

    weights, norms (..., h, T_q, T_k) -> each (..., h): weight_share = share of α on special keys (summed over
    queries), norm_share = the same share of N, survival = norm_share / weight_share (NaN without special weight).
    A survival well below 1 is a head whose "attention" to <eos>/[SEP] moves almost nothing (Kobayashi et al.
    2020, §5.1).
    """
    is_special = np.array([t in special for t in key_tokens])
    weight_share = weights[..., is_special].sum((-1, -2)) / np.maximum(weights.sum((-1, -2)), 1e-12)
    norm_share = norms[..., is_special].sum((-1, -2)) / np.maximum(norms.sum((-1, -2)), 1e-12)
    with np.errstate(invalid="ignore", divide="ignore"):
        survival = np.where(weight_share > 1e-9, norm_share / weight_share, np.nan)
    return {"weight_share": weight_share, "norm_share": norm_share, "survival": survival}


# ---------------------------------------------------------------- head-pattern labels

PATTERNS = ("previous", "next", "self", "sink", "alignment", "broad", "block")
# A head gets the first positional label whose share reaches its threshold (largest share first when several
# do); otherwise, for cross-attention, "alignment" (monotone) when the key each row weighs most moves forward with
# the row (the correlation of the row's position with its top key's position reaches `alignment`) and the rows put
# on average at least `alignment_peak` on that key: Bahdanau et al. 2015's Fig. 3 diagonal, read off a Transformer;
# otherwise "broad" when its rows' normalised entropy reaches the broad threshold; otherwise "block"
# (block/heterogeneous). Shares are the mean over query rows (and sentences) of the weight on that key:
# previous j = i−1, next j = i+1, self j = i, sink = any special-token key. Previous/next/self only for
# self-attention (query and key positions are the same sentence). Normalised entropy = entropy / ln(visible keys).
PATTERN_THRESHOLDS = {"previous": 0.5, "next": 0.5, "self": 0.5, "sink": 0.5, "alignment": 0.9,
                      "alignment_peak": 0.9, "broad": 0.75}


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


def _pattern_shares(weights: np.ndarray, key_tokens: Sequence[str], self_attention: bool) -> dict[str, np.ndarray]:
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
    special = np.array([t in SPECIAL_TOKENS for t in key_tokens])
    shares["sink"] = weights[..., special].sum(-1).mean(-1)
    p = np.clip(weights, 1e-12, 1.0)
    entropy = -(weights * np.log(p)).sum(-1)  # (L, h, T_q)
    rows = visible > 1  # a row with one visible key has no choice to measure
    normalised = np.where(rows, entropy / np.log(np.maximum(visible, 2)), np.nan)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        shares["entropy"] = np.nanmean(normalised, -1) if rows.any() else nan
    return shares


def label_heads(maps: Sequence[tuple[np.ndarray, Sequence[str]]], self_attention: bool,
                thresholds: dict[str, float] = PATTERN_THRESHOLDS) -> PatternScores:
    """maps: (weights (L, h, T_q, T_k), key tokens) for each sentence -> PatternScores with labels (L, h)."""
    per_sentence = [_pattern_shares(np.asarray(w, dtype=np.float64), keys, self_attention) for w, keys in maps]
    with warnings.catch_warnings():  # all-NaN (e.g. "previous" of cross-attention) stays NaN, silently
        warnings.simplefilter("ignore", RuntimeWarning)
        mean = {name: np.nanmean(np.stack([s[name] for s in per_sentence]), 0) for name in per_sentence[0]}
    labels = np.empty(mean["sink"].shape, dtype=object)
    for index in np.ndindex(labels.shape):
        positional = {name: mean[name][index] for name in ("previous", "next", "self", "sink")}
        reached = {name: share for name, share in positional.items()
                   if np.isfinite(share) and share >= thresholds[name]}
        if reached:
            labels[index] = max(reached, key=reached.get)
        elif (np.isfinite(mean["monotone"][index]) and mean["monotone"][index] >= thresholds["alignment"]
              and mean["peak"][index] >= thresholds["alignment_peak"]):
            labels[index] = "alignment"
        elif np.isfinite(mean["entropy"][index]) and mean["entropy"][index] >= thresholds["broad"]:
            labels[index] = "broad"
        else:
            labels[index] = "block"
    return PatternScores(mean["previous"], mean["next"], mean["self"], mean["sink"], mean["entropy"],
                         labels.astype(str), mean["monotone"], mean["peak"])


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
    from model.data import BOS_ID, EOS_ID

    out = []
    for src, tgt in pairs:
        src_ids, tgt_ids = loaded.src_vocab.encode(src)[0] + [EOS_ID], [BOS_ID] + loaded.tgt_vocab.encode(tgt)[0]
        out.append((src_ids, tgt_ids, list(src) + ["<eos>"], ["<bos>"] + list(tgt)))
    return out


# ---------------------------------------------------------------- head importance

@dataclass
class EvaluationSet:
    """A fixed held-out set as length-bucketed batches: each (src (B, S), decoder input (B, T), target (B, T))."""

    batches: list[tuple[torch.Tensor, torch.Tensor, torch.Tensor]]
    sentences: int


def evaluation_set(loaded, pairs: Sequence[tuple[list[str], list[str]]], batch_size: int = 128) -> EvaluationSet:
    """Encode held-out (source words, target words) pairs with the model's own vocabularies.

    Sorted by length into batches, so that padding (computed and thrown away) stays small.
    """
    from model.data import Dataset
    from model.train import pad_batch

    data = Dataset(loaded.task, loaded.src_vocab, loaded.tgt_vocab)
    device = next(loaded.model.parameters()).device
    ordered = sorted(pairs, key=lambda pair: (len(pair[0]), len(pair[1])))
    batches = [pad_batch(ordered[i:i + batch_size], data, device) for i in range(0, len(ordered), batch_size)]
    return EvaluationSet(batches, len(pairs))


def held_out_pairs(loaded, count: int = 300) -> list[tuple[list[str], list[str]]]:
    """The first `count` sentences of the model's test split: the held-out set training validates on (eval_size)."""
    from model.data import make_dataset

    train_config = loaded.meta.get("train_config", {})
    data = make_dataset(loaded.task, seed=train_config.get("seed", 0),
                        **({"train_size": train_config["train_size"]} if "train_size" in train_config else {}))
    return data.splits["test"][:count]


def switched_off_masks(num_layers: int, num_heads: int, switched_off: Sequence[tuple[str, int, int]] = (),
                       device: torch.device | str | None = None):
    """HeadMasks with the given (kind, layer, head) heads at 0 and every other head at 1."""
    from model.transformer import HeadMasks

    masks = {kind: torch.ones(num_layers, num_heads, device=device) for kind in ATTENTION_KINDS}
    for kind, layer, head in switched_off:
        masks[kind][layer, head] = 0.0
    return HeadMasks(**masks)


def _sequence_scores(logits: torch.Tensor, tgt_out: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """logits (B, T, V), target (B, T) -> summed loss, target-token count, exact matches (B,) of bool.

    A sentence is an exact match of greedy decoding exactly when the teacher-forced argmax is the reference
    token at every position, <eos> included: greedy decoding then feeds itself the reference prefix at every
    step. So one teacher-forced pass gives both numbers, without decoding step by step (tests check the two
    agree with model.decode.greedy_decode_batch).
    """
    from model.data import PAD_ID

    real = tgt_out != PAD_ID
    loss = F.cross_entropy(logits.flatten(0, 1), tgt_out.flatten(), ignore_index=PAD_ID, reduction="sum")
    correct = (logits.argmax(-1) == tgt_out) | ~real
    return loss, real.sum(), correct.all(-1)


@torch.no_grad()
def quality(model, evaluation: EvaluationSet, head_masks=None, memories=None) -> dict[str, float]:
    """Teacher-forced loss (mean per target token) and greedy exact match on the evaluation set.

    memories: the encoder outputs of each batch with every encoder head on (encoder_memories), reused when
    head_masks leave the encoder alone.
    """
    total_loss, tokens, matches = 0.0, 0, 0
    for n, (src, tgt_in, tgt_out) in enumerate(evaluation.batches):
        if memories is not None:
            memory, src_mask = memories[n]
        else:
            memory, src_mask, _ = model.encode(src, head_masks=head_masks)
        logits, _, _ = model.decode(tgt_in, memory, src_mask, head_masks=head_masks)
        loss, count, exact = _sequence_scores(logits, tgt_out)
        total_loss, tokens, matches = total_loss + float(loss), tokens + int(count), matches + int(exact.sum())
    return {"loss": total_loss / max(tokens, 1), "exact_match": matches / max(evaluation.sentences, 1)}


@torch.no_grad()
def encoder_memories(model, evaluation: EvaluationSet) -> list[tuple[torch.Tensor, torch.Tensor]]:
    return [model.encode(src)[:2] for src, _, _ in evaluation.batches]


@dataclass
class HeadImportance:
    """Ablation and gradient importance of every head of an encoder-decoder Transformer."""

    heads: list[tuple[str, int, int]]  # (kind, layer, head), in ATTENTION_KINDS × layers × heads order
    baseline: dict[str, float]  # quality with every head on
    exact_match_drop: np.ndarray  # (N,) baseline exact match − exact match with that head off
    loss_rise: np.ndarray  # (N,) loss with that head off − baseline loss
    gradient: np.ndarray  # (N,) |∂L/∂ξ_h| at ξ = 1
    sentences: int

    def order(self) -> list[int]:
        """Head indices from least to most important: exact-match drop, then loss rise."""
        return sorted(range(len(self.heads)), key=lambda n: (self.exact_match_drop[n], self.loss_rise[n]))

    def spearman(self) -> float:
        """Rank correlation between the gradient estimate and the ablation loss rise."""
        return spearman(self.gradient, self.loss_rise)


def spearman(a: np.ndarray, b: np.ndarray) -> float:
    """Spearman's ρ: Pearson correlation of the ranks (ties get their mean rank)."""
    def ranks(x):
        x = np.asarray(x, dtype=float)
        order = np.argsort(x, kind="stable")
        r = np.empty(len(x))
        r[order] = np.arange(len(x))
        for value in np.unique(x):  # ties: mean rank
            tied = x == value
            r[tied] = r[tied].mean()
        return r
    ra, rb = ranks(a), ranks(b)
    if ra.std() == 0 or rb.std() == 0:
        return float("nan")
    return float(np.corrcoef(ra, rb)[0, 1])


def gradient_importance(model, evaluation: EvaluationSet) -> np.ndarray:
    """I_h = |∂L/∂ξ_h| at ξ = 1, ξ the gate on each head's output (HeadMasks); (kinds × L × h,) in heads order.

    One batched teacher-forced pass and one backward pass; only the gates need gradients.
    """
    from model.transformer import HeadMasks

    cfg = model.cfg
    device = next(model.parameters()).device
    gates = {kind: torch.ones(cfg.num_layers, cfg.num_heads, device=device, requires_grad=True)
             for kind in ATTENTION_KINDS}
    masks = HeadMasks(**gates)
    with torch.enable_grad():
        total, tokens = 0.0, 0
        for src, tgt_in, tgt_out in evaluation.batches:
            logits, _ = model(src, tgt_in, head_masks=masks)
            loss, count, _ = _sequence_scores(logits, tgt_out)
            total, tokens = total + loss, tokens + int(count)
        grads = torch.autograd.grad(total / max(tokens, 1), [gates[kind] for kind in ATTENTION_KINDS])
    return torch.cat([g.abs().flatten() for g in grads]).cpu().numpy()


def head_importance(model, evaluation: EvaluationSet) -> HeadImportance:
    """Switch each head off in turn (Michel et al. 2019): 1 + kinds × L × h evaluations of the fixed set."""
    cfg = model.cfg
    heads = [(kind, l, h) for kind in ATTENTION_KINDS for l in range(cfg.num_layers) for h in range(cfg.num_heads)]
    memories = encoder_memories(model, evaluation)  # switching a decoder head off leaves the encoder as it is
    baseline = quality(model, evaluation, memories=memories)
    device = next(model.parameters()).device
    ablated = [quality(model, evaluation, switched_off_masks(cfg.num_layers, cfg.num_heads, [head], device),
                       memories=None if head[0] == "encoder_self" else memories) for head in heads]
    return HeadImportance(
        heads, baseline,
        np.array([baseline["exact_match"] - a["exact_match"] for a in ablated]),
        np.array([a["loss"] - baseline["loss"] for a in ablated]),
        gradient_importance(model, evaluation), evaluation.sentences)


def pruning_curve(model, evaluation: EvaluationSet, importance: HeadImportance,
                  counts: Sequence[int] | None = None) -> list[dict]:
    """Switch off the k least important heads (importance.order()) for each k -> [{k, exact_match, loss}, ...]."""
    order = importance.order()
    counts = range(len(order) + 1) if counts is None else counts
    cfg, device = model.cfg, next(model.parameters()).device
    rows = []
    for k in counts:
        off = [importance.heads[n] for n in order[:k]]
        rows.append({"k": k, **quality(model, evaluation,
                                       switched_off_masks(cfg.num_layers, cfg.num_heads, off, device))})
    return rows


@torch.no_grad()
def embedding_importance(embed, num_layers: int, num_heads: int) -> np.ndarray:
    """Head importance of an encoder (Michel et al. 2019's ablation, measured on sentence embeddings).

    embed(head_mask) -> (N, d) sentence embeddings of a fixed set of sentences, head_mask (L, h) of 0/1 gates (the
    encoder's own way of switching heads off, e.g. HeadMasks.encoder_self or a BERT head mask). Returns (L, h): the
    mean over sentences of 1 − cos(embedding with every head, embedding with that head off); 0 = no change.
    """
    full = F.normalize(embed(torch.ones(num_layers, num_heads)), dim=-1)
    change = np.zeros((num_layers, num_heads))
    for layer, head in np.ndindex(num_layers, num_heads):
        mask = torch.ones(num_layers, num_heads)
        mask[layer, head] = 0.0
        ablated = F.normalize(embed(mask), dim=-1)
        change[layer, head] = float((1 - (full * ablated).sum(-1)).mean())
    return change


# ---------------------------------------------------------------- a BERT encoder (all-MiniLM-L6-v2, local BERTs)

# The fixed English set an encoder's head importance and head-pattern labels are measured on: the same every time,
# so two runs (and two servers) give the same table.
ENCODER_SENTENCES = (
    "The animal didn't cross the street because it was too tired.",
    "The keys to the old cabinet in the hall are on the table.",
    "A man is playing a guitar on the stage.",
    "Someone is playing an instrument in front of a crowd.",
    "The cat sat quietly on the warm windowsill.",
    "Stock markets fell sharply after the announcement.",
    "She forgot her umbrella, so she got wet on the way home.",
    "The children built a sandcastle near the water.",
    "Heavy rain caused flooding in several villages.",
    "The doctor told him to rest for a week.",
    "Our train was delayed by forty minutes this morning.",
    "He reads the newspaper every day before breakfast.",
    "The new library opens to the public next month.",
    "A small boat drifted slowly across the lake.",
    "The teacher explained the problem twice.",
    "Engineers are testing a faster version of the software.",
    "The museum was closed because of the strike.",
    "My brother lent me his bicycle for the weekend.",
    "The soup tastes better with a little salt.",
    "Birds were singing in the trees outside the window.",
    "The committee rejected the proposal without discussion.",
    "A dog is running through the snow.",
    "They moved to a quiet town near the coast.",
    "The printer on the second floor is out of paper.",
)


def encoder_attention_modules(encoder) -> list[MultiHeadAttention]:
    """A BertEncoder's self-attention modules, layer by layer."""
    return [layer.self_attn for layer in encoder.layers]


@torch.no_grad()
def encoder_explanations(pretrained, encoded) -> dict[str, np.ndarray]:
    """One text through a PretrainedEncoder (model.bert) -> numpy arrays for its encoder_self kind:

    encoder_self (L, h, T, T) raw weights, value_norms_encoder_self (L, h, T, T), rollout_encoder_self (L, T, T).
    The value inputs x_j are captured at each layer's attention (hooks), not re-derived from the model's layout.
    """
    modules = encoder_attention_modules(pretrained.encoder)
    with capture_attention_inputs({str(l): m for l, m in enumerate(modules)}) as captured:
        out = pretrained.run(encoded)
    weights = out.weights  # (L, 1, h, T, T)
    norms = stack_value_norms(modules, weights, [captured[str(l)][0] for l in range(len(modules))])
    raw = weights[:, 0].cpu().numpy()
    return {"encoder_self": raw, "value_norms_encoder_self": norms[:, 0],
            "rollout_encoder_self": attention_rollout(raw)}


def encoder_sentence_embedder(pretrained, sentences: Sequence[str]):
    """embed(head_mask (L, h)) -> (N, d) L2-normalised mean-pooled embeddings of `sentences`, one padded batch.

    The embedding is the sentence-transformers one (model.bert.mean_pooled_embedding). Gradients flow to a head
    mask that requires them (the model's own weights do not).
    """
    from model.bert import mean_pooled_embedding

    encoded = [pretrained.encode(s) for s in sentences]
    length = max(len(e.ids) for e in encoded)
    pad = pretrained.config.pad_token_id
    ids = torch.tensor([e.ids + [pad] * (length - len(e.ids)) for e in encoded])  # (N, T)
    types = torch.tensor([e.token_type_ids + [0] * (length - len(e.ids)) for e in encoded])
    mask = torch.tensor([[1] * len(e.ids) + [0] * (length - len(e.ids)) for e in encoded])  # (N, T)

    def embed(head_mask: torch.Tensor) -> torch.Tensor:
        hidden = pretrained.encoder(ids, mask, types, need_weights=False, head_mask=head_mask).hidden
        return mean_pooled_embedding(hidden, mask)

    return embed


GRADIENT_PROBES = 8  # random probes of the encoder's gradient estimate (fixed seed: the same numbers every time)


def embedding_gradient_importance(embed, num_layers: int, num_heads: int, sentences: int,
                                  probes: int = GRADIENT_PROBES, seed: int = 0) -> np.ndarray:
    """The gradient estimate of embedding_importance: (L, h), ≈ mean over sentences of 1 − cos(on, off).

    At ξ = 1 the first derivative of 1 − cos is zero (the embedding is at its own maximum similarity), so the
    estimate is the second-order term: 1 − cos ≈ ½‖∂ê/∂ξ_h‖² for unit embeddings ê. The squared Jacobian norm is
    read with random probes v_n per sentence (Hutchinson): E[(Σ_n v_n·∂ê_n/∂ξ_h)²] = Σ_n ‖∂ê_n/∂ξ_h‖². One forward
    pass and `probes` backward passes. Gates are shared by the batch, which is why one probe per sentence is drawn.
    """
    generator = torch.Generator().manual_seed(seed)
    gates = torch.ones(num_layers, num_heads, requires_grad=True)
    with torch.enable_grad():
        embedded = embed(gates)  # (N, d)
        squared = torch.zeros(num_layers, num_heads)
        for probe in range(probes):
            v = torch.randn(embedded.shape, generator=generator)
            (grad,) = torch.autograd.grad((embedded * v).sum(), gates, retain_graph=probe < probes - 1)
            squared += grad ** 2
    return (0.5 * squared / probes / sentences).numpy()


@dataclass
class EncoderImportance:
    """Head importance of a sentence encoder on a fixed set of sentences; arrays (L, h)."""

    change: np.ndarray  # mean 1 − cos(embedding, embedding with that head off), by ablation
    gradient: np.ndarray  # the gradient estimate of the same quantity
    sentences: int

    def order(self) -> list[tuple[int, int]]:
        """(layer, head) from least to most important (ablation)."""
        flat = np.argsort(self.change, axis=None, kind="stable")
        return [tuple(int(i) for i in np.unravel_index(n, self.change.shape)) for n in flat]

    def spearman(self) -> float:
        return spearman(self.gradient.ravel(), self.change.ravel())


def encoder_importance(pretrained, sentences: Sequence[str] = ENCODER_SENTENCES) -> EncoderImportance:
    cfg = pretrained.config
    embed = encoder_sentence_embedder(pretrained, sentences)
    return EncoderImportance(embedding_importance(embed, cfg.num_layers, cfg.num_heads),
                             embedding_gradient_importance(embed, cfg.num_layers, cfg.num_heads, len(sentences)),
                             len(sentences))


@torch.no_grad()
def encoder_pruning_curve(pretrained, importance: EncoderImportance, counts: Sequence[int],
                          sentences: Sequence[str] = ENCODER_SENTENCES) -> list[dict]:
    """Switch off the k least important heads together -> [{k, similarity}], similarity the mean cos(embedding
    with every head, embedding with k heads off) over the fixed sentences (1 = unchanged)."""
    cfg = pretrained.config
    embed = encoder_sentence_embedder(pretrained, sentences)
    full = embed(torch.ones(cfg.num_layers, cfg.num_heads))
    order = importance.order()
    rows = []
    for k in counts:
        mask = torch.ones(cfg.num_layers, cfg.num_heads)
        for layer, head in order[:k]:
            mask[layer, head] = 0.0
        rows.append({"k": k, "similarity": float((full * embed(mask)).sum(-1).mean())})
    return rows


@torch.no_grad()
def encoder_head_labels(pretrained, sentences: Sequence[str] = ENCODER_SENTENCES) -> PatternScores:
    """Label every head of a BERT encoder from its maps over the fixed sentences, one at a time (no padding)."""
    maps = []
    for sentence in sentences:
        encoded = pretrained.encode(sentence)
        maps.append((pretrained.run(encoded).weights[:, 0].cpu().numpy(), encoded.tokens))
    return label_heads(maps, self_attention=True)

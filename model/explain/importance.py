"""Head importance (Michel et al. 2019, §4): switch one head off on a fixed held-out set; the drop in exact match
and the rise in teacher-forced loss. The gradient estimate I_h = |∂L/∂ξ_h| at ξ = 1 (§4.1, eq. 2). For a sentence
encoder (BERT) the same two measures on sentence embeddings.

Shapes: L layers, h heads, B batch, S source and T target length, V vocabulary, N sentences, d width.
"""
from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F
from scipy import stats

from model.bert import mean_pooled_embedding
from model.data import PAD_ID, Dataset, pad_batch
from model.explain.fixed_sets import ENCODER_SENTENCES
from model.explain.kinds import ATTENTION_KINDS
from model.transformer import HeadMasks


@dataclass
class EvaluationSet:
    """A fixed held-out set as length-bucketed batches: each (src (B, S), decoder input (B, T), target (B, T))."""

    batches: list[tuple[torch.Tensor, torch.Tensor, torch.Tensor]]
    sentences: int


def evaluation_set(loaded, pairs: Sequence[tuple[list[str], list[str]]], batch_size: int = 128) -> EvaluationSet:
    """Encode held-out (source words, target words) pairs with the model's own vocabularies.

    Sorted by length into batches, so that padding (computed and thrown away) stays small.
    """
    data = Dataset(loaded.task, loaded.src_vocab, loaded.tgt_vocab)
    device = next(loaded.model.parameters()).device
    ordered = sorted(pairs, key=lambda pair: (len(pair[0]), len(pair[1])))
    batches = [pad_batch(ordered[i:i + batch_size], data, device) for i in range(0, len(ordered), batch_size)]
    return EvaluationSet(batches, len(pairs))


def switched_off_masks(num_layers: int, num_heads: int, switched_off: Sequence[tuple[str, int, int]] = (),
                       device: torch.device | str | None = None):
    """HeadMasks with the given (kind, layer, head) heads at 0 and every other head at 1."""
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
    """Spearman's ρ (scipy.stats.spearmanr: Pearson correlation of the ranks, ties at their mean rank); NaN where
    either side is constant (no ranking to compare)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", stats.ConstantInputWarning)  # constant input: NaN is the answer
        return float(stats.spearmanr(np.ravel(a), np.ravel(b)).statistic)


def gradient_importance(model, evaluation: EvaluationSet) -> np.ndarray:
    """I_h = |∂L/∂ξ_h| at ξ = 1, ξ the gate on each head's output (HeadMasks); (kinds × L × h,) in heads order.

    One batched teacher-forced pass and one backward pass; only the gates need gradients.
    """
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


def encoder_sentence_embedder(pretrained, sentences: Sequence[str]):
    """embed(head_mask (L, h)) -> (N, d) L2-normalised mean-pooled embeddings of `sentences`, one padded batch.

    The embedding is the sentence-transformers one (model.bert.mean_pooled_embedding). Gradients flow to a head
    mask that requires them (the model's own weights do not).
    """
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


# --- a causal language model (model.llama.LlamaModel: SmolLM2) ------------------------------------------------------

@dataclass
class LanguageModelTexts:
    """Fixed texts packed into one row: ids (1, T) of all texts one after the other, next-token targets (1, T)
    (−100 at each text's last token: nothing of that text follows it), and a block-diagonal mask (T, T), True where
    a query may attend (its own text; the model adds the causal mask). With rotary positions a score depends only
    on the distance between query and key, so each text is read exactly as alone (up to float rounding; tests
    check it), and one row of ΣT_n tokens costs about half of N padded rows of max T_n."""

    ids: torch.Tensor
    targets: torch.Tensor
    mask: torch.Tensor
    texts: int

    @property
    def tokens(self) -> int:
        """Tokens the loss averages over (each text's T − 1)."""
        return int((self.targets != IGNORED).sum())


IGNORED = -100  # F.cross_entropy's ignore_index


def language_model_texts(encode, texts: Sequence[str]) -> LanguageModelTexts:
    """encode(text) -> token ids (a model.llama.LoadedLlama's) over the fixed texts -> one packed row."""
    encoded = [list(encode(text)) for text in texts]
    ids, targets, text_of = [], [], []
    for n, e in enumerate(encoded):
        ids += e
        targets += e[1:] + [IGNORED]  # position t predicts token t + 1 of the same text
        text_of += [n] * len(e)
    text_of = torch.tensor(text_of)  # (T,)
    return LanguageModelTexts(torch.tensor([ids]), torch.tensor([targets]), text_of[:, None] == text_of[None, :],
                              len(encoded))


def language_model_loss(model, texts: LanguageModelTexts, head_mask: torch.Tensor | None = None) -> torch.Tensor:
    """Mean next-token cross-entropy (nats) over the texts' real tokens, with head_mask (L, h) gates (or none)."""
    logits = model(texts.ids, need_weights=False, head_mask=head_mask, attention_mask=texts.mask).logits  # (1, T, V)
    return F.cross_entropy(logits.flatten(0, 1).float(), texts.targets.flatten(), ignore_index=IGNORED)


@dataclass
class LanguageModelImportance:
    """Head importance of a causal language model on fixed texts (Michel et al. 2019, §4.1); arrays (L, h)."""

    gradient: np.ndarray  # |∂L/∂ξ_h| at ξ = 1, L the mean next-token loss over the texts
    baseline_loss: float  # that loss with every head on (nats per token)
    texts: int
    tokens: int

    def order(self) -> list[tuple[int, int]]:
        """(layer, head) from least to most important (gradient)."""
        flat = np.argsort(self.gradient, axis=None, kind="stable")
        return [tuple(int(i) for i in np.unravel_index(n, self.gradient.shape)) for n in flat]


def language_model_importance(model, texts: LanguageModelTexts) -> LanguageModelImportance:
    """One forward and one backward pass through gates ξ (L, h) on every head's output; only the gates need
    gradients (the model's weights stay frozen)."""
    cfg = model.cfg
    gates = torch.ones(cfg.num_layers, cfg.num_heads, requires_grad=True)
    with torch.enable_grad():
        loss = language_model_loss(model, texts, gates)
        (grad,) = torch.autograd.grad(loss, gates)
    return LanguageModelImportance(grad.abs().numpy(), loss.item(), texts.texts, texts.tokens)


@torch.no_grad()
def language_model_pruning_curve(model, texts: LanguageModelTexts, importance: LanguageModelImportance,
                                 counts: Sequence[int]) -> list[dict]:
    """Switch off the k least important heads together -> [{k, loss}], loss the texts' mean next-token loss."""
    cfg = model.cfg
    order = importance.order()
    rows = []
    for k in counts:
        mask = torch.ones(cfg.num_layers, cfg.num_heads)  # (L, h)
        for layer, head in order[:k]:
            mask[layer, head] = 0.0
        rows.append({"k": k, "loss": float(language_model_loss(model, texts, mask))})
    return rows

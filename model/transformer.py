"""Encoder-decoder Transformer (Vaswani et al. 2017) that returns every attention map as a value.

Shapes: B batch, S source length, T target length, L layers, h heads, d_model width.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import nn

from model.attention import MultiHeadAttention, causal_mask, key_padding_from_tokens
from model.config import TransformerConfig
from model.dropout import Dropout, dropout_add
from model.positional import PositionalEncoding


@dataclass(frozen=True)
class TransformerAttention:
    """Every attention map of one forward pass; weights sum to 1 over the key axis."""

    encoder_self: torch.Tensor  # (L, B, h, S, S)
    decoder_self: torch.Tensor  # (L, B, h, T, T), zero above the diagonal
    cross: torch.Tensor  # (L, B, h, T, S): queries from the decoder, keys from the encoder
    encoder_self_scores: torch.Tensor  # (L, B, h, S, S) pre-softmax q·k/√d_k
    decoder_self_scores: torch.Tensor  # (L, B, h, T, T)
    cross_scores: torch.Tensor  # (L, B, h, T, S)


@dataclass(frozen=True)
class HeadMasks:
    """Per-layer head masks for ablation: (L, h) of 1 (keep) or 0 (switch off)."""

    encoder_self: torch.Tensor | None = None
    decoder_self: torch.Tensor | None = None
    cross: torch.Tensor | None = None


def _row(mask: torch.Tensor | None, layer: int) -> torch.Tensor | None:
    return None if mask is None else mask[layer]


def dropout_or_identity(p: float) -> nn.Module:
    """Dropout(p) (model/dropout.py: nn.Dropout with a cheaper CPU mask), or nn.Identity at p = 0 (no call into the
    dropout kernel for nothing; no parameters either way, so state dicts are the same)."""
    return Dropout(p) if p > 0 else nn.Identity()


class FeedForward(nn.Sequential):
    def __init__(self, d_model: int, d_ff: int, dropout: float):
        # index 2 stays a module either way, so parameter names (0.*, 3.*) do not depend on the dropout rate
        super().__init__(nn.Linear(d_model, d_ff), nn.ReLU(), dropout_or_identity(dropout), nn.Linear(d_ff, d_model))


class SublayerConnection(nn.Module):
    """The residual connection around one sublayer (paper §5.4), with its LayerNorm:

        pre-norm   x + Dropout(sublayer(LayerNorm(x)))
        post-norm  LayerNorm(x + Dropout(sublayer(x)))   (the paper's)

    forward(x, sublayer) for a sublayer that returns a tensor (the feed-forward). An attention sublayer also returns
    its weights, so the layer calls it between inputs(x) and add(x, out) and keeps its AttentionResult beside x.
    Dropout and the residual add are one kernel (model/dropout.py::dropout_add); at p = 0 or in eval mode it is the
    plain sum x + out."""

    def __init__(self, d_model: int, dropout: float, norm_first: bool):
        super().__init__()
        self.norm, self.dropout_p, self.norm_first = nn.LayerNorm(d_model), dropout, norm_first

    def inputs(self, x: torch.Tensor) -> torch.Tensor:
        """What the sublayer reads: LayerNorm(x) in a pre-norm layer, x itself in a post-norm one."""
        return self.norm(x) if self.norm_first else x

    def add(self, x: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
        """x + Dropout(out), normalised afterwards in a post-norm layer."""
        summed = dropout_add(x, out, self.dropout_p, self.training)
        return summed if self.norm_first else self.norm(summed)

    def forward(self, x: torch.Tensor, sublayer) -> torch.Tensor:
        return self.add(x, sublayer(self.inputs(x)))


def attention_sublayer(cfg: TransformerConfig) -> MultiHeadAttention:
    return MultiHeadAttention(cfg.d_model, cfg.num_heads, cfg.dropout)


def residual(cfg: TransformerConfig) -> SublayerConnection:
    return SublayerConnection(cfg.d_model, cfg.dropout, cfg.norm_first)


class EncoderLayer(nn.Module):
    """Self-attention, then the position-wise feed-forward network, each inside a residual connection (§3.1).

    Modules are registered in this order (attention, feed-forward, then the residual connections' norms): the
    order in which a seeded model draws its initial weights, and the names of the checkpoints' tensors."""

    def __init__(self, cfg: TransformerConfig):
        super().__init__()
        self.self_attn = attention_sublayer(cfg)
        self.ffn = FeedForward(cfg.d_model, cfg.d_ff, cfg.dropout)
        self.sub_attn, self.sub_ffn = residual(cfg), residual(cfg)

    def forward(self, x, mask, need_weights: bool, head_mask=None, is_causal: bool = False):
        """x (B, S, d_model) -> (B, S, d_model) and the self-attention's AttentionResult (weights (B, h, S, S)).
        is_causal (mask None, fast path): the kernel's causal mask, as the decoder-only stack trains with."""
        h = self.sub_attn.inputs(x)
        attn = self.self_attn(h, h, h, mask, need_weights=need_weights, head_mask=head_mask, is_causal=is_causal)
        x = self.sub_attn.add(x, attn.output)
        return self.sub_ffn(x, self.ffn), attn


class DecoderLayer(nn.Module):
    """Masked self-attention, attention over the encoder's output (cross), then the feed-forward network, each
    inside a residual connection (§3.1); registered in EncoderLayer's order."""

    def __init__(self, cfg: TransformerConfig):
        super().__init__()
        self.self_attn, self.cross_attn = attention_sublayer(cfg), attention_sublayer(cfg)
        self.ffn = FeedForward(cfg.d_model, cfg.d_ff, cfg.dropout)
        self.sub_self, self.sub_cross, self.sub_ffn = residual(cfg), residual(cfg), residual(cfg)

    def forward(self, y, memory, self_mask, memory_mask, need_weights: bool, self_head_mask=None, cross_head_mask=None):
        """y (B, T, d_model), memory (B, S, d_model) -> (B, T, d_model), the self- and cross-attention results
        (weights (B, h, T, T) and (B, h, T, S)). self_mask None: the kernel applies the causal mask (training)."""
        h = self.sub_self.inputs(y)
        self_attn = self.self_attn(h, h, h, self_mask, need_weights=need_weights, head_mask=self_head_mask,
                                   is_causal=self_mask is None)
        y = self.sub_self.add(y, self_attn.output)
        h = self.sub_cross.inputs(y)  # queries from the decoder; keys and values are the encoder's memory
        cross_attn = self.cross_attn(h, memory, memory, memory_mask, need_weights=need_weights,
                                     head_mask=cross_head_mask)
        y = self.sub_cross.add(y, cross_attn.output)
        return self.sub_ffn(y, self.ffn), self_attn, cross_attn


class Transformer(nn.Module):
    """Encoder-decoder Transformer; forward(src, tgt_in, need_weights=True) also returns TransformerAttention."""

    def __init__(self, cfg: TransformerConfig):
        super().__init__()
        self.cfg = cfg
        if cfg.tie_embeddings and cfg.src_vocab_size != cfg.tgt_vocab_size:
            raise ValueError("tie_embeddings needs one shared vocabulary (src_vocab_size == tgt_vocab_size)")
        self.src_embed = nn.Embedding(cfg.src_vocab_size, cfg.d_model, padding_idx=cfg.pad_id)
        self.tgt_embed = self.src_embed if cfg.tie_embeddings else nn.Embedding(
            cfg.tgt_vocab_size, cfg.d_model, padding_idx=cfg.pad_id)
        self.src_pos = PositionalEncoding(cfg.d_model, cfg.max_len, cfg.positional, cfg.dropout)
        self.tgt_pos = PositionalEncoding(cfg.d_model, cfg.max_len, cfg.positional, cfg.dropout)
        self.encoder_layers = nn.ModuleList(EncoderLayer(cfg) for _ in range(cfg.num_layers))
        self.decoder_layers = nn.ModuleList(DecoderLayer(cfg) for _ in range(cfg.num_layers))
        # Pre-norm stacks need a final norm; post-norm outputs are already normalised.
        self.encoder_norm = nn.LayerNorm(cfg.d_model) if cfg.norm_first else nn.Identity()
        self.decoder_norm = nn.LayerNorm(cfg.d_model) if cfg.norm_first else nn.Identity()
        self.generator = nn.Linear(cfg.d_model, cfg.tgt_vocab_size)
        self._init_weights()
        if cfg.tie_embeddings:
            self.generator.weight = self.tgt_embed.weight

    def _init_weights(self) -> None:
        for name, p in self.named_parameters():
            if p.dim() > 1 and "table" not in name:
                nn.init.xavier_uniform_(p)
        for module in self.modules():
            if isinstance(module, MultiHeadAttention):
                module.reset_parameters()  # per-projection fans, not the fused (3·d_model, d_model) matrix's

    def embed_source(self, src: torch.Tensor) -> torch.Tensor:
        return self.src_pos(self.src_embed(src) * math.sqrt(self.cfg.d_model))  # (B, S, d_model)

    def embed_target(self, tgt: torch.Tensor) -> torch.Tensor:
        return self.tgt_pos(self.tgt_embed(tgt) * math.sqrt(self.cfg.d_model))  # (B, T, d_model)

    def encode(self, src, need_weights: bool = False, head_masks: HeadMasks | None = None):
        """src (B, S) -> memory (B, S, d_model), source mask (B, 1, 1, S), per-layer AttentionResults."""
        head_masks = head_masks or HeadMasks()
        src_mask = key_padding_from_tokens(src, self.cfg.pad_id)
        x, results = self.embed_source(src), []
        for i, layer in enumerate(self.encoder_layers):
            x, attn = layer(x, src_mask, need_weights, _row(head_masks.encoder_self, i))
            results.append(attn)
        return self.encoder_norm(x), src_mask, results

    def decode(self, tgt_in, memory, src_mask, need_weights: bool = False, head_masks: HeadMasks | None = None):
        """tgt_in (B, T) -> logits (B, T, V), per-layer self and cross AttentionResults."""
        head_masks = head_masks or HeadMasks()
        length = tgt_in.size(1)
        if self.training and not need_weights:
            # Training: the kernel applies the causal mask itself (is_causal), nothing materialised. Targets are
            # right-padded, so a real query i only sees keys j <= i, all real: real positions come out exactly as
            # with the padding mask; padded positions differ, and the loss ignores them (ignore_index=pad).
            self_mask = None
        else:
            self_mask = causal_mask(length, tgt_in.device)[None, None] & key_padding_from_tokens(tgt_in, self.cfg.pad_id)
        y, self_results, cross_results = self.embed_target(tgt_in), [], []
        for i, layer in enumerate(self.decoder_layers):
            y, s, c = layer(y, memory, self_mask, src_mask, need_weights,
                            _row(head_masks.decoder_self, i), _row(head_masks.cross, i))
            self_results.append(s)
            cross_results.append(c)
        return self.generator(self.decoder_norm(y)), self_results, cross_results

    def forward(self, src, tgt_in, need_weights: bool = False, head_masks: HeadMasks | None = None):
        """Returns (logits (B, T, V), TransformerAttention or None)."""
        memory, src_mask, enc = self.encode(src, need_weights, head_masks)
        logits, dec_self, cross = self.decode(tgt_in, memory, src_mask, need_weights, head_masks)
        if not need_weights:
            return logits, None

        def stack(results, field):
            return torch.stack([getattr(r, field) for r in results])

        return logits, TransformerAttention(
            encoder_self=stack(enc, "weights"), decoder_self=stack(dec_self, "weights"), cross=stack(cross, "weights"),
            encoder_self_scores=stack(enc, "scores"), decoder_self_scores=stack(dec_self, "scores"),
            cross_scores=stack(cross, "scores"),
        )

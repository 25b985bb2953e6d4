"""A decoder-only translator: one causal self-attention stack over "<bos> english ⟶ french" (GPT-style).

The encoder-decoder (model/transformer.py) reads the English with an encoder and looks at it through cross-attention.
Here the same pair is one sequence, and the French tokens find the English block in the one causal self-attention
map of each layer: the rows after the separator "⟶" are what the Transformer's cross-attention rows were.

Its blocks are the Transformer's own (self-attention and the feed-forward network, each in a residual connection:
model/transformer.py::EncoderLayer) under a causal mask, on model/attention.py's MultiHeadAttention.

One embedding table holds three ranges of ids (so the checkpoints keep the English and French vocabularies of
the translators, and "<unk>" in English is not "<unk>" in French):

    0 .. S-1            English tokens (the source vocabulary; 0 is <pad>, 1 is <bos>)
    S                   the separator "⟶"
    S+1 .. S+1+V-1      French tokens (target id f is S+1+f)

It predicts French tokens only (V outputs), so the loss is on the French part only: forward(src, tgt_in) returns
the logits at the separator and the French positions, aligned with the translators' tgt_out, and train.py, the
evaluation and greedy decoding treat it like the encoder-decoder.

Shapes: B batch, S source length (English with <eos>), T target length (<bos> + French), N packed sequence length,
L layers, h heads.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import nn

from model.attention import MultiHeadAttention, causal_mask, key_padding_from_tokens
from model.config import DecoderOnlyConfig
from model.data import BOS_ID, EOS_ID
from model.positional import PositionalEncoding
from model.transformer import EncoderLayer, HeadMasks

SEPARATOR = "⟶"


@dataclass(frozen=True)
class DecoderOnlyAttention:
    """Every attention map of one forward pass over the packed sequences; weights sum to 1 over the key axis."""

    decoder_self: torch.Tensor  # (L, B, h, N, N), zero above the diagonal and on padding keys
    decoder_self_scores: torch.Tensor  # (L, B, h, N, N) pre-softmax q·k/√d_k


@dataclass(frozen=True)
class PackedPairs:
    """A batch of pairs as right-padded sequences "<bos> english ⟶ french"."""

    ids: torch.Tensor  # (B, N) sequence ids (module docstring: English, separator, French ranges); 0 is padding
    target_positions: torch.Tensor  # (B, T) the position whose output predicts tgt_out[:, t]: separator, then French
    separator: torch.Tensor  # (B,) where "⟶" is in each row (= 1 + English words)


def pack_pairs(src: torch.Tensor, tgt_in: torch.Tensor, cfg: DecoderOnlyConfig) -> PackedPairs:
    """src (B, S) "english <eos> <pad>…" and tgt_in (B, T) "<bos> french <pad>…" (model.data.pad_batch) ->
    one right-padded sequence per pair: <bos> english ⟶ french. The English <eos> is dropped and the French <bos>
    becomes the separator, so the sequence is 1 + S-1 + T - (padding) long."""
    pad = cfg.pad_id
    batch = src.size(0)
    english = src.masked_fill(src == EOS_ID, pad)  # (B, S): words, then padding
    separator = 1 + (english != pad).sum(1)  # (B,) <bos> + the English words
    english = english[:, : int(separator.max()) - 1]  # (B, longest English) without columns of padding only
    length = int(separator.max()) + tgt_in.size(1)
    ids = torch.full((batch, length), pad, dtype=torch.long, device=src.device)
    ids[:, 0] = BOS_ID
    ids[:, 1:1 + english.size(1)] = english
    french = torch.where(tgt_in != pad, tgt_in + cfg.src_vocab_size + 1, pad)  # (B, T) into the French range
    french[:, 0] = cfg.src_vocab_size  # the French <bos> is the separator "⟶"
    positions = separator[:, None] + torch.arange(tgt_in.size(1), device=src.device)  # (B, T)
    ids.scatter_(1, positions, french)  # overwrites only English padding: the words end before the separator
    return PackedPairs(ids, positions, separator)


class DecoderOnlyTranslator(nn.Module):
    """forward(src, tgt_in, need_weights=False, head_masks=None) -> (logits (B, T, V), DecoderOnlyAttention or
    None), as the encoder-decoder Transformer's forward; head_masks.decoder_self (L, h) switches heads off."""

    def __init__(self, cfg: DecoderOnlyConfig):
        super().__init__()
        self.cfg = cfg
        self.embed = nn.Embedding(cfg.sequence_vocab_size, cfg.d_model, padding_idx=cfg.pad_id)
        self.pos = PositionalEncoding(cfg.d_model, cfg.max_len, cfg.positional, cfg.dropout)
        # A decoder-only block is the encoder's block (self-attention, then the feed-forward network) under a
        # causal mask: the same module, so its weights, head masks and explanations work the same way.
        self.layers = nn.ModuleList(EncoderLayer(cfg) for _ in range(cfg.num_layers))
        self.norm = nn.LayerNorm(cfg.d_model) if cfg.norm_first else nn.Identity()
        self.generator = nn.Linear(cfg.d_model, cfg.tgt_vocab_size)
        for name, p in self.named_parameters():
            if p.dim() > 1 and "table" not in name:
                nn.init.xavier_uniform_(p)
        for module in self.modules():
            if isinstance(module, MultiHeadAttention):
                module.reset_parameters()

    def run(self, ids: torch.Tensor, need_weights: bool = False, head_masks: HeadMasks | None = None):
        """ids (B, N) right-padded sequences -> hidden states (B, N, d_model) and per-layer AttentionResults."""
        if ids.size(1) > self.cfg.max_len:
            raise ValueError(f"a sequence of {ids.size(1)} tokens is over this model's {self.cfg.max_len}")
        layer_masks = (head_masks or HeadMasks()).decoder_self
        if self.training and not need_weights:
            # Sequences are right-padded: a real query i sees keys j <= i, all real, so the kernel's own causal mask
            # gives real positions exactly what the padding mask would (padded positions are never predicted from).
            mask, is_causal = None, True
        else:
            mask = causal_mask(ids.size(1), ids.device)[None, None] & key_padding_from_tokens(ids, self.cfg.pad_id)
            is_causal = False
        x = self.pos(self.embed(ids) * math.sqrt(self.cfg.d_model))  # (B, N, d_model)
        results = []
        for i, layer in enumerate(self.layers):
            x, attn = layer(x, mask, need_weights, None if layer_masks is None else layer_masks[i], is_causal)
            results.append(attn)
        return self.norm(x), results

    def forward(self, src, tgt_in, need_weights: bool = False, head_masks: HeadMasks | None = None):
        """Logits (B, T, V) over French tokens at the separator and French positions: row t predicts tgt_out[:, t]
        (the first French word from "⟶", ..., <eos> from the last word). Nothing predicts English tokens."""
        packed = pack_pairs(src, tgt_in, self.cfg)
        hidden, results = self.run(packed.ids, need_weights, head_masks)
        index = packed.target_positions[:, :, None].expand(-1, -1, hidden.size(-1))  # (B, T, d_model)
        logits = self.generator(hidden.gather(1, index))  # (B, T, V)
        if not need_weights:
            return logits, None
        return logits, DecoderOnlyAttention(decoder_self=torch.stack([r.weights for r in results]),
                                            decoder_self_scores=torch.stack([r.scores for r in results]))


def sequence_tokens(src_tokens: list[str], output_tokens: list[str]) -> list[str]:
    """The token labels of one packed pair: "<bos>", the English words (src_tokens without its "<eos>"), "⟶", then
    the French tokens (the rows and columns of its causal map)."""
    english = [t for t in src_tokens if t != "<eos>"]
    return ["<bos>", *english, SEPARATOR, *output_tokens]

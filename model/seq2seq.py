"""GRU encoder-decoder baselines: with Bahdanau additive attention, or with one fixed context vector.

Bahdanau et al. 2015: bidirectional encoder h_j = [→h_j; ←h_j]; score e_ij = vᵀ tanh(W s_{i-1} + U h_j);
alignment a_ij = softmax_j(e_ij); context c_i = Σ_j a_ij h_j. Shapes: B batch, S source, T target, H hidden.
"""
from __future__ import annotations

import torch
from torch import nn

from model.attention import masked_softmax
from model.config import Seq2SeqConfig


class AdditiveAttention(nn.Module):
    """e_ij = vᵀ tanh(W s_{i-1} + U h_j); returns context (B, 2H) and alignment (B, S)."""

    def __init__(self, decoder_size: int, encoder_size: int, attn_size: int):
        super().__init__()
        self.W = nn.Linear(decoder_size, attn_size, bias=False)
        self.U = nn.Linear(encoder_size, attn_size, bias=True)
        self.v = nn.Linear(attn_size, 1, bias=False)

    def forward(self, state, keys_projected, encoder_outputs, src_mask):
        # state (B, H), keys_projected = U h (B, S, A), encoder_outputs (B, S, 2H), src_mask (B, S)
        energy = self.v(torch.tanh(self.W(state)[:, None, :] + keys_projected)).squeeze(-1)  # (B, S)
        alignment = masked_softmax(energy, src_mask)
        context = torch.bmm(alignment[:, None, :], encoder_outputs).squeeze(1)  # (B, 2H)
        return context, alignment


class Seq2Seq(nn.Module):
    """forward(src, tgt_in) -> (logits (B, T, V), alignment (B, T, S) or None without attention)."""

    def __init__(self, cfg: Seq2SeqConfig):
        super().__init__()
        self.cfg = cfg
        hidden = cfg.hidden_size
        self.src_embed = nn.Embedding(cfg.src_vocab_size, cfg.embed_dim, padding_idx=cfg.pad_id)
        self.tgt_embed = nn.Embedding(cfg.tgt_vocab_size, cfg.embed_dim, padding_idx=cfg.pad_id)
        self.encoder = nn.GRU(cfg.embed_dim, hidden, batch_first=True, bidirectional=True)
        self.bridge = nn.Linear(2 * hidden, hidden)  # s_0 = tanh(W_s ←h_1), from both final states
        self.attention = AdditiveAttention(hidden, 2 * hidden, hidden) if cfg.attention else None
        self.decoder = nn.GRUCell(cfg.embed_dim + 2 * hidden, hidden)
        self.dropout = nn.Dropout(cfg.dropout)
        self.out = nn.Linear(hidden + 2 * hidden + cfg.embed_dim, cfg.tgt_vocab_size)

    def encode(self, src: torch.Tensor):
        """src (B, S) -> encoder outputs (B, S, 2H), initial state (B, H), fixed context (B, 2H), mask (B, S)."""
        mask = src != self.cfg.pad_id
        lengths = mask.sum(1).clamp(min=1).cpu()
        packed = nn.utils.rnn.pack_padded_sequence(self.dropout(self.src_embed(src)), lengths, batch_first=True,
                                                   enforce_sorted=False)
        outputs, final = self.encoder(packed)
        outputs, _ = nn.utils.rnn.pad_packed_sequence(outputs, batch_first=True, total_length=src.size(1))
        summary = torch.cat([final[0], final[1]], dim=-1)  # (B, 2H): the one fixed-length vector
        return outputs, torch.tanh(self.bridge(summary)), summary, mask

    def step(self, token, state, encoder_outputs, keys_projected, summary, mask):
        """One decoder step: token (B,), state s_{i-1} (B, H) -> logits (B, V), state s_i, alignment (B, S) | None."""
        embedded = self.dropout(self.tgt_embed(token))  # (B, E)
        if self.attention is not None:
            context, alignment = self.attention(state, keys_projected, encoder_outputs, mask)
        else:
            context, alignment = summary, None  # the bottleneck: the same vector at every step
        state = self.decoder(torch.cat([embedded, context], dim=-1), state)
        logits = self.out(self.dropout(torch.cat([state, context, embedded], dim=-1)))
        return logits, state, alignment

    def prepare_keys(self, encoder_outputs):
        return self.attention.U(encoder_outputs) if self.attention is not None else None

    def forward(self, src, tgt_in, need_weights: bool = False):
        encoder_outputs, state, summary, mask = self.encode(src)
        keys_projected = self.prepare_keys(encoder_outputs)
        all_logits, alignments = [], []
        for t in range(tgt_in.size(1)):
            logits, state, alignment = self.step(tgt_in[:, t], state, encoder_outputs, keys_projected, summary, mask)
            all_logits.append(logits)
            alignments.append(alignment)
        logits = torch.stack(all_logits, dim=1)  # (B, T, V)
        if self.attention is None:
            return logits, None
        return logits, torch.stack(alignments, dim=1)  # (B, T, S)

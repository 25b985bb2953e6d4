"""What the four shipped checkpoints compute on fixed inputs: logits and every attention map, as numpy arrays.

    python -m tests.data.shipped_outputs     # writes tests/data/shipped_outputs.npz

Recorded before the checkpoints were re-saved in the fused w_qkv layout (issue 25), with the loader of that day;
tests/test_shipped_outputs.py loads today's files and compares, so a re-save or a refactor of the layers that
changed what the models compute fails there.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import torch

from model.checkpoint import LoadedModel, load_checkpoint
from model.data import BOS_ID, EOS_ID, PAD_ID, tokenize

ROOT = Path(__file__).resolve().parents[2]
CHECKPOINTS = ROOT / "assets" / "checkpoints"
RECORDED = Path(__file__).with_name("shipped_outputs.npz")

# (source, target) pairs run as one padded batch, teacher-forced: different lengths, so padding masks take part.
PAIRS = {
    "transformer_en-fr": [("i am a student", "je suis étudiant"),
                          ("the black cat eats the fish because she is hungry", "le chat noir mange le poisson"),
                          ("we like the small garden near the river",
                           "nous aimons le petit jardin près de la rivière")],
    "bahdanau_en-fr": None,  # the same pairs as transformer_en-fr
    "no-attention_en-fr": None,
    "transformer_reverse": [("3 1 4 15 9", "9 15 4 1 3"), ("0 19 7", "7 19 0")],
}


def batch(loaded: LoadedModel, pairs) -> tuple[torch.Tensor, torch.Tensor]:
    """-> src (B, S) ending in <eos>, decoder input (B, T) starting with <bos>, right-padded with <pad>."""
    encoded = [(loaded.src_vocab.encode(tokenize(s))[0], loaded.tgt_vocab.encode(tokenize(t))[0]) for s, t in pairs]
    src = torch.full((len(pairs), max(len(s) for s, _ in encoded) + 1), PAD_ID)
    tgt_in = torch.full((len(pairs), max(len(t) for _, t in encoded) + 1), PAD_ID)
    for row, (s, t) in enumerate(encoded):
        src[row, : len(s) + 1] = torch.tensor(s + [EOS_ID])
        tgt_in[row, : len(t) + 1] = torch.tensor([BOS_ID] + t)
    return src, tgt_in


@torch.no_grad()
def outputs(name: str) -> dict[str, np.ndarray]:
    """name's logits (B, T, V) and attention maps on its fixed batch, keyed "NAME/logits", "NAME/cross", ..."""
    loaded = load_checkpoint(CHECKPOINTS / name)
    src, tgt_in = batch(loaded, PAIRS[name] or PAIRS["transformer_en-fr"])
    logits, attention = loaded.model(src, tgt_in, need_weights=True)
    arrays = {"logits": logits}
    if isinstance(attention, torch.Tensor):  # GRU with Bahdanau attention: alignments (B, T, S)
        arrays["alignment"] = attention
    elif attention is not None:  # Transformer: six (L, B, h, T_q, T_k) maps, weights and scores
        arrays |= {field: getattr(attention, field) for field in (
            "encoder_self", "decoder_self", "cross", "encoder_self_scores", "decoder_self_scores", "cross_scores")}
    return {f"{name}/{key}": value.numpy() for key, value in arrays.items()}


def record(path: Path = RECORDED) -> None:
    arrays = {}
    for name in PAIRS:
        arrays |= outputs(name)
    np.savez_compressed(path, **arrays)


if __name__ == "__main__":
    record()
    print("wrote", RECORDED.relative_to(ROOT))

"""The attention kinds of the encoder-decoder Transformer (fields of model.transformer.TransformerAttention) that the
explanations are measured on, and the special tokens an "attention sink" sits on."""
from __future__ import annotations


SPECIAL_TOKENS = ("<bos>", "<eos>", "[CLS]", "[SEP]")  # the keys an "attention sink" sits on
SELF_KINDS = ("encoder_self", "decoder_self")  # the kinds rollout is defined for
ATTENTION_KINDS = ("encoder_self", "decoder_self", "cross")


def head_label(layer: int, head: int) -> str:
    """0-based (layer, head) -> "L19 H7": how every page, chart, table and lesson answer names a head."""
    return f"L{layer + 1} H{head + 1}"

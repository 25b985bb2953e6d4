"""The attention kinds of the encoder-decoder Transformer (fields of model.transformer.TransformerAttention) that the
explanations are measured on, and the special tokens an "attention sink" sits on."""
from __future__ import annotations


SPECIAL_TOKENS = ("<bos>", "<eos>", "[CLS]", "[SEP]")  # the keys an "attention sink" sits on
SELF_KINDS = ("encoder_self", "decoder_self")  # the kinds rollout is defined for
ATTENTION_KINDS = ("encoder_self", "decoder_self", "cross")

"""The tensors a checkpoint of a given config holds, and its parameter count, from the config alone.

Computed before any module is built, so an upload whose config asks for a huge model, or whose weights do not fit
its config, is refused without allocating it. tests/test_checkpoint_shapes.py keeps these equal to the built models'
state_dict() and parameters().
"""
from __future__ import annotations

import math

from model.config import DecoderOnlyConfig, ModelConfig, TransformerConfig

Shape = tuple[int, ...]


def _linear(name: str, inputs: int, outputs: int, bias: bool = True) -> dict[str, Shape]:
    return {f"{name}.weight": (outputs, inputs), **({f"{name}.bias": (outputs,)} if bias else {})}


def _norm(name: str, width: int) -> dict[str, Shape]:
    return {f"{name}.weight": (width,), f"{name}.bias": (width,)}


def _transformer_layer(prefix: str, cfg: TransformerConfig | DecoderOnlyConfig, attentions: tuple[str, ...],
                       residuals: tuple[str, ...]) -> dict[str, Shape]:
    d = cfg.d_model
    shapes = {}
    for name in attentions:  # model/attention.py: W_q, W_k, W_v fused into one (3·d, d) projection, and W_o
        shapes |= _linear(f"{prefix}.{name}.w_qkv", d, 3 * d) | _linear(f"{prefix}.{name}.w_o", d, d)
    shapes |= _linear(f"{prefix}.ffn.0", d, cfg.d_ff) | _linear(f"{prefix}.ffn.3", cfg.d_ff, d)
    for name in residuals:
        shapes |= _norm(f"{prefix}.{name}.norm", d)
    return shapes


def tied_aliases(config: ModelConfig) -> frozenset[str]:
    """State-dict names that are the same tensor as src_embed.weight (saved once, under that name)."""
    if isinstance(config, TransformerConfig) and config.tie_embeddings:
        return frozenset({"tgt_embed.weight", "generator.weight"})
    return frozenset()


def state_shapes(config: ModelConfig) -> dict[str, Shape]:
    """Every state_dict() name of the model build_model(config) makes, with its shape (tied aliases included)."""
    if isinstance(config, DecoderOnlyConfig):  # model/decoder_only.py: one embedding, encoder-style causal layers
        d = config.d_model
        shapes = {"embed.weight": (config.sequence_vocab_size, d)}
        if config.positional == "learned":
            shapes |= {"pos.table": (config.max_len, d)}
        for i in range(config.num_layers):
            shapes |= _transformer_layer(f"layers.{i}", config, ("self_attn",), ("sub_attn", "sub_ffn"))
        if config.norm_first:
            shapes |= _norm("norm", d)
        return shapes | _linear("generator", d, config.tgt_vocab_size)
    if isinstance(config, TransformerConfig):
        d = config.d_model
        shapes = {"src_embed.weight": (config.src_vocab_size, d), "tgt_embed.weight": (config.tgt_vocab_size, d)}
        if config.positional == "learned":  # a sinusoidal table is a buffer outside the state dict
            shapes |= {"src_pos.table": (config.max_len, d), "tgt_pos.table": (config.max_len, d)}
        for i in range(config.num_layers):
            shapes |= _transformer_layer(f"encoder_layers.{i}", config, ("self_attn",), ("sub_attn", "sub_ffn"))
        for i in range(config.num_layers):
            shapes |= _transformer_layer(f"decoder_layers.{i}", config, ("self_attn", "cross_attn"),
                                         ("sub_self", "sub_cross", "sub_ffn"))
        if config.norm_first:
            shapes |= _norm("encoder_norm", d) | _norm("decoder_norm", d)
        return shapes | _linear("generator", d, config.tgt_vocab_size)
    e, h = config.embed_dim, config.hidden_size
    shapes = {"src_embed.weight": (config.src_vocab_size, e), "tgt_embed.weight": (config.tgt_vocab_size, e)}
    for direction in ("", "_reverse"):  # a bidirectional one-layer GRU: gates r, z, n stacked (3H rows)
        shapes |= {f"encoder.weight_ih_l0{direction}": (3 * h, e), f"encoder.weight_hh_l0{direction}": (3 * h, h),
                   f"encoder.bias_ih_l0{direction}": (3 * h,), f"encoder.bias_hh_l0{direction}": (3 * h,)}
    shapes |= _linear("bridge", 2 * h, h)
    if config.attention:
        shapes |= _linear("attention.W", h, h, bias=False) | _linear("attention.U", 2 * h, h) \
            | _linear("attention.v", h, 1, bias=False)
    shapes |= {"decoder.weight_ih": (3 * h, e + 2 * h), "decoder.weight_hh": (3 * h, h),
               "decoder.bias_ih": (3 * h,), "decoder.bias_hh": (3 * h,)}
    return shapes | _linear("out", 3 * h + e, config.tgt_vocab_size)


def parameter_count(config: ModelConfig) -> int:
    """sum(p.numel() for p in build_model(config).parameters()), without building it (tied weights counted once)."""
    aliases = tied_aliases(config)
    return sum(math.prod(shape) for name, shape in state_shapes(config).items() if name not in aliases)

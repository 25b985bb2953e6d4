"""What a Hugging Face config.json asks for, read before anything is built: its shape fields, checked, and the
parameter count they imply, estimated per architecture.

transformers builds every module a config names before it reads a weight, so `num_hidden_layers: 1000000000` grows
memory until the server dies, and `num_attention_heads: 0` fails deep inside a forward pass. The models folder's
listing (model/local_models.py) checks here first. The estimate counts embeddings, attention, feed-forward and
norms as each architecture builds them (tests/test_hf_config.py keeps it near the real count); task heads and
poolers that a saved model may or may not carry are left out.
"""
from __future__ import annotations

from dataclasses import dataclass

MAX_LAYERS = 256  # the deepest stack listed; each layer is modules built one by one, whatever their width
MAX_SHAPE_VALUE = 1 << 24  # any single width, vocabulary or position count; the parameter limit bounds their products


@dataclass(frozen=True)
class _Fields:
    """Reads a config's shape fields: each one a whole number (never a bool or a float) from 1 to its bound."""

    config: dict

    def get(self, *names: str, default: int | None = None, upper: int = MAX_SHAPE_VALUE) -> int:
        for name in names:
            value = self.config.get(name)
            if value is None:
                continue
            if type(value) is not int or not 1 <= value <= upper:
                raise ValueError(f"config.json: {name} must be a whole number from 1 to {upper}, not "
                                 f"{str(value)[:40]}")
            return value
        if default is None:
            raise ValueError(f"config.json has no {' / '.join(names)}")
        return default

    def layers(self, *names: str, default: int | None = None) -> int:
        return self.get(*names, default=default, upper=MAX_LAYERS)


def _divides(heads: int, width: int, heads_name: str, width_name: str) -> None:
    if width % heads:
        raise ValueError(f"config.json: {heads_name} ({heads}) must divide {width_name} ({width})")


def _attention(d: int, bias: bool = True) -> int:
    return 4 * d * d + (4 * d if bias else 0)  # W_q, W_k, W_v, W_o


def _ffn(d: int, inner: int) -> int:
    return 2 * d * inner + inner + d  # two linear layers with biases


def _bert_like(f: _Fields, model_type: str) -> int:
    """BERT, RoBERTa, XLM-R, ELECTRA, ALBERT: embeddings (word, position, type) then post-LN layers."""
    hidden, heads = f.get("hidden_size"), f.get("num_attention_heads")
    _divides(heads, hidden, "num_attention_heads", "hidden_size")
    layers, inner = f.layers("num_hidden_layers"), f.get("intermediate_size", default=4 * hidden)
    # ALBERT and ELECTRA factorise the embedding (embedding_size, 128 by default); the others use the width itself
    width = f.get("embedding_size", default=128) if model_type in ("albert", "electra") else hidden
    embeddings = (f.get("vocab_size") + f.get("max_position_embeddings", default=512)
                  + f.get("type_vocab_size", default=2)) * width + 2 * width
    if width != hidden:
        embeddings += width * hidden + hidden  # ALBERT / ELECTRA project the factorised embedding up
    layer = _attention(hidden) + _ffn(hidden, inner) + 4 * hidden
    if model_type == "albert":  # layers share weights: only the groups' layers exist
        groups = f.layers("num_hidden_groups", default=1)
        if groups > layers:
            raise ValueError(f"config.json: num_hidden_groups ({groups}) exceeds num_hidden_layers ({layers})")
        layers = groups * f.layers("inner_group_num", default=1)
    return embeddings + layers * layer


def _distilbert(f: _Fields) -> int:
    dim, heads = f.get("dim"), f.get("n_heads")
    _divides(heads, dim, "n_heads", "dim")
    embeddings = (f.get("vocab_size") + f.get("max_position_embeddings", default=512)) * dim + 2 * dim
    return embeddings + f.layers("n_layers") * (_attention(dim) + _ffn(dim, f.get("hidden_dim", default=4 * dim))
                                                + 4 * dim)


def _gpt2(f: _Fields) -> int:
    d, heads = f.get("n_embd", "hidden_size"), f.get("n_head", "num_attention_heads")
    _divides(heads, d, "n_head", "n_embd")
    embeddings = (f.get("vocab_size") + f.get("n_positions", "max_position_embeddings", default=1024)) * d
    layer = _attention(d) + _ffn(d, f.get("n_inner", default=4 * d)) + 4 * d
    return embeddings + f.layers("n_layer", "num_hidden_layers") * layer + 2 * d


def _gpt_neo(f: _Fields) -> int:
    d, heads = f.get("hidden_size"), f.get("num_heads")
    _divides(heads, d, "num_heads", "hidden_size")
    embeddings = (f.get("vocab_size") + f.get("max_position_embeddings", default=2048)) * d
    layer = _attention(d) - 3 * d + _ffn(d, f.get("intermediate_size", default=4 * d)) + 4 * d  # q, k, v: no bias
    return embeddings + f.layers("num_layers") * layer + 2 * d


def _opt(f: _Fields) -> int:
    d, heads = f.get("hidden_size"), f.get("num_attention_heads")
    _divides(heads, d, "num_attention_heads", "hidden_size")
    projection = f.get("word_embed_proj_dim", default=d)
    embeddings = f.get("vocab_size") * projection + (f.get("max_position_embeddings", default=2048) + 2) * d
    if projection != d:
        embeddings += 2 * projection * d  # project_in, project_out (no bias)
    layer = _attention(d) + _ffn(d, f.get("ffn_dim", default=4 * d)) + 4 * d
    return embeddings + f.layers("num_hidden_layers") * layer + 2 * d


def _bart_like(f: _Fields, model_type: str) -> int:
    """BART, mBART, Marian, Pegasus: shared embeddings, an encoder and a decoder with cross-attention."""
    d = f.get("d_model")
    encoder_heads = f.get("encoder_attention_heads")
    decoder_heads = f.get("decoder_attention_heads", default=encoder_heads)
    _divides(encoder_heads, d, "encoder_attention_heads", "d_model")
    _divides(decoder_heads, d, "decoder_attention_heads", "d_model")
    vocab, positions = f.get("vocab_size"), f.get("max_position_embeddings", default=1024)
    encoder_layers = f.layers("encoder_layers", "num_hidden_layers")
    decoder_layers = f.layers("decoder_layers", default=encoder_layers)
    embeddings = vocab * d + 2 * (positions + (2 if model_type in ("bart", "mbart") else 0)) * d
    if model_type == "marian" and f.get("decoder_vocab_size", default=vocab) != vocab:
        embeddings += f.get("decoder_vocab_size") * d
    encoder = encoder_layers * (_attention(d) + _ffn(d, f.get("encoder_ffn_dim", default=4 * d)) + 4 * d)
    decoder = decoder_layers * (2 * _attention(d) + _ffn(d, f.get("decoder_ffn_dim", default=4 * d)) + 6 * d)
    norms = {"bart": 4, "mbart": 8, "pegasus": 4}.get(model_type, 0) * d
    return embeddings + encoder + decoder + norms


def _t5(f: _Fields) -> int:
    d, heads = f.get("d_model"), f.get("num_heads")
    inner = heads * f.get("d_kv", default=d // heads if d >= heads else 1)
    gated = str(f.config.get("feed_forward_proj", "relu")).startswith("gated")
    ffn = (3 if gated else 2) * d * f.get("d_ff", default=4 * d)
    attention = 4 * d * inner  # no biases in T5
    buckets = f.get("relative_attention_num_buckets", default=32) * heads
    encoder_layers = f.layers("num_layers")
    decoder_layers = f.layers("num_decoder_layers", default=encoder_layers)
    vocab = f.get("vocab_size")
    head = 0 if f.config.get("tie_word_embeddings", True) is not False else vocab * d
    return (vocab * d + head + encoder_layers * (attention + ffn + 2 * d) + decoder_layers * (2 * attention + ffn + 3 * d)
            + 2 * buckets + 2 * d)


def estimate_parameters(config: dict) -> int:
    """About how many parameters the model a config.json describes has; ValueError naming a shape field that is
    missing, not a whole number in bounds, or inconsistent (heads that do not divide the width)."""
    model_type = config.get("model_type")
    fields = _Fields(config)
    if model_type in ("bert", "roberta", "xlm-roberta", "electra", "albert"):
        return _bert_like(fields, model_type)
    if model_type == "distilbert":
        return _distilbert(fields)
    if model_type == "gpt2":
        return _gpt2(fields)
    if model_type == "gpt_neo":
        return _gpt_neo(fields)
    if model_type == "opt":
        return _opt(fields)
    if model_type in ("bart", "mbart", "marian", "pegasus"):
        return _bart_like(fields, model_type)
    if model_type == "t5":
        return _t5(fields)
    raise ValueError(f"architecture {str(model_type)[:40]!r} is not supported")

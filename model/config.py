"""Frozen configuration dataclasses, saved in every checkpoint and rebuilt with Config(**saved)."""
from __future__ import annotations

from dataclasses import asdict, dataclass


@dataclass(frozen=True)
class AttentionStackConfig:
    """The fields of a stack of our own attention layers, shared by the encoder–decoder and the decoder-only
    translator; each subclass sets its own defaults (a field redefined there keeps its place in the order)."""

    # 0: not known yet (a TrainConfig's model; training fills both from its data's vocabularies)
    src_vocab_size: int = 0
    tgt_vocab_size: int = 0
    num_layers: int = 2
    d_model: int = 128
    num_heads: int = 4
    d_ff: int = 512
    dropout: float = 0.1
    max_len: int = 128
    positional: str = "sinusoidal"  # or "learned"
    norm_first: bool = False  # False: post-norm, as in the paper


@dataclass(frozen=True)
class TransformerConfig(AttentionStackConfig):
    tie_embeddings: bool = False  # §3.4: share src/tgt embeddings and the output projection
    pad_id: int = 0

    @classmethod
    def paper_base(cls, src_vocab_size: int, tgt_vocab_size: int) -> TransformerConfig:
        """Vaswani et al. 2017 base model: N=6, d_model=512, d_ff=2048, h=8, dropout 0.1."""
        return cls(src_vocab_size, tgt_vocab_size, num_layers=6, d_model=512, num_heads=8, d_ff=2048,
                   dropout=0.1, max_len=512, tie_embeddings=True)

    def to_dict(self) -> dict:
        return {"family": "transformer", **asdict(self)}


@dataclass(frozen=True)
class Seq2SeqConfig:
    src_vocab_size: int = 0  # 0: not known yet, as in TransformerConfig
    tgt_vocab_size: int = 0
    embed_dim: int = 64
    hidden_size: int = 128
    attention: bool = True  # False: a single fixed context vector (the bottleneck)
    dropout: float = 0.1
    max_len: int = 128
    pad_id: int = 0

    def to_dict(self) -> dict:
        return {"family": "seq2seq", **asdict(self)}


@dataclass(frozen=True)
class DecoderOnlyConfig(AttentionStackConfig):
    """A decoder-only translator (model/decoder_only.py): one causal stack over "<bos> english ⟶ french".

    Its embedding holds both vocabularies and the separator (src_vocab_size + 1 + tgt_vocab_size rows); it predicts
    French tokens only (tgt_vocab_size outputs). max_len bounds the whole sequence, English and French together."""

    num_layers: int = 4
    d_ff: int = 256
    max_len: int = 256
    norm_first: bool = True  # pre-norm: a 4-layer causal stack trains steadily without a long warm-up
    pad_id: int = 0

    @property
    def sequence_vocab_size(self) -> int:
        """Rows of the one embedding: English ids, the separator "⟶", then French ids."""
        return self.src_vocab_size + 1 + self.tgt_vocab_size

    @property
    def max_source_len(self) -> int:
        """English tokens (with <eos>) a sentence may have: half the sequence, the other half for French."""
        return self.max_len // 2

    def to_dict(self) -> dict:
        return {"family": "decoder-only", **asdict(self)}


ModelConfig = TransformerConfig | Seq2SeqConfig | DecoderOnlyConfig


def family_of(config: ModelConfig) -> str:
    """The one name of our own families for a configuration: "transformer", "decoder-only", "bahdanau" or
    "no-attention" (the names model.train.FAMILIES trains and model.families.LabModel.family gives)."""
    if isinstance(config, TransformerConfig):
        return "transformer"
    if isinstance(config, DecoderOnlyConfig):
        return "decoder-only"
    return "bahdanau" if config.attention else "no-attention"


def config_from_dict(saved: dict) -> ModelConfig:
    """Rebuild a config saved by to_dict(); raises ValueError on an unknown family or field."""
    saved = dict(saved)
    family = saved.pop("family", None)
    classes = {"transformer": TransformerConfig, "seq2seq": Seq2SeqConfig, "decoder-only": DecoderOnlyConfig}
    if family not in classes:
        raise ValueError(f"unknown model family {family!r}")
    try:
        return classes[family](**saved)
    except TypeError as error:
        raise ValueError(f"config does not fit {family}: {error}") from error


# Bounds on what a checkpoint's config may ask for (an upload's config is a stranger's JSON). The shipped and
# trainable models are far inside them: 2 layers, width 32-256, vocabularies of a few hundred, 128 positions.
MAX_LAYERS = 12  # also bounds the number of modules built, which costs time even when each one is tiny
MAX_WIDTH = 65536  # d_model, d_ff, embed_dim, hidden_size: their products are bounded by the parameter count
MAX_VOCAB_SIZE = 100_000
MAX_POSITIONS = 2048  # max_len: the sinusoidal table is max_len × d_model floats even though it is no parameter
POSITIONAL_KINDS = ("sinusoidal", "learned")


def _whole(value) -> bool:
    return type(value) is int  # a JSON true is an int to Python, never a size


def check_config(config: ModelConfig) -> None:
    """ValueError naming the first field of a saved config that is not a sensible value of its kind and size.

    config_from_dict takes JSON's values as they come (dataclasses do not check types); a checkpoint's config
    passes here before anything is built from it."""
    sizes = {"src_vocab_size": MAX_VOCAB_SIZE, "tgt_vocab_size": MAX_VOCAB_SIZE, "max_len": MAX_POSITIONS}
    if isinstance(config, TransformerConfig | DecoderOnlyConfig):
        sizes |= {"num_layers": MAX_LAYERS, "d_model": MAX_WIDTH, "num_heads": MAX_WIDTH, "d_ff": MAX_WIDTH}
        flags = ("norm_first",) + (("tie_embeddings",) if isinstance(config, TransformerConfig) else ())
    else:
        sizes |= {"embed_dim": MAX_WIDTH, "hidden_size": MAX_WIDTH}
        flags = ("attention",)
    for name, limit in sizes.items():
        value = getattr(config, name)
        if not _whole(value) or not 1 <= value <= limit:
            raise ValueError(f"{name} must be a whole number from 1 to {limit}, not {str(value)[:40]}")
    for name in flags:
        if not isinstance(getattr(config, name), bool):
            # ValueError, as for every other field: callers catch one kind for "this config is not usable"
            raise ValueError(f"{name} must be true or false, not {str(getattr(config, name))[:40]}")  # noqa: TRY004
    dropout = config.dropout
    if type(dropout) not in (int, float) or not 0 <= dropout < 1:  # NaN fails 0 <= NaN; bool is neither type
        raise ValueError(f"dropout must be a number from 0 to below 1, not {str(dropout)[:40]}")
    if not _whole(config.pad_id) or not 0 <= config.pad_id < min(config.src_vocab_size, config.tgt_vocab_size):
        raise ValueError(f"pad_id must be a token id of both vocabularies, not {str(config.pad_id)[:40]}")
    if isinstance(config, TransformerConfig | DecoderOnlyConfig):
        if config.d_model % config.num_heads:
            raise ValueError(f"num_heads ({config.num_heads}) must divide d_model ({config.d_model})")
        if config.positional not in POSITIONAL_KINDS:
            raise ValueError(f"positional must be one of {', '.join(POSITIONAL_KINDS)}, not {str(config.positional)[:40]!r}")
        if getattr(config, "tie_embeddings", False) and config.src_vocab_size != config.tgt_vocab_size:
            raise ValueError("tie_embeddings needs one shared vocabulary (src_vocab_size == tgt_vocab_size)")


LLAMA_FLOAT_BYTES = 4  # a Llama model's KV cache is float32, as its dequantized weights


@dataclass(frozen=True)
class LlamaConfig:
    """The shape of a decoder-only Llama model (SmolLM2: read from its GGUF file's `llama.*` metadata)."""

    vocab_size: int
    hidden_size: int
    num_layers: int
    num_heads: int
    num_kv_heads: int
    intermediate_size: int
    rope_theta: float
    rms_norm_eps: float
    max_position_embeddings: int

    @property
    def head_dim(self) -> int:
        return self.hidden_size // self.num_heads

    @property
    def d_model(self) -> int:  # the name the Transformer's config uses (rescale, share links)
        return self.hidden_size

    @property
    def group_size(self) -> int:
        """How many query heads share one key/value head."""
        return self.num_heads // self.num_kv_heads

    def kv_head_of(self, query_head: int) -> int:
        return query_head // self.group_size

    def cache_bytes_per_token(self, kv_heads: int | None = None) -> int:
        """Bytes the KV cache grows by per token: K and V, every layer, `kv_heads` heads (default: the model's)."""
        heads = self.num_kv_heads if kv_heads is None else kv_heads
        return 2 * self.num_layers * heads * self.head_dim * LLAMA_FLOAT_BYTES

    def to_dict(self) -> dict:
        return {"family": "llama", **asdict(self)}

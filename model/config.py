"""Frozen configuration dataclasses, saved in every checkpoint and rebuilt with Config(**saved)."""
from __future__ import annotations

from dataclasses import asdict, dataclass


@dataclass(frozen=True)
class TransformerConfig:
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


def config_from_dict(saved: dict) -> TransformerConfig | Seq2SeqConfig:
    """Rebuild a config saved by to_dict(); raises ValueError on an unknown family or field."""
    saved = dict(saved)
    family = saved.pop("family", None)
    classes = {"transformer": TransformerConfig, "seq2seq": Seq2SeqConfig}
    if family not in classes:
        raise ValueError(f"unknown model family {family!r}")
    try:
        return classes[family](**saved)
    except TypeError as error:
        raise ValueError(f"config does not fit {family}: {error}") from error

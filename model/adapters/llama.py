"""A decoder-only Llama LLM in our own code as a LabModel (a model.llama.LoadedLlama: SmolLM2-135M-Instruct)."""
from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F

from model.adapters.base import Adapter, curve_counts, family
from model.adapters.protocols import BlockParts, HeadPatch, ImportanceReport, PositionParts, QueriesKeys, ResidualStream, SwitchedOff
from model.capabilities import (ABLATION, GENERATION, IMPORTANCE, NEXT_TOKEN, NORMS, PATTERNS, QUERIES_KEYS, RESCALE,
                                RESIDUAL_STREAM)
from model.explain.fixed_sets import LANGUAGE_MODEL_TEXTS
from model.explain.importance import language_model_importance, language_model_pruning_curve, language_model_texts
from model.explain.next_token import next_token_prediction
from model.explain.patterns import PatternScores, language_model_head_labels
from model.explain.rollout import attention_rollout
from model.branches import Fork, fork_temperatures, fork_top
from model.generation import GenerationStep, generate, generation_step
from model.kv_cache import StepTiming, time_step_both_ways
from model.llama import MAX_TOKENS as LLM_MAX_TOKENS
from model.explain.value_norms import llama_head_writes, llama_value_norms
from model.llama import KVCache, LlamaModel, apply_rotary, causal_mask_after, rotary_cos_sin
from model.sources import AnalysedInput, KindMaps, compact_dtype
from model.switch_off import DECODER_SELF, Heads


@family("llama")
@dataclass(eq=False)
class LlamaAdapter(Adapter):
    """One causal self-attention kind, value norms (its W_V and W_O are ours), rescaling (its scores are returned),
    generation one token at a time with its KV cache (Generates), its residual stream (ReadsResidualStream), and
    ablation through its head mask: what switching heads off changes is its prediction of the token after the text
    and its loss on the text itself (NEXT_TOKEN). Head importance is the gradient on head gates of the next-token
    loss over LANGUAGE_MODEL_TEXTS; pattern labels read those texts (the first token as the sink) and a repeated
    random sequence (induction). Its heads' rotated queries and keys are read as its scores read them
    (ReadsQueriesKeys)."""

    KINDS = ("decoder_self",)
    CAPABILITIES = frozenset({NORMS, RESCALE, GENERATION, ABLATION, NEXT_TOKEN, IMPORTANCE, PATTERNS, RESIDUAL_STREAM,
                              QUERIES_KEYS})
    POSITIONS = "rotary"
    LABEL_SENTENCES = len(LANGUAGE_MODEL_TEXTS)

    @property
    def task(self) -> str:
        return "english"  # it reads any text; the sidebar's English examples suit it

    @property
    def head_dim(self) -> int:
        return self.network.config.head_dim

    @property
    def max_tokens(self) -> int:
        """The longest text analysed with every map (model.llama.MAX_TOKENS)."""
        return LLM_MAX_TOKENS

    def analyse(self, text: str, switched_off: SwitchedOff = ()) -> AnalysedInput:
        """The text's causal self-attention, (L, h, T, T), over its first MAX_TOKENS tokens, and the model's
        prediction of the token after them (with the heads switched off)."""
        ids = self.encode(text)
        if not ids:
            raise ValueError(f"{self.model_id}: the text has no tokens")
        truncated_from = len(ids) if len(ids) > LLM_MAX_TOKENS else None
        ids = ids[:LLM_MAX_TOKENS]
        cfg = self.network.config
        dtype = compact_dtype(cfg.num_layers, cfg.num_heads, len(ids), len(ids))
        masks = self.head_masks(switched_off)
        # a long text's maps are converted layer by layer: its float32 maps are never all held at once
        out = self.network.run(ids, head_mask=None if masks is None else masks["decoder_self"],
                               maps_dtype=torch.float16 if dtype == np.float16 else None)
        tokens = self.network.token_texts(ids)
        masked = np.triu(np.ones((len(ids), len(ids)), dtype=bool), k=1)  # (T, T): key after query is hidden
        maps = {"decoder_self": KindMaps("decoder_self", out.weights[:, 0].cpu().numpy(),
                                         out.scores[:, 0].cpu().numpy(), tokens, tokens, masked)}
        return AnalysedInput(self.model_id, text, tokens, maps, self.capabilities, truncated_from=truncated_from,
                             next_token=next_token_prediction(out.logits[0], ids, self.token_texts))

    def explain(self, analysed: AnalysedInput) -> dict[str, np.ndarray]:
        """Weights and value norms (L, h, T, T), rollout_decoder_self (L, T, T) of the analysed text."""
        ids = self.encode(analysed.text)[:LLM_MAX_TOKENS]
        cfg = self.network.config
        compact = compact_dtype(cfg.num_layers, cfg.num_heads, len(ids), len(ids)) == np.float16
        out = self.network.run(ids, maps_dtype=torch.float16 if compact else None)  # as analyse keeps them
        weights = out.weights[:, 0].cpu().numpy()
        return {"decoder_self": weights, "rollout_decoder_self": attention_rollout(weights),
                "value_norms_decoder_self": llama_value_norms(self.network.model, out)[:, 0].cpu().numpy()}

    def importance(self) -> ImportanceReport:
        """LanguageModelImportance (gradient (L, h)) on LANGUAGE_MODEL_TEXTS; the curve's points {k, loss}: one
        forward and backward pass, then one pass per point of the curve."""
        texts = language_model_texts(self.encode, LANGUAGE_MODEL_TEXTS)
        importance = language_model_importance(self.network.model, texts)
        return ImportanceReport(importance, language_model_pruning_curve(
            self.network.model, texts, importance, curve_counts(importance.gradient.size)))

    def labels(self) -> dict[str, PatternScores]:
        return {"decoder_self": language_model_head_labels(self.network)}

    # --- the residual stream (RESIDUAL_STREAM) ----------------------------------------------------------------

    def residual_stream(self, text: str) -> ResidualStream:
        """The text's first MAX_TOKENS tokens' residual stream, (L+1, T, d): the embeddings, then each block's
        output."""
        ids = self.encode(text)[:LLM_MAX_TOKENS]
        if not ids:
            raise ValueError(f"{self.model_id}: the text has no tokens")
        hidden, cache = self.network.model.residual_stream_and_cache(torch.tensor([ids], device=self.device))
        return ResidualStream(ids, self.token_texts(ids), hidden[:, 0], cache)

    @property
    def device(self) -> torch.device:
        """Where the network's weights are (the CPU in the app; CUDA in scripts/gpu_check.py)."""
        return self.network.model.embed.weight.device

    def unembed(self, hidden: torch.Tensor) -> torch.Tensor:
        """(..., d) -> (..., V) logits: the final RMSNorm, then the output matrix (tied to the embedding);
        differentiable, as blocks_from is."""
        return self.network.model.unembed(hidden)

    def blocks_from(self, start: int, hidden: torch.Tensor, heads: HeadPatch | None = None,
                    prefix: ResidualStream | None = None, stop: int | None = None) -> torch.Tensor:
        """Blocks start … stop−1 (all the rest without stop) on the residual hidden (B, T, d) entering block `start`
        (LlamaModel.blocks_from), with block `start`'s heads patched where `heads` says; with `prefix` (this
        adapter's residual_stream), hidden is the text's last T positions, and the keys and values of the positions
        before them are prefix.cache's."""
        offset = 0 if prefix is None else prefix.hidden.size(1) - hidden.size(1)
        past = None if not offset else KVCache(*(tuple(t[:, :, :offset] for t in part)
                                                 for part in (prefix.cache.keys, prefix.cache.values)))
        edit = None
        if heads is not None:
            column = heads.position - offset  # the patched position among hidden's

            def edit(outputs: torch.Tensor) -> torch.Tensor:  # (B, h, T, d_k) -> the same, the chosen heads replaced
                outputs = outputs.clone()
                at = outputs[:, :, column]  # (B, h, d_k)
                outputs[:, :, column] = torch.where(heads.chosen[..., None], heads.values.to(at.dtype), at)
                return outputs
        return self.network.model.blocks_from(start, hidden, edit_heads=edit, past=past, stop=stop)

    def block_on_suffixes(self, block: int, suffixes: list[torch.Tensor], prefix: ResidualStream,
                          last_only: bool = False) -> list[torch.Tensor]:
        """Block `block` on batches of runs over the text's last T_i positions each (block_on_suffixes, below),
        the earlier positions' keys and values prefix.cache's."""
        return block_on_suffixes(self.network.model, block, suffixes, prefix.cache, last_only)

    @torch.no_grad()
    def position_parts(self, text: str, position: int = -1) -> PositionParts:
        """The parts' outputs at one position of the text's first MAX_TOKENS tokens, from one run of the blocks: each
        head's weighted values times its columns of W_o, and each MLP's as its block's output less what entered the
        MLP (the block's input plus its attention's output, added as the block adds them)."""
        ids = self.encode(text)[:LLM_MAX_TOKENS]
        if not ids:
            raise ValueError(f"{self.model_id}: the text has no tokens")
        at = range(len(ids))[position]
        model, cfg = self.network.model, self.network.config
        embedded = model.embed(torch.tensor([ids], device=self.device))  # (1, T, d)
        rows, outputs, values, attention = [embedded[0, at]], [], [], []  # only position `at`: a long text's maps
        # of every block at once would be (L, h, T, T)

        def keep(hidden: torch.Tensor, attn, kv) -> None:  # a block's output (1, T, d) and its AttentionResult; copies,
            rows.append(hidden[0, at].clone())  # since a view would keep the whole tensor alive
            outputs.append(attn.output[0, at].clone())  # (d,) the attention's output, the sum of its heads'
            values.append(attn.heads[0, :, at].clone())  # (h, d_k)
            attention.append(attn.weights[0, :, at].clone())  # (h, T)

        model.blocks_from(0, embedded, each=keep)
        rows, values = torch.stack(rows), torch.stack(values)  # (L+1, d), (L, h, d_k)
        w_o = torch.stack([layer.self_attn.projection("o")[0] for layer in model.layers])  # (L, d, h·d_k)
        heads = torch.einsum("lhk,ldhk->lhd", values, w_o.view(len(outputs), cfg.hidden_size, cfg.num_heads,
                                                                cfg.head_dim))  # (L, h, d)
        entering_mlp = rows[:-1] + torch.stack(outputs)  # (L, d): as the block adds its attention's output
        return PositionParts(ids, self.token_texts(ids), at, rows[0], values, heads, rows[1:] - entering_mlp,
                             rows[-1], torch.stack(attention))

    @torch.no_grad()
    def block_parts(self, text: str, max_tokens: int) -> Iterator[BlockParts]:
        """Block by block (LlamaModel.blocks_from with stop), each block's maps, what its heads write per unit of
        weight (its values through W_O^h: value_norms.llama_head_writes) and its MLP's output as the block's output
        less what entered the MLP."""
        ids = self.encode(text)[:max_tokens]
        if not ids:
            raise ValueError(f"{self.model_id}: the text has no tokens")
        model = self.network.model
        hidden = model.embed(torch.tensor([ids], device=self.device))  # (1, T, d)
        for index, layer in enumerate(model.layers):
            kept = []
            output = model.blocks_from(index, hidden, each=lambda x, attn, kv, kept=kept: kept.append((attn, kv[1])),
                                       stop=index + 1)
            attn, values = kept[0]
            mixed = hidden + attn.output  # what the MLP reads, before its norm
            yield BlockParts(attn.weights[0], llama_head_writes(model, layer, values)[0], hidden[0], attn.output[0],
                             (output - mixed)[0])
            hidden = output

    @torch.no_grad()
    def logit_direction(self, final: torch.Tensor, token_id: int) -> torch.Tensor:
        """(d,): g ⊙ W_U[token] / rms(final), the final RMSNorm's own scale at `final` (RMSNorm.inverse_rms)."""
        norm, embedding = self.network.model.final_norm, self.network.model.embed.weight
        return norm.weight * embedding[token_id] * norm.inverse_rms(final)

    # --- queries and keys (QUERIES_KEYS) ------------------------------------------------------------------------

    @torch.no_grad()
    def queries_keys(self, text: str, layers: int | None = None) -> QueriesKeys:
        """Queries and keys (L', h, T, d_k) after RoPE of the text's first MAX_TOKENS tokens in layers 0 … L'−1, read
        with each attention module's own projection and rotation (GroupedQueryAttention.rotated_qkv); the blocks
        after the last layer asked are not run."""
        ids = self.encode(text)[:LLM_MAX_TOKENS]
        if not ids:
            raise ValueError(f"{self.model_id}: the text has no tokens")
        model, cfg = self.network.model, self.network.config
        cos, sin = rotary_cos_sin(torch.arange(len(ids), device=self.device), cfg.head_dim, cfg.rope_theta)  # (T, d_k)
        hidden = model.embed(torch.tensor([ids], device=self.device))  # (1, T, d): the residual entering block 0
        queries, keys = [], []
        for block in model.layers[:cfg.num_layers if layers is None else layers]:
            q, k, _ = block.self_attn.rotated_qkv(block.attention_norm(hidden), cos, sin)  # (1, h | h_kv, T, d_k)
            queries.append(q[0])
            keys.append(k[0].repeat_interleave(cfg.group_size, dim=0))  # (h, T, d_k): query head i reads i // group
            hidden = block(hidden, cos, sin, None, None, False)[0]  # no maps: the fused causal kernel
        half = cfg.head_dim // 2  # rotate_half turns dimension p with p + d_k/2
        pairs = np.stack([np.arange(half), np.arange(half) + half], axis=1)  # (P, 2)
        frequencies = 1.0 / cfg.rope_theta ** (np.arange(0, cfg.head_dim, 2) / cfg.head_dim)  # (P,) as rotary_cos_sin
        return QueriesKeys(ids, self.token_texts(ids), torch.stack(queries), torch.stack(keys), pairs,
                           frequencies, cfg.head_dim ** -0.5)

    # --- generation (GENERATION) ------------------------------------------------------------------------------

    def encode(self, text: str) -> list[int]:
        return self.network.encode(text)

    def token_texts(self, ids: list[int]) -> list[str]:
        return self.network.token_texts(ids)

    def decode(self, ids: list[int]) -> str:
        return self.network.decode(ids)

    def chat_prompt(self, question: str) -> str:
        """The question as the Instruct model was trained to read one: its chat template, up to the assistant turn."""
        return self.network.chat_prompt([{"role": "user", "content": question}])

    @property
    def stop_ids(self) -> tuple[int, ...]:
        """Tokens after which the model has finished (SmolLM2: <|im_end|>)."""
        return (self.network.eos_id,)

    def next_token(self, ids: list[int], cache: KVCache | None, *, temperature: float = 0.0,
                   top_k: int | None = None, seed: int = 0) -> tuple[GenerationStep, KVCache]:
        """One generation step with the KV cache (model.generation.generation_step): cache holds ids[:-1] (None at
        the first step); the step's attention holds the last query's row in every layer and head, (L, h, T_k)."""
        return generation_step(self.network.model, ids, cache, temperature=temperature, top_k=top_k, seed=seed,
                               need_weights=True)

    def time_step(self, ids: list[int], cache: KVCache) -> StepTiming:
        """The forward pass predicting the token after ids, timed with `cache` (holding ids[:-1]) and without."""
        return time_step_both_ways(self.network.model, ids, cache)

    def fork_top(self, ids: list[int], position: int, branches: int, steps: int, **choice) -> Fork:
        """The text forked at `position` into its `branches` most likely tokens, each continued to `steps` tokens,
        every branch reading the prefix's KV cache (model.branches.fork_top: cache, temperature, top_k, seed)."""
        return fork_top(self.network.model, ids, position, branches, steps, **choice)

    def fork_temperatures(self, ids: list[int], position: int, temperatures: tuple[float, ...], steps: int,
                          **choice) -> Fork:
        """One branch per temperature at `position`, one seed (model.branches.fork_temperatures)."""
        return fork_temperatures(self.network.model, ids, position, temperatures, steps, **choice)
    # --- heads switched off while it writes (model/switch_off.py's WritesWithHeadsOff) ---------------------------

    def _mask(self, heads: Heads) -> torch.Tensor | None:  # (L, h) of 0/1, None with every head on
        masks = self.head_masks(tuple((DECODER_SELF, layer, head) for layer, head in heads))
        return None if masks is None else masks[DECODER_SELF]

    def generate_with_heads_off(self, prompt_ids: list[int], steps: int, heads: Heads, *, temperature: float = 0.0,
                                top_k: int | None = None, seed: int = 0, stop_ids: tuple[int, ...] = ()) -> list[int]:
        """Up to `steps` new token ids after the prompt, with the KV cache, every step with `heads` ((layer, head),
        0-based) zeroed before W_o; greedy or sampled as model.generation.generate; ends after a token in stop_ids."""
        return generate(self.network.model, list(prompt_ids), steps, temperature=temperature, top_k=top_k, seed=seed,
                        stop_ids=stop_ids, head_mask=self._mask(heads)).new_ids

    @torch.no_grad()
    def losses_with_heads_off(self, ids: list[int], heads: Heads) -> np.ndarray:
        """(T − 1,) float32 next-token cross-entropy (nats) of the text's first MAX_TOKENS ids with `heads` off: entry t
        is the loss of predicting ids[t + 1] at position t (one forward, no maps)."""
        ids = list(ids)[:LLM_MAX_TOKENS]
        logits = self.network.model(torch.tensor([ids]), need_weights=False, head_mask=self._mask(heads)).logits[0]
        targets = torch.tensor(ids[1:], device=logits.device)
        return F.cross_entropy(logits[:-1].float(), targets, reduction="none").cpu().numpy()


# --- a residual sweep's runs of every position through one block ----------------------------------------------

@torch.no_grad()
def block_on_suffixes(model: LlamaModel, index: int, suffixes: list[torch.Tensor], past: KVCache,
                      last_only: bool = False) -> list[torch.Tensor]:
    """Block `index` on several batches of runs at once, batch i (n_i, T_i, d) the residual entering it at the
    text's last T_i positions, T₀ − T_i … T₀ − 1, past (a batch of one's KVCache over all T₀ positions) holding
    the keys and values of the positions before them: what blocks_from(index, batch, past=…, stop=index + 1)
    gives for each batch, with the row-wise parts (the norms, W_qkv, W_o, the MLP) on every row of every batch
    as one matrix and only the attention per batch. Activation patching's runs of different positions have
    different lengths; one matrix of all their rows multiplies faster than one per position.
    last_only: each run's last position only comes out, (n_i, 1, d), its keys and values still computed for
    every position (the last block of a sweep that reads the last position)."""
    layer, attention = model.layers[index], model.layers[index].self_attn
    known = past.keys[index].size(2)  # T₀
    rows = torch.cat([suffix.reshape(-1, suffix.size(-1)) for suffix in suffixes])  # (Σ n_i T_i, d)
    qkv = F.linear(layer.attention_norm(rows), attention.w_qkv.weight)  # (Σ n_i T_i, (h + 2 h_kv) d_k)
    heads, kept = [], []
    for suffix, part in zip(suffixes, qkv.split([suffix.size(0) * suffix.size(1) for suffix in suffixes])):
        runs, length = suffix.shape[:2]
        start = known - length
        q, k, v = (piece.view(runs, length, -1, attention.d_k).transpose(1, 2)
                   for piece in part.view(runs, length, -1).split(attention.split_sizes, dim=-1))
        cos, sin = rotary_cos_sin(torch.arange(start, known, device=rows.device), model.cfg.head_dim,
                                  model.cfg.rope_theta)  # (T_i, d_k) each
        q, k = apply_rotary(q, cos, sin), apply_rotary(k, cos, sin)
        k = torch.cat([past.keys[index][:, :, :start].expand(runs, -1, -1, -1), k], dim=2)  # (n_i, h_kv, T₀, d_k)
        v = torch.cat([past.values[index][:, :, :start].expand(runs, -1, -1, -1), v], dim=2)
        # the last query sees every key; the others the keys up to their own position
        mask = None if last_only else causal_mask_after(start, length, rows.device)
        out = F.scaled_dot_product_attention(q[:, :, -1:] if last_only else q, k, v, attn_mask=mask,
                                             enable_gqa=True)  # (n_i, h, T_i or 1, d_k)
        heads.append(out.transpose(1, 2).reshape(-1, attention.num_heads * attention.d_k))
        kept.append(suffix[:, -1:] if last_only else suffix)
    x = torch.cat([run.reshape(-1, run.size(-1)) for run in kept]) + attention.w_o(torch.cat(heads))
    normed = layer.ffn_norm(x)
    x = x + layer.ffn_down(F.silu(layer.ffn_gate(normed)) * layer.ffn_up(normed))  # SwiGLU, as LlamaBlock
    return [out.view(run.shape) for out, run in zip(x.split([run.size(0) * run.size(1) for run in kept]), kept)]

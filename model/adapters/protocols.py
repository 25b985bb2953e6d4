"""What a view may ask a model: the core `LabModel` and the small protocols a model has only with a capability.

A view checks the capability (`lab.can(GENERATION)`) or the protocol (`isinstance(lab, Generates)`), never the
family. Each protocol is runtime-checkable, so a test can hold every adapter to what its capabilities promise.

Shapes: every map (L, h, T_q, T_k), rows are queries (model.sources).
"""
from __future__ import annotations

from dataclasses import dataclass
from collections.abc import Iterator, Sequence
from typing import Any, Protocol, runtime_checkable

import numpy as np
import torch

from model.data import SPECIALS, UNK, Vocabulary
from model.explain.importance import EncoderImportance, HeadImportance, LanguageModelImportance
from model.explain.patterns import PatternScores
from model.branches import Fork
from model.generation import GenerationStep
from model.kv_cache import StepTiming
from model.llama import KVCache
from model.sources import AnalysedInput

SwitchedOff = tuple[tuple[str, int, int], ...]  # (kind, layer, head), 0-based: heads switched off


class LoadedNetwork(Protocol):
    """A loaded network as an adapter wraps it (model.checkpoint.LoadedModel, PretrainedEncoder, LoadedLlama, ...): it
    names its family, the key of the adapters' registry (model/adapters/base.adapt); what else it holds is its own
    adapter's business."""

    family: str


@runtime_checkable
class LabModel(Protocol):
    """What every family offers the pages (model/adapters/__init__.py: how to add one)."""

    model_id: str
    network: LoadedNetwork  # the loaded network and what it reads text with
    family: str
    layout: dict[str, tuple[int, int]]  # kind -> (layers, heads); {} for a model without heads
    capabilities: frozenset[str]
    positions: str  # how it knows word order: "table", "learned", "rotary", "recurrence", "unknown"
    label_sentences: int  # how many sentences labels() reads (0 without PATTERNS)

    @property
    def config(self) -> Any: ...

    @property
    def task(self) -> str: ...

    @property
    def head_dim(self) -> int: ...

    def can(self, capability: str) -> bool: ...

    def analyse(self, text: str, switched_off: SwitchedOff = ()) -> AnalysedInput: ...

    def explain(self, analysed: AnalysedInput) -> dict[str, np.ndarray]: ...

    def labels(self) -> dict[str, PatternScores]: ...

    def position_table(self) -> torch.nn.Module | None: ...


@dataclass(frozen=True)
class ImportanceReport:
    """A model's head importance and its pruning curve, one shape for every family that scores heads.

    heads: the family's scores of every head (HeadImportance for a translator: ablation drops and gradients per
    kind; EncoderImportance: the embedding's change; LanguageModelImportance: the next-token loss's gradient);
    curve: the "switch off the k least important heads" points, each {"k": k, <measure>: value, ...}."""

    heads: HeadImportance | EncoderImportance | LanguageModelImportance
    curve: list[dict[str, float]]


@runtime_checkable
class ScoresHeads(Protocol):
    """A model whose heads can be scored and pruned (IMPORTANCE)."""

    def importance(self) -> ImportanceReport: ...


@runtime_checkable
class Generates(Protocol):
    """A model that writes text one token at a time with its own KV cache (GENERATION)."""

    max_tokens: int  # the longest text analysed with every map

    def encode(self, text: str) -> list[int]: ...

    def token_texts(self, ids: list[int]) -> list[str]: ...

    def decode(self, ids: list[int]) -> str: ...

    def chat_prompt(self, question: str) -> str: ...

    @property
    def stop_ids(self) -> tuple[int, ...]: ...

    def next_token(self, ids: list[int], cache: KVCache | None, *, temperature: float = 0.0,
                   top_k: int | None = None, seed: int = 0) -> tuple[GenerationStep, KVCache]: ...

    def time_step(self, ids: list[int], cache: KVCache) -> StepTiming: ...

    def fork_top(self, ids: list[int], position: int, branches: int, steps: int, **choice) -> Fork: ...

    def fork_temperatures(self, ids: list[int], position: int, temperatures: tuple[float, ...], steps: int,
                          **choice) -> Fork: ...


@dataclass(frozen=True)
class ResidualStream:
    """The residual stream of one text: what each block adds to, as the logit lens and activation patching read it.

    hidden (L+1, T, d) float32: row 0 the token embeddings, row l the output of block l (before the final norm), so
    `unembed(hidden[-1])` is the model's own next-token logits after each position."""

    ids: list[int]
    tokens: list[str]
    hidden: torch.Tensor
    cache: KVCache | None = None  # every block's keys and values over the text, from the same pass (batch of one):
    # what blocks_from reads for the positions before a shorter run's (None: the family keeps none)


@dataclass(frozen=True)
class PositionParts:
    """What each part of the model writes into the residual stream at one position of one text, as the direct logit
    attribution reads it: final = embedding + heads.sum((0, 1)) + mlps.sum(0) up to float rounding, since each block
    adds its attention's output (the sum of its heads') and then its MLP's."""

    ids: list[int]
    tokens: list[str]
    position: int  # the position read, 0 … T−1
    embedding: torch.Tensor  # (d,) the token embedding there
    head_values: torch.Tensor  # (L, h, d_k): each head's attention-weighted values, before the output matrix
    heads: torch.Tensor  # (L, h, d): … times the head's columns of the output matrix: what the head adds
    mlps: torch.Tensor  # (L, d): what each block's MLP adds
    final: torch.Tensor  # (d,) the last block's output (before the final norm)
    attention: torch.Tensor  # (L, h, T): that position's attention weights over the keys, in each head


@dataclass(frozen=True)
class BlockParts:
    """One block's parts at every position of one text (the information-flow graph, model/explain/flow.py): the
    residual after the attention is entering + Σ_h Σ_j weights[h, :, j, None] · written[h, j] (= entering + attention)
    up to float rounding, and the block's output is that plus mlp."""

    weights: torch.Tensor  # (h, T, T) attention weights, rows are queries
    written: torch.Tensor  # (h, T, d): f_h(x_j) = v_j W_O^h, what head h adds per unit of weight on key j
    entering: torch.Tensor  # (T, d) the residual entering the block
    attention: torch.Tensor  # (T, d) the attention's output, the sum of its heads'
    mlp: torch.Tensor  # (T, d) the MLP's output


@dataclass(frozen=True)
class HeadPatch:
    """Heads' outputs put in place of a run's own at one position, in the first block a blocks_from runs (per-head
    patching): run b's head i takes values[b, i] where chosen[b, i], the rest keep their own."""

    position: int
    values: torch.Tensor  # (B, h, d_k) attention-weighted values before the output matrix, as PositionParts'
    chosen: torch.Tensor  # (B, h) bool


@runtime_checkable
class ReadsResidualStream(Protocol):
    """A model whose residual stream after every block, and whose unembedding, can be read (RESIDUAL_STREAM).
    blocks_from and unembed are differentiable: on a residual that requires grad, under grad mode, they give its
    gradient (gradient × input on the embeddings, model/explain/influence.py)."""

    def residual_stream(self, text: str) -> ResidualStream: ...

    def unembed(self, hidden: torch.Tensor) -> torch.Tensor:
        """(..., d) residual vectors -> (..., V) logits: the final norm, then the output matrix."""
        ...

    def blocks_from(self, start: int, hidden: torch.Tensor, heads: HeadPatch | None = None,
                    prefix: ResidualStream | None = None, stop: int | None = None) -> torch.Tensor:
        """The rest of a forward: blocks start … L−1 (… stop−1 with `stop`: a sweep that adds runs block by block) on
        hidden (B, T, d), the residual stream entering block `start`
        (row `start` of residual_stream's hidden), at positions 0 … T−1; their output (B, T, d) before the final norm,
        hidden itself when start = L. Activation patching edits a row and runs only the blocks after it; with
        `heads`, block `start`'s heads are patched too (per-head patching). With `prefix`, the residual stream of a
        text of T₀ ≥ T tokens, hidden holds its last T positions only, T₀−T … T₀−1 (a HeadPatch's position still
        counts from the text's start), and every block reads the keys and values of the positions before them from
        prefix: a causal model's patch at position t changes nothing before t, so only t … T₀−1 need to run again."""
        ...

    def block_on_suffixes(self, block: int, suffixes: list[torch.Tensor], prefix: ResidualStream,
                          last_only: bool = False) -> list[torch.Tensor]:
        """One block on several batches at once, batch i (n_i, T_i, d) the residual entering block `block` at the
        last T_i positions of prefix's text, the positions before read from prefix (as blocks_from with `prefix` and
        stop = block + 1, for each batch); with last_only, each run's last position only comes out, (n_i, 1, d).
        A residual sweep's runs of every patched position go through a block together."""
        ...

    def position_parts(self, text: str, position: int = -1) -> PositionParts:
        """Every part's output at one position of the text (the last by default): the embedding, each head, each
        block's MLP, and that position's attention weights."""
        ...

    def block_parts(self, text: str, max_tokens: int) -> Iterator[BlockParts]:
        """Each block's BlockParts over the text's first max_tokens tokens, block 0 first, from one run of the
        blocks (one block's parts held at a time)."""
        ...

    def logit_direction(self, final: torch.Tensor, token_id: int) -> torch.Tensor:
        """(d,): the vector whose dot product with the final residual `final` (d,), or with any part of it, is that
        part's direct contribution to the token's logit: the output matrix's row through the final norm, the norm's
        scale at `final` held fixed (an RMSNorm has no mean, so the parts' contributions sum to the logit)."""
        ...

    def encode(self, text: str) -> list[int]: ...

    def token_texts(self, ids: list[int]) -> list[str]: ...


@dataclass(frozen=True)
class WordVocabulary:
    """The closed word vocabulary of one of our own translators (VOCABULARY): the words it reads, the words it
    writes, and how many words it reads at most. A word outside `source` is read as <unk>."""

    task: str  # what it was trained on: "en-fr", "copy", ...
    source: Vocabulary  # the words of its input language, the four specials first
    target: Vocabulary  # the words it writes
    max_words: int  # the longest input it reads, in words (its longest sequence less the <eos>)

    @property
    def known_words(self) -> list[str]:
        """The input words, without the specials, in the vocabulary's order."""
        return [word for word in self.source.itos if word not in SPECIALS]

    def knows(self, word: str) -> bool:
        return word in self.source.stoi

    @property
    def unknown_id(self) -> int:
        return self.source.stoi[UNK]


@runtime_checkable
class HasWordVocabulary(Protocol):
    """A model with a closed word vocabulary (VOCABULARY): the sidebar lists its words, unknown words get a
    suggestion, the decoding page reads its output words."""

    @property
    def vocabulary(self) -> WordVocabulary: ...


@runtime_checkable
class EmbedsWords(Protocol):
    """An encoder whose vectors of single words compare words by meaning (EMBEDDING): the closest known word to
    an unknown one."""

    def word_vectors(self, words: Sequence[str]) -> np.ndarray:
        """(n, d) float32 unit-length vectors of the words, mean-pooled over their pieces."""
        ...


@dataclass(frozen=True)
class QueriesKeys:
    """Every head's queries and keys of one text as its pre-softmax scores read them: scores = q·kᵀ · scale.

    queries, keys (L', h, T, d_k) float32 for layers 0 … L'−1, after the rotary position embedding; keys per query
    head (a grouped-query model's shared key heads repeated, so keys[l, h] is what head h reads). rotary_pairs (P, 2)
    int: the dimensions each RoPE rotation turns together (P = d_k / 2), turned rotary_frequencies[p] radians per
    position (P,); scale: the 1/√d_k the scores are multiplied by."""

    ids: list[int]
    tokens: list[str]
    queries: torch.Tensor
    keys: torch.Tensor
    rotary_pairs: np.ndarray
    rotary_frequencies: np.ndarray
    scale: float


@runtime_checkable
class ReadsQueriesKeys(Protocol):
    """A rotary model whose heads' queries and keys can be read (QUERIES_KEYS)."""

    def queries_keys(self, text: str, layers: int | None = None) -> QueriesKeys:
        """The text's queries and keys in the first `layers` layers (every layer when None): a forward that stops
        after the last layer asked."""
        ...

    def encode(self, text: str) -> list[int]: ...

    def token_texts(self, ids: list[int]) -> list[str]: ...


class GeneratingModel(LabModel, Generates, Protocol):
    """What the generation page's views take: a model with GENERATION (its tokens in and out, one step at a time)."""


class ResidualModel(LabModel, Generates, ReadsResidualStream, Protocol):
    """What the answer page's views take: its tokens in and out, and its residual stream (RESIDUAL_STREAM)."""

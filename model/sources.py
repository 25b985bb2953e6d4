"""What pages draw of one input to one model, whatever the model: `AnalysedInput` and its `KindMaps`.

The adapters of model/adapters/ build them (`analyse_toy` for our translators, `analyse_encoder` for a BERT
encoder, model.local_models for transformers models): the attention kinds the model has, each as a `KindMaps` of
numpy arrays shaped (layers, heads, queries, keys) with the token labels of both axes, plus what the model can do
(capabilities). Pages branch on capabilities and on the kinds present, never on the model's class.

Shapes (every array is numpy, float):
    KindMaps.weights  (L, h, T_q, T_k)  softmax weights; a row sums to 1 over the keys it may see (float16 for a
                                        long input: compact_dtype)
    KindMaps.scores   (L, h, T_q, T_k)  q·k/√d_k before mask and softmax, or None where the model gives none
    KindMaps.masked   (T_q, T_k)        True where a causal mask hides the key (decoder self-attention), or None
    KindMaps.source_block (first, end)  a decoder-only translator's English columns, its French rows from `end` on
    KindMaps "alignment"  (1, 1, T_out + 1, T_src)  the GRU's one additive alignment (Bahdanau et al. 2015): no heads
    Encoding.final_vectors (T, d)       the encoder's last-layer token vectors (encoders)
    Encoding.embedding     (d,)         mean-pooled, L2-normalised sentence embedding (sentence encoders)

Queries are rows (what is attending), keys are columns (what is attended to). Kinds are named "encoder_self",
"decoder_self" and "cross" (queries from the decoder, keys from the encoder), as in `python -m model.inspect`, and
"alignment" (the GRU's, one map; not in its adapter's layout, which lists the heads a page can pick).
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np
import torch

from model.bert import EncodedText, PretrainedEncoder, mean_pooled_embedding
from model.capabilities import ABLATION, EMBEDDING, RESCALE, STEPS, TRANSLATION, VOCABULARY
from model.data import is_punctuation
from model.decode import DecodeResult
from model.decoder_only import sequence_tokens
from model.explain.next_token import NextTokenPrediction

KIND_NAMES = ("encoder_self", "decoder_self", "cross")


@dataclass(frozen=True)
class KindMaps:
    """One attention kind of one analysed input (shapes in the module docstring)."""

    kind: str
    weights: np.ndarray
    scores: np.ndarray | None
    query_tokens: list[str]
    key_tokens: list[str]
    masked: np.ndarray | None = None
    # (first, end): the key columns of the source sentence inside one causal map whose rows from `end` on write the
    # output (a decoder-only translator: the English words between <bos> and "⟶"), or None. Rows end.. by columns
    # first..end-1 are where such a model does what an encoder-decoder's cross-attention does.
    source_block: tuple[int, int] | None = None

    @property
    def layers(self) -> int:
        return self.weights.shape[0]

    @property
    def heads(self) -> int:
        return self.weights.shape[1]


@dataclass(frozen=True)
class Translation:
    """What a translation model wrote (TRANSLATION): its tokens, and for our own translators (STEPS) the greedy decode
    step by step (its probabilities, the source as the vocabulary read it). The decode's attention is not kept here:
    the maps are the analysis's `maps`, once."""

    output_tokens: list[str]
    decode: DecodeResult | None = None


@dataclass(frozen=True)
class Encoding:
    """What an encoder adds to its maps (EMBEDDING): per input token, whether it is a [CLS]/[SEP]-like token and the
    index of the word it is a piece of; its last-layer token vectors (T, d) and its sentence embedding (d,)."""

    special: list[bool]
    word_ids: list[int | None]
    final_vectors: np.ndarray
    embedding: np.ndarray


@dataclass
class AnalysedInput:
    """Everything a page draws about one input to one model: its maps of every kind, and the typed parts only some
    models have, each behind a capability (`can(TRANSLATION)`: translation; `can(EMBEDDING)`: encoding;
    `can(NEXT_TOKEN)`: next_token)."""

    model_id: str
    text: str
    input_tokens: list[str]
    maps: dict[str, KindMaps]  # every kind the model has: KIND_NAMES in that order, or the GRU's "alignment"
    capabilities: frozenset[str]
    truncated_from: int | None = None  # token count before the input was cut to the model's limit
    unknown: list[str] = field(default_factory=list)  # input pieces the vocabulary does not know
    translation: Translation | None = None
    encoding: Encoding | None = None
    next_token: NextTokenPrediction | None = None  # a causal LLM: the token after the text, the text's own loss

    @property
    def kinds(self) -> list[str]:
        return list(self.maps)

    def can(self, capability: str) -> bool:
        return capability in self.capabilities

    @property
    def output_tokens(self) -> list[str]:
        """The translation's tokens (TRANSLATION)."""
        return self._part(self.translation, TRANSLATION).output_tokens

    @property
    def decode(self) -> DecodeResult:
        """Our own translator's greedy decode, step by step: the models with a closed VOCABULARY."""
        return self._part(self._part(self.translation, TRANSLATION).decode, VOCABULARY)

    @property
    def special(self) -> list[bool]:
        """Per input token: True for [CLS]/[SEP]-like tokens (EMBEDDING)."""
        return self._part(self.encoding, EMBEDDING).special

    def _part(self, part, capability: str):
        if part is None:
            raise AttributeError(f"{self.model_id}: no {capability} in this analysis (ask can({capability!r}))")
        return part


# Maps heavier than this (float32 weights and scores of one kind together) are kept in float16: a long text's maps
# are what a replica's cache holds most of (runtime/result_cache.py). float16 keeps 3 significant digits, more than a
# heatmap's colours or its hover (3 decimals) show; views that compute from the maps read them as float32
# (as_float32). Short inputs, and every reference test's, stay float32.
COMPACT_ABOVE_BYTES = 32 * 2**20


def compact_dtype(layers: int, heads: int, queries: int, keys: int) -> np.dtype:
    """float16 for maps of that shape whose float32 weights and scores together pass COMPACT_ABOVE_BYTES, else
    float32."""
    heavy = layers * heads * queries * keys * 4 * 2 > COMPACT_ABOVE_BYTES
    return np.dtype(np.float16 if heavy else np.float32)


def compact_maps(analysed: AnalysedInput) -> AnalysedInput:
    """The analysis with each heavy kind's weights and scores in float16 (compact_dtype); the same object when no
    kind is heavy or all already are."""
    maps = {}
    for kind, kind_maps in analysed.maps.items():
        dtype = compact_dtype(*kind_maps.weights.shape)
        if dtype == np.float16 and kind_maps.weights.dtype != np.float16:
            kind_maps = replace(kind_maps, weights=kind_maps.weights.astype(np.float16),
                                scores=None if kind_maps.scores is None else kind_maps.scores.astype(np.float16))
        maps[kind] = kind_maps
    if all(maps[kind] is analysed.maps[kind] for kind in maps):
        return analysed
    return replace(analysed, maps=maps)


def as_float32(array: np.ndarray | None) -> np.ndarray | None:
    """A compact (float16) map as float32 for arithmetic (numpy's float16 sums round every result); float32 and
    float64 arrays as they are."""
    if array is None or array.dtype != np.float16:
        return array
    return array.astype(np.float32)


def analyse_toy(model_id: str, text: str, result: DecodeResult) -> AnalysedInput:
    """A shipped or trained toy model's greedy decode as an AnalysedInput (the Transformer has all three kinds, the
    GRU with attention its one alignment, the GRU without none)."""
    # Decoder rows are named by the token written at that step (as on the Decoding page); the decoder's own keys are
    # its inputs (<bos> and the tokens written so far).
    source, written, inputs = result.source.tokens, result.written_tokens, result.decoder_input_tokens
    maps = {}
    if "encoder_self" in result.attention:
        axes = {"encoder_self": (source, source), "decoder_self": (written, inputs), "cross": (written, source)}
        for kind in KIND_NAMES:
            weights = result.attention[kind]
            masked = np.triu(np.ones(weights.shape[-2:], dtype=bool), 1) if kind == "decoder_self" else None
            maps[kind] = KindMaps(kind, weights, result.attention[f"{kind}_scores"], *axes[kind], masked)
        capabilities = frozenset({ABLATION, RESCALE, TRANSLATION, STEPS})
    else:  # GRU seq2seq: an additive alignment (T, S) or nothing; shown by the page as such, not as heads
        if "alignment" in result.attention:  # (T, S): a row per step, the one that writes <eos> included
            maps["alignment"] = KindMaps("alignment", result.attention["alignment"][None, None], None, written,
                                         list(source))
        capabilities = frozenset({TRANSLATION, STEPS})
    return AnalysedInput(model_id, text, list(source), maps, capabilities, truncated_from=result.source.truncated_from,
                         unknown=list(result.source.unknown), translation=_translation(result))


def _translation(result: DecodeResult) -> Translation:
    """The decode without its attention (the analysis's maps hold it)."""
    return Translation(list(result.output_tokens), replace(result, attention={}))


def between_sequences(result: DecodeResult) -> KindMaps | None:
    """What a decode reads of its source as maps: a Transformer's cross-attention (L, h, T, S) or the GRU's one
    alignment (1, 1, T, S), rows the token written at each step; None for a decoder-only translator's decode (its
    English is in its one causal map) or a GRU without attention."""
    maps = analyse_toy("", "", result).maps
    return maps.get("cross") or maps.get("alignment")


def analyse_causal_translation(model_id: str, text: str, result: DecodeResult,
                               capabilities: frozenset[str]) -> AnalysedInput:
    """The decoder-only translator's greedy decode as an AnalysedInput: one kind, decoder_self (L, h, N, N), over
    the sequence "<bos> english ⟶ french" it read; rows after "⟶" are the French tokens, and their columns before
    it are the English block (what the encoder-decoder reads through cross-attention)."""
    tokens = sequence_tokens(result.source.tokens, result.decoder_input_tokens[1:])
    weights = result.attention["decoder_self"]
    masked = np.triu(np.ones(weights.shape[-2:], dtype=bool), 1)  # (N, N) True above the diagonal: not seen
    separator = len(tokens) - len(result.decoder_input_tokens)  # "⟶" follows <bos> and the English words
    maps = {"decoder_self": KindMaps("decoder_self", weights, result.attention["decoder_self_scores"], tokens,
                                     list(tokens), masked, source_block=(1, separator))}
    return AnalysedInput(model_id, text, list(result.source.tokens), maps, capabilities,
                         truncated_from=result.source.truncated_from, unknown=list(result.source.unknown),
                         translation=_translation(result))


def source_block_shares(maps) -> np.ndarray:
    """(L, h): per head, the mean over the output rows (from source_block's end on) of their weight on the source
    columns: how much of what a decoder-only translator's French rows read is the English sentence. maps: a
    KindMaps, or anything with its weights (L, h, T, T) and source_block."""
    first, end = maps.source_block
    return maps.weights[:, :, end:, first:end].sum(-1).mean(-1)


def analyse_encoder(model_id: str, text: str, model: PretrainedEncoder,
                    head_mask: torch.Tensor | None = None) -> AnalysedInput:
    """A BERT encoder's self-attention over its real subword tokens; head_mask (L, h): 0 switches a head off."""
    encoded: EncodedText = model.encode(text)
    out = model.run(encoded, head_mask=head_mask)
    hidden = out.hidden  # (1, T, d)
    embedding = mean_pooled_embedding(hidden, torch.ones(hidden.shape[:2]))[0]
    maps = {"encoder_self": KindMaps("encoder_self", out.weights[:, 0].numpy(), out.scores[:, 0].numpy(),
                                     list(encoded.tokens), list(encoded.tokens))}
    return AnalysedInput(model_id, text, list(encoded.tokens), maps, frozenset({ABLATION, RESCALE, EMBEDDING}),
                         truncated_from=encoded.truncated_from, unknown=list(encoded.unknown),
                         encoding=Encoding(list(encoded.special), list(encoded.word_ids), hidden[0].numpy(),
                                           embedding.numpy()))


# --- views of an encoder's maps: hide special tokens, merge word pieces ---------------------------------------

def hide_tokens(maps: KindMaps, keep: list[bool]) -> KindMaps:
    """Drop the rows and columns of tokens with keep False (rows then sum to less than 1: the share that went to
    the hidden tokens is not spread over the others). Scores are dropped: a re-softmax would change meaning."""
    index = np.flatnonzero(keep)
    return replace(maps, weights=maps.weights[:, :, index][:, :, :, index], scores=None,
                   query_tokens=[maps.query_tokens[i] for i in index], key_tokens=[maps.key_tokens[i] for i in index],
                   masked=None if maps.masked is None else maps.masked[np.ix_(index, index)])


def word_groups(tokens: list[str], word_ids: list[int | None]) -> tuple[list[list[int]], list[str]]:
    """Token positions grouped by word (special tokens alone) and each group's label ("un ##believ ##ably" ->
    "unbelievably")."""
    groups: list[list[int]] = []
    for position, word in enumerate(word_ids):
        if groups and word is not None and word_ids[groups[-1][0]] == word:
            groups[-1].append(position)
        else:
            groups.append([position])
    labels = ["".join(tokens[i].removeprefix("##") for i in group) for group in groups]
    return groups, labels


def merge_word_pieces(maps: KindMaps, word_ids: list[int | None]) -> KindMaps:
    """One row and column per word: the mean over the word's query pieces, the sum over its key pieces, so each
    row still sums to 1 (Clark et al. 2019, "What Does BERT Look At?", §4.1 do the same)."""
    groups, labels = word_groups(maps.key_tokens, word_ids)
    merge = np.zeros((len(word_ids), len(groups)))  # (T, W): 1 where token t belongs to word w
    for w, group in enumerate(groups):
        merge[group, w] = 1.0
    keys_summed = maps.weights @ merge  # (L, h, T, W)
    rows_averaged = np.einsum("lhtw,tv->lhvw", keys_summed, merge / merge.sum(0, keepdims=True))  # (L, h, W, W)
    return replace(maps, weights=rows_averaged, scores=None, query_tokens=labels, key_tokens=labels, masked=None)


def special_token_shares(weights: np.ndarray, key_tokens: list[str]) -> dict[str, np.ndarray]:
    """Per head (L, h): the mean share of each query's attention on [CLS], on [SEP] and on punctuation keys."""
    def share(on: np.ndarray) -> np.ndarray:
        return weights[..., on].sum(-1).mean(-1)

    keys = np.array(key_tokens, dtype=object)
    return {"cls": share(keys == "[CLS]"), "sep": share(keys == "[SEP]"),
            "punctuation": share(np.array([is_punctuation(t) for t in key_tokens]))}


def token_movement(original: np.ndarray, changed: np.ndarray) -> np.ndarray:
    """(T,) how far each token's final vector moved: 1 − cosine similarity of its (T, d) rows."""
    dot = (original * changed).sum(-1)
    norms = np.linalg.norm(original, axis=-1) * np.linalg.norm(changed, axis=-1)
    return 1.0 - dot / np.maximum(norms, 1e-12)

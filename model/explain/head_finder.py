"""Find and compare heads: every head of a kind ranked by what it sends from one query token to one key token, and one
head's maps on two texts side by side.

The ranking reads the analysis's own maps: weight[l, h] = α^{l,h}[query, key], and, for a model whose value norms we
can read (NORMS), norm[l, h] = ‖α^{l,h}[query, key] · f_{l,h}(x_key)‖₂ (Kobayashi et al. 2020, model.explain
.value_norms): how far that key's value really moves the query's output, not only how much weight it gets.

Tokens are named by their spelling (`token_index`): the first token spelled QUERY, where a token's spelling is its
text without the tokenizer's marks (WordPiece's "##" before a word's later pieces, byte-level BPE's "Ġ" or a leading
space, SentencePiece's "▁" before a word's first piece; our toy translators' tokens are whole words, unmarked), and a
word split into pieces is named by its first piece (the word's whole spelling finds its first piece). Shapes: L
layers, h heads, T_q queries, T_k keys.
"""
from __future__ import annotations

import difflib
from dataclasses import dataclass

import numpy as np

from model.capabilities import NORMS
from model.sources import AnalysedInput, KindMaps

WORD_START_MARKS = ("Ġ", "▁", " ")  # a byte-level BPE's or SentencePiece's mark of a token that begins a word
CONTINUATION_MARK = "##"  # WordPiece's mark of a word's later piece


@dataclass(frozen=True)
class HeadRanking:
    """Every head of one kind, ranked by what it sends from one query token to one key token.

    weight (L, h) float32: α[l, h, query, key]; norm (L, h) float32: the value-weighted norm at the same cell, None
    for a model without NORMS. by_weight, by_norm: every (layer, head), 0-based, the largest first (ties in layer and
    head order); by_norm is None with norm."""

    kind: str
    query_index: int
    key_index: int
    query_token: str
    key_token: str
    weight: np.ndarray
    norm: np.ndarray | None
    by_weight: list[tuple[int, int]]
    by_norm: list[tuple[int, int]] | None


@dataclass(frozen=True)
class HeadComparison:
    """One head's maps on two texts and their difference where the tokens align.

    first, second (T_q, T_k) float32: the head's map of each text. Alignment: difflib's matching blocks over the two
    key token sequences (the tokens the texts share, in order; a replaced or inserted token aligns with nothing), the
    same alignment for the queries (for a self-attention kind the two axes are the same tokens). aligned_queries,
    aligned_keys: (index in first, index in second) pairs; difference (A_q, A_k) = second − first at the aligned
    cells, labelled by aligned_query_tokens and aligned_key_tokens."""

    kind: str
    layer: int
    head: int
    first: np.ndarray
    second: np.ndarray
    aligned_queries: list[tuple[int, int]]
    aligned_keys: list[tuple[int, int]]
    difference: np.ndarray
    aligned_query_tokens: list[str]
    aligned_key_tokens: list[str]


def spelling(token: str) -> tuple[str, bool | None]:
    """A token's text without its tokenizer's mark, and whether it begins a word: True after a word-start mark,
    False after "##", None when the token says nothing (a toy's word, a BPE piece without a space)."""
    if token.startswith(CONTINUATION_MARK) and len(token) > len(CONTINUATION_MARK):
        return token[len(CONTINUATION_MARK):], False
    for mark in WORD_START_MARKS:
        if token.startswith(mark) and token.strip(" "):
            return token[len(mark):].strip(" "), True
    return token, None


def words(tokens: list[str]) -> list[tuple[int, str]]:
    """(first token index, the word's spelling) of every word: a token continues the word before it when marked
    "##", or, in a text whose tokenizer marks word starts (some token has Ġ, ▁ or a leading space), when it has no
    mark and joins two letters or digits ("didn" + "'t" stays two words, " under" + "stood" one)."""
    marks_starts = any(spelling(token)[1] for token in tokens)
    found: list[tuple[int, str]] = []
    for index, token in enumerate(tokens):
        text, starts = spelling(token)
        continues = found and (starts is False or (
            marks_starts and starts is None and text[:1].isalnum() and found[-1][1][-1:].isalnum()))
        if continues:
            found[-1] = (found[-1][0], found[-1][1] + text)
        else:
            found.append((index, text))
    return found


class TokenLookup:
    """token_index over one list of tokens, read once: the first index each spelling names, exact and ignoring case
    (a name per token of a 512-token text asked one by one would read the whole text for each name)."""

    def __init__(self, tokens: list[str]):
        self.tokens = tokens
        self._exact: dict[str, int] = {}
        self._folded: dict[str, int] = {}
        named = [(index, token) for index, token in enumerate(tokens)]
        named += [(index, text) for index, token in enumerate(tokens)
                  for text, starts in [spelling(token)] if starts is not False]
        named += words(tokens)
        for index, text in named:
            if text:
                self._exact[text] = min(index, self._exact.get(text, index))
                self._folded[text.casefold()] = min(index, self._folded.get(text.casefold(), index))

    def index(self, name: str) -> int:
        """The index of the first token whose text as shown is `name`, or whose spelling is (a word's later "##"
        piece only by its text as shown), or that is the first piece of a word spelled `name`; exact spelling
        first, then ignoring case. ValueError naming the tokens."""
        wanted = name.strip()
        found = self._exact.get(wanted) if wanted else None
        if found is None and wanted:
            found = self._folded.get(wanted.casefold())
        if found is None:
            raise ValueError(f"no token spelled {name!r}; the tokens are {', '.join(repr(t) for t in self.tokens)}")
        return found


def token_index(tokens: list[str], name: str) -> int:
    """The index of the token `name` spells in `tokens` (TokenLookup.index); ValueError naming the tokens."""
    return TokenLookup(tokens).index(name)


def default_kind(analysed: AnalysedInput, layout: dict[str, tuple[int, int]]) -> str:
    """The kind the finder reads when none is named: the model's first kind of heads (encoder_self for a translator,
    the one self-attention kind of an encoder or a decoder-only model). ValueError for a model without heads."""
    kinds = [kind for kind in layout if kind in analysed.maps]
    if not kinds:
        raise ValueError(f"{analysed.model_id} has no attention heads to rank")
    return kinds[0]


def rank_heads(maps: KindMaps, query_index: int, key_index: int,
               value_norms: np.ndarray | None = None) -> HeadRanking:
    """Every head of `maps` ranked by α[query, key], and by value_norms (L, h, T_q, T_k) at that cell when given."""
    weight = np.asarray(maps.weights[:, :, query_index, key_index], dtype=np.float32)  # (L, h)
    norm = None if value_norms is None else np.asarray(value_norms[:, :, query_index, key_index], dtype=np.float32)
    return HeadRanking(maps.kind, query_index, key_index, maps.query_tokens[query_index], maps.key_tokens[key_index],
                       weight, norm, _ranked(weight), None if norm is None else _ranked(norm))


def find_heads(lab, analysed: AnalysedInput, query: str, key: str, kind: str | None = None) -> HeadRanking:
    """Every head ranked from the first query token spelled `query` to the first key token spelled `key`, in `kind`
    (default_kind when None); with the value-weighted norms when the model has NORMS (lab.explain computes them).
    ValueError naming the tokens when either is not there, or for a model without heads."""
    kind = kind or default_kind(analysed, lab.layout)
    if kind not in analysed.maps or kind not in lab.layout:
        raise ValueError(f"{analysed.model_id} has no {kind} heads ({', '.join(lab.layout) or 'no heads at all'})")
    maps = analysed.maps[kind]
    query_index, key_index = token_index(maps.query_tokens, query), token_index(maps.key_tokens, key)
    norms = lab.explain(analysed).get(f"value_norms_{kind}") if lab.can(NORMS) else None
    return rank_heads(maps, query_index, key_index, norms)


def compare_head(first: AnalysedInput, second: AnalysedInput, kind: str, layer: int, head: int) -> HeadComparison:
    """Head (layer, head) of `kind` on two analyses (the same model, two texts): both maps and their difference at
    the aligned tokens (HeadComparison: difflib's matching blocks)."""
    maps_a, maps_b = first.maps[kind], second.maps[kind]
    map_a = np.asarray(maps_a.weights[layer, head], dtype=np.float32)  # (T_q, T_k)
    map_b = np.asarray(maps_b.weights[layer, head], dtype=np.float32)
    queries = aligned(maps_a.query_tokens, maps_b.query_tokens)
    keys = aligned(maps_a.key_tokens, maps_b.key_tokens)
    rows_a, rows_b = [i for i, _ in queries], [j for _, j in queries]
    cols_a, cols_b = [i for i, _ in keys], [j for _, j in keys]
    difference = map_b[np.ix_(rows_b, cols_b)] - map_a[np.ix_(rows_a, cols_a)]  # (A_q, A_k)
    return HeadComparison(kind, layer, head, map_a, map_b, queries, keys, difference,
                          [maps_a.query_tokens[i] for i in rows_a], [maps_a.key_tokens[i] for i in cols_a])


def aligned(first: list[str], second: list[str]) -> list[tuple[int, int]]:
    """(i, j) with first[i] == second[j] for the tokens difflib matches, in order (no junk heuristic: a token that
    recurs, like "the", is matched where it falls)."""
    matcher = difflib.SequenceMatcher(a=first, b=second, autojunk=False)
    return [(block.a + offset, block.b + offset) for block in matcher.get_matching_blocks()
            for offset in range(block.size)]


def _ranked(values: np.ndarray) -> list[tuple[int, int]]:
    """Every (layer, head) of values (L, h), the largest first; a stable sort keeps ties in layer, head order."""
    order = np.argsort(-values.reshape(-1), kind="stable")
    return [divmod(int(index), values.shape[1]) for index in order]

"""Specs of the head finder and the two-texts view (ui/attention/finder.py), on the attention page and the LLM heads
page, and how a link names a token.

A token is named by its spelling, as `python -m model.inspect --find` names it (model.explain.head_finder
.token_index: the first token spelled so, a word split into pieces by its first piece): `find_q=it&find_k=animal`. A
later token of the same spelling is named "spelling#position" (1-based), so repeated tokens stay apart in the pickers
and in links.
"""
from __future__ import annotations

import re

import numpy as np

from model.explain.head_finder import TokenLookup, spelling, token_index
from model.sources import KindMaps
from ui.widget_spec import SENTENCE, WidgetSpec, sentence_text

PAGES = ("attention", "llm_heads")
RANK_BY = ("weight", "norm")  # the finder's bar chart: by attention weight, or by value-weighted norm
COREFERENCE = "The animal didn't cross the street because it was too tired."
# A sentence whose second text is known to teach something: the same words, the referent changed (a Winograd pair)
CONTRASTS = {COREFERENCE: "The animal didn't cross the street because it was too wide."}


def contrast(text: str | None) -> str:
    """The second text a first text opens the two-texts view with: its Winograd partner, else the text itself."""
    return CONTRASTS.get(text or "", text or "")


# A token's name is any text (a spelling, "spelling#position"): the finder looks it up in the text it reads and
# says when the text lacks it (model.explain.head_finder.token_index strips the spaces round it).
FIND_QUERY = WidgetSpec("find_query", "find_q", "", PAGES, convert=sentence_text)
FIND_KEY = WidgetSpec("find_key", "find_k", "", PAGES, convert=sentence_text)
FIND_BY = WidgetSpec("find_by", "find_by", RANK_BY[0], PAGES, options=RANK_BY)
# the attention page's second text (the LLM heads page has its own, beside its own first text)
TEXT_B = WidgetSpec("text_b", "text_b", lambda state: contrast(SENTENCE.current(state)), ("attention",),
                    convert=sentence_text)
SPECS = (FIND_QUERY, FIND_KEY, FIND_BY, TEXT_B)


def token_names(tokens: list[str]) -> list[str]:
    """One name per token: its spelling where token_index finds this token by it, else "spelling#position"; a
    word's later piece ("##n") keeps its marks, as token_index reads it."""
    names, lookup = [], TokenLookup(tokens)
    for index, token in enumerate(tokens):
        text, starts = spelling(token)
        text = token if starts is False or not text.strip() else text.strip()
        try:
            first = lookup.index(text)
        except ValueError:
            first = None
        names.append(text if first == index else f"{text}#{index + 1}")
    return names


def named_token(tokens: list[str], name: str) -> int:
    """The index of the token `name` names (token_names' name, or any spelling token_index accepts); ValueError
    naming the tokens."""
    numbered = re.fullmatch(r"(.*)#(\d+)", name)
    if numbered and 1 <= int(numbered[2]) <= len(tokens) and token_names(tokens)[int(numbered[2]) - 1] == name:
        return int(numbered[2]) - 1
    return token_index(tokens, name)


def default_pair(maps: KindMaps) -> tuple[int, int]:
    """(query, key) the finder opens on when no link names them: the pair of distinct, non-neighbouring word tokens
    that the kind's heads link most on average (the mean over its L × h maps); a bracketed special token, the first
    key of a causal map (where every head's spare weight sinks) and punctuation are passed over."""
    mean = np.asarray(maps.weights).mean((0, 1), dtype=np.float32).astype(float)  # (T_q, T_k), float32 sums
    queries, keys = maps.query_tokens, maps.key_tokens

    def wordlike(token: str) -> bool:
        text = spelling(token)[0]
        return any(c.isalnum() for c in text) and not (text[:1] in "[<" and text[-1:] in "]>")

    allowed = np.outer([wordlike(t) for t in queries], [wordlike(t) for t in keys])
    if maps.masked is not None:
        allowed &= ~np.asarray(maps.masked)
        allowed[:, 0] = False
    if list(queries) == list(keys):  # one sequence: not a token with itself or its neighbours
        distance = np.abs(np.subtract.outer(np.arange(len(queries)), np.arange(len(keys))))
        allowed &= distance > 1
    if not allowed.any():
        return len(queries) - 1, 0
    query, key = np.unravel_index(np.where(allowed, mean, -np.inf).argmax(), mean.shape)
    return int(query), int(key)

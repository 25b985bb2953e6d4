"""A sentence the English->French models can read, made from the one typed: its known words kept in order, each
unknown word replaced by the closest known word of the same part of speech ("banana" -> "apple", "Maria" -> "the
woman", "studnt" -> "student"), words of a kind the mini-language lacks (adverbs, modals) left out.

The part of speech of an unknown word comes from English's closed word classes ("an", "his", "was"...), then from an
English word list that tags each open-class word (lemminflect's, shipped in its wheel: "animal" a noun or an
adjective, "did" a verb, "quickly" an adverb), the word's neighbours choosing among the parts the list allows it (after
"the" a noun, after a subject a verb...); a word the list lacks (a name, a typo) takes its part from its neighbours
alone. "Closest" is by meaning when a sentence encoder is given (all-MiniLM-L6-v2: mean-pooled vectors of single
words), else by spelling. A misspelling of a known word is that word.
"""
from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import torch
from lemminflect import getAllLemmas

from model.en_fr import (COLOURS, EN_BE, NOUNS, PRE_ADJECTIVES, PREDICATE_ADJECTIVES, PROFESSIONS, PRONOUNS, VERBS,
                         english_parts_of_speech)

WordVectors = Callable[[Sequence[str]], np.ndarray]  # words -> (n, d) unit vectors, one row per word

TYPO_CUTOFF = 0.85  # difflib ratio from which an unknown word is a misspelling of a known one ("studnt" -> student)

_SINGULAR_NOUNS = [n.en for n in NOUNS] + [p[0] for p in PROFESSIONS]
_PLURAL_NOUNS = [n.en_pl for n in NOUNS] + [p[1] for p in PROFESSIONS]
_PERSONS = ("man", "woman")  # what a name becomes
_PEOPLE = {"man", "woman", "boy", "girl", "child", "friend"} | {p[0] for p in PROFESSIONS}
_BASE_VERBS = [v[0][0] for v in VERBS if len(v[0]) == 1] + ["have"]  # "look for" needs its preposition
_THIRD_VERBS = [v[1][0] for v in VERBS if len(v[1]) == 1] + ["has"]
_BE = set(EN_BE.values())
_THIRD_PERSON = {"he", "she"} | set(_SINGULAR_NOUNS)
_ATTRIBUTIVE = [a[0] for a in PRE_ADJECTIVES + COLOURS]  # the adjectives the grammar puts before a noun
_PREDICATIVE = [a[0] for a in PREDICATE_ADJECTIVES]
_PRONOUNS = [p[0] for p in PRONOUNS]

# English's closed classes the lexicon lacks, by the part of speech their replacement takes
_CLOSED = {
    "determiners": {"an", "his", "her", "our", "their", "its", "those", "every", "each", "any", "no", "one", "two",
                    "three", "four", "five", "many", "several", "few", "all", "both"},
    "pronouns": {"it"},
    "nouns": {"me", "him", "us", "them", "someone", "somebody", "everyone", "people"},  # objects: no such pronouns
    "linking": {"or", "at", "from", "into", "onto", "by", "beside", "over", "while", "when", "if", "although",
                "then", "since", "until", "after", "before", "for", "to", "of", "about", "yet"},
    "be": {"was", "were", "be", "been", "being", "'m", "'re"},
    "adjectives": {"last", "next", "other", "same"},  # "last week": before a noun, whatever else the word can be
}
_MODALS = {"can", "could", "will", "would", "shall", "should", "may", "might", "must"}
_ADVERBS = {"very", "really", "too", "also", "always", "never", "often", "just", "quite", "now", "today", "here",
            "there", "again", "still", "already", "well", "yesterday", "tomorrow", "sometimes", "usually"}
_DO_PAST = {"did"}  # "didn't cross": the mini-language's do/does; "did it" a verb
# The word list's universal parts of speech -> ours (AUX: "did", "was"; the closed classes above come first)
_LISTED = {"NOUN": "nouns", "PROPN": "nouns", "VERB": "verbs", "AUX": "verbs", "ADJ": "adjectives", "ADV": "left out"}
_CONTRACTIONS = {"can't": ["can", "not"], "won't": ["will", "not"], "i'm": ["i", "am"]}
_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)*")  # a word with its inner apostrophes (don't, Maria's); no punctuation


@dataclass(frozen=True)
class Replacement:
    typed: str  # the word as typed
    known: tuple[str, ...]  # what took its place: () when left out, ("the", "woman") for a name
    part: str  # the part of speech read for it (model.en_fr.PARTS_OF_SPEECH, or "left out")


@dataclass(frozen=True)
class ReadableSentence:
    words: tuple[str, ...]  # every one known to the English->French models
    replacements: tuple[Replacement, ...]  # in the order typed

    @property
    def text(self) -> str:
        return " ".join(self.words)


def word_vectors(encoder, words: Sequence[str]) -> np.ndarray:
    """Mean-pooled, unit-length vectors of single words by a model.bert.PretrainedEncoder: (n, d)."""
    if not words:
        return np.zeros((0, encoder.config.hidden_size), dtype=np.float32)
    encoded = [encoder.encode(w).ids for w in words]
    length = max(len(ids) for ids in encoded)
    ids = torch.tensor([e + [0] * (length - len(e)) for e in encoded])  # (n, T), padded with [PAD] = 0
    mask = torch.tensor([[1] * len(e) + [0] * (length - len(e)) for e in encoded])  # (n, T)
    with torch.no_grad():
        hidden = encoder.encoder(ids, mask, need_weights=False).hidden  # (n, T, d)
    summed = (hidden * mask[..., None]).sum(1) / mask.sum(1, keepdim=True)
    return torch.nn.functional.normalize(summed, dim=-1).numpy()


def _split(text: str) -> list[tuple[str, bool]]:
    """Lower-case words with whether each was capitalised; contractions opened ("doesn't" -> does not)."""
    out: list[tuple[str, bool]] = []
    for match in _WORD.finditer(text):
        typed = match.group().replace("’", "'")
        word, capital = typed.lower(), typed[:1].isupper()
        if word in _CONTRACTIONS:
            parts = _CONTRACTIONS[word]
        elif word.endswith("n't"):
            parts = [word[:-3], "not"]
        elif "'" in word:
            stem, ending = word.split("'", 1)
            parts = [stem] + ({"s": [], "ve": ["have"], "d": [], "ll": []}.get(ending, ["'" + ending]))
        else:
            parts = [word]
        out += [(p, capital and n == 0) for n, p in enumerate(parts)]
    return out


def _function_word(word: str) -> bool:
    """A word of a class the lexicon lacks or a closed class: never a noun."""
    return word in _MODALS or word in _ADVERBS or any(word in members for members in _CLOSED.values())


def listed_parts(word: str) -> frozenset[str]:
    """The parts of speech the English word list gives a word (open classes only: nouns, verbs, adjectives, and
    "left out" for an adverb); empty for a word it lacks (a name, a misspelling, a closed-class word)."""
    return frozenset(_LISTED[tag] for tag in getAllLemmas(word) if tag in _LISTED)


# Which part a word the list allows several of takes, given the part its neighbours suggest: the suggested one first
_PREFERENCE = {"nouns": ("nouns", "adjectives", "verbs", "left out"),
               "adjectives": ("adjectives", "nouns", "verbs", "left out"),
               "verbs": ("verbs", "nouns", "adjectives", "left out")}


def _plural(word: str) -> bool:
    return word.endswith("s") and not word.endswith(("ss", "us", "is"))


def _closest(word: str, candidates: Sequence[str], vectors: WordVectors | None,
             typed: dict[str, np.ndarray] | None = None) -> str:
    """The candidate closest in meaning (cosine of the encoder's vectors; `typed`: the typed words' vectors, made
    in one batch), else in spelling."""
    if vectors is None:
        return max(candidates, key=lambda c: (difflib.SequenceMatcher(None, word, c).ratio(), -len(c)))
    vector = typed[word] if typed and word in typed else vectors([word])[0]
    scores = vectors(list(candidates)) @ vector
    return candidates[int(np.argmax(scores))]


def readable_sentence(text: str, known: set[str], vectors: WordVectors | None = None,
                      max_words: int | None = None) -> ReadableSentence:
    """The typed sentence made readable: known words kept in order, unknown ones replaced (see the module's doc).

    `known`: the model's source words; `vectors`: word_vectors of a sentence encoder, or None to compare spelling;
    `max_words`: the words read (the model's limit: a longer text is cut there, as the model cuts it).
    """
    parts = {word: part for part, words in english_parts_of_speech().items() for word in words}
    words = _split(text)[:max_words]
    unknown = list(dict.fromkeys(w for w, _ in words if w not in known))
    typed = dict(zip(unknown, vectors(unknown))) if vectors is not None and unknown else None
    out: list[str] = []
    out_parts: list[str] = []  # the part of speech of each word of out
    replacements: list[Replacement] = []

    def put(word: str, part: str) -> None:
        out.append(word)
        out_parts.append(part)

    def subject_is_third_person() -> bool:
        for word, part in zip(reversed(out), reversed(out_parts)):
            if part in ("nouns", "pronouns"):
                return word in _THIRD_PERSON
            if part == "linking" and word != "not":
                break
        return True

    for i, (word, capital) in enumerate(words):
        following = words[i + 1][0] if i + 1 < len(words) else None
        previous, previous_part = (out[-1], out_parts[-1]) if out else (None, None)
        if word in known:
            put(word, parts.get(word, "other"))
            continue
        typo = [w for w in difflib.get_close_matches(word, sorted(known), n=3, cutoff=TYPO_CUTOFF) if w[0] == word[0]]
        if typo and not any(word in members for members in _CLOSED.values()) and not listed_parts(word):
            # misspelt: the same first letter, and no English word of its own ("bus" is no "busy")
            put(typo[0], parts.get(typo[0], "other"))
            replacements.append(Replacement(word, (typo[0],), parts.get(typo[0], "other")))
            continue
        part = next((p for p, members in _CLOSED.items() if word in members), None)
        if word == "her" and (following is None or parts.get(following) in ("verbs", "linking")):
            part = "nouns"  # "i like her": the object, not "her cat"
        if part is None and (word in _ADVERBS or (word.endswith("ly") and len(word) > 4)):
            part = "left out"
        if part is None and word in _MODALS:
            part = "do" if following == "not" else "left out"
        if part is None and word.isdigit():
            part = "determiners"
        if part is None and word in _DO_PAST:
            part = "do" if following == "not" else "verbs"
        listed = listed_parts(word) if part is None else frozenset()
        if part is None and listed == {"left out"}:  # an adverb, and nothing else
            part = "left out"
        if part is None:
            if previous_part in ("determiners", "adjectives") and previous not in _BE:
                noun_follows = following is not None and (parts.get(following) == "nouns" or (
                    following not in known and not _function_word(following) and following not in _DO_PAST
                    and (not listed_parts(following) or "nouns" in listed_parts(following))))
                part = "adjectives" if noun_follows and previous_part == "determiners" else "nouns"
            elif previous in _BE and word.endswith("ing") and "verbs" in listed:
                part = "verbs"  # "are reading": the verb, in a form the mini-language lacks
            elif previous in _BE or (previous == "not" and len(out) > 1 and out[-2] in _BE):
                part = "adjectives"
            elif previous_part in ("nouns", "pronouns") or previous in ("do", "does", "not", "to", "that"):
                part = "verbs"
            else:  # a subject, an object, after a preposition or a conjunction
                part = "nouns"
            if listed and part not in listed:  # the list knows better: the neighbours choose among its parts
                part = next(p for p in _PREFERENCE[part] if p in listed)
        if part == "left out":
            replacements.append(Replacement(word, (), part))
            continue
        if part == "be" or part == "do":
            third = subject_is_third_person()
            person = out[-1] if out and out_parts[-1] == "pronouns" else None
            if part == "do":
                chosen = ("does" if third else "do",)
            else:
                chosen = ({"i": "am"}.get(person) or ("is" if third else "are"),)
            part = "verbs"
        elif part == "nouns":
            after_be_a = previous == "a" and len(out) > 1 and out[-2] in _BE  # "i am a wizard": a profession
            lemmas = [p[0] for p in PROFESSIONS] if after_be_a else _SINGULAR_NOUNS
            # closest in either number ("banana" is nearest "apples"), then in the number typed
            plurals = [_PLURAL_NOUNS[_SINGULAR_NOUNS.index(w)] for w in lemmas]
            lemma = _closest(word, lemmas + plurals, vectors, typed)
            lemma = _SINGULAR_NOUNS[_PLURAL_NOUNS.index(lemma)] if lemma in _PLURAL_NOUNS else lemma
            name = capital and previous_part not in ("determiners", "adjectives") and (
                vectors is None or lemma in _PEOPLE)  # "Maria", "John"; by meaning, "Paris" is a city
            if name:
                lemma = _closest(word, list(_PERSONS), vectors, typed) if vectors is not None else "man"
            plural = _plural(word) and not name
            noun = _PLURAL_NOUNS[_SINGULAR_NOUNS.index(lemma)] if plural else lemma
            has_determiner = previous_part in ("determiners", "adjectives") and previous not in _BE
            chosen = (noun,) if has_determiner else ("the", noun)
        elif part == "verbs":
            base = previous in ("do", "does", "not", "to") or not subject_is_third_person()
            chosen = (_closest(word, _BASE_VERBS if base else _THIRD_VERBS, vectors, typed),)
        elif part == "adjectives":
            chosen = (_closest(word, _PREDICATIVE if previous in _BE or previous == "not" else _ATTRIBUTIVE,
                               vectors, typed),)
        elif part == "determiners":
            plural_follows = following is not None and (_plural(following) or following in _PLURAL_NOUNS)
            chosen = ("a",) if word in ("one", "an") else ("some",) if plural_follows or word.isdigit() else (
                _closest(word, ["the", "a", "my", "your", "this"], vectors, typed),)  # a singular noun follows
        elif part == "pronouns":  # "it": he or she, so that "is" still agrees
            chosen = (_closest(word, ["he", "she"], vectors, typed),)
        else:  # linking words
            chosen = (_closest(word, ["in", "on", "with", "under", "behind", "near", "and", "but", "because", "so"],
                               vectors, typed),)
        for known_word in chosen:
            put(known_word, parts.get(known_word, part))
        replacements.append(Replacement(word, chosen, part))
    return ReadableSentence(tuple(out), tuple(replacements))

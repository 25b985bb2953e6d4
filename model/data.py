"""Generated teaching data (no downloads): token vocabularies, the datasets of the English->French mini-language
(model/en_fr.py makes its sentences) and of the algorithmic tasks, and padded batches of them."""
from __future__ import annotations

import json
import random
import re
from dataclasses import dataclass, field
from pathlib import Path

import torch

from model.en_fr import CANONICAL, english_lexicon, random_pairs, random_sentence

PAD, BOS, EOS, UNK = "<pad>", "<bos>", "<eos>", "<unk>"
SPECIALS = (PAD, BOS, EOS, UNK)
PAD_ID, BOS_ID, EOS_ID, UNK_ID = 0, 1, 2, 3
TASKS = ("en-fr", "copy", "reverse", "sort")


class Vocabulary:
    """Token <-> id map; ids 0-3 are <pad> <bos> <eos> <unk>."""

    def __init__(self, tokens):
        self.itos: list[str] = list(SPECIALS) + sorted(set(tokens) - set(SPECIALS))
        self.stoi: dict[str, int] = {t: i for i, t in enumerate(self.itos)}

    def __len__(self) -> int:
        return len(self.itos)

    def encode(self, tokens: list[str]) -> tuple[list[int], list[str]]:
        """Token ids (unknown -> <unk>) and the list of unknown tokens, in order."""
        ids = [self.stoi.get(t, UNK_ID) for t in tokens]
        return ids, [t for t, i in zip(tokens, ids) if i == UNK_ID]

    def decode(self, ids, strip_specials: bool = True) -> list[str]:
        out = []
        for i in ids:
            token = self.itos[int(i)] if 0 <= int(i) < len(self.itos) else UNK
            if strip_specials and token in (PAD, BOS, EOS):
                continue
            out.append(token)
        return out

    def to_list(self) -> list[str]:
        return list(self.itos)

    @classmethod
    def from_list(cls, itos: list[str]) -> Vocabulary:
        if list(itos[:4]) != list(SPECIALS):
            raise ValueError("vocabulary must start with <pad> <bos> <eos> <unk>")
        vocab = cls([])
        vocab.itos = list(itos)
        vocab.stoi = {t: i for i, t in enumerate(vocab.itos)}
        return vocab


_TOKEN = re.compile(r"[^\W_]+'?|\S")  # words of any script (with a French elision apostrophe), or one symbol


def tokenize(text: str) -> list[str]:
    """Lower-case word tokens of any script; elisions split ("j'ai" -> ["j'", "ai"]); other symbols alone."""
    text = "".join(ch if ch.isprintable() else " " for ch in text.lower())
    return [t for t in _TOKEN.findall(text) if not t.isspace()]


def detokenize(tokens: list[str]) -> str:
    """Join tokens for display: "j' ai" -> "j'ai"."""
    return re.sub(r"' ", "'", " ".join(tokens))


# ---------------------------------------------------------------- datasets

@dataclass
class Dataset:
    """Pairs of token lists with their vocabularies, split into train, test and long_test."""

    task: str
    src_vocab: Vocabulary
    tgt_vocab: Vocabulary
    splits: dict[str, list[tuple[list[str], list[str]]]] = field(default_factory=dict)

    def encode_pair(self, src: list[str], tgt: list[str]) -> tuple[list[int], list[int]]:
        return self.src_vocab.encode(src)[0], self.tgt_vocab.encode(tgt)[0]


LONGEST_WORDS = (41, 60)  # source words of the longest_test split (the last bucket of accuracy by length)


def make_en_fr(seed: int = 0, train_size: int = 40000, test_size: int = 1000, long_size: int = 500,
               long_min_tokens: int = 20, long_train_size: int = 0, longest_size: int = 100) -> Dataset:
    """Deterministic by seed. test shares no source sentence with train; long_test has >= long_min_tokens words.

    longest_test: longest_size held-out sentences of 41-60 words (4-5 clauses; long_test has only ~1% of them),
    drawn from a random stream of their own, so every other split is the same as without them, and the same
    sentences whatever long_train_size is; none is a training or another test sentence.

    long_train_size adds that many 3-5-clause training pairs (about 16-60 words; the default mix has 1-3 clauses
    and only ~0.5% of its sentences over 30 words, so a model trained on it alone has never seen positions past
    ~35). They are drawn after test and long_test, so both test splits are the same as without them, and none
    repeats a test sentence.
    """
    rng = random.Random(seed)
    train = [(en.split(), fr.split()) for en, fr in CANONICAL] + random_pairs(rng, train_size)
    seen = {" ".join(en) for en, _ in train}
    test: list = []
    while len(test) < test_size:
        en, fr = random_pairs(rng, 1)[0]
        if " ".join(en) not in seen:
            seen.add(" ".join(en))
            test.append((en, fr))
    long_test: list = []
    while len(long_test) < long_size:
        en, fr = random_sentence(rng, rng.choice((3, 4)))
        if len(en) >= long_min_tokens and " ".join(en) not in seen:
            seen.add(" ".join(en))
            long_test.append((en, fr))
    while long_train_size > 0:
        en, fr = random_sentence(rng, rng.choice((3, 4, 5)))
        if " ".join(en) not in seen:  # never a test sentence (repeats among training pairs are harmless)
            train.append((en, fr))
            long_train_size -= 1
    longest_rng = random.Random(f"en-fr longest_test {seed}")
    seen |= {" ".join(en) for en, _ in train}
    longest_test: list = []
    while len(longest_test) < longest_size:
        en, fr = random_sentence(longest_rng, longest_rng.choice((4, 5)))
        if LONGEST_WORDS[0] <= len(en) <= LONGEST_WORDS[1] and " ".join(en) not in seen:
            seen.add(" ".join(en))
            longest_test.append((en, fr))
    held_out = test + long_test + longest_test
    src_tokens = {t for en, _ in train + held_out for t in en} | set(english_lexicon())
    tgt_tokens = {t for _, fr in train + held_out for t in fr}
    return Dataset("en-fr", Vocabulary(src_tokens), Vocabulary(tgt_tokens),
                   {"train": train, "test": test, "long_test": long_test, "longest_test": longest_test})


# One held-out sentence per source length (the first of each length in test, then long_test, of make_en_fr(seed=0):
# the sentences the shipped en-fr models were tested on), kept in a file because making the dataset to find them takes
# seconds (40,000 training pairs come first in its random stream) and every replica's first page needs their lengths
# (the compare page's sentence-length slider is checked in every page's links). tests/test_data.py makes the
# dataset and holds the file to it; `python -m model.data` writes it again after the mini-language changes.
HELD_OUT_BY_LENGTH = Path(__file__).resolve().parents[1] / "assets" / "en-fr_held_out_by_length.json"


def held_out_by_length(data: Dataset) -> list[tuple[list[str], list[str]]]:
    """(source, target) word lists: the first held-out pair of each source length, shortest first."""
    by_length: dict[int, tuple[list[str], list[str]]] = {}
    for src, tgt in data.splits["test"] + data.splits["long_test"]:
        by_length.setdefault(len(src), (src, tgt))
    return [by_length[n] for n in sorted(by_length)]


def shipped_held_out_by_length() -> list[tuple[list[str], list[str]]]:
    """held_out_by_length(make_en_fr(seed=0)), as HELD_OUT_BY_LENGTH keeps it."""
    return [(list(src), list(tgt)) for src, tgt in json.loads(HELD_OUT_BY_LENGTH.read_text(encoding="utf-8"))]


def is_punctuation(token: str) -> bool:
    """A token with no letter or digit ("," "!" "…", and a WordPiece "##." alike): it carries no word. The generated
    languages have none; a BERT tokenizer's [CLS]/[SEP] are words by this test (the encoder marks them special)."""
    token = token.removeprefix("##")
    return bool(token) and not any(ch.isalnum() for ch in token)


ALGO_SYMBOLS = [str(i) for i in range(20)]


def make_algorithmic(task: str, seed: int = 0, train_size: int = 20000, test_size: int = 1000, long_size: int = 500,
                     min_len: int = 3, max_len: int = 12) -> Dataset:
    """copy (ideal attention: diagonal), reverse (anti-diagonal), sort (a permutation)."""
    transform = {"copy": list, "reverse": lambda s: s[::-1], "sort": lambda s: sorted(s, key=int)}[task]
    rng = random.Random(seed)

    def sample(lo, hi):
        src = [rng.choice(ALGO_SYMBOLS) for _ in range(rng.randint(lo, hi))]
        return src, transform(src)

    train = [sample(min_len, max_len) for _ in range(train_size)]
    seen = {" ".join(s) for s, _ in train}
    splits = {"train": train, "test": [], "long_test": []}
    for name, size, lo, hi in (("test", test_size, min_len, max_len), ("long_test", long_size, max_len, max_len + 4)):
        while len(splits[name]) < size:
            src, tgt = sample(lo, hi)
            if " ".join(src) not in seen:
                seen.add(" ".join(src))
                splits[name].append((src, tgt))
    vocab = Vocabulary(ALGO_SYMBOLS)
    return Dataset(task, vocab, vocab, splits)


def make_dataset(task: str, seed: int = 0, **sizes) -> Dataset:
    if task == "en-fr":
        return make_en_fr(seed, **sizes)
    if task in ("copy", "reverse", "sort"):
        return make_algorithmic(task, seed, **sizes)
    raise ValueError(f"unknown task {task!r}; choose one of {', '.join(TASKS)}")


def pad_batch(pairs, data: Dataset, device) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """-> src (B, S) ending in <eos>, decoder input (B, T) starting with <bos>, target (B, T) ending in <eos>."""
    encoded = [data.encode_pair(s, t) for s, t in pairs]
    src_len = max(len(s) for s, _ in encoded) + 1
    tgt_len = max(len(t) for _, t in encoded) + 1
    src = torch.full((len(pairs), src_len), PAD_ID, dtype=torch.long)
    tgt_in = torch.full((len(pairs), tgt_len), PAD_ID, dtype=torch.long)
    tgt_out = torch.full((len(pairs), tgt_len), PAD_ID, dtype=torch.long)
    for row, (s, t) in enumerate(encoded):
        src[row, : len(s) + 1] = torch.tensor(s + [EOS_ID])
        tgt_in[row, : len(t) + 1] = torch.tensor([BOS_ID] + t)
        tgt_out[row, : len(t) + 1] = torch.tensor(t + [EOS_ID])
    return src.to(device), tgt_in.to(device), tgt_out.to(device)


if __name__ == "__main__":  # python -m model.data: write HELD_OUT_BY_LENGTH again
    pairs = held_out_by_length(make_en_fr(seed=0))
    lines = ",\n".join(json.dumps(pair, ensure_ascii=False) for pair in pairs)  # a sentence a line
    HELD_OUT_BY_LENGTH.write_text(f"[\n{lines}\n]\n", encoding="utf-8")
    print(f"{HELD_OUT_BY_LENGTH}: {len(pairs)} sentences, {len(pairs[0][0])}-{len(pairs[-1][0])} words")

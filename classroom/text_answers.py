"""Open-text answers (a lesson's `kind = "text"` question) and their moderation, pure Python and SQL (no Streamlit).

A text answer is stored like every answer (ClassStore.answer: one per seat, only at the class's stop, late after the
Reveal), as the student typed it, control characters made spaces (PostgreSQL cannot hold a NUL; every screen shows
them as spaces anyway). It is bounded in characters and in UTF-8 bytes (TEXT_CHARS, TEXT_BYTES: a long text is
refused whole, never cut), and one seat sends at most TEXT_TRIES texts to a class in TEXT_TRY_SECONDS (counted in
the table attempts, so every replica refuses a flood of resubmits).

Answers are grouped by `text_key`: identical after Unicode NFKC, case folding and collapsing spaces, with bidi
controls and zero-width characters dropped (they change how a text looks, not what it says). What any screen shows
of a text is `visible_text`: the same characters minus those invisible ones, so a text cannot reorder its line or
hide in plain sight. Nothing typed by a student reaches the room before the teacher approves its group (table
text_moderation; no row: waiting): `approved_texts` is the one read the room's screens make, and it returns
approved groups of a revealed question only, each with the text she approved (a later spelling of the same group
never changes what the room reads). Groups a word list flags (ABUSIVE_WORDS, one file per language) are never
approved by the bulk "approve all"; only her click on that group approves one. Hiding a group (approved or not)
takes it off the room's screens at their next read.
"""
from __future__ import annotations

import functools
import re
import time
import unicodedata
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from classroom.database import Database
from classroom.errors import TextEmpty, TextTooLong, TooManyTries

TEXT_CHARS = 100  # characters of a text answer (a word or a short sentence)
TEXT_BYTES = 300  # its UTF-8 bytes: 100 Hangul syllables, or 75 emoji
TEXT_TRIES = 5  # texts one seat may send to one class within TEXT_TRY_SECONDS (the first one counts)
TEXT_TRY_SECONDS = 30.0
APPROVED, HIDDEN, WAITING = "approved", "hidden", "waiting"
ABUSIVE_WORDS = Path(__file__).with_name("abusive_words")  # <language>.txt: one word a line, '#' comments
_TRIES_KIND = "text"  # the attempts table's kind for a text sent

# Invisible characters dropped from what is shown and grouped: format characters (Cf: bidi embeddings, overrides and
# isolates, zero-width space/joiners, the BOM, soft hyphen...) and the letters that draw as blank space.
_BLANK_LETTERS = frozenset("\u115f\u1160\u3164\uffa0\u2800\u034f")
_SPACES = re.compile(r"\s+")


def _invisible(ch: str) -> bool:
    return ch in _BLANK_LETTERS or unicodedata.category(ch) == "Cf"


def stored_text(text: str) -> str:
    """What the store keeps of a typed text: control characters (a NUL, a newline, an escape) made spaces."""
    return "".join(" " if unicodedata.category(ch) == "Cc" else ch for ch in text)


def visible_text(text: str) -> str:
    """A text as every screen shows it: invisible characters dropped, control characters and runs of space one
    space, no space at either end."""
    kept = "".join(" " if unicodedata.category(ch) == "Cc" else ch for ch in text if not _invisible(ch))
    return _SPACES.sub(" ", kept).strip()


def text_key(text: str) -> str:
    """The group a text falls in: its visible text after NFKC, case folding and collapsing spaces ('  ＫＥＹ ' and
    'key' are one group)."""
    folded = visible_text(unicodedata.normalize("NFKC", text)).casefold()
    return _SPACES.sub(" ", unicodedata.normalize("NFKC", folded)).strip()


def text_problem(text: str) -> str | None:
    """Why a text cannot be stored: 'empty' (nothing visible), 'long' (over TEXT_CHARS or TEXT_BYTES); None: fine."""
    if not text_key(text):
        return "empty"
    if len(text) > TEXT_CHARS or len(text.encode("utf-8")) > TEXT_BYTES:
        return "long"
    return None


# ---- the word lists
@functools.cache
def word_lists() -> dict[str, tuple[frozenset[str], tuple[str, ...], tuple[str, ...]]]:
    """{language: (whole words, word beginnings, anywhere)} from ABUSIVE_WORDS/<language>.txt, each entry keyed as
    answers are: a line ending in '*' is a beginning ('fuck*' flags 'fucking'); an entry in Hangul is looked for
    anywhere in a text's letters (a Korean word takes its particle without a space, and '씨 발' is still one)."""
    lists = {}
    for path in sorted(ABUSIVE_WORDS.glob("*.txt")):
        whole, starts, anywhere = set(), set(), set()
        for line in path.read_text(encoding="utf-8").splitlines():
            entry = text_key(line.split("#", 1)[0].rstrip("*").strip())
            if not entry:
                continue
            if _is_hangul(entry):
                anywhere.add(entry.replace(" ", ""))
            elif line.split("#", 1)[0].strip().endswith("*"):
                starts.add(entry)
            else:
                whole.add(entry)
        lists[path.stem] = (frozenset(whole), tuple(sorted(starts)), tuple(sorted(anywhere)))
    return lists


_LEET = str.maketrans("013457@$!|", "oieastasii")
_WORD = re.compile(r"[^\W_]+")


def _words(key: str) -> list[str]:
    """A key's words, and the same with look-alike digits read as letters ('sh1t'); runs of single letters are read
    as one word too ('f u c k')."""
    found = []
    for text in (key, key.translate(_LEET)):
        words = _WORD.findall(text)
        found += words
        run = []
        for word in [*words, ""]:
            if len(word) == 1:
                run.append(word)
                continue
            if len(run) > 2:
                found.append("".join(run))
            run = []
    return found


def flagged(text: str) -> tuple[str, ...]:
    """The languages whose word list the text matches (see word_lists). A match only keeps the text from the bulk
    approval: the teacher still reads it and decides."""
    key = text_key(text)
    words = _words(key)
    letters = "".join(_WORD.findall(key))
    phrase = f" {' '.join(_WORD.findall(key))} "  # an entry of several words ("kill yourself")
    return tuple(language for language, (whole, starts, anywhere) in word_lists().items()
                 if any(w in whole or w.startswith(starts) for w in words) or any(e in letters for e in anywhere)
                 or any(f" {w} " in phrase for w in whole if " " in w))


def _is_hangul(word: str) -> bool:
    return any("\uac00" <= ch <= "\ud7a3" or "\u1100" <= ch <= "\u11ff" or "\u3131" <= ch <= "\u318e" for ch in word)


# ---- groups
@dataclass(frozen=True)
class TextGroup:
    """The answers to a text question that are one text after normalisation: its key, the text shown for it (the one
    she approved, else the most common spelling, first given first), how many students gave it, its moderation state
    (WAITING, APPROVED, HIDDEN), the word lists that flag it, whether it is right (None: the question accepts no
    answers, or they were not known when it was given) and its distinct spellings as shown."""
    key: str
    shown: str
    students: int
    state: str = WAITING
    flags: tuple[str, ...] = ()
    right: bool | None = None
    spellings: tuple[str, ...] = ()


def group_texts(rows: Sequence[tuple[str, Any]], decided: dict[str, tuple[str, str]] | None = None) -> list[TextGroup]:
    """rows: (answer, correct) in the order given -> the groups, most students first (then by key). `decided`:
    {key: (state, text approved)} from table text_moderation."""
    decided = decided or {}
    spellings: dict[str, Counter] = defaultdict(Counter)
    first: dict[str, dict[str, int]] = defaultdict(dict)
    right: dict[str, bool | None] = {}
    for index, (answer, correct) in enumerate(rows):
        key = text_key(answer)
        if not key:
            continue
        shown = visible_text(answer)
        spellings[key][shown] += 1
        first[key].setdefault(shown, index)
        if correct is not None:
            right[key] = bool(correct)
    groups = []
    for key, counts in spellings.items():
        state, approved = decided.get(key, (WAITING, ""))
        common = min(counts, key=lambda s: (-counts[s], first[key][s]))
        groups.append(TextGroup(key, approved if state == APPROVED and approved else common, sum(counts.values()),
                                state, flagged(key), right.get(key), tuple(sorted(counts, key=lambda s: -counts[s]))))
    groups.sort(key=lambda g: (-g.students, g.key))
    return groups


def _counted_rows(db: Database, code: str, question: str) -> list[tuple[str, Any]]:
    return db.execute("SELECT answer, correct FROM answers WHERE code = ? AND question = ? AND round = 1 AND late = 0 "
                      "ORDER BY created, student", (code, question)).fetchall()


def _decided(db: Database, code: str, question: str, state: str | None = None) -> dict[str, tuple[str, str]]:
    rows = db.execute("SELECT text_key, state, shown FROM text_moderation WHERE code = ? AND question = ?"
                      + ("" if state is None else " AND state = ?"),
                      (code, question) if state is None else (code, question, state)).fetchall()
    return {key: (decided, shown) for key, decided, shown in rows}


def read_groups(db: Database, code: str, question: str) -> list[TextGroup]:
    """Every group of a question's counted answers with its state: the teacher's moderation list (ClassTeacher)."""
    return group_texts(_counted_rows(db, code, question), _decided(db, code, question))


def moderate(db: Database, code: str, question: str, keys: Sequence[str] | None, state: str, now: float) -> int:
    """Approve or hide groups (`keys`; None: approve every waiting group no word list flags) -> how many changed.
    An approval keeps the text shown for the group now: what the room reads of it."""
    if state not in (APPROVED, HIDDEN):
        raise ValueError(f"state {state!r}")
    groups = {g.key: g for g in read_groups(db, code, question)}
    if keys is None:
        chosen = [g for g in groups.values() if g.state == WAITING and not g.flags]
    else:
        chosen = [groups[key] for key in dict.fromkeys(keys) if key in groups and groups[key].state != state]
    for group in chosen:
        db.execute("INSERT INTO text_moderation (code, question, text_key, state, shown, at) VALUES (?, ?, ?, ?, ?, ?) "
                   "ON CONFLICT (code, question, text_key) DO UPDATE SET state = excluded.state, "
                   "shown = excluded.shown, at = excluded.at", (code, question, group.key, state, group.shown, now))
    return len(chosen)


class TextAnswers:
    """The store's side of text answers (mixed into classroom/store.ClassStore): a student sends one, the room reads
    the approved ones."""

    def answer_text(self: Any, code: str, student: str, question: str, text: str, correct: bool | None,
                    now: float | None = None, *, stop: int) -> str:
        """Store a student's text answer -> the text stored. Counted against her seat's tries first (TooManyTries
        past TEXT_TRIES in TEXT_TRY_SECONDS, with the seconds to wait), then refused whole when it has nothing to
        show (TextEmpty) or is too long (TextTooLong), else ClassStore.answer's rules and refusals."""
        now = time.time() if now is None else now
        client = f"{code}:{student}"
        with self.connect() as db:
            db.execute("INSERT INTO attempts VALUES (?, ?, ?)", (_TRIES_KIND, client, now))
            tries = db.execute("SELECT at FROM attempts WHERE kind = ? AND client = ? AND at > ? ORDER BY at",
                               (_TRIES_KIND, client, now - TEXT_TRY_SECONDS)).fetchall()
        if len(tries) > TEXT_TRIES:
            raise TooManyTries(code, max(1, int(tries[-TEXT_TRIES - 1][0] + TEXT_TRY_SECONDS - now + 0.999)))
        kept = stored_text(text)
        problem = text_problem(kept)
        if problem == "empty":
            raise TextEmpty(code)
        if problem == "long":
            raise TextTooLong(code, len(kept), len(kept.encode("utf-8")), (TEXT_CHARS, TEXT_BYTES))
        self.answer(code, student, question, kept, correct, now, stop=stop)
        return kept

    def approved_texts(self: Any, code: str, question: str) -> list[TextGroup]:
        """The groups the room may read: approved by the teacher, of a question she has revealed (nothing before the
        Reveal), each with the text she approved and its count of students now."""
        with self.connect() as db:
            if db.execute("SELECT 1 FROM revealed WHERE code = ? AND question = ?", (code, question)).fetchone() is None:
                return []
            decided = _decided(db, code, question, APPROVED)
            rows = _counted_rows(db, code, question) if decided else []
        return [g for g in group_texts(rows, decided) if g.state == APPROVED]

"""Which words a model reads: its vocabulary grouped by part of speech, suggestions while typing, and what happens to
a sentence with words it does not know (the translation marked unreliable, the nearest sentence it can read)."""
from __future__ import annotations

import difflib
import re
from collections.abc import Callable

import numpy as np
import streamlit as st

from i18n import tr
from model.bert import MINILM_NAME
from model.adapters import WordVocabulary
from model.checkpoint import CheckpointError
from model.data import is_punctuation, tokenize
from model.en_fr import english_parts_of_speech
from model.decode import DecodeResult
from model.readable_sentence import ReadableSentence, Replacement, readable_sentence
from ui.models import load_model
from ui.text import escape_markdown
from ui.session import WidgetKey
from ui.widget_spec import SENTENCE
from runtime.result_cache import memoized

ADD_WORD = WidgetKey("vocab_add")  # the word list's picker: a word picked is added to the sentence
SEARCH = WidgetKey("vocab_search")  # the word list's search field
REAL_ENCODER = MINILM_NAME  # the pretrained encoder for free English (the "real pretrained models" issue)


def grouped_words(vocabulary: WordVocabulary) -> dict[str, list[str]]:
    """Known words by part of speech for the English->French models; one group ("symbols") for the others."""
    words = vocabulary.known_words
    if vocabulary.task != "en-fr":
        return {"symbols": sorted(words, key=lambda w: (len(w), w))}
    known = set(words)
    groups = {part: [w for w in members if w in known] for part, members in english_parts_of_speech().items()}
    grouped = {w for members in groups.values() for w in members}
    groups["other"] = sorted(known - grouped)  # a retrained or uploaded model may know more
    return {part: members for part, members in groups.items() if members}


def _add_word() -> None:
    word = ADD_WORD.get()
    if word:
        SENTENCE.set(f"{(SENTENCE.get() or '').rstrip()} {word}".strip())
        ADD_WORD.set(None)


SUGGESTIONS = 5  # known words offered for an unknown one
_WORD = re.compile(r"[^\W_]+'?")  # a word as model.data.tokenize reads it (before lower-casing)


def completions(typed: str, words: list[str], count: int = SUGGESTIONS) -> list[str]:
    """Known words for a typed one: those that begin with it (shortest first: "stud" -> "student"), then the most
    similar spellings (difflib: "studnet" -> "student")."""
    starting = sorted((w for w in words if w.startswith(typed) and w != typed), key=lambda w: (len(w), w))
    similar = difflib.get_close_matches(typed, words, n=count, cutoff=0.6)
    return [w for w in dict.fromkeys(starting + similar) if w != typed][:count]


def last_unknown_word(sentence: str, vocabulary: WordVocabulary) -> str | None:
    """The last word of the sentence the model has no id for (the one most likely being typed); punctuation is not
    a word (model.decode leaves it out)."""
    unknown = [t for t in tokenize(sentence) if not vocabulary.knows(t) and not is_punctuation(t)]
    return unknown[-1] if unknown else None


def replace_last(sentence: str, word: str, replacement: str) -> str:
    """The sentence with the last occurrence of `word` (as tokenize reads it, any case) replaced, the rest as typed."""
    spans = [m.span() for m in _WORD.finditer(sentence) if m.group().lower() == word]
    if not spans:
        return sentence
    start, end = spans[-1]
    return sentence[:start] + replacement + sentence[end:]


def _use_suggestion(word: str, suggestion: str) -> None:
    SENTENCE.set(replace_last(SENTENCE.get() or "", word, suggestion))


def word_suggestions(vocabulary: WordVocabulary) -> None:
    """Under the sentence box: when its last unknown word has known words like it, one button each; a click puts the
    word in the sentence. Updated each time the sentence is submitted (Enter), since Streamlit's text box reports
    whole entries, not key presses."""
    word = last_unknown_word(SENTENCE.get() or "", vocabulary)
    if word is None:
        return
    suggestions = completions(word, vocabulary.known_words)
    if not suggestions:
        st.caption(tr("suggestions.none", word=escape_markdown(word)))
        return
    st.caption(tr("suggestions.unknown_word", word=escape_markdown(word)))
    with st.container(horizontal=True, gap="small"):
        for number, suggestion in enumerate(suggestions):
            # st.button labels are markdown: the suggestion is a known vocabulary word, escaped all the same
            st.button(escape_markdown(suggestion), key=f"suggestion_{number}", on_click=_use_suggestion,
                      args=(word, suggestion), help=tr("suggestions.replace_help", word=escape_markdown(word),
                                                          suggestion=escape_markdown(suggestion)))


def vocabulary_help(vocabulary: WordVocabulary) -> None:
    """Sidebar: suggestions for an unknown word typed, a word picker that filters as you type (it adds the word to
    the sentence) and the grouped list."""
    word_suggestions(vocabulary)
    words = vocabulary.known_words
    st.selectbox(tr("lecture.vocab_add"), sorted(words), index=None, key=ADD_WORD.key, on_change=_add_word,
                 placeholder=tr("lecture.vocab_add_placeholder"), help=tr("lecture.vocab_add_help"))
    with st.expander(tr("lecture.vocab_title", count=len(words)), icon=":material/menu_book:"):
        query = st.text_input(tr("lecture.vocab_search"), key=SEARCH.key, max_chars=40).strip().lower()
        shown = 0
        for part, members in grouped_words(vocabulary).items():
            matching = [w for w in members if query in w]
            if matching:
                shown += len(matching)
                st.markdown(f"**{tr(f'lecture.parts.{part}')}** ({len(matching)})  \n"
                            + escape_markdown(", ".join(matching)))
        if not shown:
            st.caption(tr("lecture.vocab_none"))


@memoized
def _word_vectors(words: tuple[str, ...]) -> np.ndarray:
    """all-MiniLM-L6-v2's vectors of single words (the lexicon's groups and each unknown word, cached)."""
    return load_model(REAL_ENCODER).word_vectors(words)


def _vectors_by_meaning():
    """The word-vector function for model.readable_sentence, or None (compare spelling) if the encoder is missing."""
    try:
        load_model(REAL_ENCODER)
    except CheckpointError:
        return None
    return lambda words: _word_vectors(tuple(words))


def readable_version(vocabulary: WordVocabulary, result: DecodeResult) -> ReadableSentence:
    """The typed sentence the model can read: for the English->French models each unknown word becomes the closest
    known word of its part of speech (model.readable_sentence); otherwise the most similar known symbol."""
    tokens, ids = result.source.tokens[:-1], result.source.ids[:-1]  # without <eos>
    known = vocabulary.known_words
    if vocabulary.task == "en-fr":
        typed = SENTENCE.get() or ""  # as typed: a capital marks a name ("Maria")
        words = [t for t in tokenize(typed) if not is_punctuation(t)]
        text = typed if words[:len(tokens)] == tokens else " ".join(tokens)
        return readable_sentence(text, set(known), _vectors_by_meaning(), max_words=vocabulary.max_words)
    unk = vocabulary.unknown_id
    chosen = [(difflib.get_close_matches(t, known, n=1, cutoff=0.0) or [t])[0] if i == unk else t
              for t, i in zip(tokens, ids)]
    return ReadableSentence(tuple(chosen), tuple(Replacement(t, (c,), "symbols")
                                                 for t, c, i in zip(tokens, chosen, ids) if i == unk))


def _use_sentence(sentence: str) -> None:
    SENTENCE.set(sentence)


def unknown_words_notice(vocabulary: WordVocabulary, result: DecodeResult, key: str = "use_nearest",
                         on_real_encoder: Callable[[], None] | None = None) -> None:
    """Unknown words: say which, offer the nearest sentence the model can read, point to the real encoder (a button
    calling on_real_encoder, which switches the sidebar's model: ui.state owns that spec)."""
    source = result.source
    if source.punctuation:
        st.caption(tr("lecture.punctuation", symbols=" ".join(escape_markdown(p) for p in
                                                             dict.fromkeys(source.punctuation))))
    if not source.unknown:
        return
    unique = list(dict.fromkeys(source.unknown))
    shown = ", ".join(escape_markdown(w) for w in unique[:12]) + (" …" if len(unique) > 12 else "")
    readable = readable_version(vocabulary, result)
    nearest = readable.text
    with st.container(border=True):
        st.warning(tr("input.unknown", count=len(unique), words=shown))
        left, right = st.columns([4, 1], vertical_alignment="center")
        left.markdown(tr("lecture.nearest", sentence=escape_markdown(nearest)))
        if readable.replacements:
            left.caption(tr("lecture.replaced", words=", ".join(
                f"{escape_markdown(r.typed)} → {escape_markdown(' '.join(r.known)) or tr('lecture.left_out')}"
                for r in readable.replacements[:12])))
        right.button(tr("lecture.use_nearest"), key=key, on_click=_use_sentence, args=(nearest,),
                     icon=":material/edit_note:")
        if vocabulary.task == "en-fr" and on_real_encoder is not None:
            # the button under its caption, as wide as its label (a narrow column cut it: "Read it with th…")
            st.caption(tr("lecture.real_encoder", model=REAL_ENCODER))
            st.button(tr("lecture.use_real_encoder", model=REAL_ENCODER), key=f"{key}_encoder",
                      on_click=on_real_encoder, icon=":material/psychology:")


def show_translation(result: DecodeResult, text: str, where=None) -> None:
    """The model's output; greyed and marked unreliable when the source had unknown words."""
    where = where or st
    if not result.source.unknown:
        where.code(text, language=None)
        return
    where.markdown(f":gray[{escape_markdown(text)}]" if text else "")
    where.caption(tr("lecture.unreliable", count=len(set(result.source.unknown))))

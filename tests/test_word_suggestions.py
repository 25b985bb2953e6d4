"""Suggestions for a word the model does not know: which word, which known words, and the sentence after a click."""
import pytest

from tests.app_links import open_from_link
from tests.bad_inputs import load_bad_inputs
from ui.state import get_model
from ui.vocabulary import completions, last_unknown_word, replace_last


@pytest.fixture(scope="module")
def en_fr():
    return get_model("transformer_en-fr").vocabulary  # the translator's words (model.adapters.WordVocabulary)


def test_half_a_word_and_a_misspelling_get_known_words(en_fr):
    words = en_fr.known_words
    assert completions("stud", words)[:2] == ["student", "students"]  # what it begins, shortest first
    assert completions("studnet", words)[0] == "student"  # then the closest spelling
    assert "student" not in completions("student", words)  # a known word is not suggested for itself
    assert completions("학생", words) == []


def test_the_last_unknown_word_is_the_one_offered_and_punctuation_is_no_word(en_fr):
    assert last_unknown_word("The cat sat, on the mat!", en_fr) == "mat"  # "," and "!" are left out, not unknown
    assert last_unknown_word("i am a student", en_fr) is None
    assert last_unknown_word("i am a Stud", en_fr) == "stud"  # as tokenize reads it: lower case


def test_a_suggestion_replaces_only_the_last_occurrence_and_keeps_the_rest_as_typed():
    assert replace_last("Stud, i am a stud!", "stud", "student") == "Stud, i am a student!"
    assert replace_last("i am", "stud", "student") == "i am"


def test_every_hostile_sentence_gets_suggestions_or_none_without_error(en_fr):
    words = en_fr.known_words
    for text in load_bad_inputs():
        word = last_unknown_word(text, en_fr)
        if word is not None:
            assert all(s in words for s in completions(word, words)), text[:40]


def test_the_sidebar_offers_buttons_and_a_click_puts_the_word_in():
    at, _ = open_from_link("attention", {"sentence": "i am a stud"})
    assert not at.exception
    assert at.button(key="suggestion_0").label == "student"
    at.button(key="suggestion_0").click().run()
    assert not at.exception and at.text_input(key="sentence").value == "i am a student"
    assert not [b for b in at.button if b.key and b.key.startswith("suggestion_")]  # nothing left to suggest

from model.data import (UNK, Vocabulary, detokenize, held_out_by_length, make_algorithmic, make_dataset, make_en_fr,
                        shipped_held_out_by_length, tokenize)
from model.en_fr import CANONICAL, english_lexicon, french_surface


def test_en_fr_is_deterministic_and_splits_are_disjoint():
    a, b = make_en_fr(seed=3, train_size=2000), make_en_fr(seed=3, train_size=2000)
    assert a.splits == b.splits
    train = {" ".join(s) for s, _ in a.splits["train"]}
    assert not train & {" ".join(s) for s, _ in a.splits["test"]}
    assert not train & {" ".join(s) for s, _ in a.splits["long_test"]}
    assert min(len(s) for s, _ in a.splits["long_test"]) >= 20
    assert max(len(s) for s, _ in a.splits["train"]) >= 25


def test_notes_example_and_lexicon_size():
    data = make_en_fr(seed=0, train_size=500)
    pairs = {" ".join(s): " ".join(t) for s, t in data.splits["train"]}
    assert pairs["i am a student"] == "je suis étudiant"
    assert len(english_lexicon()) >= 150
    assert ("i am a student", "je suis étudiant") in CANONICAL


def test_french_elision_and_contraction():
    assert french_surface("je ai un arbre".split()) == ["j'", "ai", "un", "arbre"]
    assert french_surface("le arbre".split()) == ["l'", "arbre"]
    assert french_surface("il ne aime pas de école".split()) == ["il", "n'", "aime", "pas", "d'", "école"]
    assert french_surface("près de le jardin".split()) == ["près", "du", "jardin"]
    assert french_surface("près de les jardins".split()) == ["près", "des", "jardins"]
    assert french_surface("ma école".split()) == ["mon", "école"]
    assert detokenize(["j'", "ai", "un", "chat"]) == "j'ai un chat"


def test_generated_french_agrees():
    data = make_en_fr(seed=1, train_size=3000)
    for src, tgt in data.splits["train"]:
        text = " ".join(tgt)
        assert " le arbre" not in text and "je ai" not in text and " de le " not in text
        if src[:3] == ["she", "is", "a"] and src[3] == "student":
            assert tgt[2] == "étudiante"


def test_tokenizer_and_unknown_words():
    assert tokenize("I AM a Student!!!") == ["i", "am", "a", "student", "!", "!", "!"]
    assert tokenize("j'ai") == ["j'", "ai"]
    assert tokenize("i\x00am") == ["i", "am"]
    vocab = Vocabulary(["i", "am"])
    ids, unknown = vocab.encode(["i", "am", "zebra"])
    assert unknown == ["zebra"] and vocab.itos[ids[-1]] == UNK
    assert vocab.decode([1, 4, 2]) == ["am"]


def test_algorithmic_tasks_targets():
    for task, check in (("copy", lambda s, t: s == t), ("reverse", lambda s, t: s[::-1] == t),
                        ("sort", lambda s, t: sorted(s, key=int) == t)):
        data = make_algorithmic(task, seed=0, train_size=200, test_size=50, long_size=20)
        assert all(check(s, t) for s, t in data.splits["train"] + data.splits["test"])
    assert make_dataset("reverse", train_size=10, test_size=5, long_size=5).task == "reverse"


def test_the_held_out_sentences_file_is_the_dataset_s_first_sentence_of_each_length():
    """assets/en-fr_held_out_by_length.json (what the compare page's growing sentence reads) against the dataset the
    shipped models were tested on, made again here."""
    made = held_out_by_length(make_en_fr(seed=0))
    assert shipped_held_out_by_length() == made
    assert len(made) > 30 and [len(src) for src, _ in made] == sorted({len(src) for src, _ in made})

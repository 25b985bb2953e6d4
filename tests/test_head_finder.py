"""The head finder and two inputs side by side (model/explain/head_finder.py, issue 41), on every family with heads:
our toy translator, all-MiniLM-L6-v2 and SmolLM2-135M-Instruct; and `python -m model.inspect --find`."""
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from model.bert import MINILM_NAME
from model.capabilities import NORMS
from model.explain.head_finder import TokenLookup, compare_head, default_kind, find_heads, spelling, token_index, words
from model.families import adapt, open_model
from model.gguf_weights import SMOLLM2_NAME
from model.inspect import main
from model.llama import load_smollm2

COREFERENCE = "The animal didn't cross the street because it was too tired."
WIDE = "The animal didn't cross the street because it was too wide."
TRANSLATOR_TEXT = "the cat sat on the mat ."


@pytest.fixture(scope="module")
def translator():
    lab = open_model("transformer_en-fr")
    return lab, lab.analyse(TRANSLATOR_TEXT), ("sat", "cat")


@pytest.fixture(scope="module")
def minilm():
    lab = open_model(MINILM_NAME)
    return lab, lab.analyse(COREFERENCE), ("it", "animal")


@pytest.fixture(scope="module")
def smollm2():
    lab = adapt(SMOLLM2_NAME, load_smollm2())
    return lab, lab.analyse(COREFERENCE), ("it", "animal")


FAMILIES = ("translator", "minilm", "smollm2")


@pytest.mark.parametrize("family", FAMILIES)
def test_the_ranking_is_every_heads_own_weight_and_norm_at_the_two_tokens(family, request):
    lab, analysed, (query, key) = request.getfixturevalue(family)
    ranking = find_heads(lab, analysed, query, key)
    maps = analysed.maps[ranking.kind]
    assert ranking.kind == default_kind(analysed, lab.layout) == next(iter(lab.layout))
    assert ranking.query_token.strip() == query and ranking.key_token.strip() == key
    layers, heads = lab.layout[ranking.kind]
    assert ranking.weight.shape == (layers, heads) and ranking.weight.dtype == np.float32
    for layer in range(layers):
        for head in range(heads):
            assert ranking.weight[layer, head] == pytest.approx(
                float(maps.weights[layer, head, ranking.query_index, ranking.key_index]), abs=1e-6)
    assert sorted(ranking.by_weight) == [(layer, head) for layer in range(layers) for head in range(heads)]
    ranked = [ranking.weight[cell] for cell in ranking.by_weight]
    assert ranked == sorted(ranked, reverse=True)
    assert lab.can(NORMS)  # every family here reads its value norms: the second ranking is there too
    norms = lab.explain(analysed)[f"value_norms_{ranking.kind}"][:, :, ranking.query_index, ranking.key_index]
    np.testing.assert_allclose(ranking.norm, norms, rtol=1e-6)
    by_norm = [ranking.norm[cell] for cell in ranking.by_norm]
    assert by_norm == sorted(by_norm, reverse=True) and sorted(ranking.by_norm) == sorted(ranking.by_weight)


def test_minilm_links_it_to_animal_in_the_heads_the_issue_names(minilm):
    """The issue's L4 H2 and L6 H12 (1-based), 0.68 and 0.67."""
    lab, analysed, _ = minilm
    ranking = find_heads(lab, analysed, "it", "animal")
    top = [(layer + 1, head + 1, round(float(ranking.weight[layer, head]), 3)) for layer, head in ranking.by_weight[:3]]
    by_norm = [(layer + 1, head + 1, round(float(ranking.norm[layer, head]), 3)) for layer, head in ranking.by_norm[:3]]
    print(f"it -> animal, by weight (layer, head, weight; 1-based): {top}; by value norm: {by_norm}")
    assert [cell[:2] for cell in top[:2]] == [(4, 2), (6, 12)]
    assert top[0][2] == pytest.approx(0.68, abs=0.005) and top[1][2] == pytest.approx(0.67, abs=0.005)


def test_tokens_are_found_by_their_spelling_and_a_word_by_its_first_piece():
    pieces = ["[CLS]", "the", "un", "##believ", "##ably", "good", "it", "[SEP]"]
    assert words(pieces)[2] == (2, "unbelievably")
    assert token_index(pieces, "unbelievably") == 2 and token_index(pieces, "un") == 2
    assert token_index(pieces, "##believ") == 3 and token_index(pieces, "The") == 1  # its own text; then any case
    with pytest.raises(ValueError, match="'##believ'"):  # a later piece is named by its text as shown only
        token_index(pieces, "believ")
    bpe = ["The", " animal", " under", "stood", " the", " it", "'s", "."]
    assert token_index(bpe, "understood") == 2 and token_index(bpe, " animal") == 1
    assert token_index(bpe, "the") == 4 and token_index(bpe, "The") == 0  # exact spelling before any case
    assert token_index(bpe, "it") == 5 and token_index(bpe, "'s") == 6
    assert token_index(["Ġthe", "Ġcat"], "cat") == 1 and token_index(["▁le", "▁chat"], "chat") == 1


PIECES = ["Ġthe", "Ġcat", "##s", "##n", "the", "The", "ĠThe", "▁it", "it", "IT", " it", "<bos>", "[CLS]", "'t", "didn",
          "Ġ", "##", "", "ĠÉcole", "école", ".", "Ġunder", "stood", "ß", "SS"]


def _first_spelled(tokens: list[str], name: str) -> int | None:
    """token_index's rule read straight off every token for one name (the lookup reads the tokens once for all)."""
    wanted = name.strip()
    for same in (str, str.casefold):
        found = [index for index, token in enumerate(tokens) if wanted and (same(token) == same(wanted) or (
            spelling(token)[1] is not False and same(spelling(token)[0]) == same(wanted)))]
        found += [index for index, text in words(tokens) if wanted and same(text) == same(wanted)]
        if found:
            return min(found)
    return None


@given(st.lists(st.sampled_from(PIECES), max_size=12),
       st.lists(st.sampled_from(PIECES + ["cat", "understood", " the ", "THE", "ss", "x"]), min_size=1, max_size=6))
def test_the_lookup_finds_what_the_rule_finds_token_by_token(tokens, names):
    lookup = TokenLookup(tokens)
    for name in names:
        expected = _first_spelled(tokens, name)
        if expected is None:
            with pytest.raises(ValueError, match="no token spelled"):
                lookup.index(name)
        else:
            assert lookup.index(name) == expected


def test_a_missing_token_and_a_model_without_heads_are_refused(minilm):
    lab, analysed, _ = minilm
    with pytest.raises(ValueError, match=r"no token spelled 'zebra'; the tokens are '\[CLS\]', 'the', 'animal'"):
        find_heads(lab, analysed, "zebra", "animal")
    with pytest.raises(ValueError, match="no token spelled 'zebra'"):
        find_heads(lab, analysed, "it", "zebra")
    with pytest.raises(ValueError, match="no cross heads"):
        find_heads(lab, analysed, "it", "animal", kind="cross")
    gru = open_model("bahdanau_en-fr")
    with pytest.raises(ValueError, match="no attention heads"):
        find_heads(gru, gru.analyse("i am a student"), "am", "i")


def test_two_sentences_side_by_side_differ_only_where_their_tokens_align(minilm):
    lab, tired, _ = minilm
    wide = lab.analyse(WIDE)
    for layer, head in ((3, 1), (5, 11)):
        comparison = compare_head(tired, wide, "encoder_self", layer, head)
        assert comparison.first.shape == (16, 16) == comparison.second.shape
        assert "tired" not in comparison.aligned_key_tokens and "wide" not in comparison.aligned_key_tokens
        assert len(comparison.aligned_key_tokens) == 15 == len(comparison.aligned_query_tokens)
        assert comparison.aligned_keys[13] == (14, 14)  # "." after the one replaced word
        assert comparison.difference.shape == (15, 15)
        it, animal = comparison.aligned_query_tokens.index("it"), comparison.aligned_key_tokens.index("animal")
        expected = wide.maps["encoder_self"].weights[layer, head, 10, 2] - tired.maps["encoder_self"].weights[
            layer, head, 10, 2]
        assert comparison.difference[it, animal] == pytest.approx(float(expected), abs=1e-6)
        print(f"L{layer + 1} H{head + 1} it -> animal: tired {comparison.first[10, 2]:.3f}, "
              f"wide {comparison.second[10, 2]:.3f}")


@pytest.mark.parametrize("model, text, query, key, kind", [
    (MINILM_NAME, COREFERENCE, "it", "animal", "encoder_self"),
    ("transformer_en-fr", TRANSLATOR_TEXT, "sat", "cat", "encoder_self"),
    (SMOLLM2_NAME, COREFERENCE, "it", "animal", "decoder_self"),  # its own path in inspect (llm_arrays)
])
def test_inspect_writes_the_finders_weights(tmp_path, model, text, query, key, kind):
    out = tmp_path / "found.npz"
    assert main([model, text, "--find", query, key, "--out", str(out)]) == 0
    data = np.load(out)
    tokens = [str(token).strip() for token in data["tokens"]]  # SmolLM2's " it" is the word "it"
    found = data["finder_weight"]
    assert found.dtype == np.float32 and found.shape == data[kind].shape[:2]
    np.testing.assert_array_equal(found, data[kind][:, :, tokens.index(query), tokens.index(key)])


def test_inspect_refuses_a_missing_token_naming_the_tokens(tmp_path, capsys):
    out = tmp_path / "found.npz"
    assert main([MINILM_NAME, COREFERENCE, "--find", "it", "zebra", "--out", str(out)]) == 2
    error = capsys.readouterr().err
    assert "no token spelled 'zebra'" in error and "'animal'" in error and "Traceback" not in error
    assert not out.exists()

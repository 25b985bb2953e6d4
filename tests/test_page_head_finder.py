"""AppTest of issue 41's views: the head finder and the two-texts view on the attention page (all-MiniLM-L6-v2 and our
toy translator) and on the LLM heads page (SmolLM2, with a head across many texts), in English and Korean. The
ranking shown is model.explain.head_finder's, the link names the two tokens and reopens the same pick."""
import numpy as np
import pytest

import ui.language

from i18n import translate
from model.bert import MINILM_NAME
from model.explain.head_finder import compare_head, find_heads, rank_heads
from model.explain.qk_embedding import embed_head, read_texts
from model.families import open_model
from model.gguf_weights import SMOLLM2_NAME
from tests.app_links import assert_healthy, chart_specs, open_page, query_param, trace_array
from tests.bad_inputs import load_bad_inputs

COREFERENCE = "The animal didn't cross the street because it was too tired."
WIDE = "The animal didn't cross the street because it was too wide."
FIND = {"model": MINILM_NAME, "sentence": COREFERENCE, "view": "Find heads", "find_q": "it", "find_k": "animal"}


def _chart(at, starts: str) -> dict:
    return next(c for c in chart_specs(at) if c["layout"]["title"]["text"].replace("<br>", " ").startswith(starts))


def _bars(at) -> tuple[list[str], np.ndarray]:
    bars = _chart(at, "Heads ranked")["data"][0]
    return list(bars["y"]), trace_array(bars["x"])


def _labels(order) -> list[str]:
    return [f"L{layer + 1} H{head + 1}" for layer, head in order]


@pytest.fixture(scope="module")
def minilm():
    lab = open_model(MINILM_NAME)
    return lab, lab.analyse(COREFERENCE)


def test_the_finder_ranks_minilms_heads_as_head_finder_does_and_its_link_reopens_the_pick(minilm):
    lab, analysed = minilm
    ranking = find_heads(lab, analysed, "it", "animal")
    at = open_page("attention", FIND)
    labels, weights = _bars(at)
    assert labels == _labels(ranking.by_weight[:15]) and labels[:2] == ["L4 H2", "L6 H12"]  # the two heads
    np.testing.assert_allclose(weights, [ranking.weight[cell] for cell in ranking.by_weight[:15]], atol=1e-6)
    table = next(d.value for d in at.dataframe if "Value-weighted norm" in d.value.columns)
    assert len(table) == 72 and list(table["Head"]) == _labels(ranking.by_weight)
    np.testing.assert_allclose(table["Value-weighted norm"], [ranking.norm[c] for c in ranking.by_weight], rtol=1e-5)
    assert at.selectbox(key="find_query").value == "it" and at.selectbox(key="find_key").value == "animal"
    link = {name: query_param(at, name) for name in ("model", "sentence", "view", "find_q", "find_k")}
    assert link == FIND  # the address names the two tokens

    at.button_group(key="find_by").set_value("norm").run()  # Kobayashi et al.'s ranking
    labels, norms = _bars(at)
    assert labels == _labels(ranking.by_norm[:15]) and query_param(at, "find_by") == "norm"
    np.testing.assert_allclose(norms, [ranking.norm[cell] for cell in ranking.by_norm[:15]], rtol=1e-5)

    again = open_page("attention", {name: query_param(at, name) for name in (*FIND, "find_by")})
    assert _bars(again)[0] == labels  # the link reopens the same pick, ranked the same way

    at.button_group(key="finder_open").set_value((5, 11)).run()  # L6 H12 opens in the Head view
    assert not at.exception
    assert (query_param(at, "view"), query_param(at, "layer"), query_param(at, "head")) == ("Head", "6", "12")


def test_the_finder_ranks_the_toy_translators_heads_as_head_finder_does():
    lab = open_model("transformer_en-fr")
    sentence = "the cat sat on the mat ."
    ranking = find_heads(lab, lab.analyse(sentence), "sat", "cat", "encoder_self")
    at = open_page("attention", {"model": "transformer_en-fr", "sentence": sentence, "kind": "encoder_self",
                                 "view": "Find heads", "find_q": "sat", "find_k": "cat"})
    labels, weights = _bars(at)
    assert labels == _labels(ranking.by_weight[:len(labels)])
    np.testing.assert_allclose(weights, [ranking.weight[c] for c in ranking.by_weight[:len(labels)]], atol=1e-6)
    assert not [d for d in at.dataframe if "Value-weighted norm" in d.value.columns] or ranking.norm is not None


def test_two_texts_show_one_head_on_both_and_their_aligned_difference(minilm):
    lab, analysed = minilm
    at = open_page("attention", {"model": MINILM_NAME, "sentence": COREFERENCE, "view": "Two texts", "layer": "4",
                                 "head": "2", "v": "2", "find_q": "it", "find_k": "animal"})
    assert at.text_input(key="text_b").value == WIDE  # the Winograd partner by default
    comparison = compare_head(analysed, lab.analyse(WIDE), "encoder_self", 3, 1)
    np.testing.assert_allclose(trace_array(_chart(at, "A: L4 H2")["data"][0]["z"]), comparison.first, atol=1e-6)
    np.testing.assert_allclose(trace_array(_chart(at, "B: L4 H2")["data"][0]["z"]), comparison.second, atol=1e-6)
    difference = _chart(at, "B − A")["data"][0]
    np.testing.assert_allclose(trace_array(difference["z"]), comparison.difference, atol=1e-6)
    assert difference["colorbar"]["title"]["text"] == "B − A" and "B − A" in difference["hovertemplate"]  # as titled
    row = [s for s in _chart(at, "A: L4 H2")["layout"]["shapes"] if s["type"] == "rect"]
    assert [(s["y0"], s["y1"]) for s in row] == [(9.5, 10.5)]  # "it", token 11, framed
    stated = next(m.value for m in at.markdown if m.value.startswith("Row **it**"))
    assert f"**{comparison.first[10, 2]:.2f}** in A and **{comparison.second[10, 2]:.2f}** in B" in stated


def test_two_texts_opened_on_the_pages_head_offers_the_finders_strongest_one(minilm):
    """Issue 51: the finder's stop opened by its link, then "Two texts", showed the page's default head ("0.00 in A");
    a line names the finder's strongest head for the pair and a button opens it in this view."""
    lab, analysed = minilm
    ranking = rank_heads(analysed.maps["encoder_self"], 10, 2)  # "it" (token 11) → "animal" (token 3)
    strongest = ranking.by_weight[0]
    at = open_page("attention", {"model": MINILM_NAME, "sentence": COREFERENCE, "view": "Two texts",
                                 "find_q": "it", "find_k": "animal"})
    label = f"L{strongest[0] + 1} H{strongest[1] + 1}"
    line = next(m.value for m in at.markdown if m.value.startswith("The finder's strongest head"))
    shown = _chart(at, "A: ")["layout"]["title"]["text"].split(",")[0][3:]  # "L1 H3": the page's default head
    assert shown != label and f"**{label}** ({ranking.weight[strongest]:.2f})" in line and f"shows {shown} (" in line
    at.button(key="two_texts_strongest").click().run()
    assert not at.exception
    _chart(at, f"A: {label}")  # the same view, now on the strongest head, and no offer left
    assert not [m for m in at.markdown if m.value.startswith("The finder's strongest head")]


def test_the_attention_pages_finder_and_two_texts_in_korean(monkeypatch):
    # AppTest re-serialises widgets through format_func outside the script thread (tests/test_attention_i18n_share.py)
    monkeypatch.setattr(ui.language, "_session_language", lambda: "ko")
    at = open_page("attention", {**FIND, "lang": "ko"})
    title = translate("ko", "head_finder.chart.title", query="it", key_token="animal", top=15,
                      kind=translate("ko", "attention.kinds.encoder_self"))
    assert _chart(at, title.split(":")[0])["layout"]["title"]["text"].replace("<br>", " ") == title
    assert at.selectbox(key="find_query").label == translate("ko", "head_finder.query")
    assert translate("ko", "head_finder.chart.norm") in next(iter(at.dataframe)).value.columns
    at.session_state["attn_view"] = "Two texts"
    at.run()
    assert not at.exception
    assert at.text_input(key="text_b").label == translate("ko", "head_finder.text_b")
    assert any(m.value.startswith("행 **it**") for m in at.markdown)


@pytest.fixture(scope="module")
def smollm2():
    lab = open_model(SMOLLM2_NAME)
    return lab, lab.analyse(COREFERENCE)


def test_the_llm_heads_page_finds_a_head_and_shows_it_across_many_texts(smollm2):
    lab, analysed = smollm2
    ranking = find_heads(lab, analysed, "it", "animal")
    at = open_page("llm_heads", {"find_q": "it", "find_k": "animal"})
    labels, weights = _bars(at)
    assert labels == _labels(ranking.by_weight[:15])
    np.testing.assert_allclose(weights, [ranking.weight[c] for c in ranking.by_weight[:15]], atol=1e-6)
    top = ranking.by_weight[0]  # no head named: the two texts and the picture show the finder's first
    name = _labels([top])[0]
    assert query_param(at, "qk_head") == name and query_param(at, "find_text_b") == WIDE
    picture = _chart(at, f"{name}: queries and keys")
    embedding = embed_head(read_texts(lab), *top)
    points = np.concatenate([trace_array(picture["data"][0]["x"]), trace_array(picture["data"][1]["x"])])
    np.testing.assert_allclose(points, embedding.points[:, 0], atol=1e-5)
    check = next(c.value for c in at.caption if c.value.startswith("Sum of the pairs"))
    assert float(check.split("difference ")[1].split(" ")[0]) < 1e-4  # the pairs sum to the model's scores
    assert any("positional" in link.proto.page for link in at.get("page_link"))
    at.button_group(key="finder_open").set_value(ranking.by_weight[1]).run()  # the second head opens below
    assert not at.exception and query_param(at, "qk_head") == _labels(ranking.by_weight[1:2])[0]
    assert _chart(at, f"{_labels(ranking.by_weight[1:2])[0]}: queries and keys")


def test_the_llm_heads_pages_finder_in_korean(monkeypatch):
    monkeypatch.setattr(ui.language, "_session_language", lambda: "ko")
    at = open_page("llm_heads", {"find_q": "it", "find_k": "animal", "lang": "ko"})
    headers = [h.value for h in at.header]
    assert headers[-2:] == [translate("ko", "head_finder.finder_title"), translate("ko", "head_finder.across_title")]
    assert at.button_group(key="llm_qk_colour").label == translate("ko", "head_finder.colour_by")
    assert any(c.value.startswith("쌍들의 합") for c in at.caption)


def _healthy_with_no_markup(at, text: str) -> None:
    assert_healthy(at)
    assert not at.error, repr(text[:40])
    shown = " ".join(str(m.value) for m in list(at.markdown) + list(at.info) + list(at.caption))
    assert "<script>" not in shown and "<img" not in shown, repr(text[:40])


def test_every_bad_second_text_gives_the_two_texts_or_a_message():
    """The attention page's second text (the Two texts view, MiniLM): every hostile input draws the view or says
    why not, with no error and no markup rendered."""
    at = open_page("attention", {"model": MINILM_NAME, "sentence": COREFERENCE, "view": "Two texts", "layer": "4",
                                 "head": "2", "v": "2", "find_q": "it", "find_k": "animal"})
    for text in load_bad_inputs():
        at.text_input(key="text_b").set_value(text).run()
        _healthy_with_no_markup(at, text)


@pytest.mark.slow
def test_every_bad_finder_text_on_the_llm_heads_page_gives_a_ranking_or_a_message():
    """The LLM heads page's finder text and its second text (SmolLM2): every hostile input draws or says why not."""
    at = open_page("llm_heads", {"find_q": "it", "find_k": "animal"})
    for text in load_bad_inputs():
        at.text_input(key="llm_find_text").set_value(text).run()  # the finder's text (no second text without it)
        _healthy_with_no_markup(at, text)
    at.text_input(key="llm_find_text").set_value(COREFERENCE).run()
    for text in load_bad_inputs():
        at.text_input(key="llm_find_text_b").set_value(text).run()  # the second text beside a good first one
        _healthy_with_no_markup(at, text)

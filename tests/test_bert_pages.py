"""all-MiniLM-L6-v2 on the pages: the attention page for an encoder-only model (self-attention over real subword
tokens, toggles, 6 × 12 grid, statistics, ablation by sentence similarity, rescale, long input, Korean, links) and a
clear message on the pages that need a decoder."""
import numpy as np

import pytest

import ui.language
from i18n import translate
from model.bert import MINILM_NAME
from model.sources import analyse_encoder
from tests.bad_inputs import load_bad_inputs
from tests.app_links import APP_PAGES, chart_specs, chart_titles, link_notices, open_page, trace_values
from ui.models import load_model
from viz.attention import tile_origin

BAD_INPUTS = load_bad_inputs()
COREFERENCE = "The animal didn't cross the street because it was too tired."
PIECES = "Unbelievably, the tokenizer splits uncommon words."


def _open(page="attention", query=None, **state):
    state.setdefault("model_id", MINILM_NAME)
    return open_page(page, query, **state)


def _ticks(spec, axis="xaxis"):
    return spec["layout"][axis]["ticktext"]


def _metric(at, label_key, **values):
    label = translate("en", label_key, **values)
    return float(next(m.value for m in at.metric if m.label == label))


def test_attention_page_shows_encoder_self_attention_over_real_subword_tokens():
    at = _open(sentence=PIECES)
    assert not at.warning, [w.value for w in at.warning]  # ordinary English: no [UNK], nothing cut
    assert "attn_kind" not in [s.key for s in at.selectbox]  # one kind only: no decoder or cross choices
    assert translate("en", "bert.self_only") in [m.value for m in at.markdown]
    assert translate("en", "attention.translation") not in [m.value for m in at.markdown]  # nothing is generated
    keys = _ticks(chart_specs(at)[0])
    assert keys[0] == "[CLS]" and keys[-1] == "[SEP]" and any(t.startswith("##") for t in keys)
    layer, head = at.session_state["attn_layer"], at.session_state["attn_head"]  # the page's teaching head
    assert chart_titles(at)[0] == f"Encoder self-attention · layer {layer + 1} · head {head + 1}"


def test_merge_and_hide_toggles_change_the_tokens_and_say_how():
    at = _open(sentence=PIECES)
    pieces = _ticks(chart_specs(at)[0])
    at.toggle(key="bert_merge_words").set_value(True).run()
    words = _ticks(chart_specs(at)[0])
    assert "unbelievably" in words and not any(t.startswith("##") for t in words) and len(words) < len(pieces)
    assert translate("en", "bert.view_caption_merged") in [c.value for c in at.caption]
    rows = trace_values(chart_specs(at)[0]["data"][0]["z"])
    assert np.allclose(rows.sum(-1), 1, atol=1e-4)  # averaged query pieces, summed key pieces: still 1
    at.toggle(key="bert_hide_special").set_value(True).run()
    shown = _ticks(chart_specs(at)[0])
    assert "[CLS]" not in shown and "[SEP]" not in shown and shown == words[1:-1]
    assert translate("en", "bert.view_caption_hidden") in [c.value for c in at.caption]
    assert at.query_params["hide_special"] == "true" and at.query_params["words"] == "true"  # in the link


def test_all_heads_grid_is_six_layers_by_twelve_heads():
    at = _open(sentence=COREFERENCE, attn_view="All heads")
    grid = chart_specs(at)[0]  # one heatmap: the heads' maps tiled, a row of thumbnails a layer, a column a head
    assert (len(grid["layout"]["yaxis"]["ticktext"]), len(grid["layout"]["xaxis"]["ticktext"])) == (6, 12)
    assert grid["layout"]["annotations"][71]["text"].startswith("L6 H12 · ")  # then the head's pattern


def test_statistics_give_shares_on_cls_sep_and_punctuation_instead_of_eos():
    at = _open(sentence=COREFERENCE, attn_view="Statistics")
    columns = list(at.dataframe[0].value.columns)
    for key in ("cls", "sep", "punctuation"):
        assert translate("en", f"attention.stats.{key}") in columns
    assert translate("en", "attention.stats.eos") not in columns
    table = at.dataframe[0].value
    model = load_model(MINILM_NAME).network
    weights = model.run(model.encode(COREFERENCE)).weights[:, 0].numpy()  # (L, h, T, T); [CLS] first, [SEP] last
    assert len(table) == 72
    np.testing.assert_allclose(table[translate("en", "attention.stats.cls")], weights[..., 0].mean(-1).ravel(),
                               atol=1e-6)
    np.testing.assert_allclose(table[translate("en", "attention.stats.sep")], weights[..., -1].mean(-1).ravel(),
                               atol=1e-6)
    punctuation = [i for i, t in enumerate(model.encode(COREFERENCE).tokens) if t in ("'", ".")]
    assert len(punctuation) == 2
    np.testing.assert_allclose(table[translate("en", "attention.stats.punctuation")],
                               weights[..., punctuation].sum(-1).mean(-1).ravel(), atol=1e-6)


def test_switching_heads_off_changes_the_sentence_similarity_and_moves_token_vectors():
    at = _open(sentence=COREFERENCE, attn_view="Ablation")
    on = _metric(at, "bert.ablation.similarity_on")
    assert 0 < on < 1
    at.multiselect(key="ablate_heads").select(("encoder_self", 0, 0)).select(("encoder_self", 1, 5)).run()
    assert not at.exception
    off = _metric(at, "bert.ablation.similarity_off", count=2)
    assert off != pytest.approx(on, abs=1e-4)
    assert _metric(at, "bert.ablation.self_similarity") < 1.0
    movement = next(s for s in chart_specs(at) if s["layout"]["title"]["text"] ==
                    translate("en", "bert.ablation.movement_title"))
    moved = trace_values(movement["data"][0]["x"])
    assert len(moved) == len(movement["data"][0]["y"]) > 10 and moved.max() > 0


def test_rescale_re_softmaxes_the_encoder_scores():
    at = _open(sentence=COREFERENCE, attn_view="Rescale", rescale_factor=8.0)
    trained, rescaled = (float(m.value) for m in at.metric[:2])
    assert rescaled < trained  # a larger scale sharpens: lower entropy


@pytest.mark.slow  # over 10 s on the shared 2-core box
def test_a_long_text_is_cut_to_256_tokens_with_a_notice_and_the_grid_and_heatmap_still_render():
    at = _open(sentence="the cat sat on the mat and looked at the dog " * 40)
    assert any("256" in w.value and "[SEP]" in w.value for w in at.warning)
    heatmap = chart_specs(at)[0]
    assert trace_values(heatmap["data"][0]["z"]).shape == (256, 256)  # every token is a row and a column ...
    assert 32 <= len(_ticks(heatmap)) <= 64 and _ticks(heatmap)[0] == "[CLS]"  # ... but only every k-th is labelled
    assert translate("en", "bert.lines_hidden", limit=40, tokens=256) in [c.value for c in at.caption]
    at.session_state["attn_view"] = "All heads"
    at.run()
    tiled = trace_values(chart_specs(at)[0]["data"][0]["z"])
    top, left = tile_origin(5, 11, 48, 48)  # the last head's thumbnail ends the tiled matrix
    assert not at.exception and tiled.shape == (top + 48, left + 48)  # block-averaged thumbnails
    assert translate("en", "bert.grid_pooled", tokens=256, cells=48) in [c.value for c in at.caption]


def test_unknown_pieces_are_shown_as_unk():
    at = _open(sentence="I love it 😀")
    assert any("[UNK]" in w.value and "😀" in w.value for w in at.warning)
    assert "[UNK]" in _ticks(chart_specs(at)[0])


@pytest.mark.parametrize("page_name", ["decoding", "compare"])
def test_pages_that_need_a_decoder_say_so_for_an_encoder(page_name):
    at = _open(page_name, sentence=COREFERENCE)
    assert not at.exception and not at.error
    assert any("encoder only" in i.value for i in at.info)


def test_encoder_attention_page_in_korean(monkeypatch):
    monkeypatch.setattr(ui.language, "_session_language", lambda: "ko")  # the provider each run installs
    at = _open(sentence=COREFERENCE, lang="ko")
    assert translate("ko", "bert.self_only") in [m.value for m in at.markdown]
    assert at.toggle(key="bert_merge_words").label == translate("ko", "bert.merge_words")
    layer, head = at.session_state["attn_layer"], at.session_state["attn_head"]
    assert chart_titles(at)[0] == f"인코더 셀프 어텐션 · 층 {layer + 1} · 헤드 {head + 1}"


def test_a_link_opens_the_encoder_on_a_head_with_words_merged():
    at = _open(query={"model": MINILM_NAME, "sentence": COREFERENCE, "layer": "3", "head": "10",
                      "view": "Head", "words": "true", "kind": "cross"})
    assert (at.selectbox(key="attn_layer").value, at.selectbox(key="attn_head").value) == (3, 10)
    assert chart_specs(at)[0]["layout"]["title"]["text"] == "Encoder self-attention · layer 4 · head 11"
    assert "didn" in _ticks(chart_specs(at)[0]) and at.toggle(key="bert_merge_words").value
    assert "kind" in link_notices(at)  # an encoder has no cross-attention: the link's kind is refused, and said


def test_a_link_past_the_encoder_last_head_is_refused_with_a_notice():
    at = _open(query={"model": MINILM_NAME, "sentence": COREFERENCE, "layer": "6", "head": "13", "v": "2"})
    assert "(head)" in link_notices(at)  # 6 layers of 12 heads, counted from 1: layer 6 is there, head 13 is not
    assert at.selectbox(key="attn_layer").value == 5
    assert at.selectbox(key="attn_head").options == [str(h) for h in range(1, 13)]


@pytest.mark.slow  # over 10 s on the shared 2-core box
def test_every_page_renders_with_the_encoder_selected():
    for page in APP_PAGES:
        at = _open(page, sentence=COREFERENCE)
        assert at.title and not at.error, page


def test_every_bad_input_gives_finite_maps_or_a_prompt_and_nothing_unescaped():
    model = load_model(MINILM_NAME).network
    at = _open(sentence=COREFERENCE)
    for text in BAD_INPUTS:
        analysed = analyse_encoder(MINILM_NAME, text, model)  # the raw text straight into the model
        weights = analysed.maps["encoder_self"].weights
        assert np.isfinite(weights).all() and np.allclose(weights.sum(-1), 1, atol=1e-4), repr(text[:40])
        assert analysed.input_tokens[0] == "[CLS]" and len(analysed.input_tokens) <= 256
        at.session_state["sentence"] = text
        at.run()
        assert not at.exception and not at.error, repr(text[:40])
        shown = " ".join(str(m.value) for m in list(at.markdown) + list(at.warning) + list(at.info))
        assert "<script>" not in shown and "<img" not in shown
        if not text.strip(" \t\n\r\x00\x07\x1b\u200d"):
            assert translate("en", "input.empty") in [i.value for i in at.info]


def test_compare_two_encoder_heads_with_their_difference():
    at = _open(sentence=COREFERENCE, attn_view="Compare", attn_layer=0, attn_head=2, cmp_layer=5, cmp_head=0)
    assert at.selectbox(key="cmp_kind").options == [translate("en", "attention.kinds.encoder_self")]
    specs = chart_specs(at)
    assert [s["layout"]["title"]["text"] for s in specs] == [
        "A: Encoder self-attention · layer 1 · head 3", "B: Encoder self-attention · layer 6 · head 1",
        translate("en", "attention.difference_title")]
    a, b, difference = (trace_values(s["data"][0]["z"]) for s in specs)
    np.testing.assert_allclose(difference, a - b, atol=1e-9)


def test_every_bad_second_sentence_gives_a_similarity_or_a_prompt():
    at = _open(sentence=COREFERENCE, attn_view="Ablation", ablate_heads=[("encoder_self", 2, 2)])
    for text in BAD_INPUTS:
        at.text_input(key="bert_second").set_value(text).run()
        assert not at.exception and not at.error, repr(text[:40])
        if text.strip(" \t\n\r\x00\x07\x1b\u200d"):
            similarity = _metric(at, "bert.ablation.similarity_on")
            assert -1 <= similarity <= 1, repr(text[:40])
        else:
            assert translate("en", "bert.ablation.empty_second") in [i.value for i in at.info]


def test_an_encoder_analysis_is_computed_once_per_sentence_and_heads(monkeypatch):
    import ui.state

    calls = []
    lab = load_model(MINILM_NAME)
    real = type(lab).analyse
    monkeypatch.setattr(type(lab), "analyse", lambda self, *args: calls.append(args[0]) or real(self, *args))
    sentence = "A sentence analysed once, whatever the number of reruns."
    first = ui.state.shared_analysis(MINILM_NAME, sentence, lab, (("encoder_self", 0, 1),))
    again = ui.state.shared_analysis(MINILM_NAME, sentence, lab, (("encoder_self", 0, 1),))
    assert calls == [sentence]  # the second rerun read the cache
    np.testing.assert_array_equal(first.encoding.embedding, again.encoding.embedding)

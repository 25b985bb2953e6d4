"""A lecture goes back and forth between pages: each page's view survives, and links count layers and heads from 1
(old 0-based links still open the same view)."""
import numpy as np
from streamlit.testing.v1 import AppTest

from i18n import translate
from model.metrics import head_statistics
from model.sources import as_float32
from tests.app_links import chart_specs, chart_titles, go_to, open_from_link, query_param
from ui.compare_view import marked_differences
from ui.state import get_model, shared_analysis


def test_attention_view_and_foundation_sliders_survive_a_round_trip():
    at, _ = open_from_link("attention", {"sentence": "i am a student"})
    at.selectbox(key="attn_kind").set_value("decoder_self").run()
    at.selectbox(key="attn_layer").set_value(1).run()
    at.selectbox(key="attn_head").set_value(2).run()
    at.segmented_control(key="attn_view").set_value("Compare").run()
    at.selectbox(key="cmp_kind").set_value("cross").run()
    at.selectbox(key="cmp_head").set_value(3).run()
    go_to(at, "positional")
    at.slider(key="pe_d_model").set_value(32).run()
    go_to(at, "softmax_scaling")
    at.select_slider(key="scaling_dk").set_value(8).run()
    go_to(at, "attention")
    assert (at.selectbox(key="attn_kind").value, at.selectbox(key="attn_layer").value,
            at.selectbox(key="attn_head").value) == ("decoder_self", 1, 2)
    assert at.segmented_control(key="attn_view").value == "Compare"
    assert (at.selectbox(key="cmp_kind").value, at.selectbox(key="cmp_head").value) == ("cross", 3)
    go_to(at, "positional")
    assert at.slider(key="pe_d_model").value == 32
    go_to(at, "softmax_scaling")
    assert at.select_slider(key="scaling_dk").value == 8


def test_a_view_left_inside_the_attention_fragment_keeps_its_picks():
    at, _ = open_from_link("attention", {"sentence": "i am a student", "view": "Compare", "cmp_kind": "cross",
                                         "cmp_layer": "2", "cmp_head": "4", "v": "2"})
    assert (at.selectbox(key="cmp_layer").value, at.selectbox(key="cmp_head").value) == (1, 3)
    at.segmented_control(key="attn_view").set_value("Statistics").run()
    at.toggle(key="stats_average").set_value(True).run()
    at.segmented_control(key="attn_view").set_value("Compare").run()
    assert (at.selectbox(key="cmp_kind").value, at.selectbox(key="cmp_layer").value,
            at.selectbox(key="cmp_head").value) == ("cross", 1, 3)
    at.segmented_control(key="attn_view").set_value("Statistics").run()
    assert at.toggle(key="stats_average").value is True


def test_links_count_layers_and_heads_from_one_and_old_links_still_open_the_same_head():
    new, notice = open_from_link("attention", {"sentence": "i am a student", "kind": "cross", "layer": "2",
                                               "head": "4", "v": "2"})
    old, old_notice = open_from_link("attention", {"sentence": "i am a student", "kind": "cross", "layer": "1",
                                                   "head": "3"})
    for at in (new, old):
        assert (at.selectbox(key="attn_layer").value, at.selectbox(key="attn_head").value) == (1, 3)
        # the address written back is the new, 1-based form, whichever link opened the page
        assert (query_param(at, "layer"), query_param(at, "head"), query_param(at, "v")) == ("2", "4", "2")
    assert not notice and not old_notice
    bad, bad_notice = open_from_link("attention", {"layer": "0", "head": "5", "v": "2"})  # 1-based: 0 and 5 do not fit
    assert "layer" in bad_notice and "head" in bad_notice


def test_decoding_and_compare_links_count_from_one_too():
    at, notice = open_from_link("decoding", {"sentence": "i am a student", "dec_layer": "2", "dec_head": "1",
                                             "v": "2"})
    assert not notice and (at.selectbox(key="dec_layer").value, at.selectbox(key="dec_head").value) == (1, 0)
    at.selectbox(key="dec_head").set_value("all").run()
    assert (query_param(at, "dec_layer"), query_param(at, "dec_head")) == ("2", "all")
    at, notice = open_from_link("compare", {"compare_layer": "1", "compare_head": "2", "v": "2"})
    assert not notice and (at.session_state["cmp_model_layer"], at.session_state["cmp_model_head"]) == (0, 1)
    assert (query_param(at, "compare_layer"), query_param(at, "compare_head")) == ("1", "2")


def test_a_kept_head_that_the_next_model_lacks_is_dropped_without_an_error():
    at, _ = open_from_link("attention", {"sentence": "i am a student", "layer": "2", "head": "4", "v": "2"})
    go_to(at, "home")
    at.sidebar.selectbox(key="model_id").set_value("bahdanau_en-fr").run()  # no layers or heads
    assert any(title.startswith("Bahdanau alignment while writing") for title in chart_titles(go_to(at, "decoding")))
    at.sidebar.selectbox(key="model_id").set_value("transformer_en-fr").run()
    go_to(at, "attention")
    layer, head = at.selectbox(key="attn_layer").value, at.selectbox(key="attn_head").value
    assert f"layer {layer + 1} · head {head + 1}" in chart_titles(at)[0] and not at.error


# --- the attention page opens on what teaches, and labels what is written ---------------------------------------

def _heatmap_rows(at: AppTest) -> list[str]:
    spec = chart_specs(at)[0]
    return spec["layout"]["yaxis"]["ticktext"]


def test_the_attention_page_opens_on_the_sharpest_cross_attention_head_and_says_why():
    at, _ = open_from_link("attention", {"sentence": "i am a student"})
    cross = shared_analysis("transformer_en-fr", "i am a student", get_model("transformer_en-fr")).maps["cross"]
    entropy = head_statistics(as_float32(cross.weights))["entropy"]  # (L, h): the Statistics view's column
    best = np.unravel_index(np.argmin(entropy), entropy.shape)
    assert at.selectbox(key="attn_kind").value == "cross"
    assert (at.selectbox(key="attn_layer").value, at.selectbox(key="attn_head").value) == tuple(map(int, best))
    why = [c.value for c in at.caption if c.value.startswith("Why this head")]
    assert len(why) == 1 and f"layer {best[0] + 1} · head {best[1] + 1}," in why[0]
    other = (int(best[1]) + 1) % entropy.shape[1]
    at.selectbox(key="attn_head").set_value(other).run()
    assert not [c.value for c in at.caption if c.value.startswith("Why this head")]  # only for the head it explains


def test_decoder_rows_are_the_tokens_being_written_on_every_page():
    at, _ = open_from_link("attention", {"sentence": "i am a student", "kind": "cross", "layer": "1", "head": "1",
                                         "v": "2"})
    assert _heatmap_rows(at) == ["je", "suis", "étudiant", "&lt;eos&gt;"]  # not <bos>, je, suis, étudiant
    assert translate("en", "lecture.rows_written") in [c.value for c in at.caption]
    at.selectbox(key="attn_kind").set_value("decoder_self").run()
    spec = chart_specs(at)[0]
    assert spec["layout"]["yaxis"]["ticktext"] == ["je", "suis", "étudiant", "&lt;eos&gt;"]
    assert spec["layout"]["xaxis"]["ticktext"] == ["&lt;bos&gt;", "je", "suis", "étudiant"]  # what it reads
    at, _ = open_from_link("decoding", {"sentence": "i am a student", "step": "2"})
    self_attention = chart_specs(at)[1]
    assert self_attention["layout"]["yaxis"]["ticktext"] == ["je", "suis"]
    at, _ = open_from_link("compare", {"sentence": "i am a student"})
    transformer = chart_specs(at)[1]
    assert transformer["layout"]["yaxis"]["ticktext"] == ["je", "suis", "étudiant", "&lt;eos&gt;"]


def test_compare_starts_head_b_on_head_a_kind_so_the_difference_is_shown():
    at, _ = open_from_link("attention", {"sentence": "i am a student", "kind": "decoder_self", "view": "Compare"})
    assert at.selectbox(key="cmp_kind").value == "decoder_self"
    titles = chart_titles(at)
    assert len(titles) == 3 and titles[2] == translate("en", "attention.difference_title")


# --- sentences the model does not know ---------------------------------------------------------------------------

def test_punctuation_is_left_out_not_reported_as_unknown_words():
    at, _ = open_from_link("attention", {"sentence": "i am a student."})
    assert not at.warning and any(m.value.endswith(" **je suis étudiant**") for m in at.markdown)
    assert any(c.value.startswith("Punctuation left out") and c.value.endswith(r"\.") for c in at.caption)


def test_unknown_words_make_the_translation_unreliable_and_offer_the_nearest_readable_sentence():
    at, _ = open_from_link("attention", {"sentence": "i am a wizard"})
    assert "wizard" in at.warning[0].value
    assert not [c for c in at.code if c.value.startswith("je suis")]  # not shown as a plain, trusted result
    assert any(c.value.startswith("Unreliable: 1 word(s)") for c in at.caption)
    assert any("all-MiniLM-L6-v2" in c.value for c in at.caption)
    nearest = [m.value for m in at.markdown if m.value.startswith("Nearest sentence")][0]
    readable = nearest.split("**")[1]
    assert readable.startswith("i am a ") and "wizard" not in readable
    at.button(key="use_nearest").click().run()
    assert at.session_state["sentence"] == readable and not at.warning  # every word of it is known
    assert not [c for c in at.caption if c.value.startswith("Unreliable")]


def test_the_vocabulary_is_grouped_searchable_and_adds_words_to_the_sentence():
    at, _ = open_from_link("attention", {"sentence": "i have a"})
    at.sidebar.text_input(key="vocab_search").set_value("app").run()
    groups = [m.value for m in at.sidebar.markdown if m.value.startswith("**")]
    assert groups == ["**Nouns** (2)  \napple, apples", "**Adjectives** (1)  \nhappy"]
    at.sidebar.text_input(key="vocab_search").set_value("zzz").run()
    assert translate("en", "lecture.vocab_none") in [c.value for c in at.sidebar.caption]
    assert "apple" in at.sidebar.selectbox(key="vocab_add").options and "<unk>" not in \
        at.sidebar.selectbox(key="vocab_add").options
    at.sidebar.selectbox(key="vocab_add").set_value("cat").run()
    assert at.session_state["sentence"] == "i have a cat" and at.sidebar.selectbox(key="vocab_add").value is None
    assert any(m.value.endswith(r" **j\' ai un chat**") for m in at.markdown)  # markdown-escaped model output


# --- seq2seq vs Transformer: long translations whole, differing words marked ----------------------------------

def test_differing_words_are_marked_against_the_reference():
    marked, missing = marked_differences(["le", "chat", "noir", "dort"], ["le", "chat", "blanc", "dort", "bien"])
    assert marked == "le chat :red-background[noir] dort :red-background[∅]" and missing == 2
    assert marked_differences(["a", "<b>"], ["a", "<b>"]) == (r"a \<b\>", 0)  # model output is escaped, not markup


def test_the_growing_sentence_shows_each_translation_whole_with_its_differences():
    at, _ = open_from_link("compare", {"sentence": "i am a student", "compare_len": "40"})
    assert any(":red-background[" in m.value for m in at.markdown)  # the no-attention model gets 40 words wrong
    assert any(c.value.startswith("❌ differs from the reference") for c in at.caption)


def test_unknown_words_get_a_grammatical_nearest_sentence_and_a_way_to_the_real_encoder():
    at, _ = open_from_link("attention", {"sentence": "the weather is nice today"})
    nearest = next(m.value for m in at.markdown if m.value.startswith("Nearest sentence"))
    suggestion = nearest.split("**")[1]
    at.button(key="use_nearest").click().run()
    assert at.session_state["sentence"] == suggestion and not at.warning  # every word of it is known
    at.session_state["sentence"] = "the weather is nice today"
    at.run()
    at.button(key="use_nearest_encoder").click().run()
    assert at.session_state["model_id"] == "all-MiniLM-L6-v2"
    assert at.session_state["sentence"] == "the weather is nice today"  # the same sentence, read by the encoder
    assert not at.exception

"""AppTest for the LLM heads page (attention sinks, induction heads) on SmolLM2-135M-Instruct, in English and Korean,
and every hostile text in its text box."""
import numpy as np
import pytest

from i18n import translate
from tests.app_links import chart_specs, open_page, trace_array
from tests.bad_inputs import load_bad_inputs
from model.llama import MAX_TOKENS
from ui.display import PAGE_WIDTH
from ui.llm_heads import COPY_PROMPT
from tests.test_llm_attention_page import token_axes_fit


def test_the_page_shows_the_sinks_the_top_induction_head_and_the_live_copy():
    at = open_page("llm_heads")
    assert at.title[0].value == "Inside an LLM: attention sinks and induction heads"
    assert [h.value for h in at.header] == ["Attention sinks", "Induction heads", "Find a head",
                                            "A head across many texts"]  # the last two: test_page_head_finder.py
    charts = chart_specs(at)
    share = trace_array(charts[0]["data"][0]["z"])
    assert share.shape == (30, 9) and charts[0]["data"][0]["y"][0] == "L1"
    metrics = {m.label: m.value for m in at.metric}
    sink, norm = float(metrics["Mean weight on the first token, layers 4-30"]), \
        float(metrics["Its share of the value-weighted norms, layers 4-30"])
    assert sink == pytest.approx(share[3:].mean(), abs=0.01) and sink > 0.3  # the measured sink (about 0.4-0.5)
    assert norm < sink - 0.05  # the value-weighted norms: the sink moves less than its weight says
    # switching the first token off and removing it: the same distribution with rotary positions
    assert float(metrics["KL(as it is ‖ switched off), nats"]) == pytest.approx(
        float(metrics["KL(as it is ‖ removed), nats"]), abs=1e-3)
    assert len(at.dataframe[0].value) == 5
    # induction: the top head named in the metric is the first label on the map, and its map is 2n × 2n
    top = metrics["Top induction head (score)"]
    induction = next(c for c in charts if c["layout"]["title"]["text"].startswith("Induction score per head"))
    assert induction["layout"]["annotations"][0]["text"].startswith(f"<b>{top}</b>")
    assert len(induction["layout"]["annotations"]) == 5
    stripe = next(c for c in charts if c["layout"]["title"]["text"].startswith(f"{top}: attention on the repeated"))
    weights = trace_array(stripe["data"][0]["z"])
    assert weights.shape == (80, 80)
    assert np.mean(weights[np.arange(40, 79), np.arange(1, 40)]) > 0.5  # the diagonal n − 1 = 39 to the left
    assert float(metrics["Loss in the second copy (nats)"]) < float(metrics["Loss in the first copy (nats)"]) / 3
    # the in-context copy, computed live: the continuation starts with " mat"
    assert at.code[0].value.startswith(COPY_PROMPT + "▌ mat")
    at.select_slider(key="llm_induction_length").set_value(20).run()
    assert not at.exception
    stripe = next(c for c in chart_specs(at) if "attention on the repeated sequence (n = 20)" in
                  c["layout"]["title"]["text"])
    assert trace_array(stripe["data"][0]["z"]).shape == (40, 40)


def test_the_page_in_korean():
    at = open_page("llm_heads", lang="ko")
    assert at.title[0].value == translate("ko", "llm_heads.title")
    assert [h.value for h in at.header][:2] == [translate("ko", "llm_heads.sinks_title"),
                                                translate("ko", "llm_heads.induction_title")]
    labels = [m.label for m in at.metric]
    assert translate("ko", "llm_heads.sink_metric") in labels and translate("ko", "llm_heads.top_head") in labels
    titles = [c["layout"]["title"]["text"].replace("<br>", " ") for c in chart_specs(at)]
    assert translate("ko", "llm_heads.chart.sink_title") in titles


def test_a_short_or_long_text_gives_a_message_and_a_window_longer_than_the_text_too():
    at = open_page("llm_heads")
    at.text_area(key="llm_sink_text").set_value("i am").run()
    assert not at.exception
    assert any("an attention sink needs a first token and at least two more" in i.value for i in at.info)
    assert not any(c["layout"]["title"]["text"].startswith("Attention weight on the first") for c in chart_specs(at))
    at.text_area(key="llm_sink_text").set_value("the red cat " * 200).run()
    assert any(f"the first {MAX_TOKENS} are analysed" in i.value for i in at.info)
    at.text_area(key="llm_sink_text").set_value("one two three four five").run()
    assert any("a window of 4 needs more than 4 + 1" in i.value for i in at.info)
    assert chart_specs(at)[0]["layout"]["title"]["text"].startswith("Attention weight on the first")


def test_every_bad_text_gives_sinks_or_a_message():
    at = open_page("llm_heads")
    for text in load_bad_inputs():
        at.text_area(key="llm_sink_text").set_value(text).run()
        assert not at.exception and not at.error, repr(text[:40])
        shown = " ".join(str(m.value) for m in list(at.markdown) + list(at.info) + list(at.caption))
        assert "<script>" not in shown and "<img" not in shown, repr(text[:40])
        charts = chart_specs(at)
        sinks = [c for c in charts if c["layout"]["title"]["text"].startswith("Attention weight on the first")]
        if sinks:
            share = trace_array(sinks[0]["data"][0]["z"])
            assert share.shape == (30, 9) and np.isfinite(share).all(), repr(text[:40])
        else:
            assert at.info, repr(text[:40])  # nothing to analyse: a message says why


@pytest.mark.parametrize("count", [500, 600])
def test_a_sink_text_up_to_512_tokens_is_analysed_whole_and_a_longer_one_is_cut_with_a_message(count):
    at = open_page("llm_heads")
    text = " ".join(["word"] * count)  # one token each
    at.text_area(key="llm_sink_text").set_value(text).run()
    assert not at.exception and not at.error
    cut = translate("en", "llm_heads.too_long", tokens=count, limit=MAX_TOKENS)
    assert (cut in [i.value for i in at.info]) == (count > MAX_TOKENS)
    read = min(count, MAX_TOKENS)
    assert any(f"({read} tokens)" in m.value for m in at.markdown)  # the sinks' text names the tokens analysed
    share = next(c for c in chart_specs(at) if c["layout"]["title"]["text"].startswith("Attention weight on the first"))
    assert np.isfinite(trace_array(share["data"][0]["z"])).all()
    assert any(c["layout"]["title"]["text"].startswith("Next-token loss") for c in chart_specs(at))


def test_a_512_token_induction_map_labels_every_kth_token_so_that_none_overlap():
    at = open_page("llm_heads")
    at.select_slider(key="llm_induction_length").set_value(MAX_TOKENS // 2).run()
    assert not at.exception and not at.error
    stripe = next(c for c in chart_specs(at) if "attention on the repeated sequence (n = 256)" in
                  c["layout"]["title"]["text"])
    assert trace_array(stripe["data"][0]["z"]).shape == (MAX_TOKENS, MAX_TOKENS)
    assert token_axes_fit(stripe, PAGE_WIDTH)
    for axis in ("xaxis", "yaxis"):
        assert 2 <= len(stripe["layout"][axis]["tickvals"]) < MAX_TOKENS, axis

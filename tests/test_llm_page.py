"""The LLM page (app_pages/llm.py) under AppTest: Next writes the model's own tokens and the KV-cache numbers follow,
in English and Korean; the chat form shows and runs the template; every hostile prompt gives a view or a message."""
import pytest

from i18n import translate
from model.families import open_model
from model.generation import generate
from tests.app_links import assert_healthy, chart_specs, open_page, trace_array
from tests.bad_inputs import load_bad_inputs
from model.llama import MAX_TOKENS
from ui.llm.specs import DEFAULT_PROMPT
from ui.text import escape_markdown
from viz.llm import CHART_WIDTH
from tests.test_llm_attention_page import token_axes_fit


@pytest.fixture(scope="module")
def lab():
    return open_model("SmolLM2-135M-Instruct")  # the process's one copy, which the page's load_model shares


def metrics(at) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def press_next(at, times: int = 1):
    for _ in range(times):
        at.button(key="llm_next").click().run()
        assert_healthy(at)
    return at


def test_next_writes_the_greedy_tokens_and_the_cache_grows_one_position_a_step(lab):
    at = open_page("llm")
    prompt = lab.encode(DEFAULT_PROMPT)
    assert translate("en", "llm.press_next", tokens=len(prompt)) in [c.value for c in at.caption]
    press_next(at, 3)
    expected = lab.decode(generate(lab.network.model, prompt, 3).new_ids)  # " can be trained"
    assert any(f"**{escape_markdown(expected.strip())}**" in m.value for m in at.markdown), expected
    shown = metrics(at)
    assert shown["Cached positions"] == str(len(prompt) + 2)
    assert shown["Positions computed this step"] == "1"
    assert shown["Positions read from the cache"] == str(len(prompt) + 1)
    assert shown["Cache size (float32)"] == f"{(len(prompt) + 2) * 46_080 / 1024:.1f} KiB"
    assert any(c.value.startswith("Step 3 chose") for c in at.caption)
    at.button(key="llm_time").click().run()
    assert_healthy(at)
    assert metrics(at)["Speed-up"].endswith("×")
    at.button(key="llm_reset").click().run()
    assert "Cached positions" not in metrics(at)


def test_the_prediction_question_reveals_the_computed_answer():
    at = open_page("llm")
    at.radio(key="llm_kv_answer").set_value(90).run()
    at.button(key="llm_reveal").click().run()
    assert_healthy(at)
    answer = at.success[0].value
    assert answer.startswith("Right.") and "30 × 3 = 90 key vectors" in answer


def test_the_page_in_korean(lab):
    at = open_page("llm", lang="ko")
    assert at.title[0].value == translate("ko", "llm.title")
    assert at.button(key="llm_next").label == translate("ko", "llm.next")
    press_next(at)
    assert metrics(at)[translate("ko", "llm.kv_length")] == str(len(lab.encode(DEFAULT_PROMPT)))


def test_the_chat_form_shows_the_template_and_generates_after_it(lab):
    at = open_page("llm")
    at.toggle(key="llm_chat").set_value(True).run()
    template = lab.chat_prompt(DEFAULT_PROMPT)
    assert [c.value.strip() for c in at.code] == [template.strip()] and "<|im_start|>assistant" in template
    press_next(at)
    assert metrics(at)["Cached positions"] == str(len(lab.encode(template)))


@pytest.mark.slow
def test_every_hostile_prompt_gives_a_generation_step_or_a_message(lab):
    at = open_page("llm")
    refused = {translate("en", "llm.empty_prompt")}
    # (the empty prompt is the file's first line; a prompt over MAX_TOKENS is its long text here, and "word" × 600
    # in test_a_prompt_up_to_512_tokens_is_read_whole_and_a_longer_one_is_cut_with_a_message, which checks its step
    # as this loop does: a third one, "word " × 517, cut to the same 512 ids, was dropped; issue 52)
    assert "" in load_bad_inputs() and max(len(lab.encode(text)) for text in load_bad_inputs()) > MAX_TOKENS
    for text in load_bad_inputs():
        at.session_state["llm_prompt"] = text
        at.run()
        assert_healthy(at)
        messages = {m.value for m in [*at.info, *at.warning]}
        if not text.strip() or messages & refused:
            assert not [b for b in at.button if b.key == "llm_next"], repr(text[:40])
            continue
        at.button(key="llm_reset").click().run()  # two inputs may clean to the same prompt (\x00 and \n: spaces)
        press_next(at)
        assert any(c.value.startswith("Step 1 chose") for c in at.caption), repr(text[:40])
        assert not [e for e in at.markdown if "<script>" in e.value]  # user text is escaped, never markup


def words(count: int) -> str:
    return " ".join(["word"] * count)  # "word", then " word" each: one token each


@pytest.mark.slow
@pytest.mark.parametrize("count", [MAX_TOKENS, 600])  # MAX_TOKENS itself (it was 500): the first step's preview of
# its ids is the one of the 600-token prompt cut to its first MAX_TOKENS, and of the hostile prompts' 517 words above,
# kept once per process (ui/llm/generation._first_step_preview, keyed by the ids; issue 52)
def test_a_prompt_up_to_512_tokens_is_read_whole_and_a_longer_one_is_cut_with_a_message(lab, count):
    assert len(lab.encode(words(count))) == count
    at = open_page("llm")
    at.session_state["llm_prompt"] = words(count)
    at.run()
    assert_healthy(at)
    cut = translate("en", "llm.prompt_cut", tokens=f"{count:,}", limit=MAX_TOKENS)
    assert (cut in [i.value for i in at.info]) == (count > MAX_TOKENS)
    press_next(at)
    assert any(c.value.startswith("Step 1 chose") for c in at.caption)
    assert not [e for e in at.markdown if "<script>" in e.value]
    read = min(count, MAX_TOKENS)
    assert metrics(at)["Cached positions"] == str(read)  # the whole prompt, or its first 512 tokens
    row = next(spec for spec in chart_specs(at) if spec["layout"]["title"]["text"].startswith("Layer 30"))
    assert trace_array(row["data"][0]["z"]).shape == (9, read)
    ticks = row["layout"]["xaxis"]["tickvals"]
    assert 2 <= len(ticks) < read and token_axes_fit(row, CHART_WIDTH)  # thinned: no two key labels overlap


@pytest.mark.slow
def test_a_long_chat_prompt_is_cut_in_its_question_and_keeps_the_template(lab):
    at = open_page("llm")
    at.toggle(key="llm_chat").set_value(True).run()
    at.session_state["llm_prompt"] = words(600)
    at.run()
    assert_healthy(at)
    assert any(i.value.startswith("The prompt is ") and "cut to its first 512" in i.value for i in at.info)
    template = at.code[0].value
    assert template.rstrip().endswith("<|im_start|>assistant") and template.count("word") < 600
    press_next(at)
    assert metrics(at)["Cached positions"] == str(MAX_TOKENS)  # the question cut by as many tokens as were over

"""AppTest of the influence section of the page "How an LLM finds its answer" (ui/llm/influence.py): on the lens's
prompt, the three panels are model.explain.influence's own numbers, the ρ are its agreement, the notice names each
method's most influential token when they differ and says they agree when they do (a constructed result), another of
the top five answers is picked by rank (in the link too), prompts out of bounds get a message; in English and
Korean."""
import numpy as np
import pytest

from i18n import translate
from model.explain.influence import PromptInfluence, prompt_influence
from model.families import open_model
from tests.app_links import assert_healthy, chart_specs, open_page, query_param, trace_array
from ui.llm import influence
from ui.llm.influence import INFLUENCE_MAX_TOKENS
from ui.llm.influence_specs import INFLUENCE_RANK
from ui.specs.llm_answer import DEFAULT_LENS_TEXT, LENS_TEXT


@pytest.fixture(scope="module")
def lab():
    return open_model("SmolLM2-135M-Instruct")


def influence_chart(at, start: str) -> dict:
    return next(c for c in chart_specs(at) if c["layout"]["title"]["text"].startswith(start))


def test_the_section_draws_the_three_methods_numbers_and_their_disagreement(lab):
    at = open_page("llm_answer")
    assert translate("en", "llm_influence.title") in [header.value for header in at.header]
    paris = lab.encode(" Paris")[0]
    expected = prompt_influence(lab, DEFAULT_LENS_TEXT, paris)
    bars = influence_chart(at, "Each prompt token's influence on ' Paris'")["data"]
    for trace, values in zip(bars, (expected.gradient, expected.occlusion, expected.rollout)):
        np.testing.assert_allclose(trace_array(trace["x"]), values, rtol=1e-5, atol=1e-6)
    assert list(bars[0]["y"]) == ["0: 'The'", "1: ' capital'", "2: ' of'", "3: ' France'", "4: ' is'"]
    shown = {m.label: m.value for m in at.metric}
    for (first, second), rho in expected.agreement().items():
        names = [translate("en", f"llm_influence.method.{method}") for method in (first, second)]
        assert shown[f"Spearman ρ, {names[0]} · {names[1]}"] == f"{rho:+.2f}"
    # on this prompt the three name three tokens: the notice says which
    tops = expected.most_influential()
    assert expected.disagree()
    notice = next(w.value for w in at.warning if "disagree" in w.value)
    for position in tops.values():
        assert repr(expected.tokens[position]).replace("'", "\\'") in notice
    # the second most likely next token, picked by rank, and in the link
    at.selectbox(key=INFLUENCE_RANK.key).set_value(2).run()
    assert_healthy(at)
    second = lab.token_texts([int(np.argsort(-lab.network.run(lab.encode(DEFAULT_LENS_TEXT)).logits[0, -1])[1])])[0]
    assert influence_chart(at, f"Each prompt token's influence on {second!r}")
    assert query_param(at, INFLUENCE_RANK.url) == "2"


def test_agreeing_methods_get_no_warning(monkeypatch):
    """A constructed result whose three methods name the same token: a plain confirmation, no notice."""
    def agreeing(model_id, text, token_id, _lab):
        length = len(_lab.encode(text))
        peak = np.eye(length, dtype=np.float32)[1]  # every method's largest at position 1
        return PromptInfluence(_lab.encode(text), _lab.token_texts(_lab.encode(text)), token_id, -1.0,
                               peak * 2 - 0.1, peak * 3, peak * 0.6 + 0.1)
    monkeypatch.setattr(influence, "influence_of", agreeing)
    at = open_page("llm_answer", {"lens_text": "A dog and a cat sat"})
    assert not [w.value for w in at.warning if "disagree" in w.value]
    assert any(s.value == translate("en", "llm_influence.agree", token="\\' dog\\'") for s in at.success)


def test_the_section_in_korean_and_its_bounds():
    at = open_page("llm_answer", lang="ko")
    assert translate("ko", "llm_influence.title") in [header.value for header in at.header]
    assert influence_chart(at, "프롬프트 토큰마다")
    assert any("방법들이 서로 다르게" in w.value for w in at.warning)
    at.text_input(key=LENS_TEXT.key).set_value("Hello").run()  # one token: nothing to occlude
    assert any(i.value.startswith("프롬프트가 토큰 1개") for i in at.info)
    at.text_input(key=LENS_TEXT.key).set_value(" ".join(["word"] * (INFLUENCE_MAX_TOKENS + 8))).run()  # the lens reads it
    assert any(i.value.startswith(f"프롬프트가 토큰 {INFLUENCE_MAX_TOKENS + 8}개") for i in at.info)
    assert not any(c["layout"]["title"]["text"].startswith("프롬프트 토큰마다") for c in chart_specs(at))

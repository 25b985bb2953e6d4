"""The LLM page's branches (ui/llm/branches.py) under AppTest: Branch ▸ at a generated token shows the model's own top-k
branches with their probabilities and what the fork computed, a branch becomes the generation's text, and the
temperatures side by side, in Korean."""
import pytest

from i18n import translate
from model.branches import fork_temperatures, fork_top
from model.families import open_model
from model.generation import generate
from tests.app_links import assert_healthy, open_page
from ui.llm.branches_specs import BRANCH_TEMPERATURES
from ui.llm.specs import DEFAULT_PROMPT
from ui.text import escape_markdown

TOKENS = 4  # tokens per branch: the section's shortest choice


@pytest.fixture(scope="module")
def lab():
    return open_model("SmolLM2-135M-Instruct")


def _written(at, steps: int):
    for _ in range(steps):
        at.button(key="llm_next").click().run()
        assert_healthy(at)
    at.select_slider(key="llm_branch_tokens").set_value(TOKENS).run()
    assert_healthy(at)
    return at


def _fork(at):
    at.button(key="llm_fork").click().run()
    assert_healthy(at)
    return at


def test_a_fork_at_step_2_shows_the_top_3_and_one_becomes_the_text(lab):
    at = _written(open_page("llm"), 3)
    at.select_slider(key="llm_branch_at").set_value(2).run()
    _fork(at)
    prompt = lab.encode(DEFAULT_PROMPT)
    ids = prompt + generate(lab.network.model, prompt, 3).new_ids
    expected = fork_top(lab.network.model, ids, len(prompt) + 1, 3, TOKENS)
    shown = [m.value for m in at.markdown]
    for number, branch in enumerate(expected.branches, 1):
        token = escape_markdown(repr(lab.token_texts(branch.token_ids[:1])[0]))
        assert f"**{number}.** {token} · p = {branch.first_prob:.1%}" in shown
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Positions computed"] == str(1 + 3 * (TOKENS - 1))  # the shared text is read, not run again
    assert metrics["Shared positions read from the cache"] == str(len(prompt))
    assert metrics["Recomputing would run"] == f"{expected.recompute_positions:,}"
    assert any(c.value.startswith("The branches differ from their token 1 on") for c in at.caption)
    at.button(key="llm_branch_main_2").click().run()
    assert_healthy(at)
    second = lab.decode(ids[len(prompt):len(prompt) + 1] + expected.branches[1].token_ids).strip()
    assert any(f"**{escape_markdown(second)}**" in m.value for m in at.markdown), second
    assert any(c.value.startswith(f"Step {1 + TOKENS} chose") for c in at.caption)
    assert {m.label: m.value for m in at.metric}["Cached positions"] == str(len(prompt) + TOKENS)
    at.button(key="llm_next").click().run()  # the generation goes on from the branch
    assert_healthy(at)
    assert any(c.value.startswith(f"Step {2 + TOKENS} chose") for c in at.caption)


def test_the_temperatures_side_by_side_in_korean(lab):
    at = open_page("llm", lang="ko")
    _written(at, 1)
    assert translate("ko", "llm_branches.title") in [header.value for header in at.subheader]
    at.radio(key="llm_branch_mode").set_value("temperatures").run()
    at.number_input(key="llm_branch_seed").set_value(3).run()
    _fork(at)
    assert at.button(key="llm_fork").label == translate("ko", "llm_branches.fork")
    prompt = lab.encode(DEFAULT_PROMPT)
    expected = fork_temperatures(lab.network.model, prompt, len(prompt), BRANCH_TEMPERATURES, TOKENS,
                                 top_k=50, seed=3)
    shown = [m.value for m in at.markdown]
    for branch in expected.branches:
        token = escape_markdown(repr(lab.token_texts(branch.token_ids[:1])[0]))
        assert translate("ko", "llm_branches.branch_temperature", temperature=branch.temperature, token=token,
                         prob=f"{branch.first_prob:.1%}") in shown
    assert translate("ko", "llm_branches.computed") in [m.label for m in at.metric]


def test_before_any_step_branch_forks_at_the_prompts_end_and_a_branch_becomes_the_text(lab):
    """The choices lesson's stop 3 opens on the prompt alone: Branch ▸ forks at step 1 (the prefix run whole, no cache
    yet), and Make this the text starts the generation from that branch."""
    at = _written(open_page("llm"), 0)
    assert any(c.value.startswith("Forks at step 1, the first token after the prompt") for c in at.caption)
    _fork(at)
    prompt = lab.encode(DEFAULT_PROMPT)
    expected = fork_top(lab.network.model, prompt, len(prompt), 3, TOKENS)
    shown = [m.value for m in at.markdown]
    token = escape_markdown(repr(lab.token_texts(expected.branches[0].token_ids[:1])[0]))
    assert f"**1.** {token} · p = {expected.branches[0].first_prob:.1%}" in shown
    assert {m.label: m.value for m in at.metric}["Positions computed"] == str(len(prompt) + 3 * (TOKENS - 1))
    at.button(key="llm_branch_main_3").click().run()
    assert_healthy(at)
    third = lab.decode(expected.branches[2].token_ids).strip()
    assert any(f"**{escape_markdown(third)}**" in m.value for m in at.markdown), third
    assert {m.label: m.value for m in at.metric}["Cached positions"] == str(len(prompt) + TOKENS - 1)

"""Branching generations (model/branches.py): every branch is transformers' greedy `generate` after its forced token,
the prefix's KV cache is read, not recomputed (and never changed), temperatures with one seed are the generation
page's own sampled texts, and `python -m model.inspect --branch` writes the same tokens."""
import numpy as np
import pytest
import torch

from model.branches import MAX_BRANCHES, adopt_branch, fork_by_recomputing, fork_temperatures, fork_top
from model.families import open_model
from model.generation import generate, generation_step
from model.inspect import main
from model.kv_cache import GenerationTrace
from ui.llm.specs import DEFAULT_PROMPT

STEPS = 4


@pytest.fixture(scope="module")
def lab():
    return open_model("SmolLM2-135M-Instruct")


@pytest.fixture(scope="module")
def written(lab):
    """The default prompt and 3 greedy tokens after it, with the cache the generation page keeps (all but the last)."""
    ids, cache = lab.encode(DEFAULT_PROMPT), None
    for _ in range(3):
        step, cache = generation_step(lab.network.model, ids, cache)
        ids = ids + [step.token_id]
    return ids, cache


@pytest.mark.slow
def test_each_branch_is_transformers_greedy_generation_after_its_forced_token(lab, written, reference):
    ids, _ = written
    position = len(ids) - 2  # fork at the second generated token
    fork = fork_top(lab.network.model, ids, position, 3, STEPS)
    with torch.no_grad():
        logits = reference(torch.tensor([ids[:position]])).logits[0, -1]
    probs, top = torch.softmax(logits, -1).topk(3)
    assert [branch.token_ids[0] for branch in fork.branches] == top.tolist()
    np.testing.assert_allclose([branch.first_prob for branch in fork.branches], probs.numpy(), atol=1e-4)
    for branch in fork.branches:
        prompt = torch.tensor([ids[:position] + branch.token_ids[:1]])
        expected = reference.generate(prompt, attention_mask=torch.ones_like(prompt), max_new_tokens=STEPS - 1,
                                      min_new_tokens=STEPS - 1, do_sample=False, pad_token_id=lab.stop_ids[0])
        assert branch.token_ids[1:] == expected[0, prompt.size(1):].tolist()


def test_the_prefix_is_read_from_the_cache_and_the_tokens_match_recomputing(lab, written):
    ids, cache = written
    kept = [t.clone() for t in cache.keys + cache.values]
    position, model = len(ids) - 1, lab.network.model  # fork at the newest token: the cache holds position positions
    fork = fork_top(model, ids, position, 4, STEPS, cache=cache)
    assert (fork.prefix_computed, fork.prefix_reused) == (1, position - 1)  # the last prefix token, for its logits
    assert fork.branch_computed == 4 * (STEPS - 1) and fork.forward_passes == STEPS
    assert all(torch.equal(a, b) for a, b in zip(kept, cache.keys + cache.values))  # the page's cache is untouched
    tokens, computed = fork_by_recomputing(model, ids, position, 4, STEPS)
    assert [branch.token_ids for branch in fork.branches] == tokens
    assert computed == fork.recompute_positions == position + 4 * (position + STEPS - 1)
    assert fork.computed == 1 + 4 * (STEPS - 1) < computed / 3  # the prefix is not run again per branch
    alone = fork_top(model, ids, position, 4, STEPS)  # no cache: the prefix is run once, for every branch
    assert (alone.prefix_computed, alone.prefix_reused) == (position, 0)
    assert [branch.token_ids for branch in alone.branches] == tokens
    probs = [branch.first_prob for branch in fork.branches]
    assert probs == sorted(probs, reverse=True) and fork.first_difference() == 0
    # the most likely branch is the greedy text itself (its first token is the one the generation chose)
    assert fork.branches[0].token_ids[0] == ids[position]
    assert fork.branches[0].top_ids[0][0] == ids[position]  # each token's top 5 kept, as a generation step keeps


def test_temperatures_with_one_seed_are_the_pages_sampled_texts(lab, written):
    ids, cache = written
    prompt = lab.encode(DEFAULT_PROMPT)
    model, temperatures = lab.network.model, (0.4, 0.7, 1.0)
    fork = fork_temperatures(model, ids, len(prompt), temperatures, STEPS, cache=cache, top_k=50, seed=7)
    assert fork.prefix_computed == 1 and [branch.temperature for branch in fork.branches] == list(temperatures)
    for branch, temperature in zip(fork.branches, temperatures):
        assert branch.token_ids == generate(model, prompt, STEPS, temperature=temperature, top_k=50, seed=7).new_ids
    assert fork.divergence()[0] is None


def test_a_fork_is_bounded(lab, written):
    ids, _ = written
    for position, branches, steps in ((0, 2, 4), (len(ids) + 1, 2, 4), (2, MAX_BRANCHES + 1, 4), (2, 2, 33)):
        with pytest.raises(ValueError):
            fork_top(lab.network.model, ids, position, branches, steps)


def test_inspect_writes_the_branches(tmp_path, capsys, lab):
    out = tmp_path / "branches.npz"
    text = "The cat sat on the mat. The cat sat on the"
    assert main(["SmolLM2-135M-Instruct", text, "--out", str(out), "--branch", "12", "--top", "3", "--steps", "4"]) == 0
    data = np.load(out)
    assert data["branch_ids"].dtype == np.int64 and data["branch_ids"].shape == (3, 4)
    assert data["branch_probs"].dtype == np.float32 and data["branch_probs"].shape == (3,)
    fork = fork_top(lab.network.model, lab.encode(text), 12, 3, 4)
    assert data["branch_ids"].tolist() == [branch.token_ids for branch in fork.branches]
    assert lab.decode(data["branch_ids"][0, :1].tolist()) == " mat"  # the induction: the text repeats " mat"
    assert "branch_ids (3, 4)" in capsys.readouterr().out
    assert main(["SmolLM2-135M-Instruct", text, "--out", str(out), "--branch", "5", "--top", "6"]) == 2
    assert main(["transformer_en-fr", "i am a student", "--out", str(out), "--branch", "2"]) == 2
    assert "does not generate" in capsys.readouterr().err


def test_a_branch_made_the_text_is_the_generation_that_writes_it(lab):
    prompt = lab.encode(DEFAULT_PROMPT)
    trace = GenerationTrace(list(prompt))
    for _ in range(3):
        trace.advance(lab)
    fork = fork_top(lab.network.model, trace.ids, len(prompt), 2, STEPS, cache=trace.cache)  # at step 1
    adopted = adopt_branch(trace, lab, fork, 1, STEPS)
    assert adopted.new_ids == fork.branches[1].token_ids and adopted.prompt_ids == prompt
    assert (adopted.steps[0].computed_positions, adopted.steps[0].reused_positions) == (len(prompt), 0)
    assert [step.computed_positions for step in adopted.steps[1:]] == [1] * (STEPS - 1)
    fresh = lab.network.model(torch.tensor([adopted.ids[:-1]]), need_weights=False)
    assert adopted.cache.length == len(adopted.ids) - 1
    for ours, theirs in zip(adopted.cache.keys, fresh.cache.keys):
        torch.testing.assert_close(ours, theirs, atol=1e-4, rtol=1e-4)
    assert adopted.attention.shape == (30, 9, len(adopted.ids) - 1)
    adopted.advance(lab)  # the generation goes on from it
    assert adopted.new_ids[-1] == generate(lab.network.model, adopted.ids[:-1], 1).new_ids[0]

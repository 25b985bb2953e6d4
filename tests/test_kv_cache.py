"""model/kv_cache.py: the counts the LLM page shows (key vectors per step, bytes per token, shared heads) agree with
what SmolLM2 really computes and caches, and a session's generation trace writes what generation writes."""
import pytest
import torch

from model.config import LlamaConfig
from model.families import open_model
from model.generation import generate
from model.kv_cache import (GenerationTrace, key_vectors_computed, kv_groups, positions_run,
                            time_step_both_ways)

PROMPT = "The Transformer is a neural network that"
SMALL = LlamaConfig(vocab_size=10, hidden_size=64, num_layers=4, num_heads=8, num_kv_heads=2, intermediate_size=32,
                    rope_theta=10000.0, rms_norm_eps=1e-5, max_position_embeddings=64)


@pytest.fixture(scope="module")
def lab():
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # as the app's pages run (ui/models.py): the other test worker shares the 2 cores
    yield open_model("SmolLM2-135M-Instruct")
    torch.set_num_threads(threads)


def test_a_step_runs_the_prompt_first_then_one_position_with_the_cache_or_the_whole_text_without():
    assert [positions_run(n, 7, use_cache=True) for n in (1, 2, 20)] == [7, 1, 1]
    assert [positions_run(n, 7, use_cache=False) for n in (1, 2, 20)] == [7, 8, 26]
    assert key_vectors_computed(SMALL, 20, 7, use_cache=True) == 1 * 4 * 2
    assert key_vectors_computed(SMALL, 20, 7, use_cache=False) == 26 * 4 * 2
    with pytest.raises(ValueError):
        positions_run(0, 7, use_cache=True)


def test_query_heads_are_grouped_in_consecutive_runs_over_the_key_value_heads():
    assert kv_groups(SMALL) == [[0, 1, 2, 3], [4, 5, 6, 7]]


def test_twenty_steps_compute_and_cache_what_the_page_counts(lab):
    """The answer to the page's question (step 20) is what the live model computes at step 20, and the cache holds
    L layers × h_kv heads × the text's positions, at the bytes per token the page shows."""
    cfg, prompt = lab.config, lab.encode(PROMPT)
    trace = GenerationTrace(prompt)
    for step in range(1, 21):
        record = trace.advance(lab)
        assert record.computed_positions == positions_run(step, len(prompt), use_cache=True)
        assert record.reused_positions == (0 if step == 1 else len(prompt) + step - 2)
    assert key_vectors_computed(cfg, 20, len(prompt), use_cache=True) == 90  # 1 position × 30 layers × 3 heads
    cached = len(prompt) + 19  # the 20th token's own K and V are the next step's work
    assert trace.cache.length == cached and len(trace.cache.keys) == cfg.num_layers
    assert all(k.shape == (1, cfg.num_kv_heads, cached, cfg.head_dim) for k in trace.cache.keys)
    assert trace.cache.nbytes == cached * cfg.cache_bytes_per_token() == cached * 46_080
    assert trace.attention.shape == (cfg.num_layers, cfg.num_heads, cached)
    torch.testing.assert_close(torch.from_numpy(trace.attention.sum(-1)), torch.ones(30, 9), atol=1e-5, rtol=0)
    # the cache changes the work, not the words: the same tokens as generation without any cache
    assert trace.new_ids[:6] == generate(lab.network.model, prompt, 6, use_cache=False).new_ids
    assert lab.decode(trace.new_ids[:4]) == " can be trained to"


def test_a_trace_stops_at_the_end_token_or_the_limit(lab):
    trace = GenerationTrace(lab.encode(lab.chat_prompt("Say yes.")))
    for _ in range(3):
        trace.advance(lab)
    assert trace.finished((), 3) and not trace.finished((), 4)
    assert trace.finished((trace.new_ids[-1],), 64)


def test_top_k_one_samples_the_greedy_token_and_a_seed_repeats_its_draws(lab):
    prompt = lab.encode(PROMPT)
    greedy, top1, a, b = (GenerationTrace(prompt) for _ in range(4))
    for _ in range(2):
        greedy.advance(lab)
        top1.advance(lab, temperature=1.5, top_k=1, seed=3)
        a.advance(lab, temperature=1.5, top_k=50, seed=3)
        b.advance(lab, temperature=1.5, top_k=50, seed=3)
    assert top1.new_ids == greedy.new_ids and a.new_ids == b.new_ids


def test_timing_runs_the_next_step_both_ways_and_refuses_a_cache_of_another_length(lab):
    trace = GenerationTrace(lab.encode(PROMPT))
    trace.advance(lab)
    timing = trace.time_next_step(lab)
    assert timing.positions == len(trace.ids) == trace.timing_at
    assert timing.with_cache > 0 and timing.without_cache > 0 and timing.speedup > 0
    with pytest.raises(ValueError, match="cache holds"):
        time_step_both_ways(lab.network.model, trace.ids + [1], trace.cache, repeats=1)

"""model/llama.py: our Llama code on SmolLM2-135M-Instruct's weights against transformers' LlamaForCausalLM.

The reference is LlamaForCausalLM.from_pretrained(folder, gguf_file=…, attn_implementation="eager") on the same
GGUF file (transformers dequantizes it with gguf too, and undoes the same Q/K permutation), offline; both float32
on the CPU, so the two agree to rounding (measured: exactly, max |Δ| = 0 for logits and maps on this machine).
"""
import math

import pytest
import torch

from model.families import adapt
from model.gguf_weights import SMOLLM2_FILE, SMOLLM2_NAME, smollm2_path
from model.generation import choose_next, generate, generation_step, top_next_tokens
from model.llama import KVCache, apply_rotary, load_smollm2, rotary_cos_sin

TEXT = "The animal didn't cross the street because it was too tired. 안녕하세요 🙂"
TOLERANCE = dict(rtol=0, atol=1e-4)
# Our fused path (scaled_dot_product_attention, need_weights=False) against our explicit one: the same arithmetic summed
# in another order, float32 over 30 layers with logits up to about ±34; 1.3e-4 apart on an Intel Xeon, 1e-4 on EPYC. A
# masking mistake moves logits by tenths or more.
FUSED_TOLERANCE = dict(rtol=0, atol=5e-4)


@pytest.fixture(scope="module")
def smollm():
    return load_smollm2()


@pytest.mark.slow  # loads transformers' reference model (about 20 s)
def test_logits_and_every_attention_map_match_transformers(smollm, reference):
    ids = smollm.encode(TEXT)
    with torch.no_grad():
        ours = smollm.run(ids)
        theirs = reference(torch.tensor([ids]), output_attentions=True)
    assert ours.weights.shape == (30, 1, 9, len(ids), len(ids))  # (L, B, h, T_q, T_k)
    torch.testing.assert_close(ours.logits, theirs.logits, **TOLERANCE)
    torch.testing.assert_close(ours.weights, torch.stack(theirs.attentions), **TOLERANCE)
    # The scores are the pre-softmax q·k/√d_k: softmax over the visible keys gives the weights back.
    causal = torch.ones(len(ids), len(ids), dtype=torch.bool).tril()
    torch.testing.assert_close(torch.softmax(ours.scores.masked_fill(~causal, -math.inf), -1), ours.weights,
                               **TOLERANCE)


@pytest.mark.slow  # loads transformers' reference model
def test_the_residual_stream_and_its_unembedding_match_transformers_hidden_states(smollm, reference):
    """What the logit lens reads: the embeddings and each block's output, and the final norm and output matrix applied
    to them. transformers' hidden_states are the input of layer 0, each decoder layer's output, and for the last layer
    that output after the final norm."""
    lab = adapt(SMOLLM2_NAME, smollm)
    stream = lab.residual_stream(TEXT)
    with torch.no_grad():
        theirs = reference(torch.tensor([stream.ids]), output_hidden_states=True)
        hidden = torch.stack(theirs.hidden_states)[:, 0]  # (L+1, T, d)
        their_lens = reference.lm_head(reference.model.norm(hidden[:-1]))  # (L, T, V): rows 0 … L-1
    assert stream.hidden.shape == hidden.shape == (31, len(stream.ids), 576)
    torch.testing.assert_close(stream.hidden[:-1], hidden[:-1], **TOLERANCE)
    torch.testing.assert_close(smollm.model.final_norm(stream.hidden[-1]), hidden[-1], **TOLERANCE)
    lens = lab.unembed(stream.hidden)  # (L+1, T, V)
    torch.testing.assert_close(lens[:-1], their_lens, **TOLERANCE)
    torch.testing.assert_close(lens[-1], theirs.logits[0], **TOLERANCE)


@pytest.mark.slow  # loads transformers' reference model (about 20 s)
def test_greedy_generation_matches_transformers_token_for_token(smollm, reference):
    prompt = smollm.encode(smollm.chat_prompt([{"role": "user", "content": "What is the capital of France?"}]))
    ours = generate(smollm.model, prompt, 16)
    with torch.no_grad():
        theirs = reference.generate(torch.tensor([prompt]), max_new_tokens=16, do_sample=False,
                                    attention_mask=torch.ones(1, len(prompt), dtype=torch.long),
                                    pad_token_id=smollm.eos_id, eos_token_id=None)
    assert ours.new_ids == theirs[0, len(prompt):].tolist()
    assert "Paris" in smollm.decode(ours.new_ids)


def test_kv_cache_generation_equals_recomputing_everything(smollm):
    prompt = smollm.encode("The cat sat on the mat. The cat sat on the")
    cached = generate(smollm.model, prompt, 8, need_weights=True)
    uncached = generate(smollm.model, prompt, 8, use_cache=False, need_weights=True)
    assert cached.new_ids == uncached.new_ids
    assert smollm.decode(cached.new_ids[:1]) == " mat"  # the in-context copy
    for step, (with_cache, without) in enumerate(zip(cached.steps, uncached.steps)):
        # What each step computed and reused: after the prompt, one new position per step against the cache.
        length = len(prompt) + step
        expected = (len(prompt), 0) if step == 0 else (1, length - 1)
        assert (with_cache.computed_positions, with_cache.reused_positions) == expected
        assert (without.computed_positions, without.reused_positions) == (length, 0)
        assert with_cache.attention.shape == (30, 9, length)  # the new token's row in every layer and head
        torch.testing.assert_close(with_cache.attention, without.attention, **TOLERANCE)
        assert with_cache.top_ids == without.top_ids


def test_the_cache_grows_by_one_position_per_step_and_earlier_caches_stay_valid(smollm):
    model, ids = smollm.model, smollm.encode("Attention is all you need")
    with torch.no_grad():
        first = model(torch.tensor([ids]), need_weights=False).cache
        second = model(torch.tensor([[42]]), cache=first, need_weights=False).cache
    assert isinstance(first, KVCache) and (first.length, second.length) == (len(ids), len(ids) + 1)
    assert first.keys[0].shape == (1, 3, len(ids), 64)  # 3 key/value heads are cached, not 9
    assert second.nbytes == (len(ids) + 1) * smollm.config.cache_bytes_per_token()
    torch.testing.assert_close(second.keys[5][:, :, :-1], first.keys[5], rtol=0, atol=0)


def test_query_heads_share_key_value_heads_in_groups_of_three(smollm):
    cfg, model = smollm.config, smollm.model
    assert [cfg.kv_head_of(h) for h in range(9)] == [0, 0, 0, 1, 1, 1, 2, 2, 2]
    ids = smollm.encode("Grouped-query attention saves memory")
    layer_index, attention = 4, model.layers[4].self_attn
    with torch.no_grad():
        out = smollm.run(ids)
        x = model.embed(torch.tensor([ids]))
        cos, sin = rotary_cos_sin(torch.arange(len(ids)), 64, cfg.rope_theta)
        for layer in model.layers[:layer_index]:
            x = layer(x, cos, sin, None, None, need_weights=False)[0]
        w_q, _ = attention.projection("q")
        queries = apply_rotary((model.layers[layer_index].attention_norm(x) @ w_q.T).view(len(ids), 9, 64)
                               .transpose(0, 1), cos, sin)  # (h, T, d_k)
    keys = out.cache.keys[layer_index][0]  # (h_kv, T, d_k): only 3 key heads exist
    assert keys.shape == (3, len(ids), 64) and attention.projection("k")[0].shape == (192, 576)
    for head in range(9):  # query head h is scored against key head h // 3
        expected = queries[head] @ keys[head // 3].T / 8.0  # / sqrt(d_k)
        causal = torch.ones(len(ids), len(ids), dtype=torch.bool).tril()
        torch.testing.assert_close(out.scores[layer_index, 0, head][causal], expected[causal], rtol=1e-4, atol=1e-4)
    assert not torch.allclose(out.weights[layer_index, 0, 0], out.weights[layer_index, 0, 1])  # own queries
    # Memory: 9 full heads would cache 3 times as many bytes per token.
    assert cfg.cache_bytes_per_token(cfg.num_heads) == 3 * cfg.cache_bytes_per_token() == 3 * 46080


def test_rotary_score_depends_only_on_the_distance():
    torch.manual_seed(0)
    q, k = torch.randn(64), torch.randn(64)
    cos, sin = rotary_cos_sin(torch.arange(200), 64, 100000.0)

    def score(m, n):
        return float(apply_rotary(q, cos[m], sin[m]) @ apply_rotary(k, cos[n], sin[n]))

    for distance in (0, 3, 17):
        values = [score(p + distance, p) for p in (0, 5, 40, 150)]
        assert max(values) - min(values) < 1e-4, values
    assert abs(score(10, 0) - score(20, 0)) > 1e-3  # … and it does depend on the distance
    # A rotation keeps lengths.
    torch.testing.assert_close(apply_rotary(q, cos[77], sin[77]).norm(), q.norm())


def test_head_mask_switches_one_head_off_from_its_layer_on(smollm):
    ids = smollm.encode(TEXT)
    mask = torch.ones(30, 9)
    mask[10, 2] = 0
    with torch.no_grad():
        plain, ablated = smollm.run(ids), smollm.run(ids, head_mask=mask)
        ones = smollm.run(ids, head_mask=torch.ones(30, 9))
    torch.testing.assert_close(ones.logits, plain.logits, rtol=0, atol=0)
    torch.testing.assert_close(ablated.weights[:11], plain.weights[:11], rtol=0, atol=0)  # layers 0-10 read the same
    assert (ablated.weights[11:] - plain.weights[11:]).abs().max() > 1e-4
    assert (ablated.logits - plain.logits).abs().max() > 1e-3


def test_key_mask_switches_the_first_token_off_for_every_query(smollm):
    ids = smollm.encode(TEXT)
    key_mask = torch.ones(1, len(ids), dtype=torch.bool)
    key_mask[0, 0] = False
    with torch.no_grad():
        out = smollm.model(torch.tensor([ids]), key_mask=key_mask)
    assert float(out.weights[..., 1:, 0].abs().max()) == 0.0
    torch.testing.assert_close(out.weights[..., 1:, :].sum(-1), torch.ones(30, 1, 9, len(ids) - 1))
    assert float(out.weights[..., 0, :].abs().max()) == 0.0  # the first query sees nothing: a zero row, no NaN
    assert torch.isfinite(out.logits).all()
    with torch.no_grad():  # the fused fast path masks the same way
        fast = smollm.model(torch.tensor([ids]), key_mask=key_mask, need_weights=False)
    torch.testing.assert_close(fast.logits, out.logits, **FUSED_TOLERANCE)


def test_sampling_is_seeded_and_top_k_one_is_greedy(smollm):
    prompt = smollm.encode("Once upon a time")
    a = generate(smollm.model, prompt, 4, temperature=1.0, top_k=50, seed=7)
    b = generate(smollm.model, prompt, 4, temperature=1.0, top_k=50, seed=7)
    greedy = generate(smollm.model, prompt, 4)
    assert a.new_ids == b.new_ids
    assert generate(smollm.model, prompt, 4, temperature=1.5, top_k=1, seed=3).new_ids == greedy.new_ids
    seeds = {tuple(generate(smollm.model, prompt, 4, temperature=1.5, seed=s).new_ids) for s in range(3)}
    assert len(seeds) > 1  # different seeds do sample different continuations
    ids, probs = top_next_tokens(torch.tensor([0.0, 2.0, 1.0, -1.0, 3.0, 0.5]))
    assert ids == [4, 1, 2, 5, 0] and probs == sorted(probs, reverse=True) and sum(probs) < 1
    assert choose_next(torch.tensor([0.0, 5.0, 1.0])) == 1


def test_chat_template_matches_transformers(smollm):
    from transformers import AutoTokenizer

    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HF_HUB_OFFLINE", "1")
        tokenizer = AutoTokenizer.from_pretrained(str(smollm2_path().parent), gguf_file=SMOLLM2_FILE)
    messages = [{"role": "user", "content": "Why does attention need a softmax?"}]
    ours = smollm.chat_prompt(messages)
    assert ours == tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
    assert ours.startswith("<|im_start|>system\n") and ours.endswith("<|im_start|>assistant\n")


def test_loaded_once_per_process(smollm):
    assert load_smollm2() is smollm
    assert not any(p.requires_grad for p in smollm.model.parameters()) and not smollm.model.training


def test_steps_replay_the_same_sampled_token_and_stop_at_the_stop_token(smollm):
    prompt = smollm.encode("My favourite colour is")
    whole = generate(smollm.model, prompt, 3, temperature=1.3, top_k=20, seed=11)
    # Step by step, as the app's Next does, with a cache kept between steps: the same draws.
    ids, cache = list(prompt), None
    for expected in whole.steps:
        step, cache = generation_step(smollm.model, ids, cache, temperature=1.3, top_k=20, seed=11)
        assert step.token_id == expected.token_id and cache.length == len(ids)
        ids.append(step.token_id)
    # Back one step and Next again: the same token is drawn.
    again, _ = generation_step(smollm.model, ids[:-1], None, temperature=1.3, top_k=20, seed=11)
    assert again.token_id == ids[-1]
    stopped = generate(smollm.model, prompt, 5, stop_ids=(whole.steps[0].token_id,), temperature=1.3, top_k=20,
                       seed=11)
    assert stopped.new_ids == whole.new_ids[:1]


def test_loading_names_every_misfit_and_builds_from_the_tensors_themselves():
    from model.checkpoint import CheckpointError
    from model.config import LlamaConfig
    from model.llama import load_llama_weights

    cfg = LlamaConfig(vocab_size=50, hidden_size=16, num_layers=2, num_heads=4, num_kv_heads=2,
                      intermediate_size=24, rope_theta=10000.0, rms_norm_eps=1e-5, max_position_embeddings=64)
    shapes = {"token_embd.weight": (50, 16), "output_norm.weight": (16,)}
    for i in range(2):
        shapes.update({f"blk.{i}.attn_norm.weight": (16,), f"blk.{i}.ffn_norm.weight": (16,),
                       f"blk.{i}.attn_q.weight": (16, 16), f"blk.{i}.attn_k.weight": (8, 16),
                       f"blk.{i}.attn_v.weight": (8, 16), f"blk.{i}.attn_output.weight": (16, 16),
                       f"blk.{i}.ffn_gate.weight": (24, 16), f"blk.{i}.ffn_up.weight": (24, 16),
                       f"blk.{i}.ffn_down.weight": (16, 24)})
    tensors = {name: torch.randn(shape) for name, shape in shapes.items()}
    model = load_llama_weights(cfg, tensors, "tiny")
    # The parameters share the given tensors' memory: no copy, no random init left over.
    assert model.embed.weight.data_ptr() == tensors["token_embd.weight"].data_ptr()
    assert model.layers[1].ffn_down.weight.data_ptr() == tensors["blk.1.ffn_down.weight"].data_ptr()
    assert all(p.device.type == "cpu" for p in model.parameters())
    out = model(torch.tensor([[1, 2, 3]]))
    assert out.weights.shape == (2, 1, 4, 3, 3) and out.cache.keys[0].shape == (1, 2, 3, 4)
    with pytest.raises(CheckpointError, match="blk.1.ffn_up.weight"):
        load_llama_weights(cfg, {k: v for k, v in tensors.items() if k != "blk.1.ffn_up.weight"}, "tiny")
    with pytest.raises(CheckpointError, match="size mismatch"):
        load_llama_weights(cfg, {**tensors, "blk.0.ffn_gate.weight": torch.randn(23, 16)}, "tiny")
    with pytest.raises(CheckpointError, match="output.weight"):
        load_llama_weights(cfg, {**tensors, "output.weight": torch.randn(50, 16)}, "tiny")

"""Direct logit attribution (model/explain/attribution.py) and per-head patching (model/explain/patching.py) against
transformers' LlamaForCausalLM on the same GGUF file (tests/conftest.py's `reference`): hooks on its o_proj inputs (each
head's weighted values, d_k columns per head) and its MLP outputs, read through its own final norm's weight, the same
rms and its lm_head; a pre-hook on o_proj replacing one head's slice at the last position for the patching. A 5-token
pair keeps the head sweep (30 blocks of 9 runs) to seconds.
"""
import numpy as np
import pytest
import torch

from model.explain.attribution import direct_logit_attribution
from model.explain.patching import head_patching
from model.families import adapt
from model.gguf_weights import SMOLLM2_NAME
from model.llama import load_smollm2

CLEAN, CORRUPT = "The capital of France is", "The capital of Italy is"  # 5 tokens each, differing at position 3
ANSWER, WRONG = " Paris", " Rome"
# 21 tokens; the model's next token is " her", written mostly by a few late heads
SINK_TEXT = "My grandmother keeps her old letters in a wooden box under the bed, and every winter she reads them to"
TOLERANCE = dict(rtol=0, atol=1e-4)


@pytest.fixture(scope="module")
def lab():
    return adapt(SMOLLM2_NAME, load_smollm2())


@pytest.fixture(scope="module")
def attribution(lab):
    return direct_logit_attribution(lab, CLEAN)


@pytest.fixture(scope="module")
def sweep(lab):
    """The per-head sweep of CLEAN from CORRUPT with a wrong token, and the progress calls it made."""
    calls = []
    return head_patching(lab, CLEAN, CORRUPT, ANSWER, WRONG, progress=lambda done, total: calls.append((done, total))), calls


def _output(value):
    """A decoder layer's hidden states, whether transformers returns them alone or first in a tuple."""
    return value[0] if isinstance(value, tuple) else value


def test_the_parts_sum_to_the_logit_of_the_models_own_next_token(attribution, lab):
    assert attribution.tokens == ["The", " capital", " of", " France", " is"] and attribution.position == 4
    assert lab.token_texts([attribution.token_id]) == [ANSWER]  # the model's top next token by default
    assert attribution.heads.shape == attribution.attention_to_first.shape == (30, 9)
    assert attribution.mlps.shape == (30,)
    assert attribution.heads.dtype == attribution.mlps.dtype == attribution.attention_to_first.dtype == np.float32
    total = attribution.embedding + float(attribution.heads.sum()) + float(attribution.mlps.sum())
    assert total == pytest.approx(attribution.logit, abs=1e-3)
    assert ((attribution.attention_to_first >= 0) & (attribution.attention_to_first <= 1)).all()


def test_a_chosen_token_is_attributed_and_its_parts_sum_to_its_logit(lab):
    rome = lab.encode(WRONG)[0]
    chosen = direct_logit_attribution(lab, CLEAN, token_id=rome)
    assert chosen.token_id == rome
    assert chosen.embedding + chosen.heads.sum() + chosen.mlps.sum() == pytest.approx(chosen.logit, abs=1e-3)
    paris = direct_logit_attribution(lab, CLEAN)
    assert paris.logit > chosen.logit  # " Paris" is the top token, " Rome" is not


@pytest.mark.slow  # loads transformers' reference model (about 20 s)
def test_heads_and_mlps_match_transformers_hooks_through_its_final_norm_and_lm_head(attribution, reference):
    ids = torch.tensor([adapt(SMOLLM2_NAME, load_smollm2()).encode(CLEAN)])
    cfg = reference.config
    heads, d_k = cfg.num_attention_heads, cfg.hidden_size // cfg.num_attention_heads
    o_inputs, mlp_outputs, final = [], [], []
    handles = []
    for layer in reference.model.layers:
        handles.append(layer.self_attn.o_proj.register_forward_pre_hook(
            lambda module, args: o_inputs.append(args[0][0, -1].clone())))  # (h·d_k,) at the last position
        handles.append(layer.mlp.register_forward_hook(
            lambda module, args, output: mlp_outputs.append(output[0, -1].clone())))  # (d,)
    handles.append(reference.model.layers[-1].register_forward_hook(
        lambda module, args, output: final.append(_output(output)[0, -1].clone())))  # before the final norm
    try:
        with torch.no_grad():
            logits = reference(ids).logits[0, -1]  # (V,)
    finally:  # the reference is the worker's (tests/conftest.py): no hook outlives this test
        for handle in handles:
            handle.remove()
    with torch.no_grad():
        norm = reference.model.norm
        rms = torch.sqrt(final[0].pow(2).mean() + norm.variance_epsilon)
        direction = norm.weight * reference.lm_head.weight[attribution.token_id] / rms  # (d,)
        per_head = torch.stack([
            torch.stack([o_inputs[layer][h * d_k:(h + 1) * d_k] @ o_proj.weight[:, h * d_k:(h + 1) * d_k].T
                         for h in range(heads)])
            for layer, o_proj in enumerate(block.self_attn.o_proj for block in reference.model.layers)])  # (L, h, d)
        expected_heads = (per_head @ direction).numpy()  # (L, h)
        expected_mlps = (torch.stack(mlp_outputs) @ direction).numpy()  # (L,)
        expected_embedding = float(reference.model.embed_tokens(ids)[0, -1] @ direction)
    np.testing.assert_allclose(attribution.heads, expected_heads, **TOLERANCE)
    np.testing.assert_allclose(attribution.mlps, expected_mlps, **TOLERANCE)
    assert attribution.embedding == pytest.approx(expected_embedding, abs=1e-4)
    assert attribution.logit == pytest.approx(float(logits[attribution.token_id]), abs=1e-4)


@pytest.mark.slow  # loads transformers' reference model
def test_per_head_patching_matches_a_pre_hook_on_transformers_o_proj(sweep, lab, reference):
    sweep, _ = sweep
    clean, corrupt = torch.tensor([lab.encode(CLEAN)]), torch.tensor([lab.encode(CORRUPT)])
    cfg = reference.config
    d_k = cfg.hidden_size // cfg.num_attention_heads
    layers = reference.model.layers
    captured = []  # each o_proj's input at the last position in the clean run, (h·d_k,)
    handles = [layer.self_attn.o_proj.register_forward_pre_hook(
        lambda module, args: captured.append(args[0][0, -1].clone())) for layer in layers]
    try:
        with torch.no_grad():
            reference(clean)
    finally:  # the reference is the worker's (tests/conftest.py): no hook outlives this test
        for handle in handles:
            handle.remove()
    for layer, head in ((0, 0), (12, 5), (23, 4), (29, 8)):
        columns = slice(head * d_k, (head + 1) * d_k)

        def patch(module, args, layer=layer, columns=columns):
            values = args[0].clone()  # (1, T, h·d_k)
            values[0, -1, columns] = captured[layer][columns]
            return (values, *args[1:])

        handle = layers[layer].self_attn.o_proj.register_forward_pre_hook(patch)
        try:
            with torch.no_grad():
                logits = reference(corrupt).logits[0, -1]  # (V,)
        finally:
            handle.remove()
        probability = float(torch.softmax(logits, -1)[sweep.answer_id])
        assert float(sweep.patched_probs[layer, head]) == pytest.approx(probability, abs=1e-4), (layer, head)
        difference = float(logits[sweep.answer_id] - logits[sweep.wrong_id])
        assert float(sweep.patched_logit_diffs[layer, head]) == pytest.approx(difference, abs=1e-4), (layer, head)


def test_the_head_sweep_lies_between_the_corrupted_and_the_clean_run(sweep, lab):
    """The clean and corrupted probabilities are the two runs' own; some late head carries ' Paris' well above the
    corrupted run's p(answer), none alone brings back the whole clean run, and the first block's heads, which have
    read little of the country yet, change nothing."""
    sweep, calls = sweep
    for text, probability in ((CLEAN, sweep.clean_prob), (CORRUPT, sweep.corrupt_prob)):
        with torch.no_grad():
            logits = lab.unembed(lab.residual_stream(text).hidden[-1, -1])  # (V,) after the last block
        assert probability == pytest.approx(float(torch.softmax(logits, -1)[sweep.answer_id]), abs=1e-6)
    assert sweep.patched_probs.shape == sweep.patched_logit_diffs.shape == (30, 9)
    assert sweep.patched_probs.dtype == np.float32
    assert sweep.clean_tokens[3] == " France" and sweep.corrupt_tokens[3] == " Italy"
    assert sweep.patched_probs.max() > 10 * sweep.corrupt_prob  # some head carries the answer
    assert sweep.patched_probs.max() < sweep.clean_prob  # no single head is the whole clean run
    np.testing.assert_allclose(sweep.patched_probs[0], sweep.corrupt_prob, rtol=0, atol=1e-3)
    assert calls == [(9 * (layer + 1), 270) for layer in range(30)]


def test_prompts_of_different_token_counts_and_long_answers_are_refused(lab):
    with pytest.raises(ValueError, match="same number of tokens"):
        head_patching(lab, CLEAN, "The capital of Italy, is", ANSWER)
    with pytest.raises(ValueError, match="must be one token"):
        head_patching(lab, CLEAN, CORRUPT, " Parisian")
    with pytest.raises(ValueError, match="wrong token"):
        head_patching(lab, CLEAN, CORRUPT, ANSWER, wrong=" Rome and Milan")


def test_sink_heads_write_little_into_the_answer(lab):
    """A head that puts most of its weight on the first token (an attention sink, Xiao et al. 2023) reads almost
    nothing there: the first token's values are near zero, so what it writes comes from its remaining weight. On this
    21-token sentence, measured: the 97 heads with more than half their weight on the first token write at most 3% of
    the largest head's contribution to ' her' (|0.24| against 9.0), and a third as much as the others on average. It is
    a tendency, not a law: on a sentence whose next token no head pins down (" it" after "... look at the first token
    because"), one head with 0.96 on the first token was among the four largest, so the test holds this sentence to
    what was measured on it rather than every sentence to a rule."""
    attribution = direct_logit_attribution(lab, SINK_TEXT)
    assert len(attribution.tokens) == 21 and lab.token_texts([attribution.token_id]) == [" her"]
    sinks = attribution.attention_to_first > 0.5  # (L, H)
    contributions = np.abs(attribution.heads)
    assert sinks.sum() > 50  # most late heads are sinks on this sentence
    assert contributions[sinks].max() < 0.05 * contributions.max()
    assert contributions[sinks].mean() < 0.5 * contributions[~sinks].mean()

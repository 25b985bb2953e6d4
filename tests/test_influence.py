"""Prompt influence by three methods (model/explain/influence.py) on SmolLM2-135M-Instruct, each against its
definition computed another way: gradient × input against central finite differences of log p along each token's
embedding, occlusion against each shorter prompt run on its own, rollout against Abnar & Zuidema's product written
out over the model's own weights, the agreement against scipy, and the disagreement on constructed vectors."""
from dataclasses import replace

import numpy as np
import pytest
import torch
from scipy import stats

from model.explain.influence import METHODS, PromptInfluence, occluded_finals, prompt_influence
from model.families import open_model

TEXT = "The capital of France is"  # 5 tokens; the model's next token is " Paris"
EPSILON = 1e-2  # the finite difference's step, relative to each embedding (its error is O(ε²))


@pytest.fixture(scope="module")
def lab():
    return open_model("SmolLM2-135M-Instruct")  # the process's one copy


@pytest.fixture(scope="module")
def paris(lab):
    return prompt_influence(lab, TEXT, lab.encode(" Paris")[0])


def log_probs(lab, embedded: torch.Tensor, token_id: int) -> torch.Tensor:
    """(B, T, d) input embeddings -> (B,) log p(token) at the last position, without gradients."""
    with torch.no_grad():
        return torch.log_softmax(lab.unembed(lab.blocks_from(0, embedded)[:, -1]).float(), dim=-1)[:, token_id]


def test_gradient_times_input_is_the_derivative_of_log_p_along_each_embedding(lab, paris):
    """d/dε log p(answer | e_i scaled by 1 + ε) at ε = 0 is ∇_{e_i} log p · e_i, token by token."""
    embedded = lab.residual_stream(TEXT).hidden[0]  # (T, d)
    length = embedded.size(0)
    runs = []
    for position in range(length):
        for sign in (1, -1):
            scaled = embedded.clone()
            scaled[position] *= 1 + sign * EPSILON
            runs.append(scaled)
    values = log_probs(lab, torch.stack(runs), paris.token_id).view(length, 2)
    finite = ((values[:, 0] - values[:, 1]) / (2 * EPSILON)).numpy()
    np.testing.assert_allclose(paris.gradient, finite, rtol=0.02, atol=2e-3)
    assert paris.gradient.shape == (length,) and paris.gradient.dtype == np.float32
    assert paris.log_prob == pytest.approx(float(torch.log_softmax(
        lab.network.run(lab.encode(TEXT)).logits[0, -1], -1)[paris.token_id]), abs=1e-4)


def test_occlusion_is_each_prompt_without_one_token_run_on_its_own(lab, paris):
    ids = lab.encode(TEXT)
    for position in range(len(ids)):
        shorter = ids[:position] + ids[position + 1:]
        alone = torch.log_softmax(lab.network.run(shorter).logits[0, -1], -1)[paris.token_id]
        assert paris.occlusion[position] == pytest.approx(paris.log_prob - float(alone), abs=1e-4), position
    assert paris.occlusion[-1] > 1  # without " is", " Paris" is far less likely
    # the shorter prompts' runs from the removed token on, the earlier positions from the cache, are the whole runs
    stream = lab.residual_stream(TEXT)
    torch.testing.assert_close(occluded_finals(lab, stream), occluded_finals(lab, replace(stream, cache=None)),
                               rtol=1e-4, atol=1e-4)  # residual entries of tens: float32 rounding


def test_rollout_is_the_product_of_the_half_residual_head_means(lab, paris):
    weights = lab.network.run(lab.encode(TEXT)).weights[:, 0].double().numpy()  # (L, h, T, T)
    rolled = np.eye(weights.shape[-1])
    for layer in weights:  # R_l = Â_l · R_{l−1}, Â_l = 0.5 · mean_h A + 0.5 · I (Abnar & Zuidema 2020, §3)
        rolled = (0.5 * layer.mean(axis=0) + 0.5 * np.eye(len(rolled))) @ rolled
    np.testing.assert_allclose(paris.rollout, rolled[-1], rtol=1e-5, atol=1e-7)
    assert paris.rollout.sum() == pytest.approx(1, abs=1e-5)
    assert paris.most_influential()["rollout"] == 0  # the first token, where SmolLM2's heads rest


def test_the_agreement_is_scipys_spearman_of_the_sizes(paris):
    sizes = {method: np.abs(getattr(paris, method)) for method in METHODS}
    agreement = paris.agreement()
    assert list(agreement) == [("gradient", "occlusion"), ("gradient", "rollout"), ("occlusion", "rollout")]
    for (first, second), rho in agreement.items():
        assert rho == pytest.approx(stats.spearmanr(sizes[first], sizes[second]).statistic, abs=1e-12)


def constructed(gradient, occlusion, rollout) -> PromptInfluence:
    return PromptInfluence([1, 2, 3], ["a", "b", "c"], 7, -0.5, np.array(gradient, dtype=np.float32),
                           np.array(occlusion, dtype=np.float32), np.array(rollout, dtype=np.float32))


def test_the_methods_disagree_when_their_largest_tokens_differ_in_size():
    agreeing = constructed([0.1, -2.0, 0.3], [0.5, 3.0, -1.0], [0.2, 0.7, 0.1])
    assert agreeing.most_influential() == {"gradient": 1, "occlusion": 1, "rollout": 1}
    assert not agreeing.disagree()
    # a token that pushes the answer down most is the most influential in size
    differing = constructed([0.1, 0.2, -0.9], [0.5, 3.0, -1.0], [0.8, 0.1, 0.1])
    assert differing.most_influential() == {"gradient": 2, "occlusion": 1, "rollout": 0}
    assert differing.disagree()
    constant = constructed([1.0, 1.0, 1.0], [0.5, 3.0, -1.0], [0.8, 0.1, 0.1]).agreement()
    assert np.isnan(constant[("gradient", "occlusion")])  # no ranking to compare


def test_a_prompt_of_one_token_has_nothing_to_occlude(lab):
    with pytest.raises(ValueError, match="at least 2 tokens"):
        prompt_influence(lab, "Hello", 0)

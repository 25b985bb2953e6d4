"""model/explain/ against independent computations: loops over heads, explicit matrices, step-by-step decoding."""
import threading
from pathlib import Path

import numpy as np
import pytest
import torch

from model.explain.explanations import analysis_arrays

from model.explain.fixed_sets import held_out_pairs

from model.explain.importance import (EvaluationSet, embedding_importance, evaluation_set, head_importance,
                                     pruning_curve, quality, spearman, switched_off_masks)

from model.explain.kinds import SELF_KINDS

from model.explain.patterns import label_heads

from model.explain.value_norms import MultiHeadAttention, capture_attention_inputs, special_token_survival
from model.checkpoint import load_checkpoint
from model.config import TransformerConfig
from model.decode import greedy_decode_batch
from model.transformer import Transformer

CHECKPOINTS = Path(__file__).resolve().parents[1] / "assets" / "checkpoints"


def _toy_transformer(norm_first=False):
    torch.manual_seed(0)
    cfg = TransformerConfig(20, 22, num_layers=3, d_model=24, num_heads=3, d_ff=32, dropout=0.0, max_len=32,
                            norm_first=norm_first)
    return Transformer(cfg).eval()


def _reference_rollout(weights):
    """Loop over layers and heads, building Â_l explicitly."""
    layers, heads, length, _ = weights.shape
    rolled, out = None, []
    for l in range(layers):
        mean = sum(weights[l, h] for h in range(heads)) / heads
        with_residual = 0.5 * mean + 0.5 * np.eye(length)
        rolled = with_residual if rolled is None else with_residual @ rolled
        out.append(rolled)
    return np.stack(out)


def _reference_norms(module, weights, x):
    """Kobayashi et al. 2020, eq. 7-8, one head, query and key at a time: ‖α_ij (x_j W_V^h + b_V^h) W_O^h‖."""
    w_v, b_v = (t.detach().double().numpy() for t in module.projection("v"))
    w_o, _ = (None if t is None else t.detach().double().numpy() for t in module.projection("o"))
    heads, d_k = module.num_heads, module.d_model // module.num_heads
    x = x.double().numpy()
    t_q, t_k = weights.shape[-2:]
    out = np.zeros((heads, t_q, t_k))
    for h in range(heads):
        cols = slice(h * d_k, (h + 1) * d_k)
        w_v_h, b_v_h = w_v[cols].T, b_v[cols]  # (d, d_k), (d_k,): x·W layout
        w_o_h = w_o[:, cols].T  # (d_k, d): the rows of W_O (x·W layout) that head h's output meets
        for i in range(t_q):
            for j in range(t_k):
                out[h, i, j] = np.linalg.norm(weights[h, i, j] * ((x[j] @ w_v_h + b_v_h) @ w_o_h))
    return out


@pytest.mark.parametrize("norm_first", [False, True])
def test_rollout_and_norms_match_a_loop_over_heads(norm_first):
    model = _toy_transformer(norm_first)
    src = torch.tensor([[5, 6, 7, 8, 9, 2]])
    tgt_in = torch.tensor([[1, 4, 5, 6]])
    arrays = analysis_arrays(model, src[0].tolist(), tgt_in[0].tolist())
    # The sublayer inputs, recomputed by hand (not through the hooks): x entering each attention module.
    with torch.no_grad():
        _, maps = model(src, tgt_in, need_weights=True)
        x = model.embed_source(src)
        encoder_inputs = []
        for layer in model.encoder_layers:
            encoder_inputs.append(layer.sub_attn.norm(x) if norm_first else x)
            x, _ = layer(x, None, False)
        memory = model.encoder_norm(x)
    for l, layer in enumerate(model.encoder_layers):
        expected = _reference_norms(layer.self_attn, maps.encoder_self[l, 0].numpy(), encoder_inputs[l][0])
        np.testing.assert_allclose(arrays["value_norms_encoder_self"][l], expected, rtol=1e-4, atol=1e-6)
    # the decoder's first masked self-attention sees the embedded target (its LayerNorm when pre-norm)
    with torch.no_grad():
        y = model.embed_target(tgt_in)
        first = model.decoder_layers[0]
        decoder_input = first.sub_self.norm(y) if norm_first else y
    expected = _reference_norms(first.self_attn, maps.decoder_self[0, 0].numpy(), decoder_input[0])
    np.testing.assert_allclose(arrays["value_norms_decoder_self"][0], expected, rtol=1e-4, atol=1e-6)
    # cross-attention's keys and values are the encoder output
    for l, layer in enumerate(model.decoder_layers):
        expected = _reference_norms(layer.cross_attn, maps.cross[l, 0].numpy(), memory[0])
        np.testing.assert_allclose(arrays["value_norms_cross"][l], expected, rtol=1e-4, atol=1e-6)
    for kind in SELF_KINDS:
        expected = _reference_rollout(getattr(maps, kind)[:, 0].double().numpy())
        np.testing.assert_allclose(arrays[f"rollout_{kind}"], expected, rtol=1e-6, atol=1e-9)
        np.testing.assert_allclose(arrays[f"rollout_{kind}"].sum(-1), 1.0, atol=1e-6)
    assert np.allclose(np.triu(arrays["rollout_decoder_self"], 1), 0)  # causal stays causal
    assert arrays["value_norms_decoder_self"].shape == (3, 3, 4, 4)


def test_hooks_record_only_this_thread_and_keyword_calls_and_are_removed():
    module = MultiHeadAttention(8, 2)
    x = torch.randn(1, 3, 8)
    with capture_attention_inputs({"a": module}) as captured:
        other_session = threading.Thread(target=module, args=(x, x, x * 3))  # a shared model, another script thread
        other_session.start()
        other_session.join()
        module(x, x, value=x * 2)
    assert torch.equal(captured["a"][0], x * 2)
    module(x, x, x)
    assert len(captured["a"]) == 1  # the hook is gone: a call after the block is not recorded


def test_special_token_survival_is_the_norm_share_over_the_weight_share():
    weights = np.array([[[0.5, 0.5], [0.8, 0.2]]])  # (h=1, T_q=2, T_k=2); key 1 is <eos>
    norms = weights * np.array([2.0, 0.1])  # <eos>'s transformed value is tiny
    result = special_token_survival(weights, norms, ["cat", "<eos>"])
    assert result["weight_share"][0] == pytest.approx(0.7 / 2)
    assert result["norm_share"][0] == pytest.approx(0.07 / (2.6 + 0.07))
    assert result["survival"][0] < 0.1


def _exact_maps(length, kind):
    """(L=1, h=1, T, T) weights that are exactly one pattern."""
    w = np.zeros((1, 1, length, length))
    for i in range(length):
        j = {"previous": max(i - 1, 0), "eos": length - 1, "self": i}[kind]
        w[0, 0, i, j] = 1.0
    return w


def test_exact_previous_token_and_eos_sink_heads_get_those_labels():
    sentences = [["i", "have", "a", "cat", "<eos>"], ["we", "are", "students", "<eos>"]]
    for kind, label in (("previous", "previous"), ("eos", "sink"), ("self", "self")):
        scores = label_heads([(_exact_maps(len(s), kind), s) for s in sentences], self_attention=True)
        assert scores.labels[0, 0] == label, (kind, scores)
    uniform = [(np.full((1, 1, 6, 6), 1 / 6), ["a", "b", "c", "d", "e", "<eos>"])]
    assert label_heads(uniform, self_attention=True).labels[0, 0] == "broad"
    # 0.4 on the previous token, 0.6 three ahead: no pattern reaches its threshold, rows are sharp -> block
    mixed = np.zeros((1, 1, 8, 8))
    for i in range(8):
        mixed[0, 0, i, (i - 1) % 8] += 0.4
        mixed[0, 0, i, (i + 3) % 8] += 0.6
    assert label_heads([(mixed, list("abcdefg") + ["<eos>"])], True).labels[0, 0] == "block"


def test_embedding_importance_of_an_encoder_is_the_cosine_change_of_mean_pooled_states():
    from model.transformer import HeadMasks

    model = _toy_transformer()
    src = torch.tensor([[5, 6, 7, 8, 2], [9, 10, 11, 2, 0]])
    real = (src != 0).float()[..., None]

    def embed(head_mask):  # mean of the encoder's output over real tokens
        memory, _, _ = model.encode(src, head_masks=HeadMasks(encoder_self=head_mask))
        return (memory * real).sum(1) / real.sum(1)

    change = embedding_importance(embed, 3, 3)
    assert change.shape == (3, 3) and (change > 0).all()  # every head of a random model moves the embedding
    with torch.no_grad():
        full, off = embed(torch.ones(3, 3)), embed(torch.tensor([[1.0, 1, 1], [1, 0, 1], [1, 1, 1]]))
    expected = float((1 - torch.nn.functional.cosine_similarity(full, off)).mean())
    assert change[1, 1] == pytest.approx(expected, rel=1e-5)


def test_spearman_matches_known_values():
    assert spearman([1, 2, 3, 4], [10, 20, 30, 40]) == pytest.approx(1.0)
    assert spearman([1, 2, 3, 4], [4, 3, 2, 1]) == pytest.approx(-1.0)
    assert spearman([1, 2, 3, 4, 5], [2, 1, 4, 3, 5]) == pytest.approx(0.8)
    # ties take their mean rank: ranks (1.5, 1.5, 3, 4) against (1, 2, 3, 4) give 4.5 / √(4.5 · 5)
    assert spearman([1, 1, 2, 3], [1, 2, 3, 4]) == pytest.approx(4.5 / (4.5 * 5) ** 0.5)
    assert np.isnan(spearman([0.0, 0.0, 0.0], [1, 2, 3]))  # a constant side has no ranking (the ablation of a
    # model where no head changes exact match), silently


@pytest.fixture(scope="module")
def shipped():
    loaded = load_checkpoint(CHECKPOINTS / "transformer_en-fr")
    return loaded, evaluation_set(loaded, held_out_pairs(loaded))


def test_teacher_forced_exact_match_is_greedy_decodings(shipped):
    """The one-pass exact match equals step-by-step greedy decoding, with all heads and with one head off."""
    loaded, evaluation = shipped
    model = loaded.model
    first = EvaluationSet(evaluation.batches[:1], evaluation.batches[0][0].size(0))
    src, _, tgt_out = first.batches[0]
    references = [[t for t in row if t not in (0, 2)] for row in tgt_out.tolist()]
    for off in ([], [("cross", 1, 0)], [("encoder_self", 0, 2), ("decoder_self", 1, 3), ("cross", 0, 1)]):
        masks = switched_off_masks(2, 4, off)
        got = quality(model, first, masks)["exact_match"]
        with torch.no_grad():
            # greedy_decode_batch has no head masks: switch heads off through the same public gates by hand
            decoded = _greedy_with_masks(model, src, tgt_out.size(1) + 5, masks)
        expected = np.mean([d == r for d, r in zip(decoded, references)])
        assert got == pytest.approx(expected), off
    assert greedy_decode_batch(model, src, tgt_out.size(1) + 5) == _greedy_with_masks(
        model, src, tgt_out.size(1) + 5, switched_off_masks(2, 4))


def _greedy_with_masks(model, src, steps, masks):
    memory, src_mask, _ = model.encode(src, head_masks=masks)
    generated = torch.full((src.size(0), 1), 1)
    finished = torch.zeros(src.size(0), dtype=torch.bool)
    for _ in range(steps):
        logits, _, _ = model.decode(generated, memory, src_mask, head_masks=masks)
        nxt = logits[:, -1].argmax(-1).masked_fill(finished, 0)
        generated = torch.cat([generated, nxt[:, None]], 1)
        finished |= nxt == 2
        if finished.all():
            break
    return [row[: row.index(2)] if 2 in row else [t for t in row if t] for row in generated[:, 1:].tolist()]


@pytest.mark.slow
def test_least_important_head_costs_less_exact_match_than_the_most_important(shipped):
    loaded, evaluation = shipped
    importance = head_importance(loaded.model, evaluation)
    assert evaluation.sentences == 300 and len(importance.heads) == 24
    order = importance.order()
    least, most = importance.heads[order[0]], importance.heads[order[-1]]
    cfg = loaded.config

    def exact_match_without(head):
        masks = switched_off_masks(cfg.num_layers, cfg.num_heads, [head])
        return quality(loaded.model, evaluation, masks)["exact_match"]

    em = {head: exact_match_without(head) for head in (least, most)}
    assert em[least] > em[most]
    assert importance.gradient.shape == (24,) and (importance.gradient >= 0).all()
    curve = pruning_curve(loaded.model, evaluation, importance, counts=[0, 24])
    assert curve[0]["exact_match"] == pytest.approx(importance.baseline["exact_match"])
    assert curve[1]["exact_match"] < 0.05  # every head off: nothing is translated

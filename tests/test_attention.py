"""Our attention against torch.nn.MultiheadAttention and the fused path, masks included."""
import torch
from torch import nn

import pytest

from model.attention import (MultiHeadAttention, causal_mask, key_padding_from_tokens,
                             masked_softmax, scaled_dot_product_attention)
from model.config import TransformerConfig
from model.transformer import Transformer


def _copy_into_torch(ours: MultiHeadAttention) -> nn.MultiheadAttention:
    """torch's own module with our weights, read through the public projection() (never our parameter names)."""
    ref = nn.MultiheadAttention(ours.d_model, ours.num_heads, batch_first=True)
    with torch.no_grad():
        ref.in_proj_weight.copy_(torch.cat([ours.projection(name)[0] for name in "qkv"]))
        ref.in_proj_bias.copy_(torch.cat([ours.projection(name)[1] for name in "qkv"]))
        ref.out_proj.weight.copy_(ours.projection("o")[0])
        ref.out_proj.bias.copy_(ours.projection("o")[1])
    return ref.eval()



def _assert_same(got, ref_out, ref_weights):
    """Our attention's output and per-head weights equal torch.nn.MultiheadAttention's."""
    torch.testing.assert_close(got.output, ref_out, atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(got.weights, ref_weights, atol=1e-5, rtol=1e-5)

def test_matches_torch_multihead_attention_with_masks():
    torch.manual_seed(0)
    ours = MultiHeadAttention(32, 4).eval()
    ref = _copy_into_torch(ours)
    q, kv = torch.randn(3, 5, 32), torch.randn(3, 7, 32)
    lengths = torch.tensor([7, 4, 2])
    key_pad = torch.arange(7)[None, :] >= lengths[:, None]  # torch: True = ignore
    ref_out, ref_w = ref(q, kv, kv, key_padding_mask=key_pad, average_attn_weights=False)
    got = ours(q, kv, kv, mask=(~key_pad)[:, None, None, :])
    _assert_same(got, ref_out, ref_w)


def test_matches_torch_with_causal_mask():
    torch.manual_seed(1)
    ours = MultiHeadAttention(24, 3).eval()
    ref = _copy_into_torch(ours)
    x = torch.randn(2, 6, 24)
    ref_out, ref_w = ref(x, x, x, attn_mask=~causal_mask(6), average_attn_weights=False)
    got = ours(x, x, x, mask=causal_mask(6))
    _assert_same(got, ref_out, ref_w)
    assert torch.all(got.weights.triu(1) == 0)


def test_fully_masked_row_is_zero_not_nan():
    scores = torch.randn(2, 3, 4)
    mask = torch.ones(2, 3, 4, dtype=torch.bool)
    mask[0, 1] = False
    w = masked_softmax(scores, mask)
    assert not torch.isnan(w).any()
    assert torch.all(w[0, 1] == 0)
    torch.testing.assert_close(w[1].sum(-1), torch.ones(3))


def test_fast_path_equals_explicit_path():
    torch.manual_seed(2)
    mha = MultiHeadAttention(16, 2).eval()
    q, kv = torch.randn(2, 4, 16), torch.randn(2, 6, 16)
    tokens = torch.tensor([[5, 6, 7, 0, 0, 0], [0, 0, 0, 0, 0, 0]])  # second row: every key padded
    mask = key_padding_from_tokens(tokens, 0)
    slow = mha(q, kv, kv, mask, need_weights=True)
    fast = mha(q, kv, kv, mask, need_weights=False)
    assert fast.weights is None
    torch.testing.assert_close(fast.output, slow.output, atol=1e-5, rtol=1e-5)


def test_scores_are_scaled_dot_products_and_head_mask_removes_head():
    q, k, v = torch.randn(1, 2, 3, 8), torch.randn(1, 2, 3, 8), torch.randn(1, 2, 3, 8)
    r = scaled_dot_product_attention(q, k, v)
    torch.testing.assert_close(r.scores, q @ k.transpose(-2, -1) / 8 ** 0.5)
    torch.testing.assert_close(r.weights, torch.softmax(r.scores, -1))
    mha = MultiHeadAttention(8, 2).eval()
    x = torch.randn(1, 3, 8)
    off = mha(x, x, x, head_mask=torch.tensor([0.0, 0.0]))
    torch.testing.assert_close(off.output, mha.projection("o")[1].expand(1, 3, 8))


def _separate_linears(mha: MultiHeadAttention) -> dict[str, nn.Linear]:
    """Three (four) independent nn.Linear holding copies of W_q, W_k, W_v (W_o): the layout before the fusion."""
    linears = {}
    for name in "qkvo":
        weight, bias = mha.projection(name)
        linear = nn.Linear(mha.d_model, mha.d_model)
        with torch.no_grad():
            linear.weight.copy_(weight)
            linear.bias.copy_(bias)
        linears[name] = linear
    return linears


@pytest.mark.parametrize("sharing", ["self", "key is value", "all different"])
def test_fused_projection_equals_three_separate_ones(sharing):
    torch.manual_seed(3)
    mha = MultiHeadAttention(32, 4).eval()
    separate = _separate_linears(mha)
    x, memory, other = torch.randn(2, 5, 32), torch.randn(2, 7, 32), torch.randn(2, 7, 32)
    query, key, value = {"self": (x, x, x), "key is value": (x, memory, memory),
                         "all different": (x, memory, other)}[sharing]
    fused = mha.project_qkv(query, key, value)
    for got, name, source in zip(fused, "qkv", (query, key, value)):
        torch.testing.assert_close(got, separate[name](source), atol=1e-6, rtol=1e-6)
    # and the whole module against attention computed from the separate projections
    split = lambda t: t.view(2, -1, 4, 8).transpose(1, 2)  # (B, h, T, d_k)
    heads = scaled_dot_product_attention(split(separate["q"](query)), split(separate["k"](key)),
                                         split(separate["v"](value))).output
    expected = separate["o"](heads.transpose(1, 2).reshape(2, 5, 32))
    for need_weights in (True, False):
        torch.testing.assert_close(mha(query, key, value, need_weights=need_weights).output, expected,
                                   atol=1e-5, rtol=1e-5)


def test_projection_reads_and_writes_the_fused_weight():
    mha = MultiHeadAttention(16, 2)
    weight, bias = mha.projection("k")
    assert weight.shape == (16, 16) and bias.shape == (16,)
    with torch.no_grad():
        weight.fill_(0.5)  # a view: loaders write W_k through it
    torch.testing.assert_close(mha.w_qkv.weight[16:32], torch.full((16, 16), 0.5))
    assert not torch.all(mha.w_qkv.weight[:16] == 0.5) and not torch.all(mha.w_qkv.weight[32:] == 0.5)
    with pytest.raises(ValueError):
        mha.projection("x")


def test_separate_projections_keep_the_paper_initialisation():
    """Each of W_q, W_k, W_v is Xavier-uniform on its own (d_model, d_model) fans, as four nn.Linear were."""
    torch.manual_seed(0)
    mha = MultiHeadAttention(128, 4)
    bound = (6 / (128 + 128)) ** 0.5
    for name in "qkv":
        weight = mha.projection(name)[0]
        assert weight.abs().max() <= bound
        assert weight.abs().max() > 0.95 * bound  # not the fused matrix's smaller bound (6 / (128 + 384)) ** 0.5


@pytest.mark.parametrize("norm_first", [False, True])
def test_every_layer_matches_torch_multihead_attention(norm_first):
    """Each attention module of a Transformer, on the inputs it sees in a forward pass, against
    torch.nn.MultiheadAttention holding the same weights: outputs and per-head weights, masks included."""
    torch.manual_seed(5)
    cfg = TransformerConfig(30, 30, num_layers=2, d_model=32, num_heads=4, d_ff=64, dropout=0.0,
                            norm_first=norm_first)
    model = Transformer(cfg).eval()
    src, tgt = torch.randint(4, 30, (3, 7)), torch.randint(4, 30, (3, 6))
    src[1, 4:] = 0
    tgt[2, 3:] = 0
    seen = []  # (module, query, key, value, torch-style masks)
    hooks = [module.register_forward_hook(lambda m, args, kwargs, out: seen.append((m, args, kwargs)),
                                          with_kwargs=True)
             for module in model.modules() if isinstance(module, MultiHeadAttention)]
    model(src, tgt)
    for hook in hooks:
        hook.remove()
    assert len(seen) == 2 + 2 * 2
    for mha, args, _ in seen:
        query, key, value, mask = args[:4]
        ref = _copy_into_torch(mha)
        full = mask.expand(query.size(0), 1, query.size(1), key.size(1))[:, 0]  # (B, T_q, T_k), True = may attend
        blocked = (~full).repeat_interleave(mha.num_heads, dim=0)  # torch: (B·h, T_q, T_k), True = blocked
        ref_out, ref_weights = ref(query, key, value, attn_mask=blocked, average_attn_weights=False)
        got = mha(query, key, value, mask, need_weights=True)
        fast = mha(query, key, value, mask, need_weights=False)
        _assert_same(got, ref_out, ref_weights)
        torch.testing.assert_close(fast.output, ref_out, atol=1e-5, rtol=1e-5)


def test_is_causal_equals_the_materialised_causal_mask():
    torch.manual_seed(6)
    mha = MultiHeadAttention(24, 3).eval()
    ref = _copy_into_torch(mha)
    x = torch.randn(2, 6, 24)
    ref_out, _ = ref(x, x, x, attn_mask=~causal_mask(6))
    torch.testing.assert_close(mha(x, x, x, need_weights=False, is_causal=True).output, ref_out,
                               atol=1e-5, rtol=1e-5)
    with pytest.raises(ValueError):
        mha(x, x, x, causal_mask(6), need_weights=False, is_causal=True)


def test_training_forward_with_is_causal_matches_the_masked_forward_on_real_positions():
    """In training the decoder leaves the causal mask to the kernel and drops the target padding mask: every real
    (non-pad) target position must come out as with both masks (padded positions are ignored by the loss)."""
    torch.manual_seed(7)
    cfg = TransformerConfig(30, 30, num_layers=2, d_model=32, num_heads=4, d_ff=64, dropout=0.0)
    model = Transformer(cfg)
    src, tgt = torch.randint(4, 30, (3, 7)), torch.randint(4, 30, (3, 6))
    src[1, 4:] = 0
    tgt[2, 3:] = 0  # right-padded target, as pad_batch builds them
    training_logits, _ = model.train()(src, tgt)
    masked_logits, _ = model.eval()(src, tgt)
    real = tgt != 0
    torch.testing.assert_close(training_logits[real], masked_logits[real], atol=1e-5, rtol=1e-5)
    assert not torch.allclose(training_logits[~real], masked_logits[~real])  # the path really differs on padding

"""Our attention against torch.nn.MultiheadAttention and the fused path, masks included."""
import torch
from torch import nn

from model.attention import (MultiHeadAttention, causal_mask, key_padding_from_tokens, masked_softmax,
                             scaled_dot_product_attention)


def _copy_into_torch(ours: MultiHeadAttention) -> nn.MultiheadAttention:
    ref = nn.MultiheadAttention(ours.d_model, ours.num_heads, batch_first=True)
    with torch.no_grad():
        ref.in_proj_weight.copy_(torch.cat([ours.w_q.weight, ours.w_k.weight, ours.w_v.weight]))
        ref.in_proj_bias.copy_(torch.cat([ours.w_q.bias, ours.w_k.bias, ours.w_v.bias]))
        ref.out_proj.weight.copy_(ours.w_o.weight)
        ref.out_proj.bias.copy_(ours.w_o.bias)
    return ref.eval()


def test_matches_torch_multihead_attention_with_masks():
    torch.manual_seed(0)
    ours = MultiHeadAttention(32, 4).eval()
    ref = _copy_into_torch(ours)
    q, kv = torch.randn(3, 5, 32), torch.randn(3, 7, 32)
    lengths = torch.tensor([7, 4, 2])
    key_pad = torch.arange(7)[None, :] >= lengths[:, None]  # torch: True = ignore
    ref_out, ref_w = ref(q, kv, kv, key_padding_mask=key_pad, average_attn_weights=False)
    got = ours(q, kv, kv, mask=(~key_pad)[:, None, None, :])
    torch.testing.assert_close(got.output, ref_out, atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(got.weights, ref_w, atol=1e-5, rtol=1e-5)


def test_matches_torch_with_causal_mask():
    torch.manual_seed(1)
    ours = MultiHeadAttention(24, 3).eval()
    ref = _copy_into_torch(ours)
    x = torch.randn(2, 6, 24)
    ref_out, ref_w = ref(x, x, x, attn_mask=~causal_mask(6), average_attn_weights=False)
    got = ours(x, x, x, mask=causal_mask(6))
    torch.testing.assert_close(got.output, ref_out, atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(got.weights, ref_w, atol=1e-5, rtol=1e-5)
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
    torch.testing.assert_close(off.output, mha.w_o.bias.expand(1, 3, 8))

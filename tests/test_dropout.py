"""model/dropout.py: the cheaper CPU dropout keeps torch's meaning (rate, scaling, gradient, placement)."""
import math

import pytest
import torch

import model.dropout as dropout_module
from model.config import TransformerConfig
from model.dropout import Dropout, dropout, dropout_add, keep_mask
from model.transformer import Transformer


@pytest.mark.parametrize("p", [0.1, 0.5])
def test_keeps_each_element_with_probability_one_minus_p_and_scales_the_kept(p):
    torch.manual_seed(0)
    x = torch.rand(256, 64, 64) + 1.0  # 1,048,576 elements, none of them 0
    out = dropout(x, p)
    kept = out != 0
    rate = kept.float().mean().item()
    assert abs(rate - (1 - p)) < 5 * math.sqrt(p * (1 - p) / x.numel())  # within 5 standard deviations
    torch.testing.assert_close(out[kept], x[kept] / (1 - p))
    # every position is as likely to be dropped: the first and the second half of the draws agree
    halves = kept.flatten().float().chunk(2)
    assert abs(halves[0].mean().item() - halves[1].mean().item()) < 0.005


def test_an_odd_number_of_elements_and_a_non_contiguous_input():
    torch.manual_seed(1)
    x = torch.rand(7, 5, 3) + 1.0  # 105 elements: the mask takes half of the last 64-bit draw
    assert keep_mask(x, 0.3).shape == x.shape
    transposed = x.transpose(0, 2)
    out = dropout(transposed, 0.3)
    kept = out != 0
    torch.testing.assert_close(out[kept], transposed[kept] / 0.7)


def test_p_zero_and_eval_return_the_input_unchanged():
    x = torch.randn(4, 9)
    assert dropout(x, 0.0) is x
    assert dropout(x, 0.4, training=False) is x
    torch.testing.assert_close(dropout_add(x, 2 * x, 0.0), x + 2 * x, rtol=0, atol=0)
    torch.testing.assert_close(dropout_add(x, 2 * x, 0.4, training=False), x + 2 * x, rtol=0, atol=0)
    assert torch.equal(dropout(x, 1.0), torch.zeros_like(x))
    with pytest.raises(ValueError):
        Dropout(1.5)


def test_the_fused_residual_add_equals_the_unfused_sum_with_the_same_mask():
    residual, x = torch.randn(32, 16, 8), torch.randn(32, 16, 8)
    torch.manual_seed(2)
    fused = dropout_add(residual, x, 0.1)
    torch.manual_seed(2)
    unfused = residual + dropout(x, 0.1)
    torch.testing.assert_close(fused, unfused)
    assert not torch.equal(fused, residual + x)  # something was dropped


def test_the_same_seed_gives_the_same_mask_and_the_gradient_goes_through_the_kept_elements_only():
    x = torch.randn(64, 32, requires_grad=True)
    torch.manual_seed(3)
    first = dropout(x, 0.2)
    torch.manual_seed(3)
    again = dropout(x, 0.2)
    assert torch.equal(first, again)
    assert not torch.equal(first, dropout(x, 0.2))  # the generator moved on
    first.sum().backward()
    expected = (first != 0).float() / 0.8
    torch.testing.assert_close(x.grad, expected)


def test_the_transformer_drops_at_the_papers_places_in_training_only(monkeypatch):
    """§5.4: dropout on every sublayer's output before the residual add, and on embeddings + positions; here also
    inside the feed-forward (as torch.nn.TransformerEncoderLayer). 2+2 layers: 2 embeddings + 2 × (attention,
    feed-forward residuals + inner feed-forward) + 2 × (self, cross, feed-forward residuals + inner) = 16 masks."""
    calls = []

    def counting_keep_mask(like, p):
        calls.append((tuple(like.shape), p))
        return keep_mask(like, p)

    monkeypatch.setattr(dropout_module, "keep_mask", counting_keep_mask)
    torch.manual_seed(4)
    cfg = TransformerConfig(30, 30, num_layers=2, d_model=32, num_heads=4, d_ff=64, dropout=0.1)
    model = Transformer(cfg)
    src, tgt = torch.randint(4, 30, (3, 7)), torch.randint(4, 30, (3, 6))
    model.train()(src, tgt)
    assert len(calls) == 16 and {p for _, p in calls} == {0.1}
    assert sorted(shape[-1] for shape, _ in calls).count(64) == 4  # the inner feed-forward, once per layer
    calls.clear()
    model.eval()(src, tgt)
    assert calls == []


def test_a_model_at_dropout_zero_has_no_dropout_and_equals_the_eval_model():
    torch.manual_seed(5)
    cfg = TransformerConfig(30, 30, num_layers=2, d_model=32, num_heads=4, d_ff=64, dropout=0.0)
    model = Transformer(cfg)
    assert not any(isinstance(m, Dropout) and m.p > 0 for m in model.modules())
    src, tgt = torch.randint(4, 30, (3, 7)), torch.randint(4, 30, (3, 6))
    torch.testing.assert_close(model.train()(src, tgt)[0], model.eval()(src, tgt)[0], atol=1e-5, rtol=1e-5)

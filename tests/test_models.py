import pytest
import torch

from model.config import Seq2SeqConfig, TransformerConfig
from model.seq2seq import Seq2Seq
from model.transformer import HeadMasks, Transformer


def _batch(vocab=20, pad_rows=True):
    torch.manual_seed(0)
    src = torch.randint(4, vocab, (3, 7))
    tgt = torch.randint(4, vocab, (3, 6))
    if pad_rows:
        src[1, 4:] = 0
        tgt[2, 3:] = 0
    return src, tgt


@pytest.mark.parametrize("norm_first,positional,tie", [(False, "sinusoidal", False), (True, "learned", True)])
def test_transformer_attention_maps(norm_first, positional, tie):
    cfg = TransformerConfig(20, 20, num_layers=2, d_model=32, num_heads=4, d_ff=64, norm_first=norm_first,
                            positional=positional, tie_embeddings=tie)
    model = Transformer(cfg).eval()
    src, tgt = _batch()
    logits, maps = model(src, tgt, need_weights=True)
    assert logits.shape == (3, 6, 20)
    assert maps.encoder_self.shape == (2, 3, 4, 7, 7)
    assert maps.decoder_self.shape == (2, 3, 4, 6, 6)
    assert maps.cross.shape == (2, 3, 4, 6, 7)  # [T_tgt, T_src]
    for w in (maps.encoder_self, maps.decoder_self, maps.cross):
        assert not torch.isnan(w).any()
    torch.testing.assert_close(maps.cross.sum(-1), torch.ones(2, 3, 4, 6))
    assert torch.all(maps.decoder_self.triu(1) == 0)  # causal: nothing above the diagonal
    assert torch.all(maps.cross[:, 1, :, :, 4:] == 0)  # padded source keys get no weight
    fast, none = model(src, tgt)
    assert none is None
    torch.testing.assert_close(fast, logits, atol=1e-5, rtol=1e-5)
    if tie:
        assert model.generator.weight is model.src_embed.weight


def test_head_mask_changes_output_and_paper_base_builds():
    cfg = TransformerConfig(20, 20, num_layers=1, d_model=32, num_heads=4, d_ff=64)
    model = Transformer(cfg).eval()
    src, tgt = _batch()
    base, _ = model(src, tgt)
    masks = HeadMasks(cross=torch.tensor([[0.0, 1.0, 1.0, 1.0]]))
    ablated, _ = model(src, tgt, head_masks=masks)
    assert not torch.allclose(base, ablated)
    big = TransformerConfig.paper_base(100, 100)
    assert (big.num_layers, big.d_model, big.d_ff, big.num_heads) == (6, 512, 2048, 8)
    Transformer(big)


def test_seq2seq_alignment_and_bottleneck():
    src, tgt = _batch()
    model = Seq2Seq(Seq2SeqConfig(20, 20, embed_dim=16, hidden_size=24, attention=True)).eval()
    logits, alignment = model(src, tgt)
    assert logits.shape == (3, 6, 20) and alignment.shape == (3, 6, 7)
    torch.testing.assert_close(alignment.sum(-1), torch.ones(3, 6))
    assert torch.all(alignment[1, :, 4:] == 0)
    plain = Seq2Seq(Seq2SeqConfig(20, 20, embed_dim=16, hidden_size=24, attention=False)).eval()
    logits, none = plain(src, tgt)
    assert none is None and logits.shape == (3, 6, 20)


def test_bahdanau_score_formula():
    """e_ij = vᵀ tanh(W s + U h_j), softmax over j."""
    model = Seq2Seq(Seq2SeqConfig(20, 20, embed_dim=8, hidden_size=6)).eval()
    att = model.attention
    state, enc = torch.randn(2, 6), torch.randn(2, 5, 12)
    mask = torch.ones(2, 5, dtype=torch.bool)
    context, alignment = att(state, att.U(enc), enc, mask)
    e = torch.stack([torch.stack([att.v.weight[0] @ torch.tanh(att.W.weight @ state[b] + att.U(enc[b, j]))
                                  for j in range(5)]) for b in range(2)])
    torch.testing.assert_close(alignment, torch.softmax(e, -1), atol=1e-6, rtol=1e-5)
    torch.testing.assert_close(context, (alignment[:, :, None] * enc).sum(1), atol=1e-6, rtol=1e-5)

"""A head across many texts (model/explain/qk_embedding.py, issue 41) on SmolLM2-135M-Instruct: the queries and keys
it reads are the model's own, its scores split into RoPE pairs sum to them, and the 2-D picture's scaling and
translation leave every softmax row as it was."""
import numpy as np
import pytest
import torch

from model.capabilities import QUERIES_KEYS
from model.explain.fixed_sets import LANGUAGE_MODEL_TEXTS
from model.explain.qk_embedding import embed_head, read_texts, rotary_pair_scores
from model.families import ReadsQueriesKeys, adapt, open_model
from model.gguf_weights import SMOLLM2_NAME
from model.llama import load_smollm2

COREFERENCE = "The animal didn't cross the street because it was too tired."
LAYER, HEAD = 4, 3  # a head of an early layer: the texts' forwards stop after it
TEXTS = LANGUAGE_MODEL_TEXTS[:3]


@pytest.fixture(scope="module")
def lab():
    return adapt(SMOLLM2_NAME, load_smollm2())


@pytest.fixture(scope="module")
def analysed(lab):
    return lab.analyse(COREFERENCE)


@pytest.fixture(scope="module")
def reading(lab):
    return lab.queries_keys(COREFERENCE)


@pytest.fixture(scope="module")
def readings(lab):
    return read_texts(lab, TEXTS, layers=LAYER + 1)


def test_only_a_model_that_reads_its_queries_and_keys_says_so(lab):
    assert lab.can(QUERIES_KEYS) and isinstance(lab, ReadsQueriesKeys)
    minilm = open_model("all-MiniLM-L6-v2")
    assert not minilm.can(QUERIES_KEYS) and not isinstance(minilm, ReadsQueriesKeys)


def test_the_rope_pairs_of_every_head_sum_to_its_pre_softmax_score(lab, analysed, reading):
    """After the 1/√d_k scaling: the terms sum to KindMaps.scores, the model's own q·k/√d_k, within 1e-4."""
    scores = analysed.maps["decoder_self"].scores  # (L, h, T, T)
    layers, heads, tokens, _ = scores.shape
    assert reading.queries.shape == reading.keys.shape == (layers, heads, tokens, lab.head_dim)
    assert reading.tokens == analysed.input_tokens and reading.rotary_pairs.shape == (lab.head_dim // 2, 2)
    for layer in range(layers):
        for head in range(heads):
            pairs = rotary_pair_scores(reading, layer, head)
            assert pairs.terms.shape == (tokens, tokens, lab.head_dim // 2)
            np.testing.assert_allclose(pairs.scores, scores[layer, head], rtol=0, atol=1e-4)
    np.testing.assert_allclose(pairs.shares.sum(-1), 1, atol=1e-5)
    assert pairs.mean_shares.sum() == pytest.approx(1, abs=1e-5)
    assert pairs.frequencies[0] == 1.0 and np.all(np.diff(pairs.frequencies) < 0)  # pair 0 turns fastest


def test_a_forward_stopped_early_reads_the_same_queries_and_keys(reading, readings):
    assert TEXTS[0] == COREFERENCE  # the reading of every layer is of the same text
    early = readings[0]
    assert early.queries.shape[0] == LAYER + 1 and early.ids == reading.ids
    torch.testing.assert_close(early.queries, reading.queries[:LAYER + 1], rtol=0, atol=1e-5)
    torch.testing.assert_close(early.keys, reading.keys[:LAYER + 1], rtol=0, atol=1e-5)


def test_the_embedding_has_a_point_per_query_and_key_with_its_token_and_context(readings):
    embedding = embed_head(readings, LAYER, HEAD)
    count = sum(len(r.ids) for r in readings)
    assert embedding.points.shape == (2 * count, 2) and embedding.points.dtype == np.float32
    assert embedding.is_query.sum() == count == (~embedding.is_query).sum() and embedding.is_query[:count].all()
    assert len(embedding.token) == len(embedding.context) == 2 * count
    assert embedding.queries.shape == embedding.keys.shape == (count, readings[0].queries.shape[-1])
    second = len(readings[0].ids)  # the first point of the second text
    assert embedding.text_index[second] == 1 and embedding.position[second] == 0
    assert embedding.token[second] == readings[1].tokens[0] and embedding.context[second].startswith(
        f"[{readings[1].tokens[0]}]")
    assert f"[{readings[0].tokens[8]}]" in embedding.context[8] and embedding.token[count + 8] == readings[0].tokens[8]
    # PCA: uncorrelated axes, the first the wider, each variance its share of the whole
    centred = np.concatenate([embedding.queries, embedding.keys]).astype(np.float64)
    centred -= centred.mean(0)
    covariance = np.cov(embedding.points.T.astype(np.float64), bias=True)
    assert abs(covariance[0, 1]) < 1e-3 * covariance[0, 0] and covariance[0, 0] >= covariance[1, 1]
    total = (centred ** 2).sum(1).mean()
    np.testing.assert_allclose(np.diag(covariance) / total, embedding.explained, rtol=1e-3)


def test_the_scaling_and_translation_leave_every_softmax_row_unchanged(readings):
    embedding = embed_head(readings, LAYER, HEAD)
    start = 0
    for reading in readings:
        length = len(reading.ids)
        causal = torch.ones(length, length, dtype=torch.bool).tril()
        q, k = reading.queries[LAYER, HEAD], reading.keys[LAYER, HEAD]  # (T, d_k) as the model reads them
        moved_q = torch.from_numpy(embedding.queries[start:start + length])
        moved_k = torch.from_numpy(embedding.keys[start:start + length])
        before = ((q @ k.T) * reading.scale).masked_fill(~causal, float("-inf")).softmax(-1)
        after = ((moved_q @ moved_k.T) * reading.scale).masked_fill(~causal, float("-inf")).softmax(-1)
        torch.testing.assert_close(after, before, rtol=0, atol=1e-5)
        start += length
    # the translation moved the keys (it is not the identity) onto the queries' centroid
    assert np.linalg.norm(embedding.key_shift) > 0.1 * np.linalg.norm(embedding.keys, axis=1).mean()
    np.testing.assert_allclose(embedding.keys.mean(0), embedding.queries.mean(0), atol=1e-4)
    # the scaling gave queries and keys the same mean norm before the translation
    scaled_keys = embedding.keys - embedding.key_shift
    assert np.linalg.norm(scaled_keys, axis=1).mean() == pytest.approx(
        np.linalg.norm(embedding.queries, axis=1).mean(), rel=1e-4)

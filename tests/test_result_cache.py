"""The replica's one byte-bounded result store (runtime/result_cache.py) and the compact maps it keeps (issue 36,
item 1)."""
from __future__ import annotations

import threading
from dataclasses import dataclass

import numpy as np
import pytest
import torch

from runtime import result_cache
from runtime.result_cache import ResultStore, budget_bytes, nbytes

MiB = 2**20


def test_nbytes_counts_arrays_tensors_and_nested_dataclasses_once():
    @dataclass
    class Inner:
        weights: np.ndarray
        tensor: torch.Tensor

    @dataclass
    class Outer:
        maps: dict
        same: np.ndarray  # the same array again: one buffer

    weights = np.zeros((4, MiB // 4), dtype=np.float32)  # 4 MiB
    tensor = torch.zeros(MiB // 2, dtype=torch.float16)  # 1 MiB
    value = Outer({"a": Inner(weights, tensor), "view": weights[1:]}, weights)
    assert 5 * MiB <= nbytes(value) < 5 * MiB + 4096


def test_the_store_never_holds_more_than_its_budget_and_evicts_the_least_recently_used_first():
    store = ResultStore(budget=10 * MiB)
    sizes = {}
    for i in range(5):  # 3 MiB each: only three fit
        array = np.full(3 * MiB // 8, i, dtype=np.float64)
        sizes[i] = nbytes((("k", i), array))
        store.put(("k", i), array)
        assert store.total_bytes <= store.budget
    assert store.keys() == [("k", 2), ("k", 3), ("k", 4)]
    assert store.total_bytes == sizes[2] + sizes[3] + sizes[4]
    store.get(("k", 2))  # used again: now the most recent, so ("k", 3) goes next
    store.put(("k", 5), np.zeros(3 * MiB // 8))
    assert store.keys() == [("k", 4), ("k", 2), ("k", 5)]
    assert store.evictions == 3
    assert store.total_bytes <= store.budget


def test_an_entry_bigger_than_the_budget_is_returned_but_not_kept():
    store = ResultStore(budget=MiB)
    store.put("small", np.zeros(1000))
    big = np.zeros(2 * MiB // 8)
    assert store.get_or_compute("big", lambda: big) is big
    assert "big" not in store and "small" in store and store.refused == 1


def test_kept_arrays_are_read_only_and_shared():
    store = ResultStore(budget=MiB)
    kept = store.get_or_compute("x", lambda: {"w": np.zeros(8)})
    assert store.get_or_compute("x", lambda: pytest.fail("computed twice")) is kept
    with pytest.raises(ValueError):
        kept["w"][0] = 1.0


def test_one_key_is_computed_once_while_sessions_ask_at_once():
    store, calls, gate = ResultStore(budget=MiB), [], threading.Event()

    def compute():
        calls.append(1)
        gate.wait(5)
        return np.ones(10)

    threads = [threading.Thread(target=store.get_or_compute, args=("same", compute)) for _ in range(4)]
    for thread in threads:
        thread.start()
    gate.set()
    for thread in threads:
        thread.join(10)
    assert len(calls) == 1


def test_the_budget_comes_from_the_environment(monkeypatch):
    monkeypatch.setenv(result_cache.ENV_VAR, "12.5")
    assert budget_bytes() == int(12.5 * MiB)
    monkeypatch.delenv(result_cache.ENV_VAR)
    assert budget_bytes() == result_cache.DEFAULT_BUDGET_MB * MiB
    for bad in ("lots", "-1", "nan"):
        monkeypatch.setenv(result_cache.ENV_VAR, bad)
        with pytest.raises(ValueError):
            budget_bytes()


def test_memoized_keys_by_the_arguments_without_underscore():
    calls = []

    @result_cache.memoized
    def square(x: int, _unhashed: object = None) -> np.ndarray:
        calls.append(x)
        return np.array([x * x])

    assert square(3, _unhashed=[1]) is square(3, _unhashed=[2])
    assert calls == [3]
    square.clear()
    square(3)
    assert calls == [3, 3]



def test_the_metrics_count_the_stores_hits_and_misses_and_what_it_holds():
    """/_stcore/metrics's figures of the store (serving/result_metrics.py), which the warm-up test reads."""
    from serving.result_metrics import BYTES, ENTRIES, LOOKUPS, ResultStoreStats

    def figures() -> dict:
        stats = ResultStoreStats().get_stats()
        return {**{stat.labels["result"]: stat.value for stat in stats[LOOKUPS]},
                "entries": stats[ENTRIES][0].value, "bytes": stats[BYTES][0].value}

    before = figures()
    result_cache.cached("test_metrics", (object(),), lambda: np.zeros(1000))  # a key of its own: one computation
    computed = figures()
    assert computed["miss"] == before["miss"] + 1 and computed["hit"] == before["hit"]
    assert computed["entries"] == before["entries"] + 1 and computed["bytes"] >= before["bytes"] + 8000
    result_cache.RESULTS.drop(lambda key: key[0] == "test_metrics")
    assert set(ResultStoreStats().get_stats([LOOKUPS])) == {LOOKUPS}

# A 512-token text on SmolLM2: 30 × 9 maps of 512² weights and as many scores. In float32 they were 0.57 GB an
# entry (plus the pickled copy st.cache_data kept); compact, an entry is at most 0.3 GB.
LONG_TEXT_ENTRY_BOUND = 300 * 10**6


@pytest.fixture(scope="module")
def llm():
    from model.families import open_model
    from model.gguf_weights import SMOLLM2_NAME

    return open_model(SMOLLM2_NAME)


def _text_of(lab, tokens: int) -> str:
    words = ("students paste a long paragraph about rivers banks money and the history of every word they know "
             "while the teacher waits").split()
    text = " ".join(words[i % len(words)] for i in range(tokens))
    assert len(lab.encode(text)) >= tokens
    return text


@pytest.mark.slow
def test_a_long_llm_text_is_cached_compact_and_draws_what_float32_drew(llm):
    import ui.state
    from model.llama import MAX_TOKENS
    from model.sources import as_float32

    result_cache.RESULTS.clear()
    text = _text_of(llm, MAX_TOKENS)
    analysed = ui.state.shared_analysis(llm.model_id, text, llm)
    maps = analysed.maps["decoder_self"]
    assert maps.weights.shape == (30, 9, MAX_TOKENS, MAX_TOKENS)
    assert maps.weights.dtype == maps.scores.dtype == np.float16
    size = result_cache.RESULTS.total_bytes
    assert len(result_cache.RESULTS) == 1 and 0.9 * maps.weights.nbytes * 2 < size < LONG_TEXT_ENTRY_BOUND
    # what is drawn: a head's map and its scores agree with the float32 forward pass to float16's precision
    out = llm.network.run(llm.encode(text)[:MAX_TOKENS])
    for layer, head in ((0, 0), (29, 8)):
        np.testing.assert_allclose(as_float32(maps.weights[layer, head]), out.weights[layer, 0, head].numpy(),
                                   atol=1e-3, rtol=1e-3)
        np.testing.assert_allclose(as_float32(maps.scores[layer, head]), out.scores[layer, 0, head].numpy(),
                                   atol=2e-2, rtol=1e-3)
    assert ui.state.shared_analysis(llm.model_id, text, llm) is analysed  # kept: the same object, not a copy
    result_cache.RESULTS.clear()


def test_a_short_llm_text_keeps_float32_maps(llm):
    analysed = llm.analyse("The cat sat on the mat.")
    assert analysed.maps["decoder_self"].weights.dtype == np.float32

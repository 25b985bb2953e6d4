"""The results store's folder tier (runtime/kept_results.py): what one process computed, another reads, exactly, under
a key of the input, the weights and the code; data only (never pickle), bounded, and a broken file is only a miss."""
import json
import math
import os
import time
from dataclasses import dataclass, field

import numpy as np
import plotly.graph_objects as go
import pytest
import torch
from safetensors.numpy import save_file

from model.families import fixed_weights_digest, shipped_model_names
from model.sources import AnalysedInput, KindMaps
from runtime.kept_results import KeptResults, NotKept, code_digest, decode, encode, key_text
from runtime.result_cache import KEEP_SECONDS, ResultStore, weights_of
from ui.view import Source


def _analysis() -> AnalysedInput:
    weights = np.random.default_rng(0).random((2, 4, 3, 3)).astype(np.float32)
    maps = KindMaps("encoder", weights, None, ["the", "cat", "</s>"], ["the", "cat", "</s>"], source_block=(0, 2))
    return AnalysedInput(model_id="transformer_en-fr", text="the cat", input_tokens=["the", "cat", "</s>"],
                         maps={"encoder": maps}, capabilities=frozenset({"translation"}), unknown=["ẞ"])


def test_every_kind_of_value_comes_back_as_it_was(tmp_path):
    kept = KeptResults(tmp_path)
    value = {
        "array": np.arange(12, dtype=np.float32).reshape(3, 4)[:, ::2],  # a view, not contiguous
        "ints": np.array([[1, 2]], dtype=np.int64), "flags": np.array([True, False]), "empty": np.zeros((0, 3)),
        "tokens": np.array(["le", "chat"]), "tensor": torch.arange(4, dtype=torch.float16),
        "numbers": (1, 2.5, float("nan"), float("inf"), -0.0, np.float32(0.25), np.int64(7), True, None),
        "sets": [frozenset({"a", "b"}), {3, 1}], "by_pair": {(0, 1): "x", (2, 3): [1.5]},
        "enum": Source.LINK, "analysis": _analysis(), "text": "한국어 \u200b ↩ 🎉",
    }
    digest = kept.digest(("some.function", "transformer_en-fr", "the cat", (0, 1)))
    assert kept.write(digest, value)
    found, back = KeptResults(tmp_path).read(digest)  # another process's store over the same folder
    assert found
    assert np.array_equal(back["array"], value["array"]) and back["array"].dtype == np.float32
    assert back["ints"].dtype == np.int64 and back["flags"].dtype == bool and back["empty"].shape == (0, 3)
    assert back["tokens"].tolist() == ["le", "chat"]
    assert isinstance(back["tensor"], torch.Tensor) and back["tensor"].dtype == torch.float16
    assert torch.equal(back["tensor"], value["tensor"])
    numbers = back["numbers"]
    assert isinstance(numbers, tuple) and numbers[:2] == (1, 2.5) and math.isnan(numbers[2]) and numbers[3] == math.inf
    assert math.copysign(1, numbers[4]) == -1 and numbers[5] == np.float32(0.25) and type(numbers[5]) is np.float32
    assert type(numbers[6]) is np.int64 and numbers[7] is True and numbers[8] is None
    assert back["sets"] == [frozenset({"a", "b"}), {1, 3}] and type(back["sets"][0]) is frozenset
    assert back["by_pair"] == {(0, 1): "x", (2, 3): [1.5]}
    assert back["enum"] is Source.LINK and back["text"] == value["text"]
    analysis = back["analysis"]
    assert type(analysis) is AnalysedInput and analysis.can("translation")  # a real instance: its methods work
    assert analysis.input_tokens == ["the", "cat", "</s>"] and analysis.unknown == ["ẞ"]
    assert np.array_equal(analysis.maps["encoder"].weights, value["analysis"].maps["encoder"].weights)
    assert analysis.maps["encoder"].source_block == (0, 2) and analysis.maps["encoder"].scores is None


def test_a_real_analysis_comes_back_with_every_map():
    from model.families import open_model

    lab = open_model("transformer_reverse")
    analysed = lab.analyse("a b c")
    arrays: dict = {}
    back = decode(json.loads(json.dumps(encode(analysed, arrays))), arrays)
    assert back.input_tokens == analysed.input_tokens and list(back.maps) == list(analysed.maps)
    for kind, maps in analysed.maps.items():
        for name in maps.__dataclass_fields__:
            before, after = getattr(maps, name), getattr(back.maps[kind], name)
            assert (np.array_equal(before, after) if isinstance(before, np.ndarray) else before == after), (kind, name)


@dataclass
class _Local:  # in the tests, not the product: a file may not name it
    x: int = 1
    y: list = field(default_factory=list)


@pytest.mark.parametrize("value", [go.Figure(), np.array([object()], dtype=object), _Local(), lambda: 1,
                                   {"figure": go.Figure()}, torch.ones(2, dtype=torch.bfloat16)],
                         ids=["figure", "object array", "test dataclass", "function", "nested figure", "bfloat16"])
def test_what_the_format_does_not_store_is_left_in_memory(tmp_path, value):
    kept = KeptResults(tmp_path)
    assert not kept.write(kept.digest(("f",)), value)
    assert kept.unstorable == 1 and not list(tmp_path.iterdir())


def test_the_key_names_the_input_the_weights_and_the_code(tmp_path):
    kept = KeptResults(tmp_path)
    key = ("ui.state.shared_analysis", "transformer_en-fr", "the cat", ())
    digest = kept.digest(key, ("w1",))
    assert digest == kept.digest(key, ("w1",))
    assert len({digest, kept.digest(key, ("w2",)), kept.digest(key), kept.digest(key[:2] + ("the dog", ()), ("w1",)),
                kept.digest(("ui.state.shared_analysis", "transformer_en-fr", "the cat", ((0, 1, 2),)), ("w1",))}) == 5
    assert key_text((1, "1", 1.0, True)) != key_text(("1", 1, 1.0, True))  # types kept apart
    assert kept.digest(("f", object())) is None and kept.digest(("f", np.zeros(2))) is None
    assert len(code_digest()) == 64


def test_weights_are_named_by_digest_only_where_they_are_fixed():
    shipped = shipped_model_names()
    digests = {name: fixed_weights_digest(name) for name in shipped}
    assert all(digests.values()) and len(set(digests.values())) == len(shipped)
    assert fixed_weights_digest("SmolLM2-135M-Instruct") and fixed_weights_digest("all-MiniLM-L6-v2")
    assert fixed_weights_digest("uploaded-1a2b3c4d") is None  # a student's upload or training: never beyond memory
    assert weights_of({"model_id": shipped[0], "text": "x"}) == (digests[shipped[0]],)
    assert weights_of({"model": None, "view": "v"}) == ()  # a measure that reads no model
    assert weights_of({"model_id": "uploaded-1a2b3c4d"}) is None


def test_a_second_store_reads_what_the_first_computed_and_a_quick_or_unnamed_result_is_not_kept(tmp_path):
    calls = []

    def slow():
        calls.append(1)
        time.sleep(KEEP_SECONDS * 1.5)
        return {"maps": np.ones((2, 2))}

    first, second = ResultStore(budget=2**20, kept=KeptResults(tmp_path)), ResultStore(budget=2**20,
                                                                                        kept=KeptResults(tmp_path))
    assert first.get_or_compute(("slow",), slow, weights=()) is not None
    assert np.array_equal(second.get_or_compute(("slow",), slow, weights=())["maps"], np.ones((2, 2)))
    assert len(calls) == 1 and second.kept_reads == 1 and second.misses == 0
    assert not second.get(("slow",))["maps"].flags.writeable  # shared from memory as read-only, like a computed one
    first.get_or_compute(("quick",), lambda: calls.append(2) or 1, weights=())
    second.get_or_compute(("quick",), lambda: calls.append(2) or 1, weights=())
    first.get_or_compute(("unnamed",), slow, weights=None)  # weights not known by digest
    second.get_or_compute(("unnamed",), slow, weights=None)
    assert calls == [1, 2, 2, 1, 1]


def test_a_broken_or_foreign_file_is_a_miss_and_goes(tmp_path):
    kept = KeptResults(tmp_path)
    digest = kept.digest(("f",))
    assert kept.write(digest, {"a": np.ones(3)})
    path = kept.file_for(digest)
    path.write_bytes(path.read_bytes()[:40])  # cut short
    assert kept.read(digest) == (False, None) and not path.exists() and kept.broken == 1
    # a file naming a type outside the product is never built from
    save_file({}, str(path), metadata={"value": json.dumps({"$dataclass": "subprocess:Popen", "fields": {"args": "x"}})})
    assert kept.read(digest) == (False, None) and not path.exists()
    with pytest.raises(NotKept):
        decode({"$enum": "os:sep", "value": 1}, {})


def test_the_folder_keeps_to_its_budget_dropping_the_least_recently_used(tmp_path):
    kept = KeptResults(tmp_path, budget=3 * 80_500)  # three files of 80 kB and a header each
    digests = [kept.digest((f"r{number}",)) for number in range(4)]
    for number, digest in enumerate(digests[:3]):
        kept.write(digest, np.zeros(10_000))  # 80 kB each
        os.utime(kept.file_for(digest), (time.time() - 100 + number, time.time() - 100 + number))
    assert kept.read(digests[0])[0]  # read: now the most recently used
    kept.write(digests[3], np.zeros(10_000))
    assert [kept.file_for(digest).exists() for digest in digests] == [True, False, True, True]
    assert not [path for path in tmp_path.iterdir() if path.name.startswith(".")]  # no temporary file left

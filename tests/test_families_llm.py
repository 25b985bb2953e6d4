"""model/adapters/llama.py: SmolLM2 opens by id (lazily), says what it can do, and its maps are the model's."""
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from model.capabilities import (ABLATION, GENERATION, IMPORTANCE, NEXT_TOKEN, NORMS, PATTERNS, QUERIES_KEYS, RESCALE,
                                RESIDUAL_STREAM)
from model.families import (Generates, LabModel, LlamaAdapter, ReadsQueriesKeys, ReadsResidualStream, ScoresHeads,
                            adapt, model_family, open_model)
from model.explain.value_norms import llama_value_norms

ROOT = Path(__file__).resolve().parents[1]
NAME = "SmolLM2-135M-Instruct"
TEXT = "The cat sat on the mat."


@pytest.fixture(scope="module")
def lab() -> LabModel:
    return open_model(NAME)


@pytest.mark.slow
def test_importing_the_app_modules_loads_no_llm():
    """The adapter is registered, but nothing reads the 98 MB file until a page or inspect asks for it."""
    code = ("import model.families, ui.models, ui.llm.generation; from model.llama import _LOADED; "
            "assert not _LOADED, list(_LOADED)")
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True, timeout=300)


def test_smollm2_opens_by_id_as_a_decoder_only_llm(lab):
    assert isinstance(lab, LabModel) and isinstance(lab, LlamaAdapter)
    assert lab.family == model_family(NAME) == "llama"
    assert lab.layout == {"decoder_self": (30, 9)} and lab.head_dim == 64 and lab.positions == "rotary"
    assert lab.capabilities == {NORMS, RESCALE, GENERATION, ABLATION, NEXT_TOKEN, IMPORTANCE, PATTERNS,
                                RESIDUAL_STREAM, QUERIES_KEYS}
    assert isinstance(lab, Generates) and isinstance(lab, ScoresHeads) and isinstance(lab, ReadsResidualStream)
    assert isinstance(lab, ReadsQueriesKeys)
    assert adapt("again", lab.network).layout == lab.layout and adapt("same", lab) is lab
    assert open_model(NAME).network is lab.network  # one shared copy per process


def test_analyse_gives_the_causal_maps_of_the_model_itself(lab):
    analysed = lab.analyse(TEXT)
    maps = analysed.maps["decoder_self"]
    ids = lab.encode(TEXT)
    assert analysed.capabilities == lab.capabilities and maps.query_tokens == lab.token_texts(ids)
    assert maps.weights.shape == (30, 9, len(ids), len(ids)) == maps.scores.shape
    np.testing.assert_allclose(maps.weights.sum(-1), 1, atol=1e-5)
    assert maps.masked[0, 1] and not maps.masked[1, 0] and (maps.weights[..., maps.masked] == 0).all()
    np.testing.assert_allclose(maps.weights, lab.network.run(ids).weights[:, 0].numpy(), atol=1e-6)


def test_a_head_switched_off_changes_the_layers_after_it_only(lab):
    plain, off = lab.analyse(TEXT), lab.analyse(TEXT, (("decoder_self", 0, 4),))
    np.testing.assert_allclose(off.maps["decoder_self"].weights[0], plain.maps["decoder_self"].weights[0], atol=1e-6)
    assert np.abs(off.maps["decoder_self"].weights[1:] - plain.maps["decoder_self"].weights[1:]).max() > 1e-3
    with pytest.raises(ValueError, match="decoder_self"):
        lab.analyse(TEXT, (("cross", 0, 0),))


def test_the_residual_streams_last_row_unembedded_is_the_models_own_prediction(lab):
    stream = lab.residual_stream(TEXT)
    ids = lab.encode(TEXT)
    assert stream.ids == ids and stream.tokens == lab.token_texts(ids)
    assert stream.hidden.shape == (31, len(ids), 576)  # (L+1, T, d): the embeddings, then each block's output
    torch.testing.assert_close(stream.hidden[0], lab.network.model.embed.weight[ids])
    torch.testing.assert_close(lab.unembed(stream.hidden[-1]), lab.network.run(ids).logits[0], rtol=0, atol=1e-4)


def test_explain_gives_value_norms_and_rollout_shaped_like_the_maps(lab):
    analysed = lab.analyse(TEXT)
    arrays = lab.explain(analysed)
    t = len(analysed.input_tokens)
    assert arrays["value_norms_decoder_self"].shape == (30, 9, t, t) and arrays["rollout_decoder_self"].shape == (30, t, t)
    out = lab.network.run(lab.encode(TEXT))
    expected = llama_value_norms(lab.network.model, out)[:, 0]
    torch.testing.assert_close(torch.from_numpy(arrays["value_norms_decoder_self"]), expected)


def test_the_chat_form_is_the_instruct_template_and_ends_the_turn_with_its_stop_token(lab):
    prompt = lab.chat_prompt("What is attention?")
    assert "<|im_start|>user\nWhat is attention?<|im_end|>" in prompt and prompt.endswith("<|im_start|>assistant\n")
    assert lab.token_texts(list(lab.stop_ids)) == ["<|im_end|>"]

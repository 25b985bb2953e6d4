"""`python -m model.inspect MODEL TEXT --out FILE.npz`: documented, the arrays the issue names, the app's numbers."""
import json
import subprocess
import sys

import numpy as np
import pytest

from model.inspect import main
from tests.app_links import open_from_link, trace_values

COREFERENCE = "The animal didn't cross the street because it was too tired."


def test_help_documents_the_command():
    result = subprocess.run([sys.executable, "-m", "model.inspect", "--help"], capture_output=True, text=True,
                            timeout=60)
    assert result.returncode == 0
    for word in ("MODEL", "TEXT", "--out", "encoder_self", "decoder_self", "cross", "output_tokens",
                 "(layers, heads, queries, keys)", "ATTENTION_LAB_MODELS"):
        assert word in result.stdout, word


def test_minilm_gives_tokens_and_encoder_self_attention(tmp_path, capsys):
    out = tmp_path / "maps.npz"
    assert main(["all-MiniLM-L6-v2", COREFERENCE, "--out", str(out)]) == 0
    data = np.load(out)
    assert sorted(data.files) == ["encoder_self", "rollout_encoder_self", "tokens", "value_norms_encoder_self"]
    tokens = list(data["tokens"])
    assert tokens[0] == "[CLS]" and tokens[-1] == "[SEP]" and "animal" in tokens
    assert data["encoder_self"].dtype == np.float32 and data["encoder_self"].shape == (6, 12, len(tokens), len(tokens))
    assert np.allclose(data["encoder_self"].sum(-1), 1, atol=1e-5)
    assert "encoder_self (6, 12" in capsys.readouterr().out
    length = len(tokens)
    assert data["rollout_encoder_self"].shape == (6, length, length)
    assert np.allclose(data["rollout_encoder_self"].sum(-1), 1, atol=1e-5)
    # rollout after layer 1 is 0.5·(mean of layer 1's heads) + 0.5·I, straight from the maps in the same file
    assert np.allclose(data["rollout_encoder_self"][0], 0.5 * data["encoder_self"][0].mean(0) + 0.5 * np.eye(length),
                       atol=1e-5)
    norms = data["value_norms_encoder_self"]
    assert norms.shape == (6, 12, length, length) and (norms >= 0).all()
    # N = α·‖f(x_j)‖: one column factor per head and key, so N / α is the same in every row
    ratio = norms / np.maximum(data["encoder_self"], 1e-12)
    assert np.allclose(ratio[2, 5], ratio[2, 5][0:1], rtol=1e-3)


def test_a_translation_model_gives_every_kind_and_its_output(tmp_path):
    out = tmp_path / "maps.npz"
    assert main(["transformer_en-fr", "i am a student", "--out", str(out)]) == 0
    data = np.load(out)
    assert list(data["tokens"]) == ["i", "am", "a", "student", "<eos>"]
    assert " ".join(data["output_tokens"]) == "je suis étudiant"  # the greedy translation, as on the page
    steps = len(data["decoder_tokens"])
    assert data["encoder_self"].shape == (2, 4, 5, 5) and data["decoder_self"].shape == (2, 4, steps, steps)
    assert data["cross"].shape == (2, 4, steps, 5) and steps == len(data["output_tokens"]) + 1
    assert data["rollout_encoder_self"].shape == (2, 5, 5)
    rollout = data["rollout_decoder_self"]
    assert rollout.shape == (2, steps, steps) and np.allclose(np.triu(rollout, 1), 0)  # causal stays causal
    for kind, shape in (("encoder_self", (2, 4, 5, 5)), ("decoder_self", (2, 4, steps, steps)),
                        ("cross", (2, 4, steps, 5))):
        assert data[f"value_norms_{kind}"].shape == shape
        assert np.all((data[f"value_norms_{kind}"] > 0) == (data[kind] > 0))  # zero weight, zero contribution


def test_an_unknown_model_is_a_clear_error(tmp_path, capsys):
    assert main(["no-such-model", "hello", "--out", str(tmp_path / "x.npz")]) == 2
    assert "unknown model 'no-such-model'" in capsys.readouterr().err


@pytest.mark.parametrize("model, kind, layer, head", [("all-MiniLM-L6-v2", "encoder_self", 3, 7),
                                                      ("transformer_en-fr", "cross", 1, 2)])
def test_the_app_shows_the_same_numbers(tmp_path, model, kind, layer, head):
    sentence = COREFERENCE if model.startswith("all") else "the small cat eats the red apple"
    out = tmp_path / "maps.npz"
    assert main([model, sentence, "--out", str(out)]) == 0
    data = np.load(out)
    at = open_from_link("attention", {"model": model, "sentence": sentence, "kind": kind, "layer": str(layer),
                                      "head": str(head)})[0]
    spec = json.loads(at.get("plotly_chart")[0].proto.spec)
    shown = trace_values(spec["data"][0]["z"])
    np.testing.assert_allclose(np.nan_to_num(shown), data[kind][layer, head], atol=1e-6)


def test_smollm2_gives_its_causal_maps_equal_to_the_models_own(tmp_path, capsys):
    from model.llama import load_smollm2

    text = "The cat sat on the mat. The cat sat on the"
    out = tmp_path / "maps.npz"
    assert main(["SmolLM2-135M-Instruct", text, "--out", str(out)]) == 0
    data = np.load(out)
    assert sorted(data.files) == ["decoder_self", "rollout_decoder_self", "tokens", "value_norms_decoder_self"]
    tokens = list(data["tokens"])
    assert tokens[:3] == ["The", " cat", " sat"] and len(tokens) == 12
    maps = data["decoder_self"]
    assert maps.dtype == np.float32 and maps.shape == (30, 9, 12, 12)
    assert np.allclose(maps.sum(-1), 1, atol=1e-5) and np.allclose(np.triu(maps, 1), 0)  # causal rows
    loaded = load_smollm2()
    expected = loaded.run(loaded.encode(text)).weights[:, 0].numpy()
    assert np.allclose(maps, expected, atol=1e-6)
    assert data["rollout_decoder_self"].shape == (30, 12, 12)
    assert "decoder_self (30, 9, 12, 12)" in capsys.readouterr().out
    assert main(["SmolLM2-135M-Instruct", "word " * 600, "--out", str(out)]) == 2  # past 512 tokens: refused


def test_smollm2_flow_gives_each_heads_and_mlps_share_of_the_last_positions_output(tmp_path, capsys):
    from model.explain.flow import information_flow
    from model.families import open_model

    text = "The capital of France is"
    out = tmp_path / "flow.npz"
    assert main(["SmolLM2-135M-Instruct", text, "--out", str(out), "--flow"]) == 0
    data = np.load(out)
    assert {"flow_head", "flow_mlp", "value_norms_decoder_self"} <= set(data.files)
    heads, mlps = data["flow_head"], data["flow_mlp"]
    assert heads.dtype == mlps.dtype == np.float32 and heads.shape == (30, 9, 5) and mlps.shape == (30, 5)
    assert "flow_head (30, 9, 5)" in capsys.readouterr().out
    assert (heads >= 0).all() and heads.sum((1, 2)).max() <= 1 and ((mlps >= 0) & (mlps <= 1)).all()
    flow = information_flow(open_model("SmolLM2-135M-Instruct"), text)
    np.testing.assert_allclose(heads, flow.head_flow(), atol=1e-6)
    np.testing.assert_allclose(mlps, flow.mlp_flow(), atol=1e-6)
    # the last block writes into the last position directly: its heads' shares are the value-weighted norms of the
    # same file (Kobayashi et al. 2020, another code path: one forward with every map) over one common total
    ratio = heads[-1] / data["value_norms_decoder_self"][-1, :, -1, :]  # (h, T)
    np.testing.assert_allclose(ratio, ratio.flat[0], rtol=1e-3)
    assert main(["transformer_en-fr", "i am a student", "--out", str(out), "--flow"]) == 2  # no residual stream
    with pytest.raises(SystemExit):
        main(["--help"])
    assert "flow_head (L, h, T)" in capsys.readouterr().out

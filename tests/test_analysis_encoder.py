"""Rollout, value-weighted norms, head importance and pattern labels on the real encoder (all-MiniLM-L6-v2), checked
against loops over heads and against transformers' BertModel; the Explain view of the encoder and of a transformers
model (GPT-2: raw weights and rollout only) in AppTest."""
import json
import zipfile

import numpy as np
import pytest
import torch

import ui.language  # noqa: F401  (installs the session language provider)
from i18n import translate
from model.explain.explanations import encoder_explanations
from model.explain.fixed_sets import ENCODER_SENTENCES
from model.explain.importance import encoder_importance, encoder_pruning_curve
from model.explain.patterns import PATTERNS, encoder_head_labels
from model.explain.value_norms import special_token_survival
from model.bert import MINILM_NAME, load_minilm, minilm_zip_path
from model.local_models import ENV_VAR
from tests.app_links import chart_specs, chart_titles, open_from_link, trace_array
from tests.tiny_models import build_models_folder

COREFERENCE = "The animal didn't cross the street because it was too tired."


@pytest.fixture(scope="module")
def minilm():
    return load_minilm()


@pytest.fixture(scope="module")
def explained(minilm):
    encoded = minilm.encode(COREFERENCE)
    return encoded, encoder_explanations(minilm, encoded)


def test_rollout_matches_a_loop_over_layers_and_rows(explained):
    _, arrays = explained
    weights, rollout = arrays["encoder_self"], arrays["rollout_encoder_self"]  # (L, h, T, T), (L, T, T)
    layers, heads, length, _ = weights.shape
    expected = np.eye(length)
    for layer in range(layers):
        mixed = np.zeros((length, length))
        for i in range(length):
            for j in range(length):
                mixed[i, j] = 0.5 * sum(weights[layer, h, i, j] for h in range(heads)) / heads + 0.5 * (i == j)
        expected = mixed @ expected
        np.testing.assert_allclose(rollout[layer], expected, atol=1e-6)
    np.testing.assert_allclose(rollout.sum(-1), 1.0, atol=1e-5)


def test_norms_match_a_loop_over_heads_on_the_layer_inputs(minilm, explained):
    """The loop reads x_j from the encoder's hidden states (not the capture hooks) and slices W_V, W_O per head."""
    encoded, arrays = explained
    out = minilm.run(encoded)
    d, heads = minilm.config.hidden_size, minilm.config.num_heads
    d_k = d // heads
    for layer in (0, 3, 5):
        x = out.hidden_states[layer][0]  # (T, d): the input of layer `layer`'s attention
        w_v, b_v = minilm.encoder.layers[layer].self_attn.projection("v")
        w_o, _ = minilm.encoder.layers[layer].self_attn.projection("o")
        for h in (0, 7, 11):
            cols = slice(h * d_k, (h + 1) * d_k)
            f = (x @ w_v[cols].T + b_v[cols]) @ w_o[:, cols].T  # (T, d): f_h(x_j) for every key j
            alpha = out.weights[layer, 0, h]  # (T, T)
            for i in (0, 4, len(encoded.tokens) - 1):
                for j in range(len(encoded.tokens)):
                    expected = torch.linalg.vector_norm(alpha[i, j] * f[j]).item()
                    assert arrays["value_norms_encoder_self"][layer, h, i, j] == pytest.approx(expected, rel=1e-4,
                                                                                              abs=1e-6)


@pytest.mark.slow
def test_norms_match_the_formula_on_transformers_bertmodel(explained, tmp_path_factory):
    from transformers import BertModel

    folder = tmp_path_factory.mktemp("minilm")
    with zipfile.ZipFile(minilm_zip_path()) as archive:
        archive.extractall(folder)
    reference = BertModel.from_pretrained(str(folder), attn_implementation="eager", local_files_only=True).eval()
    encoded, arrays = explained
    with torch.no_grad():
        out = reference(torch.tensor([encoded.ids]), token_type_ids=torch.tensor([encoded.token_type_ids]),
                        output_hidden_states=True, output_attentions=True)
    heads = reference.config.num_attention_heads
    d_k = reference.config.hidden_size // heads
    for layer, block in enumerate(reference.encoder.layer):
        x = out.hidden_states[layer][0]  # (T, d): what entered layer `layer`'s attention
        value, dense = block.attention.self.value, block.attention.output.dense
        for h in range(heads):
            cols = slice(h * d_k, (h + 1) * d_k)
            f = (x @ value.weight[cols].T + value.bias[cols]) @ dense.weight[:, cols].T  # (T, d)
            norms = out.attentions[layer][0, h] * torch.linalg.vector_norm(f, dim=-1)[None, :]  # (T, T)
            np.testing.assert_allclose(arrays["value_norms_encoder_self"][layer, h], norms.detach().numpy(),
                                       rtol=1e-3, atol=1e-5)


def test_special_token_weight_mostly_does_not_survive_in_the_norms(explained):
    """Kobayashi et al. 2020 §5.1 on BERT: much of the weight on [CLS]/[SEP] moves little."""
    encoded, arrays = explained
    survival = special_token_survival(arrays["encoder_self"], arrays["value_norms_encoder_self"],
                                               encoded.tokens)
    heavy = survival["weight_share"] > 0.5  # heads that put most of their weight on [CLS]/[SEP]
    assert heavy.sum() >= 10
    assert np.nanmedian(survival["survival"][heavy]) < 0.5


@pytest.mark.slow
def test_importance_on_the_encoder_is_a_6_by_12_table_its_gradient_estimate_agrees(minilm):
    sentences = ENCODER_SENTENCES[:8]
    importance = encoder_importance(minilm, sentences)
    assert importance.change.shape == importance.gradient.shape == (6, 12)
    assert (importance.change >= -1e-6).all() and importance.change.max() > 1e-3
    assert importance.spearman() > 0.6  # the second-order estimate ranks heads like switching them off
    least, most = importance.order()[0], importance.order()[-1]
    curve = encoder_pruning_curve(minilm, importance, [0, 1, 72], sentences)
    assert curve[0]["similarity"] == pytest.approx(1.0, abs=1e-5)
    assert curve[1]["similarity"] == pytest.approx(1 - importance.change[least], abs=1e-5)
    assert importance.change[most] > importance.change[least]
    assert curve[2]["similarity"] < curve[1]["similarity"]


def test_encoder_pattern_labels_cover_every_head(minilm):
    scores = encoder_head_labels(minilm, ENCODER_SENTENCES[:6])
    assert scores.labels.shape == (6, 12) and set(scores.labels.ravel()) <= set(PATTERNS)
    assert (scores.labels == "sink").sum() >= 10  # MiniLM's middle layers sit on [CLS]/[SEP]


@pytest.mark.slow
def test_the_explain_view_of_the_encoder_shows_norms_importance_and_patterns():
    at, notice = open_from_link("attention", {"sentence": COREFERENCE, "view": "Explain", "explain_mode": "norms"},
                                model_id=MINILM_NAME, bert_hide_special=True, attn_layer=0, attn_head=0)
    assert not notice and not at.exception
    titles = chart_titles(at)
    assert titles[:2] == ["Encoder self-attention · layer 1 · head 1",
                          "Encoder self-attention · layer 1 · head 1 · ‖α·f(x)‖"]
    assert "[CLS]/[SEP]" in titles[2]
    assert translate("en", "explain_encoder.raw_tokens") in [c.value for c in at.caption]
    spec = json.loads(at.get("plotly_chart")[1].proto.spec)
    assert "[CLS]" in spec["data"][0]["x"] or "[CLS]" in str(spec["layout"]["xaxis"])  # raw tokens, not hidden
    at.button_group(key="explain_mode").set_value("rollout").run()
    assert not at.exception and chart_titles(at)[1] == "Encoder self-attention · rollout after layer 1"
    at.button_group(key="explain_part").set_value("importance").run()
    assert not at.exception
    assert [m.value for m in at.metric][0] == str(len(ENCODER_SENTENCES))
    importance = json.loads(at.get("plotly_chart")[0].proto.spec)
    assert importance["data"][0]["y"] == [f"Encoder self L{l}" for l in range(1, 7)]
    assert len(at.dataframe[0].value) == 72
    at.button_group(key="explain_part").set_value("patterns").run()
    assert not at.exception and chart_titles(at)[0].endswith(f"over {len(ENCODER_SENTENCES)} fixed English "
                                                        "sentences")


@pytest.fixture()
def configured(tmp_path_factory, monkeypatch):
    folder = build_models_folder(tmp_path_factory.mktemp("hf-models"))
    monkeypatch.setenv(ENV_VAR, str(folder))
    return folder


def test_a_transformers_model_gets_raw_weights_and_rollout_and_says_why_not_more(configured):
    at, _ = open_from_link("attention", {"sentence": "the tired cat sat on the mat", "view": "Explain",
                                         "explain_mode": "rollout"},
                           model_id="tiny-gpt2", attn_layer=0, attn_head=0)
    assert not at.exception
    assert translate("en", "explain_encoder.foreign") in [c.value for c in at.caption]
    assert chart_titles(at)[1] == "Decoder masked self-attention · rollout after layer 1"
    at.button_group(key="explain_mode").set_value("norms").run()
    assert not at.exception and translate("en", "explain_encoder.foreign_norms") in [i.value for i in at.info]
    at.button_group(key="explain_part").set_value("importance").run()
    assert not at.exception and translate("en", "explain_encoder.foreign_part") in [i.value for i in at.info]


def test_the_all_heads_grid_names_each_heads_pattern():
    at, _ = open_from_link("attention", {"sentence": COREFERENCE, "view": "All heads"}, model_id=MINILM_NAME)
    assert not at.exception
    grid = json.loads(at.get("plotly_chart")[0].proto.spec)
    titles = [" ".join(a["text"].replace("<br>", " ").split()) for a in grid["layout"]["annotations"]
              if a["text"].startswith("L")]  # a narrow thumbnail's title may be wrapped onto two lines
    assert len(titles) == 72 and all(" · " in t for t in titles)
    labels = encoder_head_labels(load_minilm()).labels
    short = {p: translate("en", f"explain_encoder.short.{p}") for p in PATTERNS}
    assert titles[3 * 12 + 1] == f"L4 H2 · {short[labels[3, 1]]}"
    assert translate("en", "explain_encoder.grid_labels") in [c.value for c in at.caption]


@pytest.mark.slow
def test_every_hostile_input_gives_norms_or_a_message_on_the_encoder():
    """Empty, huge (cut to the model's limit), HTML, emoji, other scripts, control characters: the encoder's
    Explain view draws finite norms and a survival ratio, or the page's own message says why not."""
    from tests.bad_inputs import load_bad_inputs

    drawn_count = 0
    for text in load_bad_inputs():
        at, _ = open_from_link("attention", {"view": "Explain", "explain_mode": "norms"}, model_id=MINILM_NAME,
                               sentence=text)
        assert not at.exception, text
        charts = chart_specs(at)
        if charts:
            drawn_count += 1
            norms = trace_array(charts[1]["data"][0]["z"])  # (T, T) over the model's tokens
            assert norms.ndim == 2 and norms.shape[0] == norms.shape[1] and np.isfinite(norms).all(), text
            survival = at.metric[2].value
            assert survival == "–" or np.isfinite(float(survival)), (text, survival)
        else:
            assert at.info or at.warning or at.error, text
    assert drawn_count >= len(load_bad_inputs()) // 2

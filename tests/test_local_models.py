"""A models folder of tiny random-weight Hugging Face models (tests/tiny_models.py), opened offline through the same
code path as the app: listing with reasons, BERT in our encoder, GPT-2 and BART through transformers, the attention
page for each, the sha256 pin, and transformers kept off the start-up path."""
import json
import subprocess
import sys

import numpy as np
import pytest

from i18n import translate
from model.local_models import ENV_VAR, list_local_models, open_local_model
from model.families import adapt, open_model
from model.capabilities import ABLATION, TRANSLATION
from tests.app_links import go_to, open_from_link
from tests.tiny_models import build_models_folder

SENTENCE = "the tired cat sat on the mat"


@pytest.fixture(scope="module")
def models_folder(tmp_path_factory):
    return build_models_folder(tmp_path_factory.mktemp("hf-models"))


@pytest.fixture()
def configured(models_folder, monkeypatch):
    monkeypatch.setenv(ENV_VAR, str(models_folder))
    return models_folder


def _entry(folder, name):
    return next(e for e in list_local_models(folder) if e.name == name)


def test_every_entry_is_listed_usable_or_with_its_reason(models_folder):
    entries = {e.name: e for e in list_local_models(models_folder)}
    assert [n for n, e in entries.items() if e.usable] == ["pinned-wrong", "tiny-bart", "tiny-bert", "tiny-gpt2"]
    assert "truncated" in entries["truncated"].reason
    assert "pickle" in entries["pickle-only"].reason and "never loaded" in entries["pickle-only"].reason
    assert "not supported" in entries["unsupported"].reason and "mamba-9000" in entries["unsupported"].reason
    assert entries["no-config"].reason == "no config.json"
    assert entries["tiny-bert"].runs_in_our_encoder and not entries["tiny-gpt2"].runs_in_our_encoder


def test_a_link_out_of_the_folder_is_refused(models_folder, tmp_path):
    folder = tmp_path / "models"
    folder.mkdir()
    (folder / "escape").symlink_to(models_folder / "tiny-bert", target_is_directory=True)
    assert "outside the models folder" in list_local_models(folder)[0].reason


def test_a_file_linking_out_of_the_folder_is_refused_before_it_is_read(models_folder, tmp_path):
    import shutil

    folder = tmp_path / "models"
    shutil.copytree(models_folder / "tiny-bert", folder / "sneaky")
    (folder / "sneaky" / "config.json").unlink()
    secret = tmp_path / "secret.json"
    secret.write_text('{"model_type": "bert"}')
    (folder / "sneaky" / "config.json").symlink_to(secret)
    entry = list_local_models(folder)[0]
    assert not entry.usable and "config.json link(s) outside the models folder" in entry.reason
    assert entry.model_type is None  # the linked file was not read


def test_the_folder_comes_from_the_environment_or_the_config_file(monkeypatch, tmp_path):
    import model.local_models as local_models

    config = tmp_path / ".streamlit" / "attention_lab.toml"
    config.parent.mkdir()
    config.write_text('[models]\nfolder = "hf-models"\n')
    monkeypatch.setattr(local_models, "CONFIG_FILE", config)
    monkeypatch.delenv(ENV_VAR, raising=False)
    assert local_models.models_folder() == tmp_path / "hf-models"  # relative to the app's folder
    monkeypatch.setenv(ENV_VAR, "/srv/models")
    assert local_models.models_folder() == local_models.Path("/srv/models")  # the environment wins
    config.unlink()
    monkeypatch.delenv(ENV_VAR)
    assert local_models.models_folder() is None and list_local_models() == []


def test_a_sha256_pin_that_does_not_match_is_refused(models_folder):
    from model.checkpoint import CheckpointError

    with pytest.raises(CheckpointError, match="sha256 does not match"):
        open_local_model(_entry(models_folder, "pinned-wrong"))


def test_a_bert_folder_runs_in_our_encoder_and_matches_transformers(models_folder):
    import torch
    from transformers import BertModel

    model = open_local_model(_entry(models_folder, "tiny-bert"))
    analysed = adapt("tiny-bert", model).analyse(SENTENCE)
    assert analysed.can(ABLATION) and analysed.input_tokens[0] == "[CLS]"
    reference = BertModel.from_pretrained(str(models_folder / "tiny-bert"), attn_implementation="eager").eval()
    ids = torch.tensor([model.encode(SENTENCE).ids])
    with torch.no_grad():
        expected = reference(ids, output_attentions=True).attentions
    np.testing.assert_allclose(analysed.maps["encoder_self"].weights, torch.stack(expected)[:, 0].numpy(), atol=1e-5)


def test_gpt2_gives_causal_self_attention_through_transformers(models_folder):
    analysed = adapt("tiny-gpt2", open_local_model(_entry(models_folder, "tiny-gpt2"))).analyse(SENTENCE)
    assert analysed.kinds == ["decoder_self"] and not analysed.can(ABLATION) and not analysed.can(TRANSLATION)
    maps = analysed.maps["decoder_self"]
    assert maps.weights.shape == (2, 2, 7, 7) and maps.query_tokens == SENTENCE.split()
    assert np.allclose(maps.weights.sum(-1), 1, atol=1e-5)
    assert maps.masked[0, 1] and not np.triu(maps.weights, 1).any()  # nothing attends to a later token


def test_bart_generates_and_gives_cross_attention_per_generated_token(models_folder):
    analysed = adapt("tiny-bart", open_local_model(_entry(models_folder, "tiny-bart"))).analyse(SENTENCE)
    assert analysed.kinds == ["encoder_self", "decoder_self", "cross"] and analysed.can(TRANSLATION)
    source = analysed.maps["encoder_self"].key_tokens
    cross = analysed.maps["cross"]
    assert source[0] == "<s>" and source[-1] == "</s>" and len(analysed.output_tokens) >= 3
    assert cross.weights.shape == (1, 4, len(cross.query_tokens), len(source)) and cross.key_tokens == source
    assert len(cross.query_tokens) >= len(analysed.output_tokens)  # one row per step that wrote a token
    assert np.allclose(cross.weights.sum(-1), 1, atol=1e-5)


@pytest.mark.parametrize("name", ["tiny-bert", "tiny-gpt2", "tiny-bart"])
def test_the_layout_known_before_analysis_is_the_analysis_own(models_folder, name):
    """Links and pickers offer the kinds, layers and heads of the model's layout; an analysis must have exactly them."""
    lab = open_model(name, folder=models_folder)  # as the app and `python -m model.inspect` open it
    analysed = lab.analyse(SENTENCE)
    assert lab.layout == {kind: maps.weights.shape[:2] for kind, maps in analysed.maps.items()}


def test_the_pickers_follow_the_chosen_kind_when_the_stacks_differ(configured):
    at = open_from_link("attention", model_id="tiny-bart", sentence=SENTENCE, attn_kind="encoder_self")[0]
    assert at.selectbox(key="attn_layer").options == ["1", "2"] and at.selectbox(key="attn_head").options == ["1", "2"]
    at.selectbox(key="attn_head").set_value(1).run()
    at.selectbox(key="attn_kind").set_value("cross").run()  # a 1-layer, 4-head decoder
    assert not at.exception
    assert at.selectbox(key="attn_layer").options == ["1"]
    assert at.selectbox(key="attn_head").options == ["1", "2", "3", "4"] and at.selectbox(key="attn_head").value == 1
    title = json.loads(at.get("plotly_chart")[0].proto.spec)["layout"]["title"]["text"]
    assert title == translate("en", "attention.head_title", layer=1, head=2, kind=translate("en", "attention.kinds.cross"))


def test_the_attention_page_opens_a_gpt2_with_ablation_and_rescale_hidden(configured):
    at = open_from_link("attention", model_id="tiny-gpt2", sentence=SENTENCE)[0]
    assert not at.exception and not at.error
    assert "Ablation" not in at.button_group(key="attn_view").options
    assert "Rescale" not in at.button_group(key="attn_view").options
    assert translate("en", "bert.views_hidden") in [c.value for c in at.caption]
    assert translate("en", "bert.decoder_only") in [m.value for m in at.markdown]  # not "encoder self-attention"
    spec = json.loads(at.get("plotly_chart")[0].proto.spec)
    assert spec["layout"]["title"]["text"] == "Decoder masked self-attention · layer 1 · head 1"
    at.session_state["attn_view"] = "All heads"
    at.run()
    grid = json.loads(at.get("plotly_chart")[0].proto.spec)
    heatmaps = [trace for trace in grid["data"] if trace["type"] == "heatmap"]  # one heatmap, the heads' maps tiled
    assert not at.exception and len(heatmaps) == 1
    layout = grid["layout"]  # a row of thumbnails a layer, a column a head
    assert (len(layout["yaxis"]["ticktext"]), len(layout["xaxis"]["ticktext"])) == (2, 2)  # 2 layers × 2 heads


def test_the_attention_page_shows_a_bart_translation_and_its_cross_attention(configured):
    at = open_from_link("attention", model_id="tiny-bart", sentence=SENTENCE, attn_kind="cross")[0]
    assert not at.exception and not at.error
    kinds = at.selectbox(key="attn_kind")
    assert kinds.options == [translate("en", f"attention.kinds.{k}") for k in ("encoder_self", "decoder_self", "cross")]
    assert translate("en", "attention.translation") in [m.value for m in at.markdown]
    spec = json.loads(at.get("plotly_chart")[0].proto.spec)
    assert spec["layout"]["title"]["text"] == translate("en", "attention.head_title", layer=1, head=1,
                                                        kind=translate("en", "attention.kinds.cross"))
    assert spec["layout"]["yaxis"]["ticktext"][0] == "&lt;/s&gt;"  # BART's decoder starts from </s>
    assert any("transformers library" in i.value for i in go_to(at, "decoding").info)


def test_the_sidebar_lists_usable_models_and_says_why_others_are_not(configured):
    at = open_from_link("home")[0]
    options = at.selectbox(key="model_id").options
    assert {"tiny-bert", "tiny-gpt2", "tiny-bart", "all-MiniLM-L6-v2"} <= set(options)
    assert "truncated" not in options and "pickle-only" not in options
    reasons = " ".join(t.value for t in at.sidebar.text)
    assert "truncated: " in reasons and "pickle-only: " in reasons and "unsupported: " in reasons


def test_a_model_refused_on_opening_falls_back_with_a_message(configured):
    at = open_from_link("attention", model_id="pinned-wrong", sentence=SENTENCE)[0]
    assert not at.exception
    assert any("sha256 does not match" in e.value for e in at.sidebar.error)
    assert at.selectbox(key="model_id").value == "transformer_en-fr"


@pytest.mark.slow  # over 10 s on the shared 2-core box
def test_start_up_modules_do_not_import_transformers(models_folder):
    code = ("import sys; sys.path.insert(0, '.'); import ui.share, ui.sidebar, ui.state, ui.attention.view, "
            "model.sources, model.local_models, model.inspect; from pathlib import Path; "
            f"model.local_models.list_local_models(Path({str(models_folder)!r})); "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('transformers', 'sentence_transformers')))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip().splitlines()[-1] == "[]"

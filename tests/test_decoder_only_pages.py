"""The decoder-only translator on the pages (AppTest): its one causal map on the attention page, with the French rows'
block over the English words framed; its views; the decoding page's reason; the train page offering it."""
import json

from i18n import translate
from model.families import open_model
from model.sources import source_block_shares
from tests.app_links import chart_titles, link_notices, open_page

MODEL = "decoder-only_en-fr"


def test_the_attention_page_shows_its_one_causal_map_with_the_english_block_framed():
    at = open_page("attention", model_id=MODEL, sentence="i am a student")
    assert any(m.value.endswith(" **je suis étudiant**") for m in at.markdown)
    assert translate("en", "bert.decoder_only") in [m.value for m in at.markdown]  # one kind: said, not offered
    first = at.get("plotly_chart")[0].proto.spec
    head = json.loads(first)
    ticks = head["layout"]["yaxis"]["ticktext"]
    assert ticks == ["&lt;bos&gt;", "i", "am", "a", "student", "⟶", "je", "suis", "étudiant"]  # escaped HTML
    (frame,) = head["layout"]["shapes"]  # rows from ⟶ (index 5) on, columns of the English words (1-4)
    assert (frame["x0"], frame["x1"], frame["y0"], frame["y1"]) == (0.5, 4.5, 4.5, 8.5)
    captions = " ".join(c.value for c in at.caption)
    assert "causal mask" in captions and "framed block" in captions
    # it opens on the head whose French rows read the English words most (where cross-attention went)
    shares = source_block_shares(open_model(MODEL).analyse("i am a student").maps["decoder_self"])
    shown = (at.session_state["attn_layer"], at.session_state["attn_head"])
    assert shares[shown] == shares.max() and f"{shares.max():.0%} of those rows" in captions
    at.selectbox(key="attn_layer").select_index((shown[0] + 1) % 4).run()  # another head's map
    assert not at.exception and at.get("plotly_chart")[0].proto.spec != first


def test_its_views_work_through_the_adapter():
    at = open_page("attention", model_id=MODEL, sentence="the small cat eats the red apple")
    at.session_state["attn_view"] = "All heads"
    at.run()
    assert not at.exception and any("every layer" in title for title in chart_titles(at))
    at.button_group(key="focus_layer_3").set_value(1).run()  # a thumbnail of the 4 × 4 grid opens that head
    assert at.session_state["attn_layer"] == 3 and at.session_state["attn_head"] == 1
    at.session_state["attn_view"] = "Ablation"
    at.run()
    before = [m.value for m in at.metric]
    at.multiselect(key="ablate_heads").set_value([("decoder_self", layer, head) for layer in range(4)
                                                  for head in range(4)]).run()
    assert not at.exception and [m.value for m in at.metric][:2] != before[:2]
    for view in ("Compare", "Statistics", "Rescale", "Explain"):
        at.session_state["attn_view"] = view
        at.run()
        assert not at.exception and not at.error, (view, [e.value for e in at.error])


def test_the_decoding_page_says_why_it_has_no_steps_and_the_train_page_offers_it():
    at = open_page("decoding", model_id=MODEL, sentence="i am a student")
    assert "translates as one causal sequence" in link_notices(at)
    at = open_page("train")
    assert translate("en", "models.family_decoder_only") in at.selectbox(key="train_family").options
    at.selectbox(key="train_family").set_value("decoder-only").run()  # its time estimate: a probe of this model
    assert not at.exception and not at.error


def test_a_training_snapshot_of_it_is_its_causal_map():
    """The train page's snapshots during training: the whole sequence on both axes (it has no cross-attention)."""
    import torch

    from model.checkpoint import build_model
    from model.config import DecoderOnlyConfig
    from model.data import make_dataset
    from runtime.training_jobs import _snapshot

    data = make_dataset("en-fr", train_size=100)
    torch.manual_seed(0)
    model = build_model(DecoderOnlyConfig(len(data.src_vocab), len(data.tgt_vocab), num_layers=2)).train()
    snap = _snapshot(model, data, "en-fr", "i am a student", 10, "decoder-only")
    assert model.training  # handed back to training as it came
    assert snap.query_tokens[:6] == ["<bos>", "i", "am", "a", "student", "⟶"]
    assert snap.source_tokens == snap.query_tokens and snap.query_tokens[6:] == snap.output_tokens
    assert snap.attention.shape == (2, 4, len(snap.query_tokens), len(snap.query_tokens))

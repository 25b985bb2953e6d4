"""The attention page's Explain view (ui/attention/explain.py) in AppTest, restored from links, and its charts."""
import numpy as np
import pytest

import ui.language  # noqa: F401  (installs the session language provider)
from tests.app_links import chart_figures, chart_titles, open_from_link, trace_array
from ui.session import LabSession, TrainingState
from viz.analysis import pattern_grid, pruning_curve_chart
from ui.language import words_for
from viz.chart_data import chart_data
from viz.export import chart_csv
from viz.summary import chart_summary

SENTENCE = "i am not a student because my cat is big"


def _param(at, name):
    value = at.query_params.get(name)
    return value[-1] if isinstance(value, list) else value


def test_raw_rollout_and_norms_of_the_same_head_one_click_apart():
    at, notice = open_from_link("attention", {"sentence": SENTENCE, "view": "Explain", "kind": "encoder_self",
                                              "layer": "1", "head": "2", "explain_mode": "norms"})
    assert not notice
    titles = chart_titles(at)
    assert titles[0] == "Encoder self-attention · layer 2 · head 3"
    assert titles[1] == "Encoder self-attention · layer 2 · head 3 · ‖α·f(x)‖"
    raw, norms = (trace_array(fig.data[0].z) for fig in chart_figures(at)[:2])
    assert raw.shape == norms.shape == (11, 11)  # 10 words + <eos>
    assert not np.allclose(raw / raw.sum(), norms / norms.sum())  # the norms re-weight the keys
    weight_share, norm_share, survival = (m.value for m in at.metric[:3])
    assert float(survival) == pytest.approx(float(norm_share.rstrip("%")) / float(weight_share.rstrip("%")), rel=0.02)

    at.button_group(key="explain_mode").set_value("rollout").run()
    assert not at.exception
    titles = chart_titles(at)
    assert titles[:2] == ["Encoder self-attention · layer 2 · mean of the heads",
                          "Encoder self-attention · rollout after layer 2"]
    rollout = trace_array(chart_figures(at)[1].data[0].z)
    np.testing.assert_allclose(rollout.sum(1), 1.0, atol=1e-6)  # rows of a rollout add up to 1
    assert _param(at, "explain_mode") == "rollout" and _param(at, "view") == "Explain"

    at.selectbox(key="attn_kind").set_value("cross").run()
    assert any("self-attention only" in i.value for i in at.info)
    at.button_group(key="explain_mode").set_value("raw").run()
    assert chart_titles(at)[0] == "Encoder–decoder (cross) attention · layer 2 · head 3"
    assert not at.exception


def test_pattern_filter_lists_the_matching_heads_in_korean():
    at, _ = open_from_link("attention", {"sentence": SENTENCE, "view": "Explain", "explain": "patterns",
                                         "pattern": "sink", "lang": "ko"})
    assert at.selectbox(key="explain_pattern").value == "sink"
    labels = np.asarray(chart_figures(at)[0].data[0].text)
    assert labels.shape == (6, 4)  # encoder self, decoder self, cross × 2 layers; 4 heads
    assert {"특수 토큰 싱크", "넓음"} & set(labels.ravel())
    matches = [m.value for m in at.markdown if "헤드 **" in m.value]
    count = int((labels == "특수 토큰 싱크").sum())
    assert matches and f"**{count}**" in matches[0]
    assert _param(at, "pattern") == "sink" and _param(at, "explain") == "patterns"


def test_a_bad_explain_link_falls_back_with_a_notice():
    at, notice = open_from_link("attention", {"sentence": SENTENCE, "view": "Explain", "explain_mode": "<b>x</b>"})
    assert "explain_mode" in notice
    assert at.button_group(key="explain_mode").value == "raw"


@pytest.mark.slow
def test_importance_table_heatmap_and_curve_for_the_shipped_transformer():
    at, _ = open_from_link("attention", {"sentence": SENTENCE, "view": "Explain", "explain": "importance"})
    titles = chart_titles(at)
    assert titles == ["Head importance on 300 held-out sentences", "Switch off the k least important heads"]
    table = at.dataframe[0].value
    assert len(table) == 24 and list(table["rank"]) == list(range(1, 25))
    curve = chart_figures(at)[1].data[0]
    assert curve.x[0] == 0 and curve.x[-1] == 24
    assert curve.y[0] > 0.9 and curve.y[-1] < 0.1  # all heads on translates; all off does not


def test_pattern_grid_greys_the_heads_that_are_not_asked_for():
    labels = np.array([["previous", "sink"], ["broad", "previous"]])
    fig = pattern_grid(labels, ["Encoder self L1", "Encoder self L2"], "t", shown="previous",
                       words=words_for("explain"))
    colours = {c for _, c in fig.data[0].colorscale}
    assert "#e5e5e5" in colours and "#1f77b4" in colours and "#d62728" not in colours
    assert pattern_grid(labels, ["a", "b"], "t",
                        words=words_for("explain")).data[0].text.tolist() == [["previous token", "special-token sink"],
                                                                           ["broad", "previous token"]]


def test_pattern_grids_csv_and_words_name_each_heads_pattern():
    labels = np.array([["previous", "sink"] * 6, ["broad", "previous"] * 6])  # 12 heads: names on two lines in cells
    fig = pattern_grid(labels, ["Encoder self L1", "Encoder self L2"], "t", shown="sink", words=words_for("explain"))
    csv = chart_csv(chart_data(fig)).decode("utf-8-sig").splitlines()
    assert csv[1].startswith("Encoder self L1,previous token,special-token sink,") and "<br>" not in "".join(csv)
    assert "special-token sink: Encoder self L1 H2; Encoder self L1 H4" in \
        chart_summary(chart_data(fig), words=words_for("display"))


def test_pruning_curve_plots_every_k():
    fig = pruning_curve_chart([{"k": 0, "exact_match": 0.97, "loss": 0.01}, {"k": 12, "exact_match": 0.5,
                                                                            "loss": 1.0}], 24,
                                                                            words=words_for("explain"))
    assert list(fig.data[0].x) == [0, 12] and list(fig.data[0].y) == [0.97, 0.5]


def test_every_hostile_input_gives_a_view_or_a_message_in_the_explain_view():
    """Single-token, unknown-word, HTML, emoji and control-character sentences: norms and rollout still draw
    (a one-token sentence has 1 × 1 maps), or the page's own message explains why nothing is drawn."""
    from tests.bad_inputs import load_bad_inputs

    explained = 0
    for text in load_bad_inputs():
        at, _ = open_from_link("attention", {"view": "Explain", "explain_mode": "norms"}, sentence=text)
        assert not at.exception, text
        drawn = chart_figures(at)
        if drawn:
            explained += 1
            survival = at.metric[2].value
            assert survival == "–" or np.isfinite(float(survival)), (text, survival)
            assert all(np.isfinite(trace_array(fig.data[0].z)[~np.isnan(trace_array(fig.data[0].z))]).all()
                       for fig in drawn[:2]), text
        else:
            assert at.info or at.warning, text
    assert explained >= len(load_bad_inputs()) // 2  # most inputs keep some known word and are explained


def test_presenter_mode_hides_the_captions_and_downloads_of_the_explain_view():
    query = {"sentence": SENTENCE, "view": "Explain", "explain_mode": "rollout", "kind": "encoder_self"}
    normal, _ = open_from_link("attention", query)
    assert any("Abnar & Zuidema" in c.value for c in normal.caption) and normal.get("download_button")
    shown, _ = open_from_link("attention", {**query, "presenter": "true"})
    assert not any("Abnar & Zuidema" in c.value for c in shown.caption)
    assert not shown.get("download_button")
    assert chart_titles(shown)[1].replace("<br>", " ") == "Encoder self-attention · rollout after layer 1"  # wrapped


def test_importance_of_a_users_own_model_waits_for_a_click():
    """Switching 24 heads off in turn is not started by merely opening the view for a model a student trained."""
    from pathlib import Path

    from model.checkpoint import load_checkpoint

    mine = load_checkpoint(Path(__file__).resolve().parents[1] / "assets" / "checkpoints" / "transformer_en-fr")
    at, _ = open_from_link("attention", {"view": "Explain", "explain": "importance"}, sentence=SENTENCE,
                           lab=LabSession(training=TrainingState(user_models={"my_transformer": mine})),
                           model_id="my_transformer")
    assert at.button(key="explain_importance_run")
    assert any("300 held-out sentences" in i.value for i in at.info)
    assert not chart_figures(at) and not at.dataframe


def test_the_norms_caption_names_the_special_tokens_of_the_model_on_screen():
    """all-MiniLM-L6-v2's keys have [CLS]/[SEP], not <eos>/<bos> (issue 22: the caption named the toy's tokens)."""
    at, _ = open_from_link("attention", {"sentence": "the cat sat on the mat", "view": "Explain",
                                         "explain_mode": "norms"}, model_id="all-MiniLM-L6-v2")
    caption = next(c.value for c in at.caption if "Kobayashi" in c.value)
    assert "[CLS]/[SEP]" in caption and "<eos>" not in caption and "<bos>" not in caption
    at, _ = open_from_link("attention", {"sentence": SENTENCE, "view": "Explain", "kind": "encoder_self",
                                         "explain_mode": "norms"})
    assert "attention to <eos> is mostly" in next(c.value for c in at.caption if "Kobayashi" in c.value)

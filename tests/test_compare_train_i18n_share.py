"""The comparison and train pages in Korean, from a shared link, with a bad link, and in presenter mode (AppTest)."""
import json
import pickle

import pytest
import torch

import ui.language
from i18n import translate
from model.train import TrainConfig
from tests.app_links import chart_titles, csv_chart_keys, lab_session_of, open_page, shipped_checkpoint_upload
from ui.session import LabSession, TrainingState
from runtime.training_jobs import start_job, wait
from viz.presentation import BASE_FONT


@pytest.fixture(scope="module")
def finished_job():
    """A tiny Transformer trained in a thread (no browser session: its messages are recorded as ids)."""
    job = start_job(TrainConfig.for_model(task="reverse", steps=50, eval_every=25, d_model=32, num_heads=2, d_ff=64), "1 2 3")
    wait(job, timeout=120)
    assert job.state == "finished" and job.snapshots
    return job


# --- seq2seq vs Transformer -------------------------------------------------------------------------------------

def test_compare_page_in_korean():
    at = open_page("compare", lang="ko", sentence="i am a student")
    assert at.title[0].value == translate("ko", "compare.title")
    assert any(m.value == translate("ko", "compare.intro") for m in at.markdown)
    assert translate("ko", "compare.head_average") in at.selectbox(key="cmp_model_head").options
    assert at.radio(key="cmp_metric").options == ["완전 일치율", "BLEU"]
    titles = chart_titles(at)
    assert translate("ko", "compare.cross_title_average", layer=1) in titles
    assert translate("ko", "compare.length_chart_title", metric="완전 일치율") in titles
    length_chart = json.loads(at.get("plotly_chart")[2].proto.spec)
    assert length_chart["layout"]["xaxis"]["title"]["text"] == "원문 문장 길이 (단어 수)"
    assert "단어" in length_chart["data"][0]["hovertemplate"] and "%{customdata}" in length_chart["data"][0][
        "hovertemplate"]
    assert [c.value for c in at.code][:3] == ["je suis étudiant"] * 3  # the model output is not translated


def test_compare_link_reproduces_head_metric_and_length():
    at = open_page("compare", {"sentence": "i am a student", "compare_layer": "1", "compare_head": "2",
                           "compare_metric": "bleu", "compare_len": "30"})
    assert not at.info  # nothing was wrong with the link
    assert at.selectbox(key="cmp_model_layer").value == 1 and at.selectbox(key="cmp_model_head").value == 2
    assert at.radio(key="cmp_metric").value == "bleu" and at.select_slider(key="cmp_length_slider").value == 30
    titles = chart_titles(at)
    assert "Transformer cross-attention, layer 2, head 3" in titles
    assert "BLEU against sentence length (test + long-sentence splits)" in titles
    assert len(at.code[3].value.split()) == 30  # the growing sentence has the linked length
    # The address bar keeps reproducing the view, and the CSV buttons follow the chart keys.
    assert {k: at.query_params[k] for k in ("compare_layer", "compare_head", "compare_metric", "compare_len")} == {
        "compare_layer": "2", "compare_head": "3", "compare_metric": "bleu", "compare_len": "30"}  # 1-based
    assert {"cmp_bahdanau", "cmp_transformer", "cmp_length"} <= set(csv_chart_keys(at))
    at.selectbox(key="cmp_model_head").set_value("average").run()
    assert at.query_params["compare_head"] == "average"
    assert "Transformer cross-attention, layer 2, average of the heads" in chart_titles(at)


def test_compare_garbage_link_falls_back_to_defaults_with_a_notice():
    at = open_page("compare", {"sentence": "i am a student", "compare_layer": "99", "compare_head": "-1",
                           "compare_metric": "<script>", "compare_len": "41"})  # 41: no held-out sentence has it
    notice = " ".join(i.value for i in at.info)
    assert notice.startswith(translate("en", "share.bad_link", names="")[:30])
    for name in ("compare_layer", "compare_head", "compare_metric", "compare_len"):
        assert name in notice
    assert at.selectbox(key="cmp_model_layer").value == 0 and at.selectbox(key="cmp_model_head").value == "average"
    assert at.radio(key="cmp_metric").value == "exact_match" and at.select_slider(key="cmp_length_slider").value == 20
    assert "Transformer cross-attention, layer 1, average of the heads" in chart_titles(at)


def test_compare_presenter_mode_hides_captions_and_downloads_and_enlarges_charts():
    normal = open_page("compare", sentence="i am a student")
    caption = translate("en", "compare.alignment_caption")
    assert any(c.value == caption for c in normal.caption)
    at = open_page("compare", {"presenter": "true"}, sentence="i am a student")
    assert not any(c.value == caption for c in at.caption)
    assert not any(c.value == translate("en", "compare.length_caption") for c in at.caption)
    assert not csv_chart_keys(at)
    charts = [json.loads(c.proto.spec) for c in at.get("plotly_chart")]
    assert len(charts) == 3 and all(c["layout"]["font"]["size"] == BASE_FONT for c in charts)


# --- train -------------------------------------------------------------------------------------------------------

def test_train_page_in_korean_translates_the_job_messages_when_drawing(finished_job):
    assert finished_job.message.startswith("Finished after 50 steps")  # the thread wrote English (no session)
    at = open_page("train", lang="ko", lab=LabSession(training=TrainingState(job=finished_job)))
    assert at.title[0].value == translate("ko", "train.title")
    assert any(m.value == translate("ko", "train.intro") for m in at.markdown)
    assert at.button[0].label == translate("ko", "train.start")
    assert at.selectbox(key="train_task").options[0] == translate("ko", "train.task_en_fr")
    success = " ".join(s.value for s in at.success)
    assert "50스텝 만에 학습을 마쳤습니다" in success and "사이드바의 모델 목록" in success and "Finished" not in success
    curves = json.loads(at.get("plotly_chart")[0].proto.spec)
    assert curves["layout"]["xaxis"]["title"]["text"] == "스텝"
    assert "학습 손실 (교차 엔트로피)" in [trace.get("name") for trace in curves["data"]]
    assert chart_titles(at)[1] == translate("ko", "train.snapshot_title", step=finished_job.snapshots[-1].step,
                                       layer=1, head=1)


def test_train_page_offers_curves_snapshot_and_checkpoint_downloads(finished_job):
    at = open_page("train", lab=LabSession(training=TrainingState(job=finished_job)))
    assert {"train_curves", "snapshot_heatmap", "dl_weights", "dl_json"} <= set(csv_chart_keys(at))
    assert "curves" not in csv_chart_keys(at)  # the old separate curves button is now the chart's own CSV


def test_train_failure_message_is_translated():
    job = start_job(TrainConfig.for_model(task="copy", steps=20, eval_every=0, d_model=32, num_heads=2, d_ff=64, lr=1e30),
                    "1 2 3")
    wait(job)
    assert job.state == "failed" and job.message_key == "job_nonfinite_loss"
    at = open_page("train", lang="ko", lab=LabSession(training=TrainingState(job=job)))
    error = " ".join(e.value for e in at.error)
    assert "유한하지 않은 값" in error and "마지막으로 정상이던 스텝의 가중치" in error and "finite" not in error


def test_train_link_opens_korean_presenter_view():
    at = open_page("train", {"lang": "ko", "presenter": "true"})
    assert not at.info and at.title[0].value == translate("ko", "train.title")
    assert at.button[0].label == translate("ko", "train.start") and not at.number_input
    assert at.query_params["lang"] == "ko" and at.query_params["presenter"] == "true"


def test_train_presenter_mode_hides_advanced_settings_downloads_and_upload(finished_job):
    normal = open_page("train")
    assert {"train_seed"} == {w.key for w in normal.number_input}
    assert "train_schedule" in {w.key for w in normal.selectbox} and normal.get("file_uploader")
    at = open_page("train", {"presenter": "true"}, lab=LabSession(training=TrainingState(job=finished_job)),
                   train_lr=3e-4, train_schedule="noam")
    assert not at.number_input and "train_schedule" not in {w.key for w in at.selectbox}
    assert "train_lr" not in {w.key for w in at.select_slider}
    assert not at.get("file_uploader") and not csv_chart_keys(at)  # no upload, no checkpoint or chart downloads
    assert at.selectbox(key="train_family").label == translate("en", "train.family")
    charts = [json.loads(c.proto.spec) for c in at.get("plotly_chart")]
    assert charts and all(c["layout"]["font"]["size"] == BASE_FONT for c in charts)
    # Start trains with the default schedule, whatever was set before presenter mode.
    lab_session_of(at).training.job = None
    at.selectbox(key="train_task").set_value("reverse")
    at.slider(key="train_steps").set_value(50)
    at.select_slider(key="train_width").set_value(32)
    at.button[0].click().run()
    job = lab_session_of(at).training.job
    job.stop_requested.set()
    wait(job)
    assert (job.config.schedule, job.config.lr, job.config.warmup, job.config.seed) == ("warmup-decay", 3e-3, 50, 0)


def test_upload_error_in_korean_wraps_the_english_detail(monkeypatch):
    # AppTest formats the other widgets' values with their format_func in this (session-less) thread, which reads
    # English by default; make this whole test Korean (the provider each run installs) so the Korean options match.
    monkeypatch.setattr(ui.language, "_session_language", lambda: "ko")
    _, sidecar = shipped_checkpoint_upload()
    at = open_page("train", lang="ko")
    at.file_uploader(key="upload_files").set_value([("mine.safetensors", pickle.dumps({"w": torch.zeros(3)}),
                                                     "application/octet-stream"),
                                                    ("mine.json", sidecar, "application/json")]).run()
    assert at.button(key="upload_load").label == translate("ko", "train.upload_load")
    at.button(key="upload_load").click().run()
    assert not at.exception
    error = at.error[0].value
    assert error.startswith(translate("ko", "train.upload_failed", error="")) and "pickle" in error

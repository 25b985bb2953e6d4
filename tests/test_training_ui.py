"""Training in the browser (job thread, registration), uploads and the comparison page, via AppTest."""
import pickle
import time

import pytest
import torch

from model.checkpoint import CheckpointError
from model.train import TrainConfig
from tests.app_links import go_to, lab_session_of, open_page, shipped_checkpoint_upload
from runtime.training_jobs import start_job, wait


def test_train_page_trains_a_tiny_model_that_appears_in_the_model_choice():
    at = open_page("train")
    at.selectbox(key="train_task").set_value("reverse")
    at.slider(key="train_steps").set_value(50)
    at.select_slider(key="train_width").set_value(32)
    at.button[0].click().run()  # Start training
    assert not at.exception
    job = lab_session_of(at).training.job
    wait(job, timeout=120)
    assert job.state == "finished" and job.steps_done == 50 and job.snapshots
    at.run()
    assert job.model_id in lab_session_of(at).training.user_models
    assert any(job.model_id in option for option in at.sidebar.selectbox[0].options)
    assert any("now in the sidebar" in s.value for s in at.success)
    at.selectbox(key="model_id").set_value(job.model_id).run()
    assert at.session_state["sentence"] == "1 2 3 4 5"  # a reverse model starts on one of its own examples
    assert go_to(at, "attention").get("plotly_chart")


def test_stop_keeps_what_was_learned():
    job = start_job(TrainConfig.for_model(task="reverse", steps=2000, eval_every=0, d_model=32, num_heads=2, d_ff=64), "1 2 3")
    while job.steps_done < 5:
        time.sleep(0.05)
    job.stop_requested.set()
    wait(job)
    assert job.state == "stopped" and 5 <= job.steps_done < 2000
    assert job.result.loaded.model is not None


def test_bad_uploads_give_clear_messages(monkeypatch):
    import streamlit as st
    from ui.session import lab_session
    from ui.train import view as train_view

    monkeypatch.setattr(st, "session_state", {})
    weights, sidecar = shipped_checkpoint_upload()
    cases = {
        "truncated": ([("m.safetensors", weights[: len(weights) // 3]), ("m.json", sidecar)], "truncated"),
        "pickle renamed": ([("m.safetensors", pickle.dumps({"w": torch.zeros(3)})), ("m.json", sidecar)], "pickle"),
        "oversized": ([("m.safetensors", b"\0" * (64 * 1024 * 1024 + 1)), ("m.json", sidecar)], "limit"),
        "one file only": ([("m.safetensors", weights)], "only m.safetensors arrived: the config file"),
        "bad json": ([("m.safetensors", weights), ("m.json", b"{oops")], "JSON"),
    }
    for files, expected in cases.values():
        with pytest.raises(CheckpointError, match=expected):
            train_view.load_upload(files)
    model_id = train_view.load_upload([("m.safetensors", weights), ("m.json", sidecar)])
    assert model_id in lab_session().training.user_models
    monkeypatch.setattr(st, "session_state", {})  # another student's session
    other = train_view.load_upload([("m.safetensors", weights), ("m.json", sidecar)])
    assert other != model_id  # cached analyses are keyed by model id: ids never repeat across sessions


def test_compare_page_renders_and_length_slider_changes_outputs():
    at = open_page("compare", sentence="i am a student")
    assert [c.value for c in at.code][:3] == ["je suis étudiant"] * 3
    chart = at.get("plotly_chart")[2].proto.spec
    assert "no attention" in chart and "Bahdanau" in chart
    before = [c.value for c in at.code][3:]
    at.select_slider(key="cmp_length_slider").set_value(30).run()
    assert not at.exception and [c.value for c in at.code][3:] != before
    at.radio(key="cmp_metric").set_value("bleu").run()
    assert not at.exception


def test_no_attention_model_is_worse_on_long_sentences_in_stored_profile():
    from ui.models import shipped_model_info

    def long_em(name):
        rows = shipped_model_info.__wrapped__(name)["metrics"]["by_length"]
        return [r["exact_match"] for r in rows if r["min_words"] >= 16]

    assert max(long_em("no-attention_en-fr")) < 0.1 < min(long_em("bahdanau_en-fr")[:3])


def test_non_finite_loss_stops_with_a_message_and_keeps_the_model():
    at = open_page("train")
    at.selectbox(key="train_task").set_value("copy")
    at.slider(key="train_steps").set_value(50)
    at.run()
    job = start_job(TrainConfig.for_model(task="copy", steps=50, eval_every=0, d_model=32, num_heads=2, d_ff=64, lr=1e30),
                    "1 2 3")
    wait(job)
    assert job.state == "failed" and "non-finite" in job.message
    lab_session_of(at).training.job = job
    at.run()
    assert any("finite" in e.value and "last good step" in e.value for e in at.error)
    assert job.model_id in lab_session_of(at).training.user_models


@pytest.mark.parametrize("case", ["truncated", "pickle renamed", "oversized", "valid"])
def test_upload_through_the_page(case):
    weights, sidecar = shipped_checkpoint_upload()
    content = {"truncated": weights[: len(weights) // 2], "pickle renamed": pickle.dumps({"w": torch.zeros(3)}),
               "oversized": b"\0" * (64 * 1024 * 1024 + 1), "valid": weights}[case]
    at = open_page("train")
    at.file_uploader(key="upload_files").set_value([("mine.safetensors", content, "application/octet-stream"),
                                                    ("mine.json", sidecar, "application/json")]).run()
    at.button(key="upload_load").click().run()
    assert not at.exception
    if case == "valid":
        assert at.session_state["model_id"].startswith("uploaded-") and at.success
    else:
        assert at.error and "cannot be loaded" in at.error[0].value
        assert {"truncated": "truncated", "pickle renamed": "pickle", "oversized": "limit"}[case] in at.error[0].value


def test_loading_the_same_files_again_holds_one_model_and_a_third_upload_releases_the_oldest():
    """Each click on Load these files used to add another copy of the model to the session (issue 53): 25 clicks on
    one 34 MiB checkpoint held 25 models. The same files give the model they loaded; at most MAX_UPLOADED_MODELS
    uploads are held, the oldest released first, and the page says which."""
    import json

    from ui.train.view import MAX_UPLOADED_MODELS

    weights, sidecar = shipped_checkpoint_upload()
    # other files of the same model: the config written with another indent (other bytes, another sha256)
    others = [json.dumps(json.loads(sidecar), indent=indent).encode() for indent in (2, 3)]
    at = open_page("train")

    def load(config: bytes) -> str:
        at.file_uploader(key="upload_files").set_value([("mine.safetensors", weights, "application/octet-stream"),
                                                        ("mine.json", config, "application/json")]).run()
        at.button(key="upload_load").click().run()
        assert not at.exception and not at.error
        return at.session_state["model_id"]

    first = load(sidecar)
    training = lab_session_of(at).training
    held = training.user_models[first]
    for _ in range(2):
        assert load(sidecar) == first and list(training.user_models) == [first]
        assert training.user_models[first] is held  # the same model object, not a copy loaded again
        assert "loaded already" in at.success[0].value
    second = load(others[0])
    assert second != first and list(training.user_models) == [first, second] == list(training.uploads.values())
    third = load(others[1])
    assert list(training.user_models) == [second, third] and MAX_UPLOADED_MODELS == 2
    said = at.success[0].value
    assert third in said and first in said and "released" in said  # the oldest went, and the page says so
    assert first not in at.sidebar.selectbox[0].options and third in at.sidebar.selectbox[0].options
    assert load(others[0]) == second and list(training.user_models) == [second, third]  # still held: no load


def test_training_stops_when_the_session_is_gone():
    alive = {"value": True}
    job = start_job(TrainConfig.for_model(task="reverse", steps=2000, eval_every=0, d_model=32, num_heads=2, d_ff=64), "1 2",
                    session_alive=lambda: alive["value"])
    while job.steps_done < 3:
        time.sleep(0.05)
    alive["value"] = False  # the student closed the tab
    wait(job)
    assert job.state == "stopped" and "session closed" in job.message and job.steps_done < 2000
    assert job.finished.wait(10)  # the state is set just before its work is freed

"""A training's place in the URL: a session that opens with it but has no such job says the training is lost
(what a student sees after serve.py's replica that ran it died and HAProxy moved them to another one)."""
import pytest

from i18n import translate
from tests.app_links import lab_session_of, open_from_link
from ui.text import escape_markdown
from runtime.training_jobs import wait


@pytest.mark.slow
def test_running_training_is_in_the_url_and_a_new_session_reports_it_lost():
    at, _ = open_from_link("train")
    at.slider(key="train_steps").set_value(2000)
    at.button[0].click().run()  # Start training
    job = lab_session_of(at).training.job
    try:
        assert at.query_params["training"] == job.model_id
        assert not at.warning  # the session that runs it has nothing to report
        # Another server process opens the same address: no such job there.
        other, notices = open_from_link("train", {"training": job.model_id})
        warnings = " ".join(w.value for w in other.warning)
        assert escape_markdown(job.model_id) in warnings and "lost" in warnings, warnings
        assert not notices  # a valid marker, not a bad link
        assert "training" not in other.query_params  # reported once, then gone from the address
        other.run()
        assert escape_markdown(job.model_id) in " ".join(w.value for w in other.warning)  # still said until a new training starts
        # On any page: the student may have been reading the attention page when the replica died.
        elsewhere, _ = open_from_link("attention", {"training": job.model_id})
        assert escape_markdown(job.model_id) in " ".join(w.value for w in elsewhere.warning)
    finally:
        job.stop_requested.set()
        wait(job, timeout=60)
    at.run()  # the job ended: the URL no longer names a running training
    at.run()
    assert "training" not in at.query_params


def test_lost_training_notice_in_korean_and_bad_markers_are_ignored():
    at, _ = open_from_link("train", {"training": "my-transformer_en-fr-12", "lang": "ko"})
    assert translate("ko", "serve.training_lost", model="X").split("X")[1][:10] in at.warning[0].value
    at, notices = open_from_link("train", {"training": "<b>x</b>"})
    assert not at.warning and "training" in notices

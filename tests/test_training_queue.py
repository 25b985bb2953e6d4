"""The trainings of a replica (runtime/training_jobs.py): one per session, the sessions served in turns with a waiting
student told her place, a run stopped at its time limit with the model kept, and the teacher who holds a class
stops them from the Teacher page (all, or the longest)."""
import time

import pytest

from classroom.store import DATABASE_URL_ENV
from model.train import TrainConfig
from tests.app_links import assert_healthy, open_from_link
from runtime import training_jobs as training
from runtime.training_jobs import active_trainings, start_job, stop_trainings, wait

LONG = dict(task="reverse", steps=3000, eval_every=0, d_model=32, num_heads=2, d_ff=64, train_size=2000)


def _running(job, timeout: float = 30) -> None:
    end = time.monotonic() + timeout
    while job.steps_done < 2 and job.active and time.monotonic() < end:
        time.sleep(0.02)
    assert job.state == "running"


@pytest.fixture(autouse=True)
def no_trainings_left():
    yield
    stop_trainings()
    for job in active_trainings():
        wait(job, 30)


def test_a_session_runs_one_training_and_another_session_goes_before_her_second(monkeypatch):
    monkeypatch.setattr(training.TRAININGS, "workers", 1)  # one slot, as on a 2-core replica
    first = start_job(TrainConfig.for_model(**LONG), "1 2", session="a")
    _running(first)
    second = start_job(TrainConfig.for_model(**LONG), "1 2", session="a")
    other = start_job(TrainConfig.for_model(**LONG), "1 2", session="b")
    assert (other.place, second.place) == (1, 2)  # "b" is served before "a"'s second run
    third = start_job(TrainConfig.for_model(**LONG), "1 2", session="a")  # a newer run replaces her waiting one
    assert second.state == "stopped" and second.message_key == "job_not_started"
    assert third.place == 2
    stopped = stop_trainings(longest_only=True)  # the teacher stops the longest: the one running
    assert stopped == 1
    wait(first, 30)
    assert first.state == "stopped" and first.message_key == "job_teacher_stopped" and first.result is not None
    _running(other)  # the slot goes to "b"
    assert stop_trainings() == 2  # then all: the running one and "a"'s waiting one, which never starts
    wait(other, 30)
    wait(third, 30)
    assert third.state == "stopped" and third.message_key == "job_teacher_stopped" and third.steps_done == 0
    assert not active_trainings()


def test_a_run_stops_at_the_time_limit_and_keeps_its_model(monkeypatch):
    monkeypatch.setattr(training, "TRAINING_SECONDS", 0.5)
    job = start_job(TrainConfig.for_model(**LONG), "1 2", session="a")
    wait(job, 60)
    assert job.state == "stopped" and job.message_key == "job_time_limit"
    assert 0 < job.steps_done < LONG["steps"] and job.result is not None and job.result.loaded is not None


def test_the_teacher_sees_the_trainings_and_stops_them(tmp_path, monkeypatch):
    from tests.test_class_pages import _start_class

    monkeypatch.setenv("ATTENTION_LAB_DATA", str(tmp_path))
    monkeypatch.delenv("ATTENTION_LAB_TEACHER_PASSWORD", raising=False)
    monkeypatch.delenv(DATABASE_URL_ENV, raising=False)
    teacher, _ = open_from_link("teacher")
    _start_class(teacher)
    job = start_job(TrainConfig.for_model(**LONG), "1 2", session="student")
    _running(job)
    teacher.run()
    assert_healthy(teacher)
    assert any(e.label.startswith("Trainings on this server (1)") for e in teacher.expander)
    next(b for b in teacher.button if b.label == "Stop all trainings").click().run()
    assert_healthy(teacher)
    wait(job, 30)
    assert job.state == "stopped" and job.message_key == "job_teacher_stopped"
    student, _ = open_from_link("teacher")  # not the teacher: no trainings, no stop
    assert not [b for b in student.button if b.label in ("Stop all trainings", "Stop the longest training")]

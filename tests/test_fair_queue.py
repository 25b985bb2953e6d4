"""ui/fair_queue.py and model/forward_guard.py: one session cannot hold two of the workers, sessions take turns (a
second session is served before the first's second job), a newer request replaces a waiting one, and the time
limit stops a model's work with the student told (ui/analysis_queue.py)."""
import threading
import time

import pytest
import torch

from model.forward_guard import TimeLimitExceeded, deadline
from ui.fair_queue import CANCELLED, DONE, RUNNING, TOO_SLOW, FairQueue


def _blocker():
    """A job that runs until released, and an event set when it starts."""
    started, release = threading.Event(), threading.Event()

    def work():
        started.set()
        assert release.wait(10)
        return "blocked"
    return work, started, release


def test_one_session_never_holds_two_workers_and_a_second_session_goes_before_her_second_job():
    queue = FairQueue("test", workers=2)
    order: list[str] = []
    work_a1, a1_started, release_a1 = _blocker()
    a1 = queue.submit("a", "a1", work_a1)
    assert a1_started.wait(5)
    a2 = queue.submit("a", "a2", lambda: order.append("a2"))
    time.sleep(0.2)
    assert a2.state == "queued"  # a worker is free, but "a" already has one running
    assert [job.session for job in queue.running()] == ["a"]
    work_b, b_started, release_b = _blocker()
    b1 = queue.submit("b", "b1", lambda: (order.append("b1"), work_b())[1])
    assert b_started.wait(5)  # the free worker serves "b" at once, though "a2" came first
    assert queue.place(a2) == 1
    release_b.set()
    release_a1.set()
    assert a2.done.wait(5) and b1.done.wait(5)
    assert order == ["b1", "a2"] and a1.result == "blocked" and a2.state == DONE


def test_with_one_worker_sessions_take_turns_by_when_they_were_last_served():
    queue = FairQueue("test", workers=1)
    order: list[str] = []
    work, started, release = _blocker()
    queue.submit("a", "a1", work)
    assert started.wait(5)
    a2 = queue.submit("a", "a2", lambda: order.append("a2"))  # arrives before b and c ...
    b1 = queue.submit("b", "b1", lambda: order.append("b1"))
    c1 = queue.submit("c", "c1", lambda: order.append("c1"))
    assert [job.key for job in queue.queued()] == ["b1", "c1", "a2"]  # ... and is served after them
    assert (queue.place(b1), queue.place(c1), queue.place(a2)) == (1, 2, 3)
    release.set()
    assert a2.done.wait(5)
    assert order == ["b1", "c1", "a2"]


def test_a_newer_request_replaces_the_waiting_one_and_a_waiting_job_can_be_withdrawn():
    queue = FairQueue("test", workers=1)
    work, started, release = _blocker()
    running = queue.submit("a", "first", work)
    assert started.wait(5)
    older = queue.submit("b", "old text", lambda: "old")
    newer = queue.submit("b", "new text", lambda: "new")
    assert older.state == CANCELLED and older.done.is_set()
    other = queue.submit("c", "c", lambda: "c")
    assert queue.cancel(other) and other.state == CANCELLED
    assert not queue.cancel(running) and running.state == RUNNING  # running work is stopped by its own means
    release.set()
    assert newer.done.wait(5) and newer.result == "new"
    assert [job.key for job in queue.queued()] == []


def test_the_time_limit_stops_a_models_work_and_the_job_says_so():
    layer = torch.nn.Linear(4, 4)
    passes: list[int] = []

    def endless():
        while True:  # a model's work that would never end: each pass a module call
            layer(torch.zeros(1, 4))
            passes.append(1)
            time.sleep(0.01)

    queue = FairQueue("test", workers=1, time_limit=0.3)
    started = time.monotonic()
    job = queue.submit("a", "endless", endless)
    assert job.done.wait(5)
    assert job.state == TOO_SLOW and isinstance(job.error, TimeLimitExceeded)
    assert 0.3 <= time.monotonic() - started < 2 and passes
    after = queue.submit("b", "next", lambda: "served")  # the worker is free again
    assert after.done.wait(5) and after.result == "served"


def test_a_deadline_only_limits_its_own_thread():
    layer = torch.nn.Linear(4, 4)
    with deadline(0.0):
        time.sleep(0.01)
        with pytest.raises(TimeLimitExceeded):
            layer(torch.zeros(1, 4))
        other: list = []
        thread = threading.Thread(target=lambda: other.append(layer(torch.zeros(1, 4))))
        thread.start()
        thread.join(5)
        assert other  # another thread's model work is not touched
    layer(torch.zeros(1, 4))  # nor this thread's, after the block

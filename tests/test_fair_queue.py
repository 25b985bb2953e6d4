"""runtime/fair_queue.py and model/forward_guard.py: one session cannot hold two of the workers, sessions take turns (a
second session is served before the first's second job), a newer request replaces a waiting one, and the time
limit stops a model's work with the student told (ui/analysis_queue.py)."""
import threading
import time

import pytest
import torch

from model.forward_guard import TimeLimitExceeded, deadline
from runtime.fair_queue import CANCELLED, DONE, RUNNING, TOO_SLOW, FairQueue


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


def _endless(passes: list[int]):
    """A model's work that never ends by itself: each pass a module call (where a stop takes effect)."""
    layer = torch.nn.Linear(4, 4)

    def work():
        while True:
            layer(torch.zeros(1, 4))
            passes.append(1)
            time.sleep(0.01)
    return work


def _wait_running(job, timeout: float = 5) -> None:
    end = time.monotonic() + timeout
    while job.state != RUNNING and time.monotonic() < end:
        time.sleep(0.01)
    assert job.state == RUNNING


def test_a_running_job_no_page_waits_for_stops_and_the_worker_serves_the_next_session_at_once():
    queue = FairQueue("test", workers=1, time_limit=30, stop_unwatched=0.2)
    passes: list[int] = []
    left = queue.submit("a", "long text", _endless(passes), watch=True)
    _wait_running(left)
    waiting = queue.submit("b", "short", lambda: "served", watch=True)
    queue.unwatch(left)  # her tab closed (or its rerun asked for nothing): no page waits for it
    begun = time.monotonic()
    assert left.done.wait(5) and left.state == CANCELLED and passes  # stopped inside the model's work ...
    assert time.monotonic() - begun < 1.5  # ... after the grace of 0.2 s, not at the 30 s time limit
    assert waiting.done.wait(5) and waiting.result == "served"


def test_a_rerun_asking_for_the_same_work_within_the_grace_watches_the_running_job_again():
    queue = FairQueue("test", workers=1, time_limit=30, stop_unwatched=0.3)
    work, started, release = _blocker()
    job = queue.submit("a", "text", work, watch=True)
    assert started.wait(5)
    queue.unwatch(job)  # the old run of her page ended ...
    again = queue.submit("a", "text", lambda: "computed twice", watch=True)  # ... and her rerun asks for it again
    assert again is job and job.watchers == 1
    time.sleep(0.5)  # past the grace: still running, for she waits for it
    assert job.state == RUNNING and not job.stop.is_set()
    release.set()
    assert job.done.wait(5) and job.result == "blocked"


def test_a_newer_request_of_the_same_student_stops_her_running_job_that_no_page_waits_for():
    queue = FairQueue("test", workers=1, time_limit=30, stop_unwatched=60)  # a grace that would outlast the test
    passes: list[int] = []
    old = queue.submit("a", "old text", _endless(passes))  # no page watches it (the tab that asked was reloaded)
    _wait_running(old)
    new = queue.submit("a", "new text", lambda: "new")
    assert old.done.wait(5) and old.state == CANCELLED  # superseded: stopped at once, not after the grace
    assert new.done.wait(5) and new.result == "new"


def test_a_running_job_another_tab_still_waits_for_runs_on_and_the_new_request_waits():
    queue = FairQueue("test", workers=2, time_limit=30, stop_unwatched=0.1)
    work, started, release = _blocker()
    first = queue.submit("seat", "tab one's text", work, watch=True)
    assert started.wait(5)
    second = queue.submit("seat", "tab two's text", lambda: "two", watch=True)
    time.sleep(0.3)
    assert first.state == RUNNING and second.state == "queued"  # one running and one waiting per student
    release.set()
    assert first.done.wait(5) and first.result == "blocked"
    assert second.done.wait(5) and second.result == "two"


def test_a_queue_without_stop_unwatched_lets_running_work_run_on():
    queue = FairQueue("test", workers=1)  # the trainings': a run is stopped by its own means
    work, started, release = _blocker()
    job = queue.submit("a", "run 1", work)
    assert started.wait(5)
    later = queue.submit("a", "run 2", lambda: "two")
    time.sleep(0.2)
    assert job.state == RUNNING and not job.stop.is_set() and later.state == "queued"
    release.set()
    assert later.done.wait(5) and job.result == "blocked"


class _Step(torch.nn.Module):
    """A model forward that does nothing but count who is computing at once (the forward guard checks before it)."""

    def __init__(self) -> None:
        super().__init__()
        self.lock, self.computing, self.most = threading.Lock(), 0, 0

    def forward(self, x):
        with self.lock:
            self.computing += 1
            self.most = max(self.most, self.computing)
        time.sleep(0.005)
        with self.lock:
            self.computing -= 1
        return x


def test_a_fourth_students_analysis_starts_while_three_others_run_and_one_computes_at_a_time():
    """Issue 53 item 6: three students' long analyses hold the one computing slot in turns (a slice each, given up at
    a forward); a fourth student's analysis, asked while they run, starts within a slice or two, not after them."""
    queue = FairQueue("test", workers=1, time_limit=60, running=4, slice_seconds=0.1)
    step, x = _Step(), torch.zeros(1)
    first_forward: dict[str, float] = {}

    def analysis(name: str, seconds: float):
        def work():
            end = None
            while end is None or time.monotonic() < end:
                step(x)
                first_forward.setdefault(name, time.monotonic())
                end = end or first_forward[name] + seconds
            return name
        return work

    long = [queue.submit(f"s{n}", f"long{n}", analysis(f"s{n}", 1.5)) for n in range(3)]
    time.sleep(0.3)
    asked = time.monotonic()
    fourth = queue.submit("s4", "short", analysis("s4", 0.05))
    assert fourth.done.wait(10) and fourth.result == "s4"
    assert first_forward["s4"] - asked < 0.6  # three slices at most before its first
    assert not any(job.ended for job in long)  # the others were still running when it finished
    for job in long:
        assert job.done.wait(20) and job.state == DONE
    assert step.most == 1  # one computing slot: never two analyses at once


def test_a_sliced_jobs_time_limit_counts_its_own_computing_not_its_waits():
    """Two students share one computing slot in slices: each computes 0.6 s within its 1 s limit, done, though each
    took longer than a second of the wall clock."""
    queue = FairQueue("test", workers=1, time_limit=1.0, running=2, slice_seconds=0.05)
    step, x = _Step(), torch.zeros(1)
    took: dict[str, float] = {}

    def analysis(name: str):
        def work():
            begun, computed = time.monotonic(), 0.0
            while computed < 0.6:
                tick = time.monotonic()
                step(x)
                computed += min(time.monotonic() - tick, 0.01)  # its own step, not the turn it waited for before it
            took[name] = time.monotonic() - begun
            return name
        return work

    jobs = [queue.submit(name, name, analysis(name)) for name in ("a", "b")]
    for job in jobs:
        assert job.done.wait(20)
    assert [job.state for job in jobs] == [DONE, DONE], [job.error for job in jobs]
    assert max(took.values()) > 1.0  # past its limit by the wall clock: the waits were not counted


def test_a_job_beyond_one_a_computing_slot_waits_while_memory_would_not_hold_its_peak():
    """A sliced queue starts a second session's job beside a running one only when `room_for_another` says the
    memory holds it (runtime/analysis_worker.room_for_another: the cgroup's limit less the RSS)."""
    room = threading.Event()
    queue = FairQueue("test", workers=1, running=4, room_for_another=lambda started: room.is_set())
    work, started, release = _blocker()
    queue.submit("a", "a1", work)
    assert started.wait(5)  # the first of a computing slot always starts
    second = queue.submit("b", "b1", lambda: "b")
    time.sleep(0.3)
    assert second.state == "queued" and queue.place(second) == 1
    room.set()  # memory was freed: it starts, and computes in its turn (the first job here never gives its turn up)
    end = time.monotonic() + 5
    while second.state == "queued" and time.monotonic() < end:
        time.sleep(0.02)
    assert second.state == RUNNING
    release.set()
    assert second.done.wait(5) and second.result == "b"

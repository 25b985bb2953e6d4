"""runtime/page_slots.py: page bodies queue for the process's slots (a class's answer burst draws its charts one after
the other), the teacher's runs never wait, and `crowded()` tells an answer form to confirm the answer itself."""
import threading
import time

import pytest

from runtime import page_slots
from runtime.page_slots import PAGE_SLOTS, crowded, page_slot


def test_crowded_while_every_slot_is_taken_and_not_after():
    assert not crowded()
    with page_slot():
        assert crowded() == (PAGE_SLOTS == 1)
    assert not crowded()


def test_the_teachers_run_neither_waits_nor_takes_a_slot():
    holders = [page_slot() for _ in range(PAGE_SLOTS)]
    for holder in holders:
        holder.__enter__()
    try:
        assert crowded()
        started = time.perf_counter()
        with page_slot(queued=False):  # every slot taken: the teacher's body still runs at once
            assert time.perf_counter() - started < 1.0
    finally:
        for holder in holders:
            holder.__exit__(None, None, None)
    assert not crowded()


def test_bodies_wait_for_a_slot_in_turn_and_an_error_frees_it():
    order: list[str] = []
    first_in = threading.Event()
    release_first = threading.Event()

    def first():
        with page_slot():
            first_in.set()
            order.append("first in")
            release_first.wait(5)
            order.append("first out")

    fillers = [page_slot() for _ in range(PAGE_SLOTS - 1)]  # leave exactly one slot for `first`
    for filler in fillers:
        filler.__enter__()
    try:
        thread = threading.Thread(target=first)
        thread.start()
        assert first_in.wait(5)

        def second():
            with page_slot():
                order.append("second in")

        waiting = threading.Thread(target=second)
        waiting.start()
        time.sleep(0.2)
        assert order == ["first in"]  # the second body waits while every slot is held
        release_first.set()
        thread.join(5)
        waiting.join(5)
        assert order == ["first in", "first out", "second in"]
    finally:
        for filler in fillers:
            filler.__exit__(None, None, None)
    with pytest.raises(RuntimeError):
        with page_slot():
            raise RuntimeError("a page that fails")
    assert not crowded() and page_slots._in_line == 0  # the failed body gave its slot back


@pytest.fixture(autouse=True)
def no_answers_before():
    page_slots._answers.clear()
    yield
    page_slots._answers.clear()


def test_a_burst_of_answers_makes_the_server_crowded_until_it_ends():
    for student in range(page_slots.BURST_ANSWERS - 1):
        page_slots.note_answer(f"s{student}")
    assert not crowded()  # a class answering one by one draws every page at once
    for _ in range(10):
        page_slots.note_answer("s0")
    assert not crowded()  # one student answering stop after stop is no burst
    page_slots.note_answer("the last one")
    assert page_slots.answer_burst() and crowded()
    long_ago = time.monotonic() - page_slots.BURST_SECONDS - 1
    page_slots._answers.extend((long_ago, f"s{n}") for n in range(page_slots._answers.maxlen))  # BURST_SECONDS later
    assert not crowded()


def test_the_training_speed_probe_gives_the_page_slot_back(monkeypatch):
    """The Train page's speed probe runs seconds in its own thread (8 s of data generation on a busy 2-core server),
    in the analysis queue: the page that waits for it holds no page slot meanwhile, so every other student's page on
    the replica goes on."""
    from model.training_speed import SpeedProbeError
    from ui.train import view

    free_during_probe = []

    def probe(config):  # seconds, as a real probe: the page is waiting for it by then, off its slot
        deadline = time.monotonic() + 5
        while not (taken := page_slots._slots.acquire("another page", timeout=0)) and time.monotonic() < deadline:
            time.sleep(0.01)  # another page could take a slot now
        if taken:
            page_slots._slots.release("another page")
        free_during_probe.append(taken)
        raise SpeedProbeError("nonfinite_loss", 0, "stopped")

    monkeypatch.setattr(view, "probe_speed", probe)
    view.SPEEDS.clear()
    with page_slot():
        assert not page_slots._slots.acquire("another page", timeout=0)  # the body holds the only slot
        result = view.speed_for_the_form(view.form_config("transformer", "en-fr", 100, 1, 32, 2))
        assert not page_slots._slots.acquire("another page", timeout=0)  # and has it back once the probe is done
    view.SPEEDS.clear()
    assert isinstance(result, SpeedProbeError) and free_during_probe == [True]


def test_two_pages_waiting_for_one_speed_probe_both_take_their_slot_back(monkeypatch):
    """A class opens the Train page at once: the first page probes (its slot given back), the second waits on the
    cache's lock for that probe. Neither may wait for the other's slot while the other waits for it: the slot is
    taken back outside the cache's lock, so both pages have it again at once, not after WAIT_SECONDS."""
    from model.training_speed import SpeedProbeError
    from ui.train import view

    monkeypatch.setattr(page_slots, "WAIT_SECONDS", 3.0)
    probing, second_waits = threading.Event(), threading.Event()

    def probe(config):
        probing.set()
        assert second_waits.wait(10)
        time.sleep(0.3)  # the second page is in the cache's lock by now
        raise SpeedProbeError("nonfinite_loss", 0, "stopped")

    monkeypatch.setattr(view, "probe_speed", probe)
    view.SPEEDS.clear()
    config = view.form_config("transformer", "en-fr", 100, 1, 32, 2)
    slot_back: dict[str, bool] = {}

    def page(name: str, before=None) -> None:
        if before is not None:
            assert before.wait(10)
        with page_slot():
            if name == "second":
                second_waits.set()
            view.speed_for_the_form(config)
            slot_back[name] = page_slots._holder.taken  # False: its wait for a slot ran out

    pages = [threading.Thread(target=page, args=("first",)),
             threading.Thread(target=page, args=("second", probing))]
    for thread in pages:
        thread.start()
    for thread in pages:
        thread.join(20)
    view.SPEEDS.clear()
    assert slot_back == {"first": True, "second": True}


def test_students_runs_wait_for_the_teachers_run_that_changed_the_class(monkeypatch):
    """Her click (a Reveal) wakes her class at once; the students' live questions and page bodies of this process go
    after her run, which ends at its outermost page guard (a fragment's guard inside her run does not end it), and
    never wait more than TEACHER_FIRST_SECONDS."""
    from ui.errors import page_guard

    order: list[str] = []
    acted, inner_done, finish = threading.Event(), threading.Event(), threading.Event()

    def teacher():
        with page_guard():  # her run (run_app's guard)
            page_slots.teacher_acts()  # the Reveal's callback
            acted.set()
            with page_guard():  # a fragment drawn inside her run
                pass
            inner_done.set()
            finish.wait(5)
            order.append("teacher drawn")

    def student(slot):
        acted.wait(5)
        with slot():
            order.append("student")

    threads = [threading.Thread(target=teacher), threading.Thread(target=student, args=(page_slots.live_slot,)),
               threading.Thread(target=student, args=(page_slot,))]
    for thread in threads:
        thread.start()
    inner_done.wait(5)
    time.sleep(0.3)
    assert order == []  # both students wait while her run draws
    finish.set()
    for thread in threads:
        thread.join(5)
    assert order == ["teacher drawn", "student", "student"]

    monkeypatch.setattr(page_slots, "TEACHER_FIRST_SECONDS", 0.3)
    page_slots.teacher_acts()  # her own run, queued, does not wait for itself
    started = time.monotonic()
    with page_slot():
        assert time.monotonic() - started < 0.2
    page_slots.run_ended()
    page_slots.teacher_acts()  # a run that never says it ended (killed): the class waits 0.3 s, no more
    page_slots._holder.teacher_acted = False  # ... as seen from another thread (a student's)
    started = time.monotonic()
    with page_slots.live_slot():
        waited = time.monotonic() - started
    page_slots.run_ended()
    assert 0.2 < waited < 2.0
    started = time.monotonic()
    with page_slot():  # nothing of the teacher's is drawing: no wait
        assert time.monotonic() - started < 0.2


def test_a_student_with_three_tabs_waits_behind_a_bystander_who_came_later():
    """Issue 53 item 4: the slots go by turns of students, not by arrival: while a student's tab draws, her two other
    tabs and then a bystander ask; the bystander draws next, then her tabs one by one."""
    slots = page_slots.ShortFirstSlots(1)
    assert slots.acquire("student", timeout=1)
    order: list[str] = []

    def tab(owner: str, name: str) -> threading.Thread:
        def run():
            assert slots.acquire(owner, timeout=5)
            order.append(name)
            slots.release(owner)
        thread = threading.Thread(target=run)
        thread.start()
        return thread

    threads = [tab("student", "her tab 2"), tab("student", "her tab 3")]
    time.sleep(0.1)
    threads.append(tab("bystander", "bystander"))
    time.sleep(0.1)
    assert slots.waiting() == ["bystander", "student", "student"]  # she holds a slot: everyone else first
    slots.release("student")
    for thread in threads:
        thread.join(5)
    assert order == ["bystander", "her tab 2", "her tab 3"]


def test_a_slot_not_handed_out_in_time_is_given_up_and_the_run_draws_anyway():
    slots = page_slots.ShortFirstSlots(1)
    assert slots.acquire("a", timeout=1)
    started = time.perf_counter()
    assert not slots.acquire("b", timeout=0.2)  # WAIT_SECONDS in the app: a slow page delays, never hides
    assert 0.15 < time.perf_counter() - started < 2
    assert slots.waiting() == []
    slots.release("a")
    assert slots.acquire("b", timeout=1)  # the slot given back is free again, nobody left waiting for it


def test_a_view_fragment_drawn_by_its_pages_run_takes_no_second_slot():
    with page_slot(owner="s"):
        started = time.perf_counter()
        with page_slot(owner="s"):  # the explorer's fragment inside its page's run: its slot is the page's
            assert time.perf_counter() - started < 1.0
    assert not crowded() and page_slots._in_line == 0

"""The page slots' order (runtime/page_share.py), with a fake clock: a seat whose pages held the slot long waits behind
one whose pages were short, and still gets its turn before anyone who asks MAX_DELAY after it. No timing."""
from __future__ import annotations

import threading

import pytest

from runtime import page_share
from runtime.page_share import MAX_DELAY, PATIENCE, PAUSE_CREDIT, SHORTEST_HOLD, USUAL_HOLD, ShortFirstSlots


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def turn(slots: ShortFirstSlots, clock: Clock, owner: str, seconds: float) -> None:
    """`owner` takes the free slot and holds it `seconds` of the fake clock."""
    assert slots.acquire(owner, timeout=0)
    clock.now += seconds
    slots.release(owner)


def wait_in_line(slots: ShortFirstSlots, owner: str, got: list[str]) -> threading.Thread:
    """`owner` asks for a slot in a thread of its own (in line before this returns); `got` says when it had one."""
    def run() -> None:
        assert slots.acquire(owner, timeout=10)
        got.append(owner)
        slots.release(owner)
    before = len(slots.waiting())
    thread = threading.Thread(target=run)
    thread.start()
    while len(slots.waiting()) == before:  # in line now (the slot is held, so it waits)
        threading.Event().wait(0.001)
    return thread


@pytest.fixture
def clock() -> Clock:
    return Clock()


def test_a_seat_that_held_the_slot_10_s_waits_behind_one_that_held_it_a_tenth(clock):
    slots = ShortFirstSlots(1, clock)
    turn(slots, clock, "heavy", 10.0)
    turn(slots, clock, "light", 0.1)
    assert slots.usual_hold("heavy") > 10 * slots.usual_hold("light")
    assert slots.acquire("holder", timeout=0)
    got: list[str] = []
    threads = [wait_in_line(slots, "heavy", got)]
    clock.now += 1.0  # the heavy seat asked a second earlier
    threads.append(wait_in_line(slots, "light", got))
    assert slots.waiting() == ["light", "heavy"]
    slots.release("holder")
    for thread in threads:
        thread.join(5)
    assert got == ["light", "heavy"]


def test_a_heavy_seat_still_gets_its_turn_before_whoever_asks_max_delay_after_it(clock):
    slots = ShortFirstSlots(1, clock)
    turn(slots, clock, "heavy", 30.0)
    for owner in ("light0", "light1", "late"):
        for _ in range(9):
            turn(slots, clock, owner, 0.05)
    assert PATIENCE * slots.usual_hold("heavy") > MAX_DELAY == slots.delay("heavy")  # its delay is capped
    assert slots.delay("light0") < MAX_DELAY / 2
    assert slots.acquire("holder", timeout=0)
    got: list[str] = []
    threads = [wait_in_line(slots, "heavy", got)]
    for owner in ("light0", "light1"):  # light seats keep coming, going first while the heavy run's deadline is ahead
        clock.now += MAX_DELAY / 4
        threads.append(wait_in_line(slots, owner, got))
    clock.now += MAX_DELAY / 2  # one more, asked past the heavy run's deadline: behind it
    threads.append(wait_in_line(slots, "late", got))
    assert slots.waiting() == ["light0", "light1", "heavy", "late"]
    slots.release("holder")
    for thread in threads:
        thread.join(5)
    assert got == ["light0", "light1", "heavy", "late"]


def test_a_new_seat_counts_as_an_ordinary_page_and_old_turns_fade(clock):
    slots = ShortFirstSlots(1, clock)
    assert slots.usual_hold("new") == pytest.approx(USUAL_HOLD)
    for _ in range(5):
        turn(slots, clock, "student", 2.0)
    assert slots.usual_hold("student") == pytest.approx((5 * 2.0 + USUAL_HOLD) / 6, rel=0.05)
    clock.now += 20 * page_share.HALF_LIFE  # long idle: back to an ordinary page
    assert slots.usual_hold("student") == pytest.approx(USUAL_HOLD, rel=0.01)


def test_equal_seats_go_by_arrival_and_a_students_three_tabs_do_not_hold_three_places(clock):
    slots = ShortFirstSlots(1, clock)
    assert slots.acquire("student", timeout=0)
    got: list[str] = []
    threads = [wait_in_line(slots, "student", got), wait_in_line(slots, "student", got)]  # her tabs 2 and 3 first
    for owner in ("a", "b"):
        clock.now += 0.01
        threads.append(wait_in_line(slots, owner, got))
    assert slots.waiting() == ["a", "b", "student", "student"]  # she holds a slot: everyone else first
    slots.release("student")
    for thread in threads:
        thread.join(5)
    assert got == ["a", "b", "student", "student"]  # and her waiting tabs' deadlines count her other runs


def test_between_light_pages_arrival_decides(clock):
    """An explorer's picks of 0.03 s and 0.06 s are both light: the one asked first goes first."""
    slots = ShortFirstSlots(1, clock)
    for _ in range(20):
        turn(slots, clock, "quick", 0.03)
        turn(slots, clock, "slower", 0.06)
    assert slots.usual_hold("slower") < SHORTEST_HOLD
    assert slots.delay("quick") == slots.delay("slower") == PATIENCE * SHORTEST_HOLD
    clock.now += 2 * PAUSE_CREDIT  # both paused since their latest turns
    assert slots.acquire("holder", timeout=0)
    got: list[str] = []
    threads = [wait_in_line(slots, "slower", got)]
    clock.now += 0.01
    threads.append(wait_in_line(slots, "quick", got))
    assert slots.waiting() == ["slower", "quick"]
    slots.release("holder")
    for thread in threads:
        thread.join(5)
    assert got == ["slower", "quick"]


def test_a_seat_that_paused_goes_before_one_that_asked_again_at_once(clock):
    """As turns did: a bystander who read for half a second goes before a picker served just before she asked."""
    slots = ShortFirstSlots(1, clock)
    for _ in range(20):
        turn(slots, clock, "picker", 0.05)
        turn(slots, clock, "bystander", 0.05)
    clock.now += 0.5  # she reads
    turn(slots, clock, "picker", 0.05)
    assert slots.acquire("holder", timeout=0)
    got: list[str] = []
    threads = [wait_in_line(slots, "picker", got)]  # at once after her pick was drawn
    clock.now += 0.1
    threads.append(wait_in_line(slots, "bystander", got))
    assert slots.waiting() == ["bystander", "picker"]
    slots.release("holder")
    for thread in threads:
        thread.join(5)
    assert got == ["bystander", "picker"]

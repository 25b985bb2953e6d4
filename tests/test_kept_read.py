"""runtime/kept_read.py: the teachers' saved lessons read at most once per few seconds, and never a KeyError when a
run reaches the value as it expires (Streamlit's TTL cache raised one: a class's page failed)."""
import threading

from runtime.kept_read import KeptRead


class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_a_value_is_kept_for_its_seconds_then_read_again_and_cleared_on_demand():
    reads, clock = [], Clock()
    kept = KeptRead(lambda key: reads.append(key) or f"{key}{len(reads)}", seconds=3, clock=clock)
    assert kept.get("a") == "a1" and kept.get("a") == "a1"
    clock.now = 2.9
    assert kept.get("a") == "a1" and kept.get("b") == "b2"
    clock.now = 3.0
    assert kept.get("a") == "a3"
    kept.clear()
    assert kept.get("a") == "a4" and reads == ["a", "b", "a", "a"]


def test_keys_past_the_bound_start_the_store_afresh():
    kept = KeptRead(lambda key: key, seconds=60, max_keys=2, clock=Clock())
    for key in ("a", "b", "c"):
        kept.get(key)
    assert set(kept._kept) == {"c"}


def test_threads_reaching_it_as_it_expires_get_a_value_and_one_read_between_them():
    reads, clock, failures = [], Clock(), []
    kept = KeptRead(lambda key: reads.append(key) or len(reads), seconds=1, clock=clock)
    kept.get("class")

    def run():
        try:
            for _ in range(2000):
                kept.get("class")
        except Exception as error:  # noqa: BLE001 (a KeyError here is the bug)
            failures.append(error)

    threads = [threading.Thread(target=run) for _ in range(4)]
    for thread in threads:
        thread.start()
    for step in range(1, 200):  # the clock crosses the expiry again and again while the threads read
        clock.now = step * 0.5
    for thread in threads:
        thread.join()
    assert failures == []
    assert len(reads) <= 200  # at most one read per expiry, not one per thread

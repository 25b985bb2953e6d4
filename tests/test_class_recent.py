"""The class's state shared by the students' polls of one process (classroom/recent.py, ClassStore.shared_session):
one read per class and SHARED_SECONDS however many sessions poll it, a write by this process seen at once, and a
read that a write overtook never kept."""
import threading
import time

import pytest

from classroom.recent import SHARED_SECONDS, RecentSessions
from classroom.records import ClassSession
from classroom.store import ClassStore


class Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


class CountingRead:
    """A read of the class that counts its calls (optionally waiting, or running `during` mid-read)."""
    def __init__(self, stop: int = 1, wait: float = 0.0, during=None):
        self.calls, self.stop, self.wait, self.during = 0, stop, wait, during
        self.lock = threading.Lock()

    def __call__(self, code: str) -> ClassSession:
        with self.lock:
            self.calls += 1
        if self.wait:
            time.sleep(self.wait)
        if self.during is not None:
            self.during()
        return ClassSession(code, "intro", self.stop, 2e9, frozenset())


def test_many_sessions_of_a_class_make_one_read_per_shared_interval():
    clock, read = Clock(), CountingRead()
    recent = RecentSessions(max_age=0.5, clock=clock)
    assert all(recent.get("ABC123", read).stop == 1 for _ in range(150))  # a second's polls of a replica's students
    assert read.calls == 1
    read.stop = 2  # the class moved on another replica
    clock.now += 0.49
    assert recent.get("ABC123", read).stop == 1 and read.calls == 1
    clock.now += 0.02
    assert recent.get("ABC123", read).stop == 2 and read.calls == 2
    recent.get("XYZ789", read)  # another class: its own read
    assert read.calls == 3


def test_threads_asking_at_once_wait_for_one_read():
    read = CountingRead(wait=0.05)
    recent = RecentSessions(max_age=60)
    seen = []
    threads = [threading.Thread(target=lambda: seen.append(recent.get("ABC123", read).stop)) for _ in range(20)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert seen == [1] * 20 and read.calls == 1


def test_a_read_overtaken_by_a_write_is_not_kept():
    """A write by this process that commits while a poll's read is under way (the read may hold the class before
    it): the next poll reads again instead of sharing the older read."""
    clock = Clock()
    recent = RecentSessions(max_age=0.5, clock=clock)
    read = CountingRead(during=lambda: recent.forget("ABC123"))
    recent.get("ABC123", read)
    read.during = None
    recent.get("ABC123", read)
    assert read.calls == 2
    recent.get("ABC123", read)
    assert read.calls == 2  # the read after the write is shared


@pytest.fixture()
def store(tmp_path):
    store = ClassStore(tmp_path / "classes.db")
    yield store
    store.close()


def test_a_reveal_or_a_move_by_this_process_is_seen_at_once(store):
    teacher = store.create_class("intro", stop=1)
    store.join(teacher.code, "student-a")
    assert store.shared_session(teacher.code).revealed == frozenset()
    teacher.reveal("intro:1")  # within SHARED_SECONDS of the read above
    assert store.shared_session(teacher.code).revealed == {"intro:1"}
    teacher.move(2)
    assert store.shared_session(teacher.code).stop == 2
    teacher.end()
    assert store.shared_session(teacher.code) is None


def _another_replica(store: ClassStore, code: str, token: str) -> None:
    """The teacher's move through another process's store on the same database: this process is not told."""
    with store.connect() as db:
        db.execute("UPDATE classes SET stop = stop + 2 WHERE code = ?", (code,))


def test_a_write_by_another_process_is_seen_within_the_shared_interval(store):
    teacher = store.create_class("intro", stop=1)
    assert store.shared_session(teacher.code).stop == 1
    _another_replica(store, teacher.code, teacher.token)
    assert store.shared_session(teacher.code).stop == 1  # this process's read is younger than SHARED_SECONDS
    time.sleep(SHARED_SECONDS + 0.05)
    assert store.shared_session(teacher.code).stop == 3


def test_every_store_of_a_process_on_one_database_shares_the_reads(store, tmp_path):
    """The app's store, and another opened on the same database in the same process (a test's, a teacher handle's):
    a Reveal through one is seen at once by the other's polls."""
    teacher = store.create_class("intro", stop=1)
    other = ClassStore(tmp_path / "classes.db")
    try:
        assert other.shared_session(teacher.code).revealed == frozenset()
        teacher.reveal("intro:1")
        assert other.shared_session(teacher.code).revealed == {"intro:1"}
    finally:
        other.close()


def test_a_direct_read_is_shared_so_a_poll_never_sees_the_class_older(store):
    """A join (or a whole run) reads the class directly; the poll right after it must not see an older state, or the
    student's page would follow the class back to the stop it left."""
    teacher = store.create_class("intro", stop=1)
    assert store.shared_session(teacher.code).stop == 1
    _another_replica(store, teacher.code, teacher.token)
    assert store.session(teacher.code).stop == 3  # the join's read
    assert store.shared_session(teacher.code).stop == 3  # the poll's, within SHARED_SECONDS of the older read


def test_a_younger_read_is_asked_for_and_each_forget_is_told(store):
    """The version route's checker asks for a read younger than the shared one (another replica's write seen within
    its own interval), and is told at once of a write through this process."""
    teacher = store.create_class("intro", stop=1)
    assert store.shared_session(teacher.code).stop == 1
    _another_replica(store, teacher.code, teacher.token)
    time.sleep(0.06)
    assert store.shared_session(teacher.code).stop == 1  # the poll's: its read is younger than SHARED_SECONDS
    assert store.shared_session(teacher.code, max_age=0.05).stop == 3  # the checker's: older than 0.05 s, read again
    assert store.recent.kept(teacher.code, max_age=10.0)[0] and not store.recent.kept(teacher.code, max_age=0.0)[0]
    told: list[str] = []
    stop = store.recent.listen(told.append)
    teacher.reveal("intro:1")
    stop()
    teacher.move(2)
    assert told == [teacher.code]  # the Reveal's write, and nothing after the listener stopped

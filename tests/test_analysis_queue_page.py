"""A heavy analysis on a page (ui/analysis_queue.py, runtime/analysis_worker.py): the page says "computing…" (or its
place in line) while the process's analysis worker computes, gives its page slot back meanwhile, then draws the result;
past the time limit the student reads why, in her language. Cheap: the attention page's toy translator, with the page's
own try cut to nothing so that its sentence goes to the worker as a 512-token text through SmolLM2 does."""
import threading
import time

import pytest

from i18n import translate
from tests.app_links import open_page
from runtime import analysis_worker, page_slots
from ui import analysis_queue


@pytest.fixture
def worker_only(monkeypatch):
    """Every analysis not cached goes to the worker; the notes the waiting page drew are recorded (English)."""
    monkeypatch.setattr(analysis_worker, "INLINE_SECONDS", 0.0)
    monkeypatch.setattr(analysis_worker, "TICK_SECONDS", 0.05)
    notes: list[str] = []
    real_tr = analysis_queue.tr

    def recording_tr(key, **values):
        text = real_tr(key, **values)
        notes.append(key)
        return text
    monkeypatch.setattr(analysis_queue, "tr", recording_tr)
    return notes


def _hold_the_worker() -> tuple[list[float], threading.Event]:
    """Another session's analysis that keeps the worker's computing slot until the page's analysis waits behind it
    (with the queue's other threads started for other students, who wait for their turn); then it takes a page slot,
    which it gets at once only if the waiting page gave its slot back. -> (how long that took, started)."""
    took: list[float] = []
    started = threading.Event()

    def other_students_analysis():
        started.set()
        end = time.monotonic() + 60
        while not analysis_worker.ANALYSES.queued() and time.monotonic() < end:
            time.sleep(0.02)
        time.sleep(0.2)  # the page's note shows its place
        begun = time.monotonic()
        with page_slots.page_slot():
            took.append(time.monotonic() - begun)

    queue = analysis_worker.ANALYSES
    queue.submit("another-student", ("test-blocker", time.monotonic()), other_students_analysis)
    # Every other analysis the queue starts at once (it slices them): students whose turn comes after hers
    if started.wait(5):
        for n in range(1, queue.threads):
            queue.submit(f"student-{n}", ("test-filler", n, time.monotonic()), lambda: None)
        end = time.monotonic() + 5
        while len(queue.running()) < queue.threads and time.monotonic() < end:
            time.sleep(0.01)
    return took, started


def test_a_heavy_link_shows_its_place_and_computing_then_the_result(worker_only, monkeypatch):
    queue = analysis_worker.ANALYSES
    real_submit = queue.submit

    def submit_slowly(session, key, work, watch=False):  # a toy's sentence is done within a tick: make it last two
        def work_for_two_ticks():
            time.sleep(2 * analysis_worker.TICK_SECONDS)
            return work()
        return real_submit(session, key, work_for_two_ticks, watch)
    monkeypatch.setattr(queue, "submit", submit_slowly)
    took, started = _hold_the_worker()
    assert started.wait(5)
    at = open_page("attention", {"sentence": f"the cat sees {time.monotonic_ns()} dogs ."})
    assert "analysis_queue.waiting" in worker_only  # in line behind the other student's analysis ...
    assert "analysis_queue.computing" in worker_only  # ... then computed by the worker
    assert took and took[0] < 0.5  # the waiting page had given its slot back
    assert any(m.value.startswith(translate("en", "attention.translation")) for m in at.markdown)  # the result
    assert not any(translate("en", "analysis_queue.too_slow", seconds="0")[:30] in w.value for w in at.warning)


def test_past_the_time_limit_the_student_is_told_in_her_language(worker_only, monkeypatch):
    monkeypatch.setattr(analysis_worker.ANALYSES, "time_limit", 0.0)
    at = open_page("attention", {"sentence": f"a dog sees {time.monotonic_ns()} cats .", "lang": "ko"})
    assert [w.value for w in at.warning] == [translate("ko", "analysis_queue.too_slow", seconds="0")]
    assert not at.markdown or not any(m.value.startswith(translate("ko", "attention.translation"))
                                      for m in at.markdown)


def test_a_link_cannot_ask_the_llm_heads_page_for_more_work_than_its_widgets_offer():
    from model.llama import MAX_TOKENS
    from ui.llm_heads.specs import INDUCTION_LENGTH, WINDOW

    for spec, costlier in ((WINDOW, "1000"), (WINDOW, "33"), (INDUCTION_LENGTH, "100000"), (INDUCTION_LENGTH, "257")):
        with pytest.raises(ValueError):
            spec.parse(costlier, {})
    assert WINDOW.parse("32", {}) == 32 and INDUCTION_LENGTH.parse(str(MAX_TOKENS // 2), {}) == MAX_TOKENS // 2
    assert WINDOW.fitted(10**6, {}) == 32  # a number past the slider is clamped to it


def test_the_tabs_of_one_browser_are_one_student_in_the_queue_and_cannot_hold_two_workers(monkeypatch):
    from runtime.fair_queue import FairQueue

    def name(seat, session_id):
        monkeypatch.setattr(analysis_queue, "browser_seat", lambda: seat)
        monkeypatch.setattr(analysis_queue, "script_session_id", lambda: session_id)
        return analysis_queue.session_name()

    seat, other_seat = "a" * 32, "b" * 32
    tab_one, tab_two = name(seat, "session-1"), name(seat, "session-2")
    assert tab_one == tab_two and seat not in tab_one  # one student, and the cookie itself kept nowhere
    assert name(other_seat, "session-1") != tab_one  # another browser
    assert name(None, "session-1") != name(None, "session-2")  # no seat (plain `streamlit run`): each session alone

    queue = FairQueue("test", workers=2, time_limit=30, stop_unwatched=0.1)
    started, release = threading.Event(), threading.Event()
    first = queue.submit(tab_one, "text one", lambda: (started.set(), release.wait(10)), watch=True)
    assert started.wait(5)
    second = queue.submit(tab_two, "text two", lambda: "two", watch=True)
    time.sleep(0.3)
    assert [job.session for job in queue.running()] == [tab_one] and second.state == "queued"  # a worker is free
    third = queue.submit(tab_two, "text three", lambda: "three", watch=True)  # her newest request ...
    assert second.state == "cancelled" and third.state == "queued"  # ... replaces her waiting one
    release.set()
    assert first.done.wait(5) and third.done.wait(5) and third.result == "three"


def test_a_heavy_input_is_never_tried_on_the_pages_turn_unless_the_worker_computed_it_lately():
    from runtime.fair_queue import FairQueue

    queue = FairQueue("test", workers=1, time_limit=30, stop_unwatched=0.1)
    threads: list[str] = []

    def compute():
        threads.append(threading.current_thread().name)
        return "maps"

    page = threading.current_thread().name
    assert analysis_queue.heavy("light", compute, queue=queue) == "maps"  # a short sentence: on the page's turn
    heavy_input = 2 * analysis_worker.INLINE_SIZE
    assert analysis_queue.heavy("long text", compute, queue=queue, work=heavy_input) == "maps"
    assert threads == [page, "test-1"]  # the long text went to the worker at once, no try on the page's turn
    assert analysis_queue.heavy("long text", compute, queue=queue, work=heavy_input) == "maps"
    assert threads[-1] == page  # computed lately (so likely cached): tried here
    import torch
    ten_to_ten = torch.nn.Linear(10, 10)
    assert analysis_worker.size(3, analysis_worker.parameters(ten_to_ten)) == 3 * 110  # tokens × parameters
    smollm2_parameters = 134_515_008
    assert 512 * smollm2_parameters > analysis_worker.INLINE_SIZE > 256 * 800_000  # a paragraph; a toy's longest

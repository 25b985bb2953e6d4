"""A heavy analysis on a page (ui/analysis_queue.py): the page says "computing…" (or its place in line) while the
process's analysis worker computes, gives its page slot back meanwhile, then draws the result; past the time limit
the student reads why, in her language. Cheap: the attention page's toy translator, with the page's own try cut to
nothing so that its sentence goes to the worker as a 512-token text through SmolLM2 does."""
import threading
import time

import pytest

from i18n import translate
from tests.app_links import open_page
from ui import analysis_queue, page_slots


@pytest.fixture
def worker_only(monkeypatch):
    """Every analysis not cached goes to the worker; the notes the waiting page drew are recorded (English)."""
    monkeypatch.setattr(analysis_queue, "INLINE_SECONDS", 0.0)
    monkeypatch.setattr(analysis_queue, "TICK_SECONDS", 0.05)
    notes: list[str] = []
    real_tr = analysis_queue.tr

    def recording_tr(key, **values):
        text = real_tr(key, **values)
        notes.append(key)
        return text
    monkeypatch.setattr(analysis_queue, "tr", recording_tr)
    return notes


def _hold_the_worker() -> tuple[list[float], threading.Event]:
    """Another session's analysis that keeps the worker until the page's analysis waits behind it; then it takes a
    page slot, which it gets at once only if the waiting page gave its slot back. -> (how long that took, started)."""
    took: list[float] = []
    started = threading.Event()

    def other_students_analysis():
        started.set()
        end = time.monotonic() + 60
        while not analysis_queue.ANALYSES.queued() and time.monotonic() < end:
            time.sleep(0.02)
        time.sleep(0.2)  # the page's note shows its place
        begun = time.monotonic()
        with page_slots.page_slot():
            took.append(time.monotonic() - begun)

    analysis_queue.ANALYSES.submit("another-student", ("test-blocker", time.monotonic()), other_students_analysis)
    return took, started


def test_a_heavy_link_shows_its_place_and_computing_then_the_result(worker_only):
    took, started = _hold_the_worker()
    assert started.wait(5)
    at = open_page("attention", {"sentence": f"the cat sees {time.monotonic_ns()} dogs ."})
    assert "analysis_queue.waiting" in worker_only  # in line behind the other student's analysis ...
    assert "analysis_queue.computing" in worker_only  # ... then computed by the worker
    assert took and took[0] < 0.5  # the waiting page had given its slot back
    assert any(m.value.startswith(translate("en", "attention.translation")) for m in at.markdown)  # the result
    assert not any(translate("en", "analysis_queue.too_slow", seconds="0")[:30] in w.value for w in at.warning)


def test_past_the_time_limit_the_student_is_told_in_her_language(worker_only, monkeypatch):
    monkeypatch.setattr(analysis_queue.ANALYSES, "time_limit", 0.0)
    at = open_page("attention", {"sentence": f"a dog sees {time.monotonic_ns()} cats .", "lang": "ko"})
    assert [w.value for w in at.warning] == [translate("ko", "analysis_queue.too_slow", seconds="0")]
    assert not at.markdown or not any(m.value.startswith(translate("ko", "attention.translation"))
                                      for m in at.markdown)


def test_a_link_cannot_ask_the_llm_heads_page_for_more_work_than_its_widgets_offer():
    from model.llama import MAX_TOKENS
    from ui.specs.llm_heads import INDUCTION_LENGTH, WINDOW

    for spec, costlier in ((WINDOW, "1000"), (WINDOW, "33"), (INDUCTION_LENGTH, "100000"), (INDUCTION_LENGTH, "257")):
        with pytest.raises(ValueError):
            spec.parse(costlier, {})
    assert WINDOW.parse("32", {}) == 32 and INDUCTION_LENGTH.parse(str(MAX_TOKENS // 2), {}) == MAX_TOKENS // 2
    assert WINDOW.fitted(10**6, {}) == 32  # a number past the slider is clamped to it

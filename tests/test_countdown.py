"""ui/live_class/countdown.py: a student's discussion countdown is drawn once, with the milliseconds left from the
stored end and the words in her language; her browser counts (countdown.js, tests/test_browser_peer.py)."""
import json

from streamlit.testing.v1 import AppTest

from i18n import using_language
from ui.live_class.countdown import countdown_words


def test_the_words_and_the_time_left_come_from_the_stored_end():
    assert countdown_words(1000.0, now=940.25) == {
        "key": "countdown:1000.000", "left_ms": 59750, "left": "Discussion: {time} left",
        "up": "Discussion time is up: the teacher opens round 2."}
    assert countdown_words(1000.0, now=1005.0)["left_ms"] == 0  # over: the browser says time is up
    with using_language("ko"):
        words = countdown_words(1000.0, now=990.0)
    assert words["left"] == "토론: {time} 남음" and words["up"].startswith("토론 시간이 끝났습니다")


def _page():
    import time

    from ui.live_class.countdown import student_countdown

    student_countdown(time.time() + 90)


def test_it_is_one_element_and_no_timer_reruns_the_page():
    at = AppTest.from_function(_page, default_timeout=30).run()
    assert not at.exception
    (element,) = at.get("bidi_component")
    data = json.loads(element.proto.json)
    assert 80_000 < data["left_ms"] <= 90_000 and data["key"].startswith("countdown:")
    assert not at.markdown and not at.caption  # the clock is the browser's, not a fragment redrawn every second


def test_the_browser_counts_down_from_its_first_draw_and_then_says_time_is_up(page):
    """countdown.js alone in Chromium: it counts from the milliseconds it was first given (a redraw of the same
    countdown keeps its deadline), writes text (never markup), and ends on the time-up line."""
    from pathlib import Path

    from playwright.sync_api import expect

    source = (Path(__file__).resolve().parents[1] / "ui" / "live_class" / "countdown.js").read_text(encoding="utf-8")
    page.set_content("<div id='root'></div>")
    draw = """async ([source, leftMs]) => {
      window.__countdown ??= (await import('data:text/javascript;charset=utf-8,' + encodeURIComponent(source))).default;
      window.__countdown({data: {key: 'countdown:1', left_ms: leftMs, left: '<b>Discussion</b>: {time} left',
                                 up: 'Discussion time is up'}, parentElement: document.getElementById('root')});
    }"""
    page.evaluate(draw, [source, 2500])
    timer = page.get_by_role("timer")
    expect(timer).to_have_text("<b>Discussion</b>: 0:03 left")  # text: the words' markup is shown, not parsed
    page.evaluate(draw, [source, 60000])  # her fragment redrawn: the same countdown, its deadline unchanged
    expect(timer).to_have_text("<b>Discussion</b>: 0:01 left", timeout=5000)
    expect(timer).to_have_text("Discussion time is up", timeout=5000)
    assert page.locator("#root b").count() == 0

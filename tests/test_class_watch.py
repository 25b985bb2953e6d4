"""ui/live_class/class_watch.js alone in Chromium, called as Streamlit's BidiComponent calls it: at each draw, on the same
element, and with a cleanup of an earlier draw that can come after a later draw (a draw superseded while its script
loaded is cleaned up once it has returned). The chain of asks must outlive such a cleanup and end with the cleanup
of the latest draw; where the route cannot be asked it reruns the fragment and keeps asking."""
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
ORIGIN = "http://lab.test"
VERSION = "0123456789abcdef"

# draw(n): the component function called with data and the page's one element, its cleanup kept as window.__cleanup[n]
DRAW = """async ([source, n, version]) => {
  window.__watch ??= (await import('data:text/javascript;charset=utf-8,' + encodeURIComponent(source))).default;
  window.__triggers ??= [];
  window.__cleanup ??= {};
  window.__cleanup[n] = window.__watch({
    data: {key: 'class_watch:ABC', url: '_lab/class/ABC/version', version, every_ms: 50, fallback_ms: 100},
    parentElement: document.getElementById('root'),
    setTriggerValue: (name, value) => window.__triggers.push([name, value]),
  });
}"""


@pytest.fixture()
def watched(page):
    """A page at a lab's address whose version route answers what `answer[0]` says ("abort" or a body); `asked`
    counts its asks."""
    asked: list[str] = []
    answer = [VERSION]

    def route(route):
        if route.request.url.startswith(f"{ORIGIN}/_lab/class/"):
            asked.append(route.request.url)
            if answer[0] == "abort":
                route.abort()
            else:
                route.fulfill(status=200, content_type="text/plain", body=answer[0])
        else:
            route.fulfill(status=200, content_type="text/html", body="<!doctype html><div id='root'></div>")

    page.route("**/*", route)
    page.goto(f"{ORIGIN}/")
    return page, asked, answer


def _source(name: str) -> str:
    return (ROOT / "ui" / "live_class" / name).read_text(encoding="utf-8")


def test_an_earlier_draws_late_cleanup_does_not_end_the_watch_and_the_latest_does(watched):
    page, asked, _ = watched
    source = _source("class_watch.js")
    page.evaluate(DRAW, [source, 1, VERSION])
    page.evaluate(DRAW, [source, 2, VERSION])  # her fragment reran: the same element, drawn again
    page.evaluate("() => window.__cleanup[1]()")  # the first draw's cleanup, after the second (superseded)
    page.wait_for_timeout(400)
    before = len(asked)
    assert before >= 2, asked  # still asking, every 50 ms after each answer
    page.wait_for_timeout(400)
    assert len(asked) > before, "the watch stopped at an earlier draw's cleanup"
    assert page.evaluate("() => window.__triggers") == []  # the class never changed: no rerun
    page.evaluate("() => window.__cleanup[2]()")  # the element leaves the page: the latest draw's cleanup
    page.wait_for_timeout(200)
    after = len(asked)
    page.wait_for_timeout(400)
    assert len(asked) == after  # no chain left asking


def test_a_changed_class_reruns_once_and_a_blocked_route_polls_on(watched):
    page, asked, answer = watched
    source = _source("class_watch.js")
    answer[0] = "fedcba9876543210"  # the class moved
    page.evaluate(DRAW, [source, 1, VERSION])
    page.wait_for_timeout(400)
    assert page.evaluate("() => window.__triggers") == [["changed", "fedcba9876543210"]]  # once, not at each ask
    answer[0] = "abort"  # a proxy refuses the route from now on
    page.evaluate(DRAW, [source, 2, "fedcba9876543210"])  # the rerun drew the page at the new version
    page.evaluate("() => window.__cleanup[1]()")
    count = len(asked)
    page.wait_for_timeout(600)
    polls = [value for name, value in page.evaluate("() => window.__triggers")[1:] if name == "changed"]
    assert len(asked) >= count + 2 and len(polls) >= 2  # it polls its fragment and keeps asking
    assert all(value.startswith("poll ") for value in polls)
    page.evaluate("() => window.__cleanup[2]()")


def test_a_countdown_outlives_an_earlier_draws_late_cleanup(page):
    """countdown.js under the same order of calls: it keeps counting until its latest draw's cleanup."""
    source = _source("countdown.js")
    page.set_content("<div id='root'></div>")
    draw = """async ([source, n]) => {
      window.__countdown ??= (await import('data:text/javascript;charset=utf-8,' + encodeURIComponent(source))).default;
      window.__cleanup ??= {};
      window.__cleanup[n] = window.__countdown({data: {key: 'countdown:1', left_ms: 2500, left: '{time} left',
                                                       up: 'Time is up'}, parentElement: document.getElementById('root')});
    }"""
    page.evaluate(draw, [source, 1])
    page.evaluate(draw, [source, 2])
    page.evaluate("() => window.__cleanup[1]()")
    timer = page.get_by_role("timer")
    from playwright.sync_api import expect

    expect(timer).to_have_text("0:03 left")
    expect(timer).to_have_text("Time is up", timeout=5000)  # it went on counting to the end

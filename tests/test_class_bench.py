"""bench/class_answers.py (the live-class bench) still imports and parses its options after a refactor of the
modules it builds on, and the protocol client's button click is sent once, not on every later rerun."""
import asyncio
import importlib.util
from concurrent.futures import ThreadPoolExecutor
import json
import sys
from pathlib import Path

from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.Button_pb2 import Button

from serving.streamlit_client import StreamlitClient

BENCH = Path(__file__).resolve().parents[1] / "bench" / "class_answers.py"


def load_bench():
    spec = importlib.util.spec_from_file_location("class_answers", BENCH)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # as `python bench/class_answers.py` has it (its dataclasses look it up)
    spec.loader.exec_module(module)  # fails loudly when a name it imports from the split modules is gone
    return module


def test_class_bench_imports_and_parses_its_options():
    bench = load_bench()
    assert issubclass(bench.ClassClient, StreamlitClient)
    own = bench.build_parser().parse_args([])
    assert (own.students, own.window, own.poll, own.url, own.data, own.late_joiners) == (30, 5.0, 2.0, None, None, 0)
    proxied = bench.build_parser().parse_args(["--url", "http://127.0.0.1:8500", "--data", "/tmp/x",
                                               "--students", "12"])
    assert (proxied.url, proxied.data, proxied.students) == ("http://127.0.0.1:8500", Path("/tmp/x"), 12)


def sent_widgets(payload: bytes) -> dict[str, object]:
    message = BackMsg()
    message.ParseFromString(payload)
    return {w.id: w for w in message.rerun_script.widget_states.widgets}


def test_a_click_presses_the_button_in_one_rerun_only():
    client = StreamlitClient("http://127.0.0.1:1")
    button = Button(id="$$ID-abc-None", label="Answer")
    client.meta[button.id] = ("button", button, "")
    assert client.button_id("Answer") == button.id and client.button_id("Start a class") is None

    clicked = sent_widgets(client.click_msg(button.id))
    assert clicked[button.id].trigger_value is True
    assert button.id not in sent_widgets(client.widget_rerun_msg())  # the next rerun does not press it again


def _delta(body: str, fragment: str = ""):
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

    message = ForwardMsg()
    message.delta.new_element.markdown.body = body
    message.delta.fragment_id = fragment
    return message


def _chart(fragment: str = ""):
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

    message = ForwardMsg()
    message.delta.new_element.plotly_chart.spec = "{}"
    message.delta.fragment_id = fragment
    return message


def _lifecycle(fragments: list[str], status) -> list:
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

    started, finished = ForwardMsg(), ForwardMsg()
    started.new_session.main_script_hash = "h"
    started.metadata.run.fragment_ids.extend(fragments)
    finished.script_finished = status
    return [started, finished]


def test_the_confirmation_is_timed_when_it_arrives_and_the_page_when_a_run_after_the_reveal_draws_a_chart():
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

    from ui.lesson_bar.bar import FOLLOW_SECONDS

    bench = load_bench()
    assert bench.STUDENT_POLL_SECONDS == FOLLOW_SECONDS  # until the poll's timer message is seen: the class poll's
    client = bench.ClassClient(0, "http://127.0.0.1:1")

    client._handle(_delta("In class ABC123: this page follows the teacher.", "poll"), 0.5)
    assert client.poll_fragment == "poll" and client.poll_seconds == FOLLOW_SECONDS
    timer = ForwardMsg()
    timer.auto_rerun.fragment_id, timer.auto_rerun.interval = "poll", 2.0
    client._handle(timer, 0.6)
    assert client.poll_seconds == 2.0  # the bench ticks as the browser's timer of that fragment does
    client._handle(_delta("Right: Transformer"), 1.0)
    assert client.confirmation_seen is None  # before the click nothing is timed
    client.watching_confirmation = True
    started, finished = _lifecycle(["form"], ForwardMsg.FINISHED_FRAGMENT_RUN_SUCCESSFULLY)
    client._handle(started, 2.0)
    client._handle(_delta("Right: Transformer", "form"), 2.1)
    client._handle(finished, 2.2)
    assert client.confirmation_seen == 2.1 and client.page_drawn is None  # no chart in that run
    started, finished = _lifecycle([], ForwardMsg.FINISHED_SUCCESSFULLY)
    client._handle(started, 3.0)
    client._handle(_chart(), 3.2)
    client._handle(finished, 3.5)
    assert client.page_drawn is None  # before the teacher's Reveal a chart is not the revealed stop's
    client.watching_page = True  # the teacher revealed: the next run that draws a chart draws the stop's
    started, finished = _lifecycle(["poll"], ForwardMsg.FINISHED_FRAGMENT_RUN_SUCCESSFULLY)
    client._handle(started, 4.0)
    client._handle(finished, 4.1)
    assert client.page_drawn is None  # a poll that drew no chart
    started, finished = _lifecycle(["poll"], ForwardMsg.FINISHED_FRAGMENT_RUN_SUCCESSFULLY)
    client._handle(started, 5.0)
    client._handle(_chart("poll"), 5.2)
    client._handle(finished, 5.5)
    assert client.page_drawn == 5.5 and client.confirmation_seen == 2.1


def test_a_whole_page_run_that_draws_the_chart_after_the_reveal_counts_too():
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

    client = load_bench().ClassClient(0, "http://127.0.0.1:1")
    client.watching_page = True
    started, finished = _lifecycle([], ForwardMsg.FINISHED_SUCCESSFULLY)
    client._handle(started, 1.0)
    client._handle(_chart(), 1.5)
    client._handle(finished, 2.0)
    assert client.page_drawn == 2.0


def test_the_clients_class_watch_asks_the_version_and_reruns_its_fragment_once_per_change():
    """What ui/live_class/class_watch.js does, the bench client does: a page's watch element is kept, each ask GETs the
    version relative to the page, naming the version it follows, and only a version neither drawn nor asked already
    sends a rerun of the watch's fragment with its trigger (the id Streamlit's bidi component reads); a refused GET
    falls back to a rerun."""
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

    bench = load_bench()
    client = bench.ClassClient(0, "http://127.0.0.1:9")
    client.page_path = "intro"
    drawn = ForwardMsg()
    drawn.delta.fragment_id = "frag1"
    component = drawn.delta.new_element.bidi_component
    component.component_name, component.id = bench.WATCH_COMPONENT, "el1"
    v1, v2 = "0123456789abcdef", "fedcba9876543210"  # versions as the route answers them
    component.json = json.dumps({"url": "_lab/class/ABC234/version", "version": v1, "every_ms": 1000,
                                 "fallback_ms": 2000})
    client._handle(drawn, 0.0)
    assert client.watch is not None and client.poll_seconds == 1.0
    answers = iter([(200, v1), (200, v2), (200, v2), (503, ""), (200, "<!doctype html>")])
    asked: list[str] = []

    async def fake_get(path, cookie, timeout=10.0):
        asked.append(path)
        return next(answers)

    client.connection.get = fake_get
    with ThreadPoolExecutor(1) as thread:  # a loop of its own: a browser test before this file leaves Playwright's running
        ticks = [thread.submit(asyncio.run, client.follow_class()).result() for _ in range(5)]
    # each ask names the version the page was drawn at, or the one it last reran for (the server holds it till then)
    assert asked == [f"/_lab/class/ABC234/version?seen={seen}" for seen in (v1, v1, v2, v2, v2)]
    # a refusal, or a page that is no version (a server without the route): the fragment's poll of before
    assert [what for _, what in ticks] == ["unchanged", "changed", "unchanged", "GET 503", "GET 200"]
    message = BackMsg()
    message.ParseFromString(ticks[1][0])
    assert message.rerun_script.fragment_id == "frag1"
    trigger = sent_widgets(ticks[1][0])["$$STREAMLIT_INTERNAL_KEY_el1__events"]
    assert json.loads(trigger.json_trigger_value) == [{"event": "changed", "value": v2}]
    assert "$$STREAMLIT_INTERNAL_KEY_el1__events" not in client.widgets  # sent once, not with every later rerun

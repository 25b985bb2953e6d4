"""bench/class_answers.py (the live-class bench) still imports and parses its options after a refactor of the
modules it builds on, and the protocol client's button click is sent once, not on every later rerun."""
import importlib.util
from pathlib import Path

from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.Button_pb2 import Button

from serving.streamlit_client import StreamlitClient

BENCH = Path(__file__).resolve().parents[1] / "bench" / "class_answers.py"


def load_bench():
    spec = importlib.util.spec_from_file_location("class_answers", BENCH)
    module = importlib.util.module_from_spec(spec)
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

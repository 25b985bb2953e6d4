"""bench/class_gain.py: a simulated class played through the app's real protocol (a `streamlit run asgi.py` the
bench starts) gives back, in the class report's CSV, exactly the gains and the switch matrix of its ground truth."""
import concurrent.futures
import importlib.util
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "bench" / "class_gain.py"


def load_bench():
    spec = importlib.util.spec_from_file_location("class_gain", BENCH)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def test_ground_truth_of_a_hand_made_class():
    bench = load_bench()
    students = [bench.Student(0, {"scale": True, "weight": False, "order": False},
                              {"scale": True, "weight": True, "order": False}, True, True),
                bench.Student(1, {"scale": False, "weight": False, "order": True},
                              {"scale": True, "weight": False, "order": True}, False, True)]
    truth = bench.ground_truth(students)
    assert truth["scale"] == (0.5, 1.0, 1.0) and truth["weight"] == (0.0, 0.5, 0.5)
    assert truth["order"] == (0.5, 0.5, 0.0)
    assert truth["lecture"][2] == pytest.approx((4 / 6 - 2 / 6) / (1 - 2 / 6))
    assert truth["switches"] == (1, 1, 0, 0)
    # the comparison fails on a report that differs from the truth
    rows = [{"table": "checks", "check": c, "pre_right": str(p), "post_right": str(q), "gain": str(g),
             "students_both": "2"} for c, (p, q, g) in ((c, truth[c]) for c in ("scale", "weight", "order", "lecture"))]
    rows.append({"table": "questions", "stop": "8", "right_right": "1", "wrong_right": "1", "right_wrong": "0",
                 "wrong_wrong": "0"})
    assert bench.compare(rows, truth, 2)[1]
    rows[1]["post_right"] = "0.4"
    assert not bench.compare(rows, truth, 2)[1]


@pytest.mark.slow
@pytest.mark.server  # the bench starts a `streamlit run asgi.py`
@pytest.mark.parametrize("seed", [3, 11])
def test_the_report_agrees_with_the_simulated_class(seed, capsys):
    # In a thread of its own, as from the command line: the bench calls asyncio.run, and a browser test that ran
    # before in this worker (Playwright's sync API) leaves an event loop set in the main thread.
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        status = pool.submit(load_bench().main, ["--students", "4", "--seed", str(seed), "--parallel", "2"]).result()
    assert status == 0
    out = capsys.readouterr().out
    assert out.count("| yes |") == 5 and "NO" not in out

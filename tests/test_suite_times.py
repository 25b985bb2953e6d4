"""make test's closing table (tests/suite_times.py): the slowest files, the tiers and each worker's idle tail, from the
reports of one process or of xdist's workers; and the order make test hands the files out in."""
import json
import os
import re
import subprocess
import sys
from types import SimpleNamespace

from tests.conftest import LONGEST_FILES, ROOT, pytest_collection_modifyitems
from tests.suite_times import Record, summary


def test_the_table_sums_files_tiers_and_workers_and_measures_each_workers_idle_tail():
    records = [
        Record("tests/test_walk.py::test_en", "browser", "gw0", 100.0, 101.0),  # setup
        Record("tests/test_walk.py::test_en", "browser", "gw0", 101.0, 160.0),  # call
        Record("tests/test_walk.py::test_ko", "browser", "gw0", 160.0, 190.0),
        Record("tests/test_maths.py::test_a", "unit", "gw1", 100.0, 101.0),
        Record("tests/test_page.py::test_b", "AppTest", "gw1", 101.0, 121.0),
        Record("tests/test_serve.py::test_c", "class server", "gw1", 121.0, 151.0),
    ]
    assert summary(records, start=99.0, end=200.0, slowest=2) == [
        "5 tests, 141 s of test time on 2 worker(s), 101 s wall",
        "The 2 slowest files (seconds, tests):",
        "      90.0 s     2  tests/test_walk.py",
        "      30.0 s     1  tests/test_serve.py",
        "Per tier (seconds, tests, share of the test time):",
        "  unit              1.0 s     1    1%",
        "  AppTest          20.0 s     1   14%",
        "  browser          90.0 s     2   64%",
        "  class server     30.0 s     1   21%",
        "Per worker (busy seconds, tests, idle tail: from its last test's end to the run's end):",
        "  gw0       90.0 s     2  idle tail   10.0 s",  # 200 - 190
        "  gw1       51.0 s     3  idle tail   49.0 s",  # 200 - 151: it waited for gw0's long walk
    ]


TINY_SUITE = {
    "conftest.py": "import pytest\n\n@pytest.fixture\ndef page():\n    return 'a browser page'\n",
    "test_pages.py": "def _app():  # never called: the tier is read from the module's imports\n"
                     "    from streamlit.testing.v1 import AppTest\n    return AppTest\n\ndef test_opens():\n    pass\n",
    "test_browser.py": "def test_clicks(page):\n    assert page\n",
    "test_server.py": "import pytest\n\n@pytest.mark.server\ndef test_starts_one():\n    pass\n\n"
                      "def test_pure():\n    pass\n",
}


def run_tiny_suite(tmp_path, *args: str) -> tuple[str, dict]:
    for name, text in TINY_SUITE.items():
        (tmp_path / name).write_text(text)
    out = tmp_path / "times.json"
    # Only the plugins this needs (hypothesis alone takes seconds to import): the run is about the table.
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "xdist", "-p",
                           "tests.suite_times", f"--suite-times={out}", *args], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout, json.loads(out.read_text())


def test_each_test_gets_its_tier_and_the_table_ends_the_run_in_one_process(tmp_path):
    output, written = run_tiny_suite(tmp_path)
    tiers = {test.split("::")[1]: tier for test, tier, *_ in written["records"]}
    assert tiers == {"test_opens": "AppTest", "test_clicks": "browser", "test_starts_one": "class server",
                     "test_pure": "unit"}
    assert {worker for _, _, worker, *_ in written["records"]} == {"main"}
    assert len(written["records"]) == 4 * 3  # setup, call and teardown of each
    assert "where the time went" in output and "4 tests" in output and "idle tail" in output


def test_under_xdist_the_controller_keeps_every_workers_reports(tmp_path):
    output, written = run_tiny_suite(tmp_path, "-n", "2", "--dist", "loadfile")
    workers = {worker for _, _, worker, *_ in written["records"]}
    assert workers == {"gw0", "gw1"}, workers
    assert len({test for test, *_ in written["records"]}) == 4
    assert "  gw0 " in output and "  gw1 " in output


def hand_out(nodeids: list[str], reorder: bool) -> list[str]:
    """The files in the order pytest-xdist's own LoadFileScheduling hands them to two workers that each finish their
    oldest test in turn."""
    from xdist.scheduler.loadfile import LoadFileScheduling

    class Quiet:  # xdist's log producer, silenced
        def __getattr__(self, name):
            return self

        def __call__(self, *args):
            pass

    handed = []

    class Worker:
        def __init__(self, name: str):
            self.gateway, self.shutting_down, self.running = SimpleNamespace(id=name), False, []

        def send_runtest_some(self, indexes):
            handed.append(nodeids[indexes[0]].split("::")[0])
            self.running += indexes

        def shutdown(self):
            self.shutting_down = True

    config = SimpleNamespace(option=SimpleNamespace(loadscopereorder=reorder),
                             getvalue=lambda name: ["2*popen"] if name == "tx" else None)
    scheduler = LoadFileScheduling(config, Quiet())
    workers = [Worker("gw0"), Worker("gw1")]
    for worker in workers:
        scheduler.add_node(worker)
        scheduler.add_node_collection(worker, nodeids)
    scheduler.schedule()
    while any(worker.running for worker in workers):
        for worker in workers:
            if worker.running:
                scheduler.mark_test_complete(worker, worker.running.pop(0))
    return handed


def test_make_test_hands_the_longest_files_out_first():
    """conftest puts LONGEST_FILES first; make test's xdist options hand the files out in that order, where xdist's
    default (files by their number of tests) would start them last."""
    recipe = re.search(r"^test:.*\n((?:\t.*\n)+)", (ROOT / "Makefile").read_text(), re.M).group(1)
    assert "--dist loadfile" in recipe
    files = sorted({*LONGEST_FILES, "test_a_hundred_quick_ones.py", "test_many.py", "test_zillions.py"})
    items = [SimpleNamespace(path=ROOT / "tests" / name, nodeid=f"tests/{name}::test_{number}")
             for name in files for number in range(1 if name in LONGEST_FILES else 20)]
    pytest_collection_modifyitems(items)
    nodeids = [item.nodeid for item in items]
    longest = [f"tests/{name}" for name in LONGEST_FILES]
    assert hand_out(nodeids, reorder="--no-loadscope-reorder" not in recipe)[:len(longest)] == longest
    assert hand_out(nodeids, reorder=True)[:3] == ["tests/test_a_hundred_quick_ones.py", "tests/test_many.py",
                                                   "tests/test_zillions.py"]

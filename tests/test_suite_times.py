"""make test's closing table (tests/suite_times.py): the slowest files, the tiers and each worker's idle tail, from the
reports of one process or of xdist's workers."""
import json
import os
import subprocess
import sys

from tests.conftest import ROOT
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

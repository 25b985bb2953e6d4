"""`make test`'s closing table: where the suite's time went, by file, by tier and by worker, so that growth shows in
every CI log (issue 52). A pytest plugin: tests/conftest.py loads it; bench/suite_time.py loads a copy of it into an
older commit's run with `-p suite_times`, so it imports nothing of the lab's.

Each test gets a tier when it is collected, kept as a user property (it travels from an xdist worker with every report,
and into junit XML), the first of these that fits:
- class server: it starts a server of its own: it uses a fixture in SERVER_FIXTURES or carries the `server` marker
  (a test that starts a `streamlit run` or serve.py process inside its body);
- browser: it uses the `page` or `browser` fixture (conftest's `browser` marker, by the same rule);
- AppTest: its module imports Streamlit's AppTest (`streamlit.testing`) or `tests.app_links`, which opens pages with it;
- unit: the rest.
The process that reports (the xdist controller, or the only process) keeps every phase of every test (setup, call,
teardown, reruns included) as a record (test, tier, worker, start, stop); at the end it prints the table and, with
`--suite-times PATH`, writes the records as JSON.
"""
from __future__ import annotations

import ast
import json
import time
from collections import defaultdict
from pathlib import Path
from typing import NamedTuple

import pytest

BROWSER_FIXTURES = {"page", "browser"}
# Fixtures that start a Streamlit (or serve.py) process for their module or test, besides the session's `app_url`.
SERVER_FIXTURES = {"classroom", "class_app_url", "second_server_url", "class_server", "peer_url", "hostile_app_url",
                   "toy_app"}
APPTEST_MODULES = {"streamlit.testing", "tests.app_links"}
TIERS = ("unit", "AppTest", "browser", "class server")
SLOWEST = 15


class Record(NamedTuple):
    """One phase of one test: its node id, tier, the worker that ran it ("main" without xdist), wall-clock start and
    stop (time.time(), comparable across the workers of one machine)."""
    test: str
    tier: str
    worker: str
    start: float
    stop: float

    @property
    def file(self) -> str:
        return self.test.split("::", 1)[0]


_module_uses_apptest: dict[Path, bool] = {}


def tier_of(item: pytest.Item) -> str:
    fixtures = set(getattr(item, "fixturenames", ()))
    if fixtures & SERVER_FIXTURES or item.get_closest_marker("server") is not None:
        return "class server"
    if fixtures & BROWSER_FIXTURES:
        return "browser"
    path = Path(item.path)
    if path not in _module_uses_apptest:
        _module_uses_apptest[path] = bool(imported_modules(path) & APPTEST_MODULES)
    return "AppTest" if _module_uses_apptest[path] else "unit"


def imported_modules(path: Path) -> set[str]:
    """Every module a Python file imports, anywhere in it (inside functions too), with each of its parents: "a.b.c"
    gives "a", "a.b" and "a.b.c"; `from a import b` gives "a" and "a.b"."""
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"))
    except (OSError, SyntaxError, UnicodeDecodeError):
        return set()
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return {".".join(name.split(".")[:end]) for name in names for end in range(1, name.count(".") + 2)}


def summary(records: list[Record], start: float, end: float, slowest: int = SLOWEST) -> list[str]:
    """The closing table's lines: the `slowest` files by seconds summed over their tests' phases, each tier's total,
    and each worker's busy seconds and idle tail (from the end of its last test to `end`)."""
    if not records:
        return ["no test ran"]
    by_file: dict[str, float] = defaultdict(float)
    file_tests: dict[str, set[str]] = defaultdict(set)
    by_tier: dict[str, float] = defaultdict(float)
    tier_tests: dict[str, set[str]] = defaultdict(set)
    busy: dict[str, float] = defaultdict(float)
    worker_tests: dict[str, set[str]] = defaultdict(set)
    last: dict[str, float] = {}
    for record in records:
        seconds = record.stop - record.start
        by_file[record.file] += seconds
        file_tests[record.file].add(record.test)
        by_tier[record.tier] += seconds
        tier_tests[record.tier].add(record.test)
        busy[record.worker] += seconds
        worker_tests[record.worker].add(record.test)
        last[record.worker] = max(last.get(record.worker, record.stop), record.stop)
    total = sum(busy.values())
    tests = len({record.test for record in records})
    lines = [f"{tests} tests, {total:.0f} s of test time on {len(busy)} worker(s), {end - start:.0f} s wall",
             f"The {min(slowest, len(by_file))} slowest files (seconds, tests):"]
    for file, seconds in sorted(by_file.items(), key=lambda pair: -pair[1])[:slowest]:
        lines.append(f"  {seconds:8.1f} s {len(file_tests[file]):5d}  {file}")
    lines.append("Per tier (seconds, tests, share of the test time):")
    for tier in sorted(by_tier, key=lambda name: TIERS.index(name) if name in TIERS else len(TIERS)):
        lines.append(f"  {tier:<13}{by_tier[tier]:8.1f} s {len(tier_tests[tier]):5d}  {by_tier[tier] / total:4.0%}"
                     if total else f"  {tier:<13}{by_tier[tier]:8.1f} s {len(tier_tests[tier]):5d}")
    lines.append("Per worker (busy seconds, tests, idle tail: from its last test's end to the run's end):")
    for worker in sorted(busy):
        lines.append(f"  {worker:<6}{busy[worker]:8.1f} s {len(worker_tests[worker]):5d}  idle tail "
                     f"{max(0.0, end - last[worker]):6.1f} s")
    return lines


def write_records(path: Path, records: list[Record], start: float, end: float) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"start": start, "end": end, "records": [list(record) for record in records]}))


def read_records(path: Path) -> tuple[list[Record], float, float]:
    """What write_records wrote -> (records, start, end)."""
    data = json.loads(path.read_text())
    return [Record(*row) for row in data["records"]], data["start"], data["end"]


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--suite-times", metavar="PATH", default=None,
                     help="write every test phase's (test, tier, worker, start, stop) as JSON to PATH "
                          "(tests/suite_times.py; `make test` writes test-results/suite-times.json)")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "server: starts a Streamlit or serve.py process of its own in the test's body "
                                       "(make test's class-server tier)")
    if not hasattr(config, "workerinput"):  # an xdist worker's reports reach the controller, which keeps them
        config.pluginmanager.register(SuiteTimes(config), "suite-times-table")


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        item.user_properties.append(("tier", tier_of(item)))


class SuiteTimes:
    def __init__(self, config: pytest.Config):
        self.config = config
        self.start = time.time()
        self.records: list[Record] = []

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        tier = dict(report.user_properties).get("tier", "unit")
        worker = getattr(report, "worker_id", None) or "main"
        self.records.append(Record(report.nodeid, str(tier), str(worker), report.start, report.stop))

    def pytest_terminal_summary(self, terminalreporter) -> None:
        if self.config.option.collectonly:
            return
        end = time.time()
        terminalreporter.write_sep("=", "where the time went (tests/suite_times.py)")
        for line in summary(self.records, self.start, end):
            terminalreporter.write_line(line)
        path = self.config.getoption("suite_times")
        if path:
            write_records(Path(path), self.records, self.start, end)

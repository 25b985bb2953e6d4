"""Where a browser test's CPU goes: Chromium, the Streamlit server it talks to, the pytest process, the rest.

    python bench/browser_cpu.py [TEST_ID ...] [--chromium PATH ...] [--arguments "FLAGS" ...] [--rounds N]

Runs the test ids (default: the LLM lesson's projected walk in English) with pytest, one Chromium after the other
(each --chromium, given by path; default: Debian's headless shell, then the full browser, where installed; with
--arguments, the first Chromium as the tests launch it and then with each set of extra command-line flags), and
samples every process's CPU time from /proc twice a second while each run lasts. A process that existed before the
run counts only what it used during it, one born during it all of its CPU up to its last sample, so a process that
ends between two samples loses at most half a second. Printed per run: wall seconds, then CPU seconds by kind of process,
and the ratio of each kind between the first Chromium and the others. The test picks its Chromium from
ATTENTION_LAB_TEST_CHROMIUM and its extra flags from ATTENTION_LAB_TEST_CHROMIUM_ARGS (tests/conftest.py). Run it on a quiet machine: on the suite's two loaded workers each
figure grows, but the shares stay.
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_TEST = ("tests/test_browser_projected_stops_llm.py::"
                "test_every_projected_stop_opens_on_its_point_in_text_a_room_can_read[en-llm]")
TICKS = os.sysconf("SC_CLK_TCK")
KINDS = ("chromium", "streamlit server", "pytest", "other")


def _kind(command: str, name: str) -> str:
    if "chrom" in name.lower() or "chrom" in command[:200]:
        return "chromium"
    if "streamlit" in command and " run " in command:
        return "streamlit server"
    if "pytest" in command:
        return "pytest"
    return "other"


def _processes() -> dict[tuple[str, str], tuple[str, float]]:
    """(pid, start time) -> (kind, CPU seconds so far) for every process readable now."""
    found = {}
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
            command = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if not command:  # a kernel thread, or a process that has exited and awaits its parent (its kind unknown)
            continue
        name = stat[stat.index("(") + 1:stat.rindex(")")]
        fields = stat[stat.rindex(")") + 2:].split()
        found[(pid, fields[19])] = (_kind(command, name), (int(fields[11]) + int(fields[12])) / TICKS)
    return found


def measure(tests: list[str], chromium: str, arguments: str = "") -> tuple[float, Counter, int]:
    """-> (wall seconds, CPU seconds by kind, pytest's exit code) of one run of the tests on that Chromium."""
    first, last = {}, {}
    done = threading.Event()

    def sample() -> None:
        for key, (_, cpu) in _processes().items():  # running before the test: their CPU so far is left out
            first[key] = cpu
        while not done.is_set():
            for key, (kind, cpu) in _processes().items():
                first.setdefault(key, 0.0)  # born during the run: all of its CPU counts
                last[key] = (kind, cpu)
            time.sleep(0.5)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    time.sleep(0.6)  # the sampler's first pass is done before the test starts
    started = time.perf_counter()
    env = {**os.environ, "ATTENTION_LAB_TEST_CHROMIUM": chromium, "ATTENTION_LAB_TEST_CHROMIUM_ARGS": arguments}
    code = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:randomly", "-p", "no:rerunfailures",
                           *tests], cwd=ROOT, env=env, stdout=subprocess.DEVNULL).returncode
    wall = time.perf_counter() - started
    done.set()
    sampler.join()
    used = Counter()
    for key, (kind, cpu) in last.items():
        used[kind] += cpu - first[key]
    return wall, used, code


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("tests", nargs="*", default=[DEFAULT_TEST])
    parser.add_argument("--chromium", action="append", help="a Chromium binary (repeat to compare)")
    parser.add_argument("--arguments", action="append",
                        help="extra Chromium flags, one quoted set (repeat to compare), beside the first Chromium alone")
    parser.add_argument("--rounds", type=int, default=1, help="each Chromium this many times, interleaved")
    args = parser.parse_args()
    browsers = args.chromium or [path for path in map(shutil.which, ("chromium-headless-shell", "chromium")) if path]
    variants = [(browser, "") for browser in browsers]
    if args.arguments:
        variants = [(browsers[0], "")] + [(browsers[0], flags) for flags in args.arguments]
    results: dict[str, list[tuple[float, Counter]]] = {f"{b} {a}".strip(): [] for b, a in variants}
    for _ in range(args.rounds):
        for browser, arguments in variants:
            wall, used, code = measure(args.tests, browser, arguments)
            results[f"{browser} {arguments}".strip()].append((wall, used))
            status = "passed" if code == 0 else f"pytest exit {code}"
            print(f"{browser} {arguments}: {wall:.1f} s wall, {status}; CPU s: "
                  + ", ".join(f"{kind} {used[kind]:.1f}" for kind in KINDS), flush=True)
    print(f"\n| Chromium | wall s | {' | '.join(f'{kind} CPU s' for kind in KINDS)} |")
    print("|---" * (2 + len(KINDS)) + "|")
    base = None
    for browser, runs in results.items():
        wall = sum(w for w, _ in runs) / len(runs)
        cpu = [sum(u[kind] for _, u in runs) / len(runs) for kind in KINDS]
        figures = [wall, *cpu]
        if base is None:
            base = figures
            cells = [f"{x:.1f}" for x in figures]
        else:  # beside the first Chromium's figure: this one's ratio to it
            cells = [f"{x:.1f} ({x / b:.2f}×)" if b else f"{x:.1f}" for x, b in zip(figures, base)]
        print(f"| {browser} | {' | '.join(cells)} |")


if __name__ == "__main__":
    main()

"""Where a server's CPU goes in the realistic classroom mix: py-spy on `streamlit run` while students explore.

    python bench/profile_mix.py [--students 40] [--baseline COMMIT] [--py-spy PATH] [--raw DIR]

Runs bench/load_classroom.py (its own server, 127.0.0.1; students join over 30 s and think 5-15 s: open the
attention page, change the sentence, the layer and the head, visit decoding and positional) and attaches py-spy
to the server once the students start (`--gil`: only samples of the thread holding the GIL, which is what a
replica's Python CPU is; `--nonblocking`: the server is not paused). Each sample goes to the first bucket below
that one of its frames matches; samples of one-time work (imports, loading a model, caches filled at the first
visit) are left out. With --baseline the same is done first for `git archive` of that commit (its own copy of
the bench), so both tables come from the same minutes. py-spy is not a project dependency: give its path.
"""
from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from serve_classroom import baseline_tree  # noqa: E402

# (bucket, frame substrings); first match wins, so the more specific come first.
ONE_TIME = ("importlib", "<module> (torch", "_freeze_long_lived", "cached_model", "_long_examples")
BUCKETS = [
    ("gc.collect(2) after every script run (runner.postScriptGC)", ("gc.collect", "script_runner.py:1055)")),
    ("a chart built on a shared-cache miss (first view of a head or setting)", ("_figure_blob", "_shared_chart")),
    ("a shared chart rebuilt from its dict (go.Figure(dict), serving/internals.py)", ("figure_from_own_dict",)),
    ("st.plotly_chart (figure to_dict, to_json, the element)", ("PlotlyMixin.plotly_chart",)),
    ("chart words (viz/summary.py)", ("chart_summary",)),
    ("other chart work (viz/: title fitting, tick thinning, bars)", ("(viz/",)),
    ("sidebar (ui/sidebar.py)", ("render_sidebar",)),
    ("page menu, st.navigation, lesson bar and picker, URL state", (
        "page_menu", "navigation_pages", "lesson_bar", "lesson_picker", "restore_from_url", "write_to_url",
        "share_link", "_navigation (", "follow_page_change")),
    ("attention explorer fragment: pickers, views (ui/attention/view.py)", ("attention_explorer",)),
    ("other page code: attention, decoding, positional (app_pages/, ui/)", ("Page.run",)),
    ("other Streamlit script-run machinery (session state, widgets, messages)", ("ScriptRunner._run_script_thread",)),
    ("event loop: websocket sends, HTTP, session bookkeeping", ("_run_once",)),
]


def server_pid(port: int, timeout: float = 120.0) -> int:
    """The pid of the `streamlit run` serving `port` (started by load_classroom.py)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for process in psutil.process_iter(["pid", "cmdline"]):
            command = process.info["cmdline"] or []
            if "streamlit" in " ".join(command) and str(port) in command:
                return process.info["pid"]
        time.sleep(0.2)
    raise RuntimeError(f"no streamlit server on port {port}")


def profile(tree: Path, args, raw: Path) -> dict:
    """One load_classroom.py run of `tree` with py-spy on its server; returns the buckets and the run's figures."""
    result = Path(tempfile.mktemp(suffix=".json"))
    bench = subprocess.Popen([sys.executable, "bench/load_classroom.py", "--students", str(args.students),
                              "--ramp", "30", "--think", "5", "15", "--warmup", "--json", str(result)],
                             cwd=tree, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    port, spy, lines = None, None, []
    assert bench.stdout is not None
    for line in bench.stdout:
        lines.append(line)
        if port is None and (match := re.search(r"starting streamlit on [\d.]+:(\d+)", line)):
            port = int(match.group(1))
        if spy is None and port is not None and " students on " in line:  # the warm-up visit comes next
            pid = server_pid(port)
            time.sleep(8)  # past the warm-up visit: profile the students only
            spy = subprocess.Popen([args.py_spy, "record", "--pid", str(pid), "--rate", "100", "--gil",
                                    "--nonblocking", "--format", "raw", "--output", str(raw)],
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    bench.wait()
    if spy is None:
        raise RuntimeError("the bench did not start its students:\n" + "".join(lines[-20:]))
    spy.wait(timeout=60)  # py-spy stops when the server exits
    run = json.loads(result.read_text())
    result.unlink()
    counts, total, one_time = Counter(), 0, 0
    for line in raw.read_text(errors="replace").splitlines():
        if not line.strip():
            continue
        stack, n = line.rsplit(" ", 1)
        total += int(n)
        if any(needle in stack for needle in ONE_TIME):
            one_time += int(n)
            continue
        bucket = next((name for name, needles in BUCKETS if any(needle in stack for needle in needles)),
                      "other threads")
        counts[bucket] += int(n)
    return {"counts": counts, "samples": total, "one_time": one_time, "run": run}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--students", type=int, default=40)
    parser.add_argument("--baseline", help="also profile this commit (git archive), first")
    parser.add_argument("--py-spy", default="py-spy", help="path of the py-spy executable")
    parser.add_argument("--raw", type=Path, default=Path(tempfile.gettempdir()), help="folder for py-spy's output")
    args = parser.parse_args()
    trees = ({f"baseline {args.baseline}": baseline_tree(args.baseline)} if args.baseline else {}) | {"this tree": ROOT}
    profiles = {}
    for label, tree in trees.items():
        print(f"{label}: {args.students} students …", flush=True)
        profiles[label] = profile(tree, args, args.raw / f"profile-mix-{label.split()[0]}.txt")
    for label, p in profiles.items():
        run, counted = p["run"], p["samples"] - p["one_time"]
        interactions = len(run["interactions"])
        print(f"\n### {label}: {interactions} interactions, server CPU {run['server_cpu_s']:.1f} s = "
              f"{run['server_cpu_s'] / max(1, interactions):.3f} s per interaction, load average at start "
              f"{run['load_average_start'][0]:.2f}; py-spy samples holding the GIL {p['samples']} "
              f"({p['one_time']} one-time left out)\n")
        print("| rank | where | share |\n|---|---|---|")
        for rank, (bucket, n) in enumerate(p["counts"].most_common(), 1):
            print(f"| {rank} | {bucket} | {n / max(1, counted):.0%} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())

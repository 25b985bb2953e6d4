"""Classroom load through serve.py's HAProxy: 1 replica against 2, capacity, a realistic class, cold herd, a kill.

    python bench/serve_classroom.py scaling   [--repeats 3] [--students 60]      # interactions/s, 2 vs 1 replica
    python bench/serve_classroom.py capacity  [--classes 10 20 30 45 60]         # largest class with p95 <= 2 s
    python bench/serve_classroom.py realistic [--students 100]                   # join over 30 s, think 5-15 s
    python bench/serve_classroom.py herd      [--students 30]                    # all at once right after "ready"
    python bench/serve_classroom.py kill      [--students 30] [--kill-after 8]   # SIGKILL one of 2 replicas
    python bench/serve_classroom.py answers   [--students 50] [--window 2] [--late-joiners 10] [--baseline main] [--text]
                                              [--replicas 2]
    python bench/serve_classroom.py cost      [--students 100] [--ramp 30] [--think 5 15] --baseline main   # CPU-s per interaction
    python bench/serve_classroom.py cost      --students 300 500 --ramp 60 --repeats 2      # the hall (issue 57)
    python bench/serve_classroom.py answers   --students 300 500 --window 10 --repeats 2    # against 300, alternating

Each mode starts `serve.py --replicas N` (127.0.0.1, free ports, its own run directory under run/), waits for
"ready", and runs bench/load_classroom.py --url against it (--json), `--repeats` times, interleaving 1 and 2
replicas where both are compared so that a slower minute hurts both alike. `herd` starts a fresh serve.py
before every run. Every mode but `herd` waits, after "ready", for serve.py's background warm-up of the other lesson stops to end
(a class meets a server its teacher started before the lesson; the wait is printed). It prints one line per run and a markdown table of medians (load average at each start).
`answers` runs bench/class_answers.py (a class answering at once, with students joining meanwhile) against a fresh
serve.py per run, alternating with the same run against `git archive` of --baseline (that commit's serve.py and
app, run by this Python and measured by this branch's bench client); it prints each run's own tables.
`cost` runs the realistic class (think 5-15 s, joining over --ramp s) through a fresh `serve.py --replicas 2` per
run, this tree and --baseline's alternating (baseline first), and prints the server's CPU seconds per interaction
(summed over the replicas, from /proc), p95, failures and each replica's peak RSS per run, then the ratio of the
medians: the same mix, the same minutes, the same bench client.
`answers` and `cost` take several class sizes (`--students 300 500`): each repeat runs every size in turn (and every
tree), so the sizes alternate in the same minutes, and a summary table ends the run, one row per run, with the load
average before and after, the server's and this bench client's CPU (the client shares the cores: its share of the
run's wall time says whether it, not the server, was the limit) and each replica's peak RSS; `cost` needs
--baseline only with one size, and gives the ratio of the medians of the largest size to the smallest.
"""
from __future__ import annotations

import argparse
import json
import math
import signal
import socket
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
KINDS = ("load", "sentence", "layer", "head", "page:decoding", "page:positional")  # a student's plan (classroom_students)
SETTLED = re.compile(r"other lesson stops warm after|lesson stops left cold|warming the lesson stops stopped")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Serve:
    def __init__(self, replicas: int, tree: Path = ROOT, env: dict[str, str] | None = None, settle: bool = True):
        """serve.py of `tree` (this checkout, or a baseline's `git archive`) with `env` added to the environment;
        `settle`: also wait for its background warm-up to end."""
        self.replicas, self.port = replicas, free_port()
        self.run_dir = tree / "run" / f"bench-{replicas}-{self.port}"
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = open(tempfile.mktemp(prefix=f"serve-{replicas}-", suffix=".log"), "w+")
        self.process = subprocess.Popen([sys.executable, "serve.py", "--replicas", str(replicas), "--port",
                                         str(self.port), "--host", "127.0.0.1", "--run-dir", str(self.run_dir)],
                                        cwd=tree, stdout=self.log, stderr=subprocess.STDOUT,
                                        env={**os.environ, **(env or {})})
        deadline = time.monotonic() + 300
        while "ready: http" not in Path(self.log.name).read_text():
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"serve.py did not become ready:\n{Path(self.log.name).read_text()[-2000:]}")
            time.sleep(0.5)
        # serve.py warms the other lesson stops in the background once "ready" (serving/warmup.warm_in_background):
        # a class starts on a server its teacher started before the lesson, so the runs wait for that to end
        settle = settle and "warm_in_background" in (tree / "serve.py").read_text()  # an older baseline does none
        began = time.monotonic()
        while settle and len(SETTLED.findall(Path(self.log.name).read_text())) < replicas:
            if self.process.poll() is not None or time.monotonic() > deadline + 300:
                self.stop()
                raise RuntimeError(f"serve.py's warm-up did not end:\n{Path(self.log.name).read_text()[-2000:]}")
            time.sleep(0.5)
        if settle:
            print(f"  serve.py ready, its lesson stops warm {time.monotonic() - began:.0f} s later", flush=True)

    def stop(self) -> None:
        if self.process.poll() is not None:
            return
        self.process.send_signal(signal.SIGTERM)
        self.process.wait(timeout=60)


def load(serve: Serve, options: list[str]) -> dict:
    out = Path(tempfile.mktemp(suffix=".json"))
    command = [sys.executable, "bench/load_classroom.py", "--url", serve.url, "--serve-state",
               str(serve.run_dir / "serve.json"), "--json", str(out), *options]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
    if not out.exists():
        raise RuntimeError(f"load_classroom failed ({done.returncode}):\n{done.stdout[-3000:]}\n{done.stderr[-2000:]}")
    result = json.loads(out.read_text())
    print(f"  raw results: {out}", flush=True)
    failed = result["failed_interactions"] + result["not_run"]
    killed = result.get("killed") or {}
    extra = (f", killed {killed.get('students_on_killed')} students' replica: reconnect p95 "
             f"{killed.get('reconnect_p95_s', float('nan')):.2f} s, failed there {killed.get('failed_on_killed')}, "
             f"elsewhere {killed.get('failed_elsewhere')}") if killed else ""
    print(f"  {serve.replicas} replica(s), {' '.join(options)}: {result['interactions_per_s']:.2f} interactions/s, "
          f"p50 {result['p50_s']:.2f} s, p95 {result['p95_s']:.2f} s, failed {failed}, server CPU per interaction "
          f"{result['server_cpu_s'] / max(1, len(result['interactions'])):.3f} s, load avg "
          f"{result['load_average_start'][0]:.1f}{extra}", flush=True)
    reasons = Counter(f"{r['kind']}: {r['error'][:80]}" for r in result["interactions"] if not r["ok"])
    for reason, count in reasons.most_common(5):
        print(f"    {count} × {reason}", flush=True)
    return result


def median(results: list[dict], key) -> float:
    return statistics.median(key(r) for r in results)


def row(label: str, results: list[dict]) -> str:
    loads = ", ".join(f"{r['load_average_start'][0]:.1f}" for r in results)
    failed = [r["failed_interactions"] + r["not_run"] for r in results]
    return (f"| {label} | {len(results)} | {median(results, lambda r: r['interactions_per_s']):.2f} | "
            f"{median(results, lambda r: r['p50_s']):.2f} s | {median(results, lambda r: r['p95_s']):.2f} s | "
            f"{failed} | {loads} |")


HEADER = "| setting | runs | interactions/s (median) | p50 (median) | p95 (median) | failed per run | load avg at starts |\n" \
         "|---|---|---|---|---|---|---|"


def baseline_tree(revision: str) -> Path:
    """`git archive` of `revision` in a temporary folder: the code to compare with, run by this Python."""
    tree = Path(tempfile.mkdtemp(prefix="serve-baseline-"))
    archive = subprocess.run(["git", "archive", revision], cwd=ROOT, capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(tree)], input=archive, check=True)
    return tree


def answers(args) -> list[str]:
    """class_answers.py through a fresh serve.py (2 replicas) per run: this tree, and the baseline's, alternating, each
    size of --students in turn; a summary table of every run."""
    trees = {"this tree": ROOT}
    if args.baseline:
        trees = {f"baseline {args.baseline}": baseline_tree(args.baseline), **trees}
    runs: list[tuple[str, int, dict]] = []
    for repeat in range(args.repeats):
        for students in args.students or [50]:
            for label, tree in trees.items():
                data = tempfile.mkdtemp(prefix="class-answers-")  # the run's class database and teacher password
                out = Path(tempfile.mktemp(suffix=".json"))
                serve = Serve(args.replicas, tree, {"ATTENTION_LAB_DATA": data})
                try:
                    print(f"\n### run {repeat + 1}, {label}, {students} students", flush=True)
                    subprocess.run([sys.executable, "bench/class_answers.py", "--url", serve.url, "--data", data,
                                    "--serve-state", str(serve.run_dir / "serve.json"), "--students", str(students),
                                    "--window", str(args.window), "--late-joiners", str(args.late_joiners),
                                    "--json", str(out), *(["--text"] if args.text else []),
                                    *(["--cell"] if args.cell else [])],
                                   cwd=ROOT, env={**os.environ, "ATTENTION_LAB_DATA": data})
                finally:
                    serve.stop()
                if out.exists():
                    runs.append((label, repeat + 1, json.loads(out.read_text())))
                    out.unlink()
                else:
                    print("  (no result: class_answers.py failed before its report)", flush=True)
    lines = ["| code | run | students | load before → after | stored | confirmation p50 / p95 / max | chart after the "
             "Reveal p50 / p95 / max | late joiners in | server CPU-s (per answer) | bench client CPU-s (share of the "
             "run's wall) | peak RSS per replica |", "|---|---|---|---|---|---|---|---|---|---|---|"]
    for label, number, r in runs:
        lines.append(f"| {label} | {number} | {r['students']} | {r['load_before']:.2f} → {r['load_after']:.2f} | "
                     f"{r['stored']} of {r['students']} | {spread(r['confirmation_s'])} | {spread(r['chart_s'])} | "
                     f"{r['joined']} of {r['late_joiners']} | {fmt_cpu(r['server_cpu_s'], r['students'])} | "
                     f"{r['client_cpu_s']:.1f} ({r['client_cpu_s'] / max(r['wall_s'], 1e-9):.0%}) | "
                     f"{rss(r['peak_rss_mib'])} |")
    return lines


def percentile(values: list[float], q: float) -> float:
    """Linear interpolation between closest ranks, as bench/classroom_report.percentile (not imported: it pulls
    Streamlit in)."""
    ordered = sorted(values)
    k = (len(ordered) - 1) * q / 100
    low = int(k)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (k - low)


def spread(values: list[float]) -> str:
    if not values:
        return "–"
    return (f"{statistics.median(values):.2f} / {percentile(values, 95):.2f} / {max(values):.2f} s")


def fmt_cpu(cpu: float | None, count: int) -> str:
    return "–" if cpu is None else f"{cpu:.1f} ({cpu / max(1, count):.3f})"


def rss(peaks: dict[str, float] | None) -> str:
    return ", ".join(f"{mib:,.0f}" for _, mib in sorted((peaks or {}).items())) + " MiB"


def cost(args) -> list[str]:
    """The realistic mix through serve.py (2 replicas), this tree against --baseline's, alternating, each size of
    --students in turn: CPU-s per interaction."""
    trees = {f"baseline {args.baseline}": baseline_tree(args.baseline)} if args.baseline else {}
    trees["this tree"] = ROOT
    sizes = args.students or [100]
    results: dict[tuple[str, int], list[dict]] = {(label, n): [] for n in sizes for label in trees}
    for _ in range(args.repeats):
        for students in sizes:
            options = ["--students", str(students), "--ramp", str(args.ramp), "--think", *map(str, args.think)]
            for label, tree in trees.items():
                serve = Serve(2, tree)
                try:
                    print(f"{label}, {students} students:", flush=True)
                    run = load(serve, options)
                    run["load_after"] = os.getloadavg()[0]
                    results[(label, students)].append(run)
                finally:
                    serve.stop()
    lines = ["| code | students | run | load before → after | interactions | server CPU-s per interaction | p50 | p95 "
             "| max | failed | bench client CPU-s per interaction (share of the run's wall) | peak RSS per replica |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    per_interaction = {}
    for (label, students), runs in results.items():
        per_interaction[(label, students)] = [r["server_cpu_s"] / max(1, len(r["interactions"])) for r in runs]
        for number, (r, cpu) in enumerate(zip(runs, per_interaction[(label, students)]), 1):
            longest = max((i["seconds"] for i in r["interactions"] if i["ok"] and i["seconds"] is not None),
                          default=float("nan"))
            lines.append(f"| {label} | {students} | {number} | {r['load_average_start'][0]:.2f} → "
                         f"{r['load_after']:.2f} | {len(r['interactions'])} | {cpu:.3f} | {r['p50_s']:.2f} s | "
                         f"{r['p95_s']:.2f} s | {longest:.2f} s | {r['failed_interactions'] + r['not_run']} | "
                         f"{r['client_cpu_s'] / max(1, len(r['interactions'])):.3f} "
                         f"({r['client_cpu_s'] / max(r['wall_s'], 1e-9):.0%}) | {rss(r.get('replica_peak_rss_mib'))} |")
    lines += ["\np95 by interaction (s), and of the interactions begun while the students joined (the first --ramp s) and after:", "",
              "| code | students | run | " + " | ".join(KINDS) + " | p95 in the ramp / after it |",
              "|---|---|---|" + "---|" * (len(KINDS) + 1)]
    for (label, students), runs in results.items():
        for number, r in enumerate(runs, 1):
            ok = [i for i in r["interactions"] if i["ok"] and i["seconds"] is not None]
            by_kind = [percentile([i["seconds"] for i in ok if i["kind"] == kind] or [math.nan], 95) for kind in KINDS]
            ramp = [i["seconds"] for i in ok if i["started"] <= args.ramp]
            after = [i["seconds"] for i in ok if i["started"] > args.ramp]
            lines.append(f"| {label} | {students} | {number} | " + " | ".join(f"{v:.2f}" for v in by_kind)
                         + f" | {percentile(ramp or [math.nan], 95):.2f} / {percentile(after or [math.nan], 95):.2f} |")
    medians = {key: statistics.median(v) for key, v in per_interaction.items()}
    if args.baseline:
        for students in sizes:
            base, this = medians[(f"baseline {args.baseline}", students)], medians[("this tree", students)]
            lines.append(f"\n{students} students, server CPU-s per interaction, medians: baseline {base:.3f}, this tree "
                         f"{this:.3f}; this / baseline = {this / base:.2f}")
    if len(sizes) > 1:
        small, large = min(sizes), max(sizes)
        for label in trees:
            lines.append(f"\n{label}, server CPU-s per interaction, medians: {small} students "
                         f"{medians[(label, small)]:.3f}, {large} students {medians[(label, large)]:.3f}; "
                         f"{large} / {small} = {medians[(label, large)] / medians[(label, small)]:.2f}")
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("mode", choices=["scaling", "capacity", "realistic", "herd", "kill", "answers", "cost"])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--students", type=int, nargs="+",
                        help="class size; answers and cost take several (e.g. 300 500), run in turn each repeat")
    parser.add_argument("--replicas", type=int, default=2, help="answers: serve.py's replicas (default 2)")
    parser.add_argument("--classes", type=int, nargs="+", default=[10, 20, 30, 45, 60])
    parser.add_argument("--kill-after", type=float, default=8.0)
    parser.add_argument("--window", type=float, default=2.0, help="answers: the class answers within this many s")
    parser.add_argument("--late-joiners", type=int, default=10, help="answers: students joining during the window")
    parser.add_argument("--text", action="store_true", help="answers: the intro's text question, typed (issue 55)")
    parser.add_argument("--baseline", help="answers, cost: also run this commit's code (git archive), alternating")
    parser.add_argument("--cell", action="store_true", help="answers: the class taps intro stop 12's cell question")
    parser.add_argument("--ramp", type=float, default=30.0, help="cost: the students join over this many s")
    parser.add_argument("--think", type=float, nargs=2, default=(5.0, 15.0), metavar=("MIN", "MAX"),
                        help="cost: each student's think time between clicks, uniform in [MIN, MAX] s")
    args = parser.parse_args()
    if args.mode not in ("answers", "cost") and args.students and len(args.students) > 1:
        parser.error(f"{args.mode} takes one --students")
    args.think = tuple(sorted(args.think))
    if args.mode == "answers":
        print("\n" + "\n".join(answers(args)))
        return 0
    if args.mode == "cost":
        if not args.baseline and len(args.students or []) < 2:
            parser.error("cost compares with a baseline (--baseline COMMIT) or across sizes (--students 300 500)")
        print("\n" + "\n".join(cost(args)))
        return 0
    args.students = args.students[0] if args.students else None
    fast = ["--think", "0.5", "1.5", "--ramp", "5"]
    lines = []
    if args.mode in ("scaling", "capacity"):
        serves = {n: Serve(n) for n in (1, 2)}
        try:
            if args.mode == "scaling":
                students = str(args.students or 60)
                results = {1: [], 2: []}
                for _ in range(args.repeats):
                    for n in (1, 2):
                        results[n].append(load(serves[n], ["--students", students, *fast]))
                lines += [row(f"{n} replica(s), {students} students, think 0.5–1.5 s", results[n]) for n in (1, 2)]
                ratio = (median(results[2], lambda r: r["interactions_per_s"])
                         / median(results[1], lambda r: r["interactions_per_s"]))
                lines.append(f"\n2 replicas / 1 replica, interactions/s (medians): {ratio:.2f}× (target ≥ 1.7×)")
            else:
                for students in args.classes:
                    for n in (1, 2):
                        runs = [load(serves[n], ["--students", str(students), *fast]) for _ in range(args.repeats)]
                        lines.append(row(f"{n} replica(s), {students} students, think 0.5–1.5 s", runs))
        finally:
            for serve in serves.values():
                serve.stop()
    elif args.mode in ("realistic", "kill"):
        serve = Serve(2)
        try:
            students = str(args.students or (100 if args.mode == "realistic" else 30))
            options = (["--ramp", "30", "--think", "5", "15"] if args.mode == "realistic"
                       else [*fast, "--kill-replica-after", str(args.kill_after)])
            runs = []
            for _ in range(args.repeats):
                runs.append(load(serve, ["--students", students, *options]))
                if args.mode == "kill":  # the killed replica must be back before the next run
                    deadline = time.monotonic() + 180
                    state = serve.run_dir / "serve.json"
                    while not all(r["state"] == "ready" for r in json.loads(state.read_text())["replicas"].values()):
                        if time.monotonic() > deadline:
                            raise RuntimeError("the killed replica did not come back")
                        time.sleep(0.5)
            lines.append(row(f"2 replicas, {students} students, {' '.join(options)}", runs))
            if args.mode == "kill":
                k = [r["killed"] for r in runs]
                lines.append(f"\nreconnect p95 per run: {[round(x['reconnect_p95_s'], 2) for x in k]} s; students on "
                             f"the killed replica {[x['students_on_killed'] for x in k]}; their failed interactions "
                             f"{[x['failed_on_killed'] for x in k]}; failed interactions elsewhere "
                             f"{[x['failed_elsewhere'] for x in k]}")
        finally:
            serve.stop()
    else:  # herd: a fresh serve.py for every run
        students = str(args.students or 30)
        runs = []
        for _ in range(args.repeats):
            serve = Serve(2, settle=False)
            try:
                runs.append(load(serve, ["--students", students, "--cold-herd"]))
            finally:
                serve.stop()
        lines.append(row(f"2 replicas, cold herd of {students} right after ready", runs))
    print()
    print(HEADER)
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())

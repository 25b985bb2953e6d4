"""The tables bench/load_classroom.py prints (markdown, ready for bench/README.md) and the JSON it can save.

Latency per interaction kind (p50/p95/p99/max), throughput, server CPU per interaction, failures by reason, the
models each student asked for against the server's "loaded shipped model" log lines, the sha256 of every shipped
checkpoint before and after, and, when a replica was killed mid-run, the failed interactions on it and elsewhere
and the reconnect times of its students.
"""
from __future__ import annotations

import datetime
import math
import os
import platform
import re
from collections import Counter, defaultdict
from dataclasses import asdict, dataclass, field
from pathlib import Path

from streamlit import __version__ as STREAMLIT_VERSION

from classroom_students import DEFAULT_MODEL, Student


@dataclass
class RunRecord:
    """What the run measured besides the students' own records."""
    target: str  # "own server" or the --url
    replicas: int
    samples: list  # (t, RSS MiB, threads, CPU s) of the server processes, summed over replicas
    timed_out: bool
    wall: float
    healthy: float | None
    load_before: tuple
    client_cpu: float
    hashes_before: dict = field(default_factory=dict)
    hashes_after: dict = field(default_factory=dict)
    loads: Counter | None = None  # model name -> "loaded shipped model" lines (own server only)
    problems: list[str] = field(default_factory=list)
    killed: dict | None = None  # {"replica", "pid", "at"} when --kill-replica-after
    replica_peak_rss: dict | None = None  # replica name -> peak RSS MiB (serve.py's replicas; None: own server)


def percentile(values: list[float], q: float) -> float:
    """Linear interpolation between closest ranks (numpy's default)."""
    if not values:
        return math.nan
    ordered = sorted(values)
    k = (len(ordered) - 1) * q / 100
    low = math.floor(k)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (k - low)


def ms(seconds: float) -> str:
    return "–" if math.isnan(seconds) else f"{seconds * 1000:,.0f} ms"


def machine() -> str:
    cpus = len(os.sched_getaffinity(0))
    memory = ""
    try:
        kib = int(re.search(r"MemTotal:\s+(\d+)", Path("/proc/meminfo").read_text()).group(1))
        memory = f", {kib / 2**20:.0f} GiB"
    except (OSError, AttributeError):
        pass
    return f"{platform.system()} {platform.machine()}, {cpus} CPUs (os.cpu_count {os.cpu_count()}){memory}"


def _kill_report(students: list[Student], run: RunRecord) -> dict:
    killed = run.killed
    on_dead = {s.index for s in students for r in s.reconnects if r.replica_before == killed["replica"]}
    failed_dead = [r for s in students if s.index in on_dead for r in s.results if not r.ok]
    failed_other = [r for s in students if s.index not in on_dead for r in s.results if not r.ok]
    reconnects = [r for s in students for r in s.reconnects]
    seconds = [r.seconds for r in reconnects if r.ok and r.seconds is not None]
    print()
    print(f"### replica {killed['replica']} (pid {killed['pid']}) killed with SIGKILL at {killed['at']:.1f} s")
    print(f"students on it: {len(on_dead)}; reconnected: {len(seconds)} of {len(reconnects)} reconnects ok, "
          f"to {dict(Counter(r.replica_after for r in reconnects if r.ok))}; same view (query string) after "
          f"reconnect: {sum(r.same_view for r in reconnects if r.ok)}")
    print(f"reconnect time p50 {ms(percentile(seconds, 50))}, p95 {ms(percentile(seconds, 95))}, "
          f"max {ms(max(seconds, default=math.nan))} (target p95 ≤ 5 s)")
    print(f"failed interactions of its students: {len(failed_dead)} "
          f"({', '.join(sorted({r.error[:60] for r in failed_dead})) or '-'}); "
          f"failed interactions of the other students: {len(failed_other)} (target 0)")
    for r in reconnects:
        if not r.ok:
            print(f"  student {r.student}: reconnect failed: {r.error[:200]}")
    return {"students_on_killed": len(on_dead), "reconnects": [asdict(r) for r in reconnects],
            "reconnect_p50_s": percentile(seconds, 50), "reconnect_p95_s": percentile(seconds, 95),
            "failed_on_killed": len(failed_dead), "failed_elsewhere": len(failed_other)}


def report(args, students: list[Student], run: RunRecord) -> dict:
    results = [r for s in students for r in s.results]
    planned = {s.index: len(s.plan) for s in students}
    done = Counter(r.student for r in results if r.kind != "connect")
    not_run = sum(max(0, planned[i] - done[i]) for i in planned)
    failed = [r for r in results if not r.ok]
    failed_sessions = {r.student for r in failed} | {i for i in planned if done[i] < planned[i]}
    ok = [r for r in results if r.ok and r.seconds is not None]
    by_kind: dict[str, list] = defaultdict(list)
    for r in results:
        if r.kind != "connect":
            by_kind[r.kind].append(r)
    overall = [r.seconds for r in ok]
    samples = run.samples
    peak_rss = max((s[1] for s in samples), default=math.nan)
    peak_threads = max((s[2] for s in samples), default=0)
    server_cpu = samples[-1][3] - samples[0][3] if len(samples) > 1 else math.nan
    connects = [s.connect_seconds for s in students if s.connect_seconds is not None]
    mode = "cold herd" if args.cold_herd else "classroom"
    today = datetime.date.today().isoformat()
    replicas = Counter(r.replica for r in results if r.kind == "load" and r.ok)

    print()
    print(f"## {mode}: {args.students} students, {len(results)} interactions in {run.wall:.1f} s"
          + (" (global timeout reached)" if run.timed_out else ""))
    print(f"target: {run.target}, {run.replicas} replica(s); students per replica at first load: "
          f"{dict(replicas) if any(replicas) else 'no proxy cookie'}")
    healthy = f"server healthy after {run.healthy:.1f} s; " if run.healthy is not None else ""
    print(f"{healthy}load average at start {run.load_before[0]:.2f}; websocket connect "
          f"(3 HTTP GETs + handshake) p50 {ms(percentile(connects, 50))}, max {ms(max(connects, default=math.nan))}")
    print(f"throughput {len(ok) / run.wall:.2f} interactions/s; server CPU {server_cpu:.1f} s = "
          f"{server_cpu / max(1, len(ok)):.3f} s per interaction, {server_cpu / run.wall:.2f} cores on average; this "
          f"load generator's CPU {run.client_cpu:.1f} s (same {len(os.sched_getaffinity(0))} CPUs); ForwardMsg bytes "
          f"received {sum(s.bytes_in for s in students) / 2**20:.1f} MiB; fragment-only reruns "
          f"{sum(s.fragment_runs for s in students)}")
    if run.replica_peak_rss:
        print("peak RSS per replica: " + ", ".join(f"{name} {mib:,.0f} MiB"
                                                   for name, mib in sorted(run.replica_peak_rss.items())))
    print()
    print("| interaction | n | ok | p50 | p95 | p99 | max |")
    print("|---|---|---|---|---|---|---|")
    for kind in sorted(by_kind, key=lambda k: min(r.step for r in by_kind[k])):
        values = [r.seconds for r in by_kind[kind] if r.ok and r.seconds is not None]
        print(f"| {kind} | {len(by_kind[kind])} | {len(values)} | {ms(percentile(values, 50))} | "
              f"{ms(percentile(values, 95))} | {ms(percentile(values, 99))} | {ms(max(values, default=math.nan))} |")
    print(f"| **all** | {sum(len(v) for v in by_kind.values())} | {len(overall)} | {ms(percentile(overall, 50))} | "
          f"{ms(percentile(overall, 95))} | {ms(percentile(overall, 99))} | {ms(max(overall, default=math.nan))} |")
    if failed or not_run:
        print()
        print(f"failures: {len(failed)} interactions failed, {not_run} planned interactions not run")
        for reason, count in Counter(f"{r.kind}: {r.error}" for r in failed).most_common(10):
            print(f"  {count} × {reason}")
    if run.problems:
        print()
        print(f"server log: {len(run.problems)} lines look like errors, first ones:")
        for line in run.problems[:8]:
            print("  " + line[:200])
    killed = _kill_report(students, run) if run.killed else None

    loads_ok = True
    if run.loads is not None:
        print()
        print("| model | students who asked for it | 'loaded shipped model' lines | files sha256 before = after | "
              "state_dict sha256 before = after |")
        print("|---|---|---|---|---|")
        wanted: Counter = Counter()
        for s in students:
            kinds = {r.kind for r in s.results}
            wanted[DEFAULT_MODEL] += "load" in kinds  # the attention page opens with the default model
            if s.model and "model" in kinds:
                wanted[s.model] += 1
        for name in sorted(set(run.hashes_before) | set(run.loads)):
            count = run.loads.get(name, 0)
            if wanted[name]:
                loads_ok &= count == 1
            before, after = run.hashes_before.get(name, {}), run.hashes_after.get(name, {})
            same_files = before.get("files") == after.get("files")
            same_state = before.get("state_dict") == after.get("state_dict")
            print(f"| {name} | {wanted[name]} | {count} | {'yes' if same_files else '**NO**'} | "
                  f"{'yes' if same_state else '**NO**'} ({after.get('state_dict', '?')[:12]}…) |")
        print(f"each model that was asked for loaded exactly once: {'yes' if loads_ok else '**NO**'}")

    target_met = not failed and not not_run and percentile(overall, 95) <= 2.0
    print()
    print("| date | machine | mode | replicas | N | interactions | interactions/s | p50 | p95 | p99 | failed sessions "
          "| failed interactions | server CPU per interaction | bench client CPU per interaction (same cores) "
          "| peak RSS | peak threads | target (0 failed, p95 ≤ 2 s) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    print(f"| {today} | {machine()}, load avg {run.load_before[0]:.1f} | {mode}, think {args.think[0]:g}–"
          f"{args.think[1]:g} s, ramp {args.ramp:g} s | {run.replicas} | {args.students} | {len(results)} | "
          f"{len(ok) / run.wall:.2f} | {ms(percentile(overall, 50))} | {ms(percentile(overall, 95))} | "
          f"{ms(percentile(overall, 99))} | {len(failed_sessions)} | {len(failed) + not_run} | "
          f"{server_cpu / max(1, len(ok)):.3f} s | {run.client_cpu / max(1, len(ok)):.3f} s | "
          f"{peak_rss:,.0f} MiB | {peak_threads} | "
          f"{'met' if target_met else '**not met**'} |")
    return {"date": today, "machine": machine(), "python": platform.python_version(),
            "streamlit": STREAMLIT_VERSION, "mode": mode, "target": run.target, "replicas": run.replicas,
            "args": vars(args), "wall_s": run.wall, "timed_out": run.timed_out, "server_healthy_s": run.healthy,
            "load_average_start": run.load_before, "server_cpu_s": server_cpu, "client_cpu_s": run.client_cpu,
            "interactions_per_s": len(ok) / run.wall, "p50_s": percentile(overall, 50),
            "p95_s": percentile(overall, 95), "p99_s": percentile(overall, 99),
            "failed_sessions": sorted(failed_sessions), "failed_interactions": len(failed), "not_run": not_run,
            "peak_rss_mib": peak_rss, "peak_threads": peak_threads, "replica_peak_rss_mib": run.replica_peak_rss,
            "model_loads": dict(run.loads) if run.loads is not None else None, "models_loaded_once": loads_ok,
            "hashes_before": run.hashes_before, "hashes_after": run.hashes_after, "killed": killed,
            "samples": [{"t": t, "rss_mib": r, "threads": n, "cpu_s": c} for t, r, n, c in samples],
            "interactions": [asdict(r) for r in results], "target_met": target_met}

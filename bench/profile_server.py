"""Where a real server's CPU goes per interaction: cProfile inside `streamlit run app.py`.

    python bench/profile_server.py [--repeat 3] [--top 25] [--out /tmp/attention-lab-profile]

Starts `streamlit run app.py` on 127.0.0.1 through a small wrapper (this file with --serve) that profiles every
script run with cProfile in its own thread (ScriptRunner._run_script is wrapped; thread CPU from
time.thread_time) and the server's main thread (the tornado event loop that serialises and sends ForwardMsgs)
for the whole run. One protocol-level student from bench/load_classroom.py then plays, strictly one interaction at
a time: open /attention (cold: model load and analysis), switch the head --repeat times, switch the layer, visit
/decoding and /positional; then a second student opens /attention on the warm server. Each script run is matched to
the interaction that triggered it by time. Prints per-interaction wall / CPU, where the CPU went by package, the
top functions, and torch's intra-op / inter-op thread counts as seen from inside a script run.
"""
from __future__ import annotations

import argparse
import asyncio
import cProfile
import io
import json
import math
import os
import pstats
import signal
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# Package buckets for self time (tottime), matched on the function's file path, first match wins.
BUCKETS = [
    ("plotly: figure building/validation", ("/plotly/graph_objs", "/plotly/basedatatypes", "/_plotly_utils/",
                                            "/plotly/validator", "/plotly/validators", "/plotly/subplots",
                                            "/plotly/express", "/plotly/colors", "/plotly/shapeannotation",
                                            "/plotly/_subplots", "/plotly/io/_templates", "/plotly/io/_base_renderers")),
    ("plotly: to_json", ("/plotly/io/_json", "/plotly/utils", "json/encoder", "json/decoder", "orjson")),
    ("plotly: other", ("/plotly/",)),
    ("protobuf", ("/google/protobuf", "_pb2")),
    ("streamlit: plotly_chart element", ("/streamlit/elements/plotly_chart",)),
    ("streamlit: other elements", ("/streamlit/elements/",)),
    ("streamlit: session state / widgets", ("/streamlit/runtime/state/",)),
    ("streamlit: caching", ("/streamlit/runtime/caching/",)),
    ("streamlit: runtime / scriptrunner / forward msgs", ("/streamlit/runtime/", "/streamlit/web/", "/tornado/")),
    ("streamlit: other", ("/streamlit/",)),
    ("torch", ("/torch/",)),
    ("numpy", ("/numpy/",)),
    ("pandas", ("/pandas/",)),
    ("app: viz/", (str(ROOT / "viz"),)),
    ("app: ui/ + runtime/ + app_pages/ + app.py + i18n/", (str(ROOT / "ui"), str(ROOT / "runtime"),
                                                           str(ROOT / "app_pages"), str(ROOT / "app.py"),
                                                           str(ROOT / "i18n"))),
    ("app: model/", (str(ROOT / "model"),)),
    ("python stdlib / builtins", ("/lib/python3", "~", "<")),
]
# Functions whose cumulative time is worth naming (substring of 'file:line(function)').
KEY_FUNCTIONS = [
    ("st.plotly_chart (whole call)", "plotly_chart.py", "plotly_chart"),
    ("plotly Figure(...) constructors", "basedatatypes.py", "__init__"),
    ("fig.update_layout / update_*", "basedatatypes.py", "update_layout"),
    ("plotly to_json / to_plotly_json", "_json.py", "to_json_plotly"),
    ("viz.attention.attention_heatmap", "viz/attention.py", "attention_heatmap"),
    ("viz.attention.attention_lines", "viz/attention.py", "attention_lines"),
    ("ui.sidebar.render_sidebar", "ui/sidebar.py", "render_sidebar"),
    ("ui.share.restore_from_url / write_to_url", "ui/share.py", "_url"),
    ("model.decode.greedy_decode", "model/decode.py", "greedy_decode"),
    ("cached_model (cache_resource)", "ui/models.py", "cached_model"),
    ("st.cache_data lookups (get_or_create_cached_value)", "cache_utils.py", "_get_or_create_cached_value"),
    ("protobuf SerializeToString", "", "SerializeToString"),
    ("dataframe / arrow", "arrow", ""),
    ("st.download_button", "elements/widgets/button.py", "download_button"),
]


# --------------------------------------------------------------------------------- inside the server

def serve(out: Path, argv: list[str], enabled: bool) -> None:
    """Run streamlit with every script run profiled (one .prof + .json per run) and the main thread profiled.

    cProfile measures thread CPU time (time.thread_time), so waiting (locks, I/O, sleeps) is not counted.
    With enabled False only each run's wall and thread CPU are recorded (no profiler overhead).
    """
    import threading

    from streamlit.runtime.scriptrunner import script_runner

    out.mkdir(parents=True, exist_ok=True)
    counter = iter(range(1, 10**9))
    lock = threading.Lock()
    original = script_runner.ScriptRunner._run_script

    def profiled(self, rerun_data):
        with lock:
            number = next(counter)
        profile = cProfile.Profile(time.thread_time)
        started, cpu0 = time.time(), time.thread_time()
        if enabled:
            profile.enable()
        try:
            return original(self, rerun_data)
        finally:
            profile.disable()
            cpu = time.thread_time() - cpu0
            wall = time.time() - started
            torch_threads = None
            if "torch" in sys.modules:
                import torch
                torch_threads = [torch.get_num_threads(), torch.get_num_interop_threads()]
            if enabled:
                profile.dump_stats(out / f"run{number:04d}.prof")
            (out / f"run{number:04d}.json").write_text(json.dumps(
                {"started": started, "wall_s": wall, "thread_cpu_s": cpu, "page_name": rerun_data.page_name,
                 "page_script_hash": rerun_data.page_script_hash, "torch_threads": torch_threads,
                 "thread": threading.current_thread().name}))

    script_runner.ScriptRunner._run_script = profiled
    main_profile = cProfile.Profile(time.thread_time)

    def dump_main(*_):
        if enabled:
            main_profile.disable()
            main_profile.dump_stats(out / "main_thread.prof")
        os._exit(0)

    signal.signal(signal.SIGTERM, dump_main)
    from streamlit.web import cli

    sys.argv = ["streamlit", "run", *argv]
    if enabled:
        main_profile.enable()
    try:
        cli.main()
    finally:
        dump_main()


# ------------------------------------------------------------------------------------------ the driver

def bucket_of(filename: str) -> str:
    for name, needles in BUCKETS:
        if any(n in filename for n in needles):
            return name
    return "other"


def summarise(stats: pstats.Stats, top: int, title: str, total_cpu: float | None = None) -> dict:
    by_bucket: dict[str, float] = defaultdict(float)
    for (filename, _, _), (_, _, tt, _, _) in stats.stats.items():
        by_bucket[bucket_of(filename)] += tt
    total = sum(by_bucket.values())
    print(f"\n### {title}: profiled self time {total * 1000:,.0f} ms"
          + (f" (thread CPU {total_cpu * 1000:,.0f} ms)" if total_cpu is not None else ""))
    print("\n| where (self time) | ms | share |\n|---|---|---|")
    for name, tt in sorted(by_bucket.items(), key=lambda kv: -kv[1]):
        if tt >= 0.001:
            print(f"| {name} | {tt * 1000:,.0f} | {tt / total:.0%} |")
    print("\n| key function (cumulative) | ms | calls |\n|---|---|---|")
    keys = {}
    for label, file_part, function_part in KEY_FUNCTIONS:
        best = (0.0, 0)
        for (filename, _, function), (_, nc, _, ct, _) in stats.stats.items():
            if file_part in filename and function_part in function:
                # the outermost matching entry: cumulative times of recursive/nested matches are not summed
                if ct > best[0]:
                    best = (ct, nc)
        keys[label] = best
        if best[0] >= 0.001:
            print(f"| {label} | {best[0] * 1000:,.0f} | {best[1]} |")
    stream = io.StringIO()
    stats.stream = stream
    stats.sort_stats("tottime").print_stats(top)
    text = stream.getvalue()
    body = text[text.find("ncalls"):]
    print("\n<details><summary>top functions by self time</summary>\n\n```\n" + body.rstrip() + "\n```\n</details>")
    return {"buckets": dict(by_bucket), "keys": keys}


def process_cpu(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def drive(port: int, plan: list[tuple[str, list[str]]], marks: list, pid: int) -> None:
    """Students one after the other, one interaction at a time; marks get (label, send time)."""
    sys.path.insert(0, str(ROOT))
    sys.path.insert(0, str(ROOT / "bench"))
    from classroom_students import Student

    class Args:
        think = (0.3, 0.3)  # let the server settle between interactions (runs must not overlap)
        interaction_timeout = 120.0
        seed = 0

    process_seconds = defaultdict(list)

    async def play():
        for number, (name, steps) in enumerate(plan):
            student = Student(number, f"http://127.0.0.1:{port}", steps, Args, time.perf_counter())
            original = student.interact

            async def interact(step, kind, student=student, original=original, name=name):
                marks.append((f"{name}: {kind}", time.time()))
                cpu = process_cpu(pid)
                ok = await original(step, kind)
                await asyncio.sleep(0.5)  # any follow-up run (fragment, st.rerun) finishes before the next action
                process_seconds[f"{name}: {kind}"].append(process_cpu(pid) - cpu)
                return ok

            student.interact = interact
            await student.run(0.0, None)
            for r in student.results:
                if not r.ok:
                    print(f"  {name} {r.kind} failed: {r.error}", file=sys.stderr)
                else:
                    print(f"  {name} {r.kind}: {r.seconds * 1000:,.0f} ms to script_finished", flush=True)

    asyncio.run(play())
    return process_seconds


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] in ("--serve", "--serve-unprofiled"):
        serve(Path(sys.argv[2]), sys.argv[3:], enabled=sys.argv[1] == "--serve")
        return 0
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=3, help="head switches")
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument("--out", type=Path, default=Path("/tmp/attention-lab-profile"))
    parser.add_argument("--no-profile", action="store_true",
                        help="only time each run (wall, thread CPU) and the server's process CPU per interaction")
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    sys.path.insert(0, str(ROOT / "bench"))
    from load_classroom import HOST, free_port
    from serving.streamlit_client import http_get

    for old in args.out.glob("*"):
        old.unlink()
    port = free_port()
    load = os.getloadavg()
    args.out.mkdir(parents=True, exist_ok=True)
    mode = "--serve-unprofiled" if args.no_profile else "--serve"
    server = subprocess.Popen([sys.executable, __file__, mode, str(args.out), "app.py", "--server.headless",
                               "true", "--server.address", HOST, "--server.port", str(port),
                               "--browser.gatherUsageStats", "false"], cwd=ROOT, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    marks: list = []
    try:
        deadline = time.time() + 120
        while http_get(f"http://{HOST}:{port}/_stcore/health", timeout=1.0)[0] != 200:
            if time.time() > deadline or server.poll() is not None:
                raise RuntimeError("the profiled server did not start")
            time.sleep(0.2)
        # On the decoding page, Next as the browser sends it (a fragment rerun) and the same click as a full rerun.
        steps = ["step", "step_full"] * max(args.repeat // 2, 1)
        plan = [("student 1 (cold server)", ["load"] + ["head"] * args.repeat + ["layer", "page:decoding", *steps,
                                                                               "page:positional"]),
                ("student 2 (warm server)", ["load", "head", "page:decoding", *steps, "page:positional"])]
        process_seconds = drive(port, plan, marks, server.pid)
    finally:
        server.send_signal(signal.SIGTERM)
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
    runs = []
    for meta in sorted(args.out.glob("run*.json")):
        info = json.loads(meta.read_text())
        label = next((name for name, sent in reversed(marks) if sent <= info["started"] + 0.05), "before any")
        runs.append((label, info, meta.with_suffix(".prof")))
    print(f"\nload average at start {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}, at end {os.getloadavg()[0]:.2f}")
    print(f"\n{'cProfile on (times inflated by the profiler)' if not args.no_profile else 'no profiler'}; "
          "server process CPU = all threads, from /proc, action to 0.5 s after script_finished")
    print("\n| interaction | script runs | run wall | run thread CPU | server process CPU | "
          "torch threads (intra, inter-op) in the run |")
    print("|---|---|---|---|---|---|")
    grouped: dict[str, list] = defaultdict(list)
    for label, info, prof in runs:
        grouped[label].append((info, prof))
    for label, items in grouped.items():
        print(f"| {label} | {len(items)} | {sum(i['wall_s'] for i, _ in items) * 1000:,.0f} ms | "
              f"{sum(i['thread_cpu_s'] for i, _ in items) * 1000:,.0f} ms | "
              f"{sum(process_seconds.get(label, [math.nan])) * 1000:,.0f} ms | {items[-1][0]['torch_threads']} |")
    if args.no_profile:
        return 0
    kinds = defaultdict(list)
    for label, items in grouped.items():
        kind = label.split(": ")[-1] + (" (cold)" if label.startswith("student 1") and label.endswith("load") else "")
        kinds[kind].extend(items)
    for kind, items in kinds.items():
        stats = pstats.Stats(str(items[0][1]))
        for _, prof in items[1:]:
            stats.add(str(prof))
        summarise(stats, args.top, f"script thread, {kind} ({len(items)} runs)",
                  sum(i["thread_cpu_s"] for i, _ in items))
    main_prof = args.out / "main_thread.prof"
    if main_prof.exists():
        summarise(pstats.Stats(str(main_prof)), args.top, "server main thread (event loop), whole session")
    return 0


if __name__ == "__main__":
    sys.exit(main())

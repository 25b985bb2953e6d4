"""Classroom load: N simulated students use the app the way a browser does, on one server or through a proxy.

    python bench/load_classroom.py [--students 30] [--ramp 5] [--think 0.5 1.5] [--timeout 300]
    python bench/load_classroom.py --cold-herd [--students 30]
    python bench/load_classroom.py --url http://127.0.0.1:8500 [--kill-replica-after 20]   # serve.py running

Without --url the script starts its own server (`python -m streamlit run app.py --server.headless true`,
127.0.0.1, a free port, `--logger.level info`) and stops it at the end, also on Ctrl-C, SIGTERM and errors.
With --url it targets a running server or serve.py's HAProxy; the students keep every cookie they are given
(HAProxy's sticky cookie and the XSRF cookie), like a browser. When serve.py runs, its state file
(run/serve.json: the replicas' names, ports and pids) lets the script sample the replicas' CPU and memory, and
--kill-replica-after S sends SIGKILL to the replica that holds the most students S seconds into the run: the
students reconnect as the front end does, and the report gives the failed interactions on that replica and on
the others and the reconnect times.

The pieces: serving/streamlit_client.py speaks Streamlit's protocol (HTTP, websocket, protobufs);
bench/classroom_students.py is what each student does and times; bench/classroom_report.py prints the tables.

--cold-herd: a freshly started server (or serve.py just after "ready", with --url); all N students open their
websockets, wait at a barrier and request the attention page at the same instant, then each switches the sidebar
model to one of the other shipped models (round robin) and visits the decoding and positional pages. With its
own server, the server's stderr is read for "loaded shipped model NAME" (ui/models.py::cached_model,
st.cache_resource): each model requested must be loaded exactly once.

Every 0.5 s the server processes' RSS, threads and CPU are read from /proc. Before and after the run the sha256
of every shipped checkpoint file and of the state dict loaded from it are recorded (own server only). The script
ends with markdown tables; --json PATH also saves raw results.
"""
from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import os
import re
import resource
import signal
import socket
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from classroom_report import RunRecord, report  # noqa: E402
from classroom_students import Student, plan_for  # noqa: E402
from serving.streamlit_client import http_get  # noqa: E402
from serving.warmup import WARMUP_ENV  # noqa: E402

CHECKPOINT_DIR = ROOT / "assets" / "checkpoints"
SERVE_STATE = ROOT / "run" / "serve.json"  # written by serve.py
HOST = "127.0.0.1"
MAX_STUDENTS = 500  # a lecture hall (issue 57); each student is a websocket and an asyncio task here
LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"  # the server's log lines name their logger
LOAD_LINE = re.compile(r"attention_lab\.models: loaded shipped model (\S+)")
SERVER_PROBLEM = re.compile(r"Traceback|\bERROR\b|\bCRITICAL\b|Exception")
PROC_CLOCK = os.sysconf("SC_CLK_TCK")


# --------------------------------------------------------------------------------------------- the server

def free_port() -> int:
    with socket.socket() as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


def process_status(pid: int) -> tuple[float, int, float] | None:
    """(RSS MiB, threads, CPU seconds) from /proc, or None when the process is gone."""
    try:
        fields = dict(line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines()
                      if ":" in line)
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    if "VmRSS" not in fields:  # a zombie
        return None
    cpu_ticks = stat.rsplit(")", 1)[1].split()
    cpu = (int(cpu_ticks[11]) + int(cpu_ticks[12])) / PROC_CLOCK  # utime + stime
    return int(fields["VmRSS"].split()[0]) / 1024, int(fields["Threads"]), cpu


class Server:
    """`streamlit run app.py` on 127.0.0.1; its merged stdout/stderr is read by a thread."""

    def __init__(self, port: int):
        self.port = port
        self.url = f"http://{HOST}:{port}"
        self.lines: list[str] = []
        self.loads: Counter[str] = Counter()
        self.problems: list[str] = []
        self.process: subprocess.Popen | None = None
        self._reader: threading.Thread | None = None

    def start(self, timeout: float) -> float:
        command = [sys.executable, "-m", "streamlit", "run", "asgi.py", "--server.headless", "true",
                   "--server.address", HOST, "--server.port", str(self.port), "--browser.gatherUsageStats", "false",
                   "--logger.level", "info", "--logger.messageFormat", LOG_FORMAT]
        start = time.perf_counter()
        self.process = subprocess.Popen(command, cwd=ROOT, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                        stderr=subprocess.STDOUT, env={**os.environ, "PYTHONUNBUFFERED": "1", WARMUP_ENV: "0"})
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        while time.perf_counter() - start < timeout:
            if self.process.poll() is not None:
                raise RuntimeError(f"streamlit exited with code {self.process.returncode}:\n"
                                   + "".join(self.lines[-30:]))
            if http_get(f"{self.url}/_stcore/health", timeout=1.0)[0] == 200:
                return time.perf_counter() - start
            time.sleep(0.1)
        raise RuntimeError(f"streamlit did not become healthy within {timeout:.0f} s")

    def _read(self) -> None:
        assert self.process is not None and self.process.stdout is not None
        for raw in self.process.stdout:
            line = raw.decode("utf-8", "replace")
            self.lines.append(line)
            match = LOAD_LINE.search(line)
            if match:
                self.loads[match.group(1)] += 1
            elif SERVER_PROBLEM.search(line):
                self.problems.append(line.rstrip())

    def status(self) -> tuple[float, int, float] | None:
        return None if self.process is None else process_status(self.process.pid)

    def stop(self) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        self.process.terminate()
        try:
            self.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=5)
        if self._reader is not None:
            self._reader.join(timeout=5)


def read_serve_state(path: Path) -> dict | None:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


class ReplicaSampler:
    """The summed status of serve.py's replicas (re-read from its state file: a restarted replica has a new pid).
    CPU is summed over every pid seen, so a replica that dies keeps the CPU it used."""

    def __init__(self, state_path: Path):
        self.state_path = state_path
        self.cpu_by_pid: dict[int, float] = {}
        self.peak_rss_by_replica: dict[str, float] = {}  # replica name -> its largest RSS sample, MiB

    def pids(self) -> dict[str, int]:
        state = read_serve_state(self.state_path) or {}
        return {name: r["pid"] for name, r in state.get("replicas", {}).items() if r.get("pid")}

    def status(self) -> tuple[float, int, float] | None:
        rss = threads = 0
        for name, pid in self.pids().items():
            status = process_status(pid)
            if status is not None:
                rss, threads = rss + status[0], threads + status[1]
                self.cpu_by_pid[pid] = status[2]
                self.peak_rss_by_replica[name] = max(self.peak_rss_by_replica.get(name, 0.0), status[0])
        return (rss, threads, sum(self.cpu_by_pid.values())) if self.cpu_by_pid else None


# -------------------------------------------------------------------------------------------- the run

async def drive(args, base_url: str, sampler, models: list[str], samples: list,
                killed: dict) -> tuple[list[Student], bool, float]:
    if args.warmup:  # one untimed visit first, as when the teacher has opened the app before the class
        teacher = Student(-1, base_url, ["load"], args, time.perf_counter())
        await asyncio.wait_for(teacher.run(0.0, None), args.interaction_timeout + 30)
        if not all(r.ok for r in teacher.results):
            print(f"warm-up visit failed: {[r.error for r in teacher.results]}", file=sys.stderr)
    t0 = time.perf_counter()
    students = []
    for i in range(args.students):
        plan, model = plan_for(args.cold_herd, i, models)
        students.append(Student(i, base_url, plan, args, t0, model))
    barrier = (asyncio.Event(), []) if args.cold_herd else None
    delays = [0.0 if args.cold_herd else args.ramp * i / max(1, args.students) for i in range(args.students)]
    tasks = [asyncio.create_task(s.run(d, barrier)) for s, d in zip(students, delays)]

    async def sample() -> None:
        planned = sum(len(s.plan) for s in students)
        while True:
            status = sampler.status() if sampler is not None else None
            if status is not None:
                samples.append((time.perf_counter() - t0, *status))
                if len(samples) % 20 == 0:  # a progress line every 10 s
                    done = sum(1 for s in students for r in s.results if r.kind != "connect")
                    print(f"  {samples[-1][0]:5.0f} s: {done}/{planned} interactions, server RSS {status[0]:,.0f} MiB, "
                          f"{status[1]} threads", flush=True)
            await asyncio.sleep(0.5)

    async def kill_one_replica() -> None:
        await asyncio.sleep(args.kill_replica_after)
        holding = Counter(s.replica for s in students if s.replica and s.client.closed is None)
        pids = sampler.pids()
        name = next((n for n, _ in holding.most_common() if n in pids), None)
        if name is None:
            print(f"--kill-replica-after: no replica to kill (students on {dict(holding)}, replicas {pids})",
                  file=sys.stderr)
            return
        os.kill(pids[name], signal.SIGKILL)
        killed.update(replica=name, pid=pids[name], at=time.perf_counter() - t0, students=holding[name])
        print(f"  {killed['at']:5.1f} s: SIGKILL to replica {name} (pid {pids[name]}, {holding[name]} students)",
              flush=True)

    sampler_task = asyncio.create_task(sample())
    killer = asyncio.create_task(kill_one_replica()) if args.kill_replica_after is not None else None
    if barrier is not None:  # release the herd once every student has its websocket open (or gave up)
        go, arrived = barrier
        while len(arrived) + sum(1 for s in students if s.results and s.results[0].kind == "connect") < len(students):
            if time.perf_counter() - t0 > args.timeout / 2:
                break
            await asyncio.sleep(0.02)
        go.set()
    remaining = args.timeout - (time.perf_counter() - t0)
    done, pending = await asyncio.wait(tasks, timeout=max(1.0, remaining))
    timed_out = bool(pending)
    for task in [*pending, sampler_task] + ([killer] if killer else []):
        task.cancel()
    await asyncio.gather(*pending, sampler_task, *([killer] if killer else []), return_exceptions=True)
    for task in done:
        if task.exception() is not None:
            raise task.exception()
    return students, timed_out, time.perf_counter() - t0


# ------------------------------------------------------------------------------------------ model hashes

def model_hashes() -> dict[str, dict[str, str]]:
    from model.checkpoint import load_checkpoint, state_dict_sha256

    hashes = {}
    for name in shipped_names():
        files = hashlib.sha256()
        for suffix in (".safetensors", ".json"):
            files.update((CHECKPOINT_DIR / name).with_suffix(suffix).read_bytes())
        hashes[name] = {"files": files.hexdigest(),
                        "state_dict": state_dict_sha256(load_checkpoint(CHECKPOINT_DIR / name).model.state_dict())}
    return hashes


def shipped_names() -> list[str]:
    """Same rule as ui.models.shipped_model_names (not imported: it would pull streamlit caching in here)."""
    return sorted(p.stem for p in CHECKPOINT_DIR.glob("*.json") if p.with_suffix(".safetensors").exists())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--students", type=int, default=30)
    parser.add_argument("--ramp", type=float, default=5.0, help="students start evenly over this many seconds")
    parser.add_argument("--think", type=float, nargs=2, default=(0.5, 1.5), metavar=("MIN", "MAX"),
                        help="think time between interactions, uniform in [MIN, MAX] seconds")
    parser.add_argument("--timeout", type=float, default=300.0, help="global limit for the students, seconds")
    parser.add_argument("--interaction-timeout", type=float, default=60.0)
    parser.add_argument("--cold-herd", action="store_true",
                        help="all students connect at once to a fresh server; check each model loads once")
    parser.add_argument("--full-reruns", action="store_true",
                        help="send layer/head changes as full reruns even where the widget is inside st.fragment "
                             "(the browser sends a fragment rerun; this measures the old behaviour)")
    parser.add_argument("--warmup", action="store_true",
                        help="open the attention page once (untimed) before the students come (not with --cold-herd)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--port", type=int, default=0, help="own server's port; 0: a free port")
    parser.add_argument("--url", help="target this running server or proxy (e.g. serve.py's) instead of starting one")
    parser.add_argument("--serve-state", type=Path, default=SERVE_STATE,
                        help="serve.py's state file (replica pids) for CPU sampling and --kill-replica-after")
    parser.add_argument("--kill-replica-after", type=float, metavar="S",
                        help="with --url and serve.py: SIGKILL the replica holding most students S s into the run")
    parser.add_argument("--json", type=Path, help="also write raw results here")
    args = parser.parse_args()
    if not 1 <= args.students <= MAX_STUDENTS:
        parser.error(f"--students must be 1..{MAX_STUDENTS}")
    args.think = tuple(sorted(args.think))
    if args.cold_herd and args.warmup:
        parser.error("--cold-herd measures a cold server: no --warmup")
    if args.kill_replica_after is not None and (not args.url or read_serve_state(args.serve_state) is None):
        parser.error(f"--kill-replica-after needs --url and serve.py's state file ({args.serve_state})")
    args.reconnect = bool(args.url)  # through a proxy, a student whose replica dies reconnects like the browser

    def on_sigterm(signum, frame):
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, on_sigterm)
    own = not args.url
    hashes_before = {}
    if own:
        print(f"hashing shipped models ({', '.join(shipped_names())}) …", flush=True)
        hashes_before = model_hashes()
    load_before = os.getloadavg()
    server = Server(args.port or free_port()) if own else None
    sampler = server if own else (ReplicaSampler(args.serve_state) if read_serve_state(args.serve_state) else None)
    samples: list = []
    killed: dict = {}
    healthy = None
    try:
        if own:
            print(f"starting streamlit on {HOST}:{server.port} …", flush=True)
            healthy = server.start(timeout=min(120.0, args.timeout))
            print(f"healthy after {healthy:.1f} s", flush=True)
        base_url = server.url if own else args.url.rstrip("/")
        print(f"{args.students} students on {base_url} "
              + ("connect at once (cold herd)" if args.cold_herd else f"start over {args.ramp:g} s"), flush=True)
        cpu_before = resource.getrusage(resource.RUSAGE_SELF)
        students, timed_out, wall = asyncio.run(drive(args, base_url, sampler, shipped_names(), samples, killed))
        cpu_after = resource.getrusage(resource.RUSAGE_SELF)
        client_cpu = (cpu_after.ru_utime + cpu_after.ru_stime) - (cpu_before.ru_utime + cpu_before.ru_stime)
    except KeyboardInterrupt:
        print("interrupted; stopping", file=sys.stderr)
        return 130
    finally:
        if server is not None:
            server.stop()
    replicas = len((read_serve_state(args.serve_state) or {}).get("replicas", {})) if not own else 1
    run = RunRecord(target="own server" if own else args.url, replicas=replicas or 1, samples=samples,
                    timed_out=timed_out, wall=wall, healthy=healthy, load_before=load_before, client_cpu=client_cpu,
                    hashes_before=hashes_before, hashes_after=model_hashes() if own else {},
                    loads=server.loads if own else None, problems=server.problems if own else [],
                    killed=killed or None,
                    replica_peak_rss=getattr(sampler, "peak_rss_by_replica", None))
    summary = report(args, students, run)
    if args.json:
        args.json.write_text(json.dumps(summary, indent=1, default=str))
        print(f"raw results: {args.json}")
    # The latency target is informative; failures and a model loaded twice make the exit status 1.
    failed_ok = summary["failed_sessions"] == [] or (killed and summary["killed"]["failed_elsewhere"] == 0)
    return 0 if failed_ok and summary["models_loaded_once"] else 1


if __name__ == "__main__":
    sys.exit(main())

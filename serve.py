"""Classroom launcher: N `streamlit run asgi.py` replicas (app.py with the seat cookie) behind HAProxy, each warmed before it takes students.

    python serve.py [--replicas N] [--port 8500] [--host 0.0.0.0] [--tls-cert FILE [--http-port N]]

N defaults to the number of cores. The replicas listen on free loopback ports and share one generated
`server.cookieSecret` (passed in their environment as STREAMLIT_SERVER_COOKIE_SECRET, never written to disk; set
that variable yourself to share it with replicas on other machines). HAProxy (Debian's `haproxy`) listens on
--host:--port with cookie-inserted sticky sessions, the websocket tunnel, health checks on /_stcore/health and
`option redispatch`; its configuration is written to run/haproxy.cfg from deploy/haproxy.cfg.template and
checked with `haproxy -c` before it starts. With --tls-cert FILE (one PEM file holding the certificate and its key,
as HAProxy reads it) HAProxy serves HTTPS on --port, and plain HTTP on --http-port (default 80 when --port is 443)
only redirects there; the seat cookie and HAProxy's own are then Secure.

Every replica starts in maintenance in HAProxy. serve.py warms it through its own port with real script runs
(serving/warmup.py: torch imported, shipped models loaded, first charts built) and only then enables it over
HAProxy's runtime API; "ready" is printed when all are warm. A replica that exits is put back in maintenance,
restarted, warmed and enabled again. Ctrl-C or SIGTERM stops every process serve.py started (each runs in its
own process group). run/serve.json tells other tools (bench/load_classroom.py) the replicas' ports and pids.
Each replica's output goes to run/rN.log.
"""
from __future__ import annotations

import argparse
import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from classroom.teacher_password import announce_teacher_password
from model.gguf_weights import WEIGHTS_CACHE_ENV
from runtime.kept_results import FOLDER_ENV as RESULTS_FOLDER_ENV
from serving.haproxy import (COOKIE_SECRET_ENV, INSTALL_HINT, haproxy_binary, haproxy_config_check, render_config,
                             replica_name, set_replica_state)
from serving.liveness import LIVENESS_PORT_ENV
from serving.local_server import free_port
from serving.warmup import BEFORE_READY_LINKS, WARMUP_ENV, wait_healthy, warm_in_background, warm_replica

ROOT = Path(__file__).resolve().parent
RUN_DIR = ROOT / "run"  # generated files (listed in .gitignore)
STOP_GRACE_S = 10.0
WARM_ATTEMPTS = 3


def say(message: str) -> None:
    print(f"[serve {time.strftime('%H:%M:%S')}] {message}", flush=True)


@dataclass
class Replica:
    name: str
    port: int
    liveness_port: int  # HAProxy's health check (serving/liveness.py): answered beside the event loop, not on it
    process: subprocess.Popen | None = None
    state: str = "stopped"  # stopped -> warming -> ready; back to warming after a restart
    restarts: int = 0
    warm_thread: threading.Thread | None = field(default=None, repr=False)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"


class Launcher:
    def __init__(self, replicas: int, host: str, port: int, run_dir: Path, tls_cert: Path | None = None,
                 http_port: int | None = None):
        self.host, self.port, self.run_dir = host, port, run_dir
        self.tls_cert, self.http_port = tls_cert, http_port
        self.replicas = [Replica(replica_name(i), free_port(), free_port()) for i in range(replicas)]
        self.config_path = run_dir / "haproxy.cfg"
        self.stats_socket = run_dir / "haproxy.sock"
        self.state_path = run_dir / "serve.json"
        self.haproxy: subprocess.Popen | None = None
        self.stopping = threading.Event()
        self.lock = threading.Lock()
        # One secret for every replica: the XSRF cookie one replica signs must pass on another after a failover.
        # WARMUP_ENV off: serve.py warms each replica itself before HAProxy lets students in (once, not twice).
        # WEIGHTS_CACHE_ENV: the first replica to load SmolLM2 keeps what it read from the GGUF file in run/weights
        # (kept between runs), and the others and every restarted one read that back (bench/weights_kept.py). Likewise
        # the results a replica computed (an analysis, a head's labels: runtime/kept_results.py) in run/results.
        self.env = {**os.environ, "PYTHONUNBUFFERED": "1", WARMUP_ENV: "0",
                    COOKIE_SECRET_ENV: os.environ.get(COOKIE_SECRET_ENV) or secrets.token_urlsafe(32),
                    WEIGHTS_CACHE_ENV: os.environ.get(WEIGHTS_CACHE_ENV) or str(run_dir / "weights"),
                    RESULTS_FOLDER_ENV: os.environ.get(RESULTS_FOLDER_ENV) or str(run_dir / "results")}
        self.announced_ready = False

    # ---- files
    def write_config(self) -> None:
        self.run_dir.mkdir(parents=True, exist_ok=True)
        host = self.host if ":" not in self.host else f"[{self.host}]"
        http_bind = f"{host}:{self.http_port}" if self.tls_cert and self.http_port else None
        self.config_path.write_text(render_config(f"{host}:{self.port}", [r.port for r in self.replicas],
                                                  self.stats_socket, [r.liveness_port for r in self.replicas],
                                                  tls_cert=self.tls_cert, http_bind=http_bind))
        valid, said = haproxy_config_check(self.config_path)
        if not valid:
            raise RuntimeError(f"haproxy -c rejected {self.config_path}:\n{said}")
        say(f"HAProxy configuration: {self.config_path} (checked with haproxy -c)")

    def write_state(self) -> None:
        with self.lock:
            state = {"url": f"{self.scheme}://{'127.0.0.1' if self.host in ('0.0.0.0', '::') else self.host}:{self.port}",
                     "serve_pid": os.getpid(), "haproxy_pid": self.haproxy.pid if self.haproxy else None,
                     "config": str(self.config_path),
                     "replicas": {r.name: {"port": r.port, "liveness_port": r.liveness_port,
                                           "pid": r.process.pid if r.process else None,
                                           "state": r.state, "restarts": r.restarts} for r in self.replicas}}
            temporary = self.state_path.with_suffix(".tmp")
            temporary.write_text(json.dumps(state, indent=1))
            temporary.replace(self.state_path)

    # ---- processes
    def start_replica(self, replica: Replica) -> None:
        log = open(self.run_dir / f"{replica.name}.log", "ab")
        command = [sys.executable, "-m", "streamlit", "run", "asgi.py", "--server.headless", "true",
                   "--server.address", "127.0.0.1", "--server.port", str(replica.port),
                   "--browser.gatherUsageStats", "false"]
        env = {**self.env, LIVENESS_PORT_ENV: str(replica.liveness_port)}  # asgi.py serves HAProxy's check there
        replica.process = subprocess.Popen(command, cwd=ROOT, env=env, stdin=subprocess.DEVNULL, stdout=log,
                                           stderr=subprocess.STDOUT, start_new_session=True)
        log.close()
        replica.state = "warming"
        self.write_state()
        replica.warm_thread = threading.Thread(target=self.warm, args=(replica, replica.process), daemon=True)
        replica.warm_thread.start()

    def warm(self, replica: Replica, process: subprocess.Popen) -> None:
        """Health, then real script runs on the replica's own port; then HAProxy may send it students."""
        started = time.monotonic()
        alive = lambda: process.poll() is None and not self.stopping.is_set()  # noqa: E731
        if not wait_healthy(replica.url, 120.0, alive):
            if alive():
                say(f"{replica.name}: not healthy after 120 s; restarting it")
                process.kill()
            return
        for attempt in range(1, WARM_ATTEMPTS + 1):
            try:
                timings = warm_replica(replica.url, links=BEFORE_READY_LINKS)
                break
            except Exception as error:  # a failed warm-up keeps the replica out of HAProxy
                if not alive():
                    return
                say(f"{replica.name}: warm-up attempt {attempt} failed: {error}")
        else:
            say(f"{replica.name}: warm-up failed {WARM_ATTEMPTS} times; restarting it")
            process.kill()
            return
        if not alive():
            return
        try:
            set_replica_state(self.stats_socket, replica.name, "ready")
        except (OSError, RuntimeError) as error:  # HAProxy did not take it: try again with a fresh replica
            say(f"{replica.name}: could not enable it in HAProxy ({error}); restarting it")
            process.kill()
            return
        replica.state = "ready"
        self.write_state()
        pages = ", ".join(f"{page} {seconds:.1f} s" for page, seconds in timings)
        say(f"{replica.name} (pid {process.pid}, port {replica.port}) warm after {time.monotonic() - started:.1f} s "
            f"({pages}); taking students")
        warm_in_background(replica.url, alive)  # the other lesson stops, while it takes students
        with self.lock:
            if not self.announced_ready and all(r.state == "ready" for r in self.replicas):
                self.announced_ready = True
                say(f"ready: {self.public_url()} ({len(self.replicas)} replicas warm)")
                announce_teacher_password(sys.stdout)

    @property
    def scheme(self) -> str:
        return "https" if self.tls_cert else "http"

    def public_url(self) -> str:
        host = socket.gethostname() if self.host in ("0.0.0.0", "::") else self.host
        return f"{self.scheme}://{host}:{self.port}"

    def start_haproxy(self) -> None:
        self.stats_socket.unlink(missing_ok=True)
        self.haproxy = subprocess.Popen([haproxy_binary(), "-db", "-f", str(self.config_path)], cwd=self.run_dir,
                                        stdin=subprocess.DEVNULL, start_new_session=True)
        deadline = time.monotonic() + 10
        while not self.stats_socket.exists():
            if self.haproxy.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"haproxy did not start (exit code {self.haproxy.poll()})")
            time.sleep(0.05)
        say(f"HAProxy (pid {self.haproxy.pid}) on {self.host}:{self.port}; replicas in maintenance until warm")

    def supervise(self) -> int:
        """Restart replicas that exit; return when asked to stop or when HAProxy dies."""
        while not self.stopping.wait(0.5):
            if self.haproxy.poll() is not None:
                say(f"HAProxy exited with code {self.haproxy.returncode}; stopping")
                return 1
            for replica in self.replicas:
                code = replica.process.poll()
                if code is None:
                    continue
                say(f"{replica.name} (pid {replica.process.pid}) exited with code {code}; out of HAProxy, restarting")
                try:
                    set_replica_state(self.stats_socket, replica.name, "maint")
                except (OSError, RuntimeError) as error:
                    say(f"could not put {replica.name} in maintenance: {error}")
                replica.restarts += 1
                self.start_replica(replica)
        return 0

    def stop(self) -> None:
        """SIGTERM to every process group started here, SIGKILL to what is left after the grace period."""
        self.stopping.set()
        processes = [r.process for r in self.replicas if r.process] + ([self.haproxy] if self.haproxy else [])
        for process in processes:
            if process.poll() is None:
                try:
                    os.killpg(process.pid, signal.SIGTERM)
                except ProcessLookupError:
                    pass
        deadline = time.monotonic() + STOP_GRACE_S
        for process in processes:
            try:
                process.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                pass
            try:  # the group too: anything a replica started dies with it
                os.killpg(process.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            process.wait()
        self.state_path.unlink(missing_ok=True)
        self.stats_socket.unlink(missing_ok=True)
        say("stopped: every replica and HAProxy")

    def run(self) -> int:
        self.write_config()
        self.start_haproxy()
        for replica in self.replicas:
            self.start_replica(replica)
        say(f"{len(self.replicas)} replicas starting on 127.0.0.1:{','.join(str(r.port) for r in self.replicas)}; "
            "warming them")
        return self.supervise()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--replicas", type=int, default=os.cpu_count() or 1,
                        help="Streamlit processes (default: the number of cores)")
    parser.add_argument("--port", type=int, default=8500, help="HAProxy's port, the one students open")
    parser.add_argument("--host", default="0.0.0.0", help="HAProxy's address (0.0.0.0: every interface)")
    parser.add_argument("--run-dir", type=Path, default=RUN_DIR, help="where haproxy.cfg, logs and serve.json go")
    parser.add_argument("--tls-cert", type=Path, help="serve HTTPS with this PEM file (certificate, then its key)")
    parser.add_argument("--http-port", type=int,
                        help="with --tls-cert: plain HTTP here redirects to HTTPS (default 80 when --port is 443)")
    args = parser.parse_args()
    if args.tls_cert is not None and not args.tls_cert.is_file():
        parser.error(f"--tls-cert {args.tls_cert}: no such file")
    if args.http_port is None and args.tls_cert is not None and args.port == 443:
        args.http_port = 80
    if not 1 <= args.replicas <= 64:
        parser.error("--replicas must be 1..64")
    if haproxy_binary() is None:
        print(INSTALL_HINT, file=sys.stderr)
        return 2
    launcher = Launcher(args.replicas, args.host, args.port, args.run_dir.resolve(),
                        tls_cert=args.tls_cert.resolve() if args.tls_cert else None, http_port=args.http_port)

    def on_signal(signum, frame):
        launcher.stopping.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    try:
        return launcher.run()
    except RuntimeError as error:
        print(f"serve.py: {error}", file=sys.stderr)
        return 1
    finally:
        launcher.stop()


if __name__ == "__main__":
    sys.exit(main())

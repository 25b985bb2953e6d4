"""One replica for a container platform: `streamlit run asgi.py` (app.py with the seat cookie), warmed, with a readiness endpoint gated on it.

    python -m serving.replica [--port 8501] [--ready-port 8502] [--liveness-port 8503]

Kubernetes cannot use serve.py's HAProxy runtime API, so the container runs this instead: it starts Streamlit on
--port, warms it with serving/warmup.py (the same real script runs serve.py makes), and answers on --ready-port:
GET /_stcore/health with 200 only when the warm-up is done and the replica is alive; 503 before (the readinessProbe:
the Service sends students only to warm pods), and GET /alive with 200 while the replica is alive (the
livenessProbe). "Alive" is asked of the replica's liveness endpoint (serving/liveness.py, on --liveness-port, loopback
only), answered beside Streamlit's event loop: Streamlit's own /_stcore/health waits behind a burst of script runs,
which would take a busy pod out of the Service (and, past the livenessProbe's threshold, restart it mid-class).
When Streamlit exits, this exits with its code and the kubelet restarts the container.
The cookie secret comes from the environment (STREAMLIT_SERVER_COOKIE_SECRET, a Kubernetes Secret), as in serve.py.
"""
from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from serving.haproxy import HEALTH_PATH
from serving.liveness import LIVENESS_PORT_ENV
from serving.streamlit_client import http_get
from serving.warmup import BEFORE_READY_LINKS, WARMUP_ENV, wait_healthy, warm_in_background, warm_replica

ROOT = Path(__file__).resolve().parents[1]


ALIVE_PATH = "/alive"  # the livenessProbe's path on --ready-port


def readiness_handler(liveness_url: str, warm: threading.Event) -> type[BaseHTTPRequestHandler]:
    """`liveness_url`: the replica's liveness endpoint (serving/liveness.py)."""
    class Readiness(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 (http.server's name)
            if self.path not in (HEALTH_PATH, ALIVE_PATH):
                self.send_error(404)
                return
            alive = http_get(liveness_url, timeout=2.0)[0] == 200
            ready = alive and (warm.is_set() or self.path == ALIVE_PATH)
            body = b"ok" if ready else b"not alive" if not alive else b"warming up"
            self.send_response(200 if ready else 503)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args) -> None:  # probes every few seconds: no log line each
            pass

    return Readiness


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, default=8501, help="Streamlit's port (the Service's target)")
    parser.add_argument("--ready-port", type=int, default=8502, help="the readiness endpoint's port")
    parser.add_argument("--liveness-port", type=int, default=8503,
                        help="the replica's liveness endpoint (loopback; asked by the probes on --ready-port)")
    parser.add_argument("--address", default="0.0.0.0", help="Streamlit's address")
    args = parser.parse_args()
    streamlit = subprocess.Popen([sys.executable, "-m", "streamlit", "run", "asgi.py", "--server.headless", "true",
                                  "--server.address", args.address, "--server.port", str(args.port),
                                  "--browser.gatherUsageStats", "false"], cwd=ROOT,
                                 env={**os.environ, LIVENESS_PORT_ENV: str(args.liveness_port),
                                      WARMUP_ENV: "0"})  # warmed below, before it is ready
    url = f"http://127.0.0.1:{args.port}"
    warm = threading.Event()
    server = ThreadingHTTPServer(("0.0.0.0", args.ready_port),
                                 readiness_handler(f"http://127.0.0.1:{args.liveness_port}{HEALTH_PATH}", warm))
    threading.Thread(target=server.serve_forever, daemon=True).start()

    stopped = threading.Event()

    def stop(signum, frame):
        stopped.set()
        streamlit.terminate()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    try:
        if wait_healthy(url, 120.0, lambda: streamlit.poll() is None):
            timings = warm_replica(url, links=BEFORE_READY_LINKS)
            warm.set()
            print("replica warm: " + ", ".join(f"{page} {seconds:.1f} s" for page, seconds in timings), flush=True)
            warm_in_background(url, lambda: streamlit.poll() is None)  # the other lesson stops, while it serves
        code = streamlit.wait()
        # uvicorn (st.App's server) shuts down gracefully on SIGTERM and then re-raises it, so its status is -15:
        # a stop we asked for is a clean exit (the container platform reads non-zero as a crash).
        return 0 if stopped.is_set() and code == -signal.SIGTERM else code
    except Exception as error:  # a failed warm-up: exit, so the kubelet restarts the container
        print(f"serving.replica: warm-up failed: {error}", file=sys.stderr, flush=True)
        streamlit.terminate()
        streamlit.wait()
        return 1
    finally:
        server.shutdown()


if __name__ == "__main__":
    sys.exit(main())

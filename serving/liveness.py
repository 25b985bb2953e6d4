"""A health check that does not queue behind script runs: is this replica's server alive, not is it fast right now.

Streamlit's /_stcore/health is a coroutine on the server's event loop. In a burst (a whole class pressing Answer at
once) that loop is behind: every script run's messages are serialized and written there, and the loop's thread waits
for the GIL behind the script threads at each step. A health request then waits its turn like everything else, and
HAProxy's check times out: a burst of a few hundred answers can get both replicas marked DOWN ("no server
available"), so new students could not join although both replicas were alive and working through the burst.
Marking a busy replica down never helps: its students stay on it (their websockets do not move) and the other replica
is as busy, since the burst hits everyone at once.

So serve.py's HAProxy checks this instead (`port` on each server line, deploy/haproxy.cfg.template): a small HTTP
server on its own thread and port inside the replica (asgi.py starts it when ATTENTION_LAB_LIVENESS_PORT is set). It
answers GET /_stcore/health from that thread, never through the event loop, so it answers within milliseconds while
the loop works through a backlog. What it reports is the loop's heartbeat: a task on the loop records the time every
second; a loop that has not run it for STALE_SECONDS is hung (or starved beyond any use), and the check says 503. A
dead replica refuses the connection, as before, and HAProxy redispatches its students at once without waiting for
checks (`option redispatch`).
"""
from __future__ import annotations

import asyncio
import contextlib
import os
import threading
import time
from collections.abc import AsyncIterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from serving.haproxy import HEALTH_PATH

LIVENESS_PORT_ENV = "ATTENTION_LAB_LIVENESS_PORT"  # serve.py sets it per replica: the port HAProxy checks
BEAT_SECONDS = 1.0
# A loop that has not turned for this long serves nobody: 30 beats missed. A burst of a few hundred answers can
# delay the students' confirmations by tens of seconds; a loop that far behind is still turning (slowly), so its
# heartbeat is late by about the backlog, not absent. 60 s is past that and far past any page a student would wait for.
STALE_SECONDS = 60.0


class Liveness:
    """The event loop's heartbeat, read from another thread."""

    def __init__(self, stale_seconds: float = STALE_SECONDS):
        self.stale_seconds = stale_seconds
        self.last_beat = time.monotonic()

    async def beat(self) -> None:
        """Runs on the server's event loop for its whole life."""
        while True:
            self.last_beat = time.monotonic()
            await asyncio.sleep(BEAT_SECONDS)

    def lag(self) -> float:
        """Seconds since the loop last ran the heartbeat (about BEAT_SECONDS when idle, more under a backlog)."""
        return time.monotonic() - self.last_beat

    def handler(self) -> type[BaseHTTPRequestHandler]:
        liveness = self

        class Health(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 (http.server's name)
                if self.path != HEALTH_PATH:
                    self.send_error(404)
                    return
                lag = liveness.lag()
                alive = lag < liveness.stale_seconds
                body = (f"ok (event loop lag {lag:.1f} s)" if alive else f"event loop stalled for {lag:.0f} s").encode()
                try:
                    self.send_response(200 if alive else 503)
                    self.send_header("Content-Type", "text/plain")
                    self.send_header("Content-Length", str(len(body)))
                    self.send_header("Cache-Control", "no-cache")
                    self.end_headers()
                    self.wfile.write(body)
                except ConnectionError:  # HAProxy may close a check with a reset once it has read the status line
                    pass

            def log_message(self, format: str, *args) -> None:  # a check every 2 s: no log line each
                pass

        return Health

    def serve(self, port: int, host: str = "127.0.0.1") -> ThreadingHTTPServer:
        """Start answering on host:port from a daemon thread; the caller shuts the server down."""
        server = ThreadingHTTPServer((host, port), self.handler())
        server.daemon_threads = True
        threading.Thread(target=server.serve_forever, name="liveness", daemon=True).start()
        return server


@contextlib.asynccontextmanager
async def liveness_from_environment() -> AsyncIterator[Liveness | None]:
    """For an ASGI lifespan: with ATTENTION_LAB_LIVENESS_PORT set, the heartbeat on this loop and the endpoint on
    that port (loopback only: HAProxy runs beside the replicas) for as long as the server runs; else nothing."""
    port = os.environ.get(LIVENESS_PORT_ENV)
    if not port:
        yield None
        return
    liveness = Liveness()
    task = asyncio.create_task(liveness.beat())
    server = liveness.serve(int(port))
    try:
        yield liveness
    finally:
        task.cancel()
        server.shutdown()
        server.server_close()

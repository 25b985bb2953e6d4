"""HAProxy's health check of a replica (serving/liveness.py): answered from its own thread while the server's event
loop is busy (a burst of answers must not get a working replica marked down), and down when the loop hangs."""
import asyncio
import threading
import time

import pytest

from serving.haproxy import HEALTH_PATH
from serving.liveness import Liveness
from serving.streamlit_client import http_get
from serving.local_server import free_port


def _spin(stop: threading.Event) -> None:
    while not stop.is_set():  # a script run's pure-Python work: holds the GIL whenever it can
        sum(range(10_000))


@pytest.mark.slow
def test_the_check_answers_while_the_loop_is_busy_and_says_down_only_when_it_hangs():
    liveness = Liveness(stale_seconds=2.0)
    loop = asyncio.new_event_loop()
    threading.Thread(target=loop.run_forever, daemon=True).start()
    asyncio.run_coroutine_threadsafe(liveness.beat(), loop)
    port = free_port()
    server = liveness.serve(port)
    url = f"http://127.0.0.1:{port}{HEALTH_PATH}"
    stop = threading.Event()
    scripts = [threading.Thread(target=_spin, args=(stop,), daemon=True) for _ in range(2)]
    try:
        assert http_get(url, timeout=5)[0] == 200
        for script in scripts:
            script.start()
        # The loop is stuck for 3.5 s (what a backlog of script runs' messages does to Streamlit's own
        # /_stcore/health, a coroutine on this loop): the check still answers at once, and says alive.
        loop.call_soon_threadsafe(time.sleep, 3.5)
        time.sleep(0.5)
        start = time.perf_counter()
        status, _ = http_get(url, timeout=5)
        assert status == 200 and time.perf_counter() - start < 1.0
        time.sleep(2.0)  # 2.5 s without a heartbeat: past this test's stale limit, the replica counts as hung
        assert http_get(url, timeout=5)[0] == 503
        time.sleep(2.0)  # the loop turns again: alive again
        assert http_get(url, timeout=5)[0] == 200
        assert http_get(f"http://127.0.0.1:{port}/other", timeout=5)[0] == 404
    finally:
        stop.set()
        server.shutdown()
        server.server_close()
        loop.call_soon_threadsafe(loop.stop)

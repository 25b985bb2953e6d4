"""App latency: rerun time after switching head or layer on the attention page, and cold start.

    python bench/app_latency.py [--reruns 30]

Rerun: streamlit's AppTest runs the real app script in-process; after the first load (models and the
sentence's analysis cached) we switch head/layer and time each full script run (median, p95).
Cold start: with Debian's Chromium (Playwright) already open, `streamlit run app.py` starts fresh and the
browser opens the first page (Home, until its model table is drawn), or, in separate cold starts, the attention
page (until its first heatmap is drawn).
"""
from __future__ import annotations

import argparse
import os
import platform
import shutil
import socket
import statistics
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def rerun_latency(reruns: int) -> list[float]:
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.session_state["sentence"] = "the girl that watches the black dog has a pretty yellow hat"
    at.run()
    at.switch_page("app_pages/attention.py").run()
    times = []
    for i in range(reruns):
        widget = at.selectbox(key="attn_head" if i % 2 else "attn_layer")
        options = 4 if i % 2 else 2
        start = time.perf_counter()
        widget.set_value((i // 2 + 1) % options).run()
        times.append(time.perf_counter() - start)
        assert not at.exception
    return times


def cold_start(path: str = "attention", ready: str = ".js-plotly-plot .heatmaplayer") -> tuple[float, float]:
    """Seconds from process start to `ready` visible on /path, and to a healthy server."""
    from playwright.sync_api import sync_playwright

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with sync_playwright() as pw:
        # The browser is already open when a student types the address: launch it before the clock starts.
        browser = pw.chromium.launch(executable_path=shutil.which("chromium"),
                                     args=["--headless", "--no-sandbox", "--disable-gpu",
                                           "--disable-background-networking"])
        page = browser.new_page()
        start = time.perf_counter()
        server = subprocess.Popen([sys.executable, "-m", "streamlit", "run", "asgi.py", "--server.headless", "true",
                                   "--server.port", str(port)], cwd=ROOT, stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL, env={**os.environ, "ATTENTION_LAB_WARMUP": "0"})
        try:
            while True:
                try:
                    urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=1)
                    break
                except OSError:
                    time.sleep(0.05)
            healthy = time.perf_counter() - start
            page.goto(f"http://127.0.0.1:{port}/{path}")
            page.locator(ready).first.wait_for(timeout=60000)
            elapsed = time.perf_counter() - start
        finally:
            browser.close()
            server.terminate()
            server.wait()
    return elapsed, healthy


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--reruns", type=int, default=30)
    parser.add_argument("--cold-starts", type=int, default=3)
    args = parser.parse_args()
    times = sorted(rerun_latency(args.reruns))
    homes, _ = zip(*[cold_start("", "[data-testid='stDataFrame']") for _ in range(args.cold_starts)])
    colds, healthy = zip(*[cold_start() for _ in range(args.cold_starts)])
    print(f"# {time.strftime('%Y-%m-%d')} {platform.machine()}, {platform.python_version()}")
    print("| measure | median | p95 | runs |\n|---|---|---|---|")
    p95 = times[min(len(times) - 1, int(0.95 * len(times)))]
    print(f"| rerun after switching head/layer (attention page) | {statistics.median(times) * 1000:.0f} ms | "
          f"{p95 * 1000:.0f} ms | {len(times)} |")
    print(f"| cold start: process start -> first page (Home, its model table) rendered | "
          f"{statistics.median(homes):.2f} s | {max(homes):.2f} s (max) | {len(homes)} |")
    print(f"| cold start: process start -> first heatmap on /attention in Chromium | {statistics.median(colds):.2f} s | "
          f"{max(colds):.2f} s (max) | {len(colds)} |")
    print(f"| of which: process start -> server healthy | {statistics.median(healthy):.2f} s | "
          f"{max(healthy):.2f} s (max) | {len(healthy)} |")


if __name__ == "__main__":
    main()

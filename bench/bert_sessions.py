"""Server memory with N browser sessions on all-MiniLM-L6-v2: one model copy shared by every session.

    python bench/bert_sessions.py [--sessions 30]

Starts `streamlit run app.py` (127.0.0.1, a free port), then opens N Chromium tabs (Playwright, Debian's
chromium), one after another, each on the attention page with the encoder and a different sentence
(`/attention?model=all-MiniLM-L6-v2&sentence=...`), and keeps them all open (N live sessions). The server's RSS
(/proc/PID/status VmRSS) is read before any session, after the first, and after every 10th. Prints a table.
"""
from __future__ import annotations

import argparse
import os
import shutil
import sys
import time
import urllib.parse
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from serving.local_server import free_port, start_streamlit, started  # noqa: E402

WORDS = "the teacher explained how every word in a sentence looks at the other words before lunch".split()


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=int, default=30)
    args = parser.parse_args()
    port = free_port()
    server = start_streamlit(ROOT, port, {**os.environ, "ATTENTION_LAB_WARMUP": "0"})
    rows = []
    try:
        url = started(server, port, timeout=60)
        rows.append((0, rss_mib(server.pid), 0.0))
        from playwright.sync_api import sync_playwright

        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=shutil.which("chromium"),
                                                 args=["--headless", "--no-sandbox", "--disable-gpu"])
            pages = []
            for i in range(args.sessions):
                sentence = " ".join(WORDS[i % 5:]) + f" number {i}"
                page = browser.new_context(viewport={"width": 1280, "height": 720}).new_page()
                start = time.perf_counter()
                page.goto(f"{url}/attention?" + urllib.parse.urlencode({"model": "all-MiniLM-L6-v2",
                                                                        "sentence": sentence}))
                page.locator(".js-plotly-plot").first.wait_for(timeout=120000)
                page.get_by_test_id("stStatusWidget").wait_for(state="detached", timeout=120000)
                pages.append(page)
                if i == 0 or (i + 1) % 10 == 0:
                    rows.append((i + 1, rss_mib(server.pid), time.perf_counter() - start))
            browser.close()
    finally:
        server.terminate()
        server.wait(timeout=30)
    print(f"load average: {Path('/proc/loadavg').read_text().strip()}\n")
    print("| live sessions on all-MiniLM-L6-v2 | server RSS (MiB) | last page's first render (s) |")
    print("|---|---|---|")
    for sessions, rss, seconds in rows:
        print(f"| {sessions} | {rss:.0f} | {seconds:.1f} |")


if __name__ == "__main__":
    main()

"""How long a student waits for a shared link's view, in a real browser, on a warm server.

    python bench/shared_link.py [--repeats 5] [--baseline DIR]

Starts `streamlit run app.py` (127.0.0.1, a free port), warms it (one browser opens the link once: models loaded,
figures cached), then opens the link REPEATS times, each in a fresh Chromium context (a new student: new session,
empty browser cache), and times from navigation start to the linked view drawn: the heatmap whose title names the
linked head, and Streamlit idle. For comparison, the same page without a link (its default view) is timed the same
way in the same run. Prints a table; the target is ≤ 3 s for the link.

--baseline DIR: a second server runs the app in DIR (e.g. `git archive <commit> | tar -x -C DIR`), and its link is
timed in the same rounds, alternating, so a change is read as a ratio on a machine whose load others change.
"""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

from playwright.sync_api import expect, sync_playwright

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from serving.local_server import free_port, start_streamlit, started  # noqa: E402

LINK = "/attention?model=transformer_en-fr&sentence=she+is+a+student&kind=cross&layer=2&head=4&view=Head&v=2"
LINK_TITLE = "Encoder–decoder (cross) attention · layer 2 · head 4"
PLAIN = "/attention"


def _server(folder: Path = ROOT) -> tuple[subprocess.Popen, str]:
    port = free_port()
    process = start_streamlit(folder, port)
    try:
        return process, started(process, port, timeout=60)
    except RuntimeError as error:
        raise SystemExit(str(error)) from None


def _time_view(browser, url: str, title: str | None) -> float:
    """Seconds from navigation to the view: a heatmap (with `title`, if given) drawn and Streamlit idle."""
    context = browser.new_context(viewport={"width": 1280, "height": 720})
    page = context.new_page()
    start = time.perf_counter()
    page.goto(url)
    chart = page.locator(".js-plotly-plot").first
    expect(chart).to_be_visible(timeout=60000)
    if title:
        expect(page.get_by_text(title).first).to_be_visible(timeout=60000)
    expect(page.get_by_test_id("stStatusWidget")).to_have_count(0, timeout=60000)
    elapsed = time.perf_counter() - start
    context.close()
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--baseline", type=Path, help="folder of an earlier version of the app, timed alongside")
    args = parser.parse_args()
    servers = [_server()] + ([_server(args.baseline)] if args.baseline else [])
    base = servers[0][1]
    start_load = open("/proc/loadavg").read().split()[:3] if os.path.exists("/proc/loadavg") else ["?"] * 3
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(
                executable_path=shutil.which("chromium"),
                args=["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"])
            warm_up = _time_view(browser, base + LINK, LINK_TITLE)
            _time_view(browser, base + PLAIN, None)
            if args.baseline:
                _time_view(browser, servers[1][1] + LINK, LINK_TITLE)
            link, plain, baseline = [], [], []
            for _ in range(args.repeats):  # alternated, so load changes hit all alike
                link.append(_time_view(browser, base + LINK, LINK_TITLE))
                plain.append(_time_view(browser, base + PLAIN, None))
                if args.baseline:
                    baseline.append(_time_view(browser, servers[1][1] + LINK, LINK_TITLE))
            browser.close()
    finally:
        for process, _ in servers:
            process.terminate()
            process.wait(timeout=20)
    load = open("/proc/loadavg").read().split()[:3] if os.path.exists("/proc/loadavg") else ["?"] * 3
    print(f"server warm-up (first link after start): {warm_up:.2f} s; load average {' '.join(start_load)} at the "
          f"start, {' '.join(load)} at the end")
    print("| view | runs | median | max | median / default view | median / baseline link |")
    print("|---|---|---|---|---|---|")
    rows = [("shared link (layer 2 · head 4, cross)", link), ("/attention, default view", plain)]
    if baseline:
        rows.append((f"shared link, baseline ({args.baseline})", baseline))
    for name, times in rows:
        versus = f"{statistics.median(times) / statistics.median(baseline):.2f}" if baseline else "–"
        print(f"| {name} | {len(times)} | {statistics.median(times):.2f} s | {max(times):.2f} s | "
              f"{statistics.median(times) / statistics.median(plain):.2f} | {versus} |")


if __name__ == "__main__":
    main()

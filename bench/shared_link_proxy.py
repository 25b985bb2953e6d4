"""A student opens a shared link in Chromium: seconds until the first chart is drawn, through serve.py's proxy.

    python bench/shared_link_proxy.py --url http://127.0.0.1:8500 [--repeats 5]
        [--link "/attention?kind=cross&layer=1&head=3&sentence=she+is+a+student"]

Debian's Chromium (Playwright drives it; it downloads no browser), already running; each repeat is a fresh
browser context (no cache, no cookies: a new student), so it fetches the front end, gets HAProxy's cookie and a
new session. Timed from `page.goto` to the first plotly chart visible, and to Streamlit's run finished (no
status widget). Prints a markdown table; the load average at the start is in it.
"""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import time

CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--no-first-run", "--disable-sync"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", required=True)
    parser.add_argument("--link", default="/attention?kind=cross&layer=1&head=3&sentence=she+is+a+student")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        print("needs Debian's chromium: apt-get install chromium", file=sys.stderr)
        return 2
    load = os.getloadavg()[0]
    charts, idles = [], []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
        for _ in range(args.repeats):
            context = browser.new_context(viewport={"width": 1280, "height": 720})
            page = context.new_page()
            start = time.perf_counter()
            page.goto(args.url.rstrip("/") + args.link)
            page.locator(".js-plotly-plot").first.wait_for(state="visible", timeout=60000)
            charts.append(time.perf_counter() - start)
            page.wait_for_timeout(200)
            page.get_by_test_id("stStatusWidget").wait_for(state="detached", timeout=60000)
            idles.append(time.perf_counter() - start)
            replica = next((c["value"] for c in context.cookies() if c["name"] == "attention_lab_replica"), "-")
            print(f"  first chart {charts[-1]:.2f} s, run finished {idles[-1]:.2f} s, replica {replica}", flush=True)
            context.close()
        browser.close()
    print()
    print("| link | load avg | repeats | first chart: median / max | run finished: median / max | target |")
    print("|---|---|---|---|---|---|")
    print(f"| `{args.link}` | {load:.1f} | {args.repeats} | {statistics.median(charts):.2f} / {max(charts):.2f} s | "
          f"{statistics.median(idles):.2f} / {max(idles):.2f} s | first chart ≤ 3 s: "
          f"{'met' if statistics.median(charts) <= 3 else 'not met'} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())

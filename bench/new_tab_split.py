"""Where a new tab's time goes, on a warm server: Streamlit's front end starting (the HTML, its JavaScript bundle fetched
or read from the cache, parsed and run, the websocket opened), the page's script run (the server's first to last
message), and the drawing after it, each read from the browser's own clocks (Navigation and Resource Timing, and the
websocket's messages).

    python bench/new_tab_split.py [--app-dir DIR] [--baseline DIR] [--repeat 3] [--path "/?lang=en&presenter=true"]

Each checkout's `streamlit run asgi.py` is started (no warm-up: the page is opened once first, untimed, so its
server-side first run is done), then the page is opened in new tabs, alternately in a new browser context (a browser
that never loaded the lab: every chunk of the bundle fetched) and in one context whose first tab filled its cache
(a teacher's second tab). Times are milliseconds from the navigation's start:

- front end: `DOMContentLoaded` (the HTML and the entry bundle parsed and run) and the websocket open;
- script run: the first and the last message of the page's run (and the bytes it sent);
- drawn: the page's first text on screen (Home: its first markdown; a lesson stop, `--path "/softmax_scaling?lesson=
  intro&stop=6&presenter=true"`: its lesson bar and every Plotly chart drawn); settled: the last DOM change before 400 ms
  without one (lazily loaded chunks, charts and tables included);
- JavaScript: what the tab fetched over the network (0 when the cache held it all).
"""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import time
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.lecture_moves import HOME_DRAWN, SETTLED, STOP_DRAWN, WATCH  # noqa: E402

# The websocket's open, its first send (the run's request) and every message's arrival, in the page's own clock.
SOCKET_CLOCK = """(() => { const Socket = window.WebSocket; window.__socket = {bytes: 0};
  window.WebSocket = function (...args) { const socket = new Socket(...args); const seen = window.__socket;
    socket.addEventListener('open', () => { seen.open = performance.now(); });
    socket.addEventListener('message', (event) => { const now = performance.now(); seen.first ??= now;
      seen.last = now; seen.bytes += event.data.byteLength || event.data.size || event.data.length || 0; });
    return socket; };
  window.WebSocket.prototype = Socket.prototype; Object.assign(window.WebSocket, Socket); })()"""
SPLIT = """() => { const page = performance.getEntriesByType('navigation')[0];
  const scripts = performance.getEntriesByType('resource').filter(entry => entry.name.endsWith('.js'));
  return {dom_ready: page.domContentLoadedEventEnd, socket_open: window.__socket.open,
          first_message: window.__socket.first, last_message: window.__socket.last,
          run_kb: window.__socket.bytes / 1e3, drawn: window.__drawn, settled: window.__lastChange,
          js_mb: scripts.reduce((sum, entry) => sum + entry.transferSize, 0) / 1e6}; }"""
COLUMNS = ("dom_ready", "socket_open", "first_message", "last_message", "drawn", "settled", "run_kb", "js_mb")


def open_tab(opener, url: str) -> dict[str, float]:
    """A new tab of `opener` (a browser: a new context each time; or a context) on url -> its split. Drawn: Home's
    first text, or a lesson stop's page (`stop=N` in url) with its lesson bar and every chart drawn."""
    stop = parse_qs(urlsplit(url).query).get("stop")
    ready, arg = (STOP_DRAWN, int(stop[0])) if stop else (HOME_DRAWN, None)
    tab = opener.new_page()
    tab.set_viewport_size({"width": 1280, "height": 720})
    tab.add_init_script(SOCKET_CLOCK)
    tab.goto(url)
    tab.wait_for_function(ready, arg=arg, timeout=120000, polling=10)
    tab.evaluate("() => { window.__drawn = performance.now(); }")
    tab.evaluate(WATCH)
    tab.wait_for_function(SETTLED, arg=[0, 400], timeout=120000, polling=50)
    split = tab.evaluate(SPLIT)
    tab.close()
    return split


def splits(app_dir: Path, path: str, repeat: int) -> dict[str, list[dict[str, float]]]:
    """{"new context" | "same browser": [split, ...]} for the page at `path` of app_dir's server."""
    from playwright.sync_api import sync_playwright

    from bench.lesson_first_clicks import fresh_server

    found: dict[str, list[dict[str, float]]] = {"new context": [], "same browser": []}
    with fresh_server(app_dir, warm_up=False) as (url, _), sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=shutil.which("chromium"), args=["--no-sandbox"])
        open_tab(browser, url + path)  # the server's first run of the page: not timed
        context = browser.new_context()
        open_tab(context, url + path)  # the teacher's first tab: fills the context's cache
        for _ in range(repeat):
            found["new context"].append(open_tab(browser, url + path))
            found["same browser"].append(open_tab(context, url + path))
        browser.close()
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--app-dir", type=Path, default=ROOT)
    parser.add_argument("--baseline", type=Path, help="another checkout measured first, the same way")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--path", default="/?lang=en&presenter=true", help="the page opened (Home by default)")
    args = parser.parse_args()
    print(f"# {time.strftime('%Y-%m-%d %H:%M')} · {os.cpu_count()} cores · load average "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}", flush=True)
    print(f"| checkout, tab | {' | '.join(COLUMNS)} (median ms, MB, kB) |")
    print(f"|---|{'---|' * len(COLUMNS)}")
    for app_dir in ([args.baseline] if args.baseline else []) + [args.app_dir]:
        for tab, values in splits(app_dir.resolve(), args.path, args.repeat).items():
            medians = [statistics.median(value[column] for value in values) for column in COLUMNS]
            shown = [f"{m:.0f}" for m in medians[:-2]] + [f"{medians[-2]:.0f}", f"{medians[-1]:.2f}"]
            print(f"| {app_dir.name}, {tab} | {' | '.join(shown)} |", flush=True)
    print(f"# load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()

"""Each lesson stop's first view on a freshly started server: what the first click of every stop costs after `make run`.

    python bench/lesson_first_clicks.py [--lessons intro llm] [--lang en] [--warm-up on|off] [--app-dir DIR]
    python bench/lesson_first_clicks.py --kept-results [--lessons intro llm]

For each lesson a new `streamlit run asgi.py` starts (on 127.0.0.1, a free port, a fresh data folder). With its
warm-up on (the default, as `make run` starts it) the script waits until the server says it is warm ("Warm: ..." on
its stderr, serving/warmup.py); off (ATTENTION_LAB_WARMUP=0, or a checkout from before the warm-up, --app-dir) it
starts at once, as the first students after start-up would. Then every stop of the lesson, in order, is opened as a
new tab opens it (a new session on the stop's link: serving/streamlit_client.py speaks the browser's protocol) and
its first script run is timed, from the request to Streamlit's script_finished: the server's part of the click (a
browser adds its drawing, about the same cold or warm). The target: no stop over 2 s after the warm-up.

--kept-results: each lesson twice without the warm-up, both servers given one new results folder
(ATTENTION_LAB_RESULTS_CACHE, runtime/kept_results.py): the first computes every stop and keeps what it computed there,
the second (a replica restarted, the second replica of serve.py) reads it; the two columns side by side.
"""
from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import platform
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from serving.streamlit_client import http_get  # noqa: E402
from serving.warmup import WARMUP_ENV, lesson_stop_links, open_links  # noqa: E402
from ui.page_list import PAGE_NAMES  # noqa: E402

WARM_LINE = "Warm: "


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def fresh_server(app_dir: Path = ROOT, warm_up: bool = True, timeout: float = 600.0, script: str = "asgi.py"):
    """A new `streamlit run asgi.py` (or another script) of app_dir (127.0.0.1, a free port, a fresh data folder) ->
    (its URL, what it said of its warm-up: "off", or its "Warm: ..." line), yielded once it answers and, with warm_up,
    once warm."""
    port = _free_port()
    with tempfile.TemporaryDirectory() as data:
        env = {**os.environ, "ATTENTION_LAB_DATA": data, WARMUP_ENV: "1" if warm_up else "0", "PYTHONUNBUFFERED": "1"}
        server = subprocess.Popen(
            [sys.executable, "-m", "streamlit", "run", script, "--server.headless", "true", "--server.address",
             "127.0.0.1", "--server.port", str(port), "--browser.gatherUsageStats", "false"],
            cwd=app_dir, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
            text=True, start_new_session=True)
        warm = threading.Event()
        said: list[str] = []

        def read() -> None:
            for line in server.stderr:
                said.append(line)
                if line.startswith((WARM_LINE, "Warm-up stopped")):
                    warm.set()

        threading.Thread(target=read, daemon=True).start()
        url = f"http://127.0.0.1:{port}"
        try:
            started = time.monotonic()
            while http_get(f"{url}/_stcore/health", timeout=1.0)[0] != 200:
                if server.poll() is not None or time.monotonic() - started > timeout:
                    raise RuntimeError("the server did not start:\n" + "".join(said[-20:]))
                time.sleep(0.2)
            if warm_up and not warm.wait(timeout):
                raise RuntimeError(f"no {WARM_LINE!r} line within {timeout:.0f} s:\n" + "".join(said[-20:]))
            yield url, next((line.strip() for line in said if line.startswith((WARM_LINE, "Warm-up stopped"))), "off")
        finally:
            server.terminate()
            server.wait(timeout=30)


def first_clicks(lesson: str, warm_up: bool, app_dir: Path, language: str, timeout: float) -> list[dict]:
    """One fresh server: (warm it,) then each stop of `lesson` opened once in a new session -> one row per stop."""
    links = [f"{link}&lang={language}" for link in lesson_stop_links(PAGE_NAMES) if f"lesson={lesson}&" in link]
    with fresh_server(app_dir, warm_up, timeout) as (url, warmed):
        timings = asyncio.run(open_links(url, links, timeout))
    return [{"lesson": lesson, "stop": int(link.split("stop=")[1].split("&")[0]), "page": link.split("?")[0],
             "seconds": seconds, "warm_up": warmed} for link, seconds in timings]


def run(lessons: list[str], warm_up: bool = True, app_dir: Path = ROOT, language: str = "en",
        timeout: float = 600.0) -> list[dict]:
    return [row for lesson in lessons for row in first_clicks(lesson, warm_up, app_dir, language, timeout)]


def compare_kept(lessons: list[str], app_dir: Path, language: str) -> None:
    from runtime.kept_results import FOLDER_ENV

    print(f"# {time.strftime('%Y-%m-%d %H:%M')} · {platform.node()} · {os.cpu_count()} cores · load average "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())} · {app_dir} · warm-up off · kept results")
    with tempfile.TemporaryDirectory() as folder:
        os.environ[FOLDER_ENV] = folder  # both servers inherit it
        computed = run(lessons, False, app_dir, language)
        kept = run(lessons, False, app_dir, language)
        files = list(Path(folder).iterdir())
        print(f"# the folder after: {len(files)} results, {sum(f.stat().st_size for f in files) / 2**20:.0f} MiB")
    print("| lesson | stop | page | first view s, computed | first view s, read from the folder |")
    print("|---|---|---|---|---|")
    for first, second in zip(computed, kept, strict=True):
        print(f"| {first['lesson']} | {first['stop']} | {first['page']} | {first['seconds']:.2f} | "
              f"{second['seconds']:.2f} |")
    for lesson in lessons:
        before = sum(r["seconds"] for r in computed if r["lesson"] == lesson)
        after = sum(r["seconds"] for r in kept if r["lesson"] == lesson)
        print(f"# {lesson}: every stop's first view {before:.1f} s computed, {after:.1f} s read ({after / before:.2f}×)")
    print(f"# load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lessons", nargs="+", default=["intro", "llm"])
    parser.add_argument("--lang", default="en")
    parser.add_argument("--warm-up", choices=("on", "off"), default="on")
    parser.add_argument("--app-dir", type=Path, default=ROOT, help="the checkout whose asgi.py is served")
    parser.add_argument("--kept-results", action="store_true",
                        help="each lesson on a cold server, then on another reading what the first kept")
    args = parser.parse_args(argv)
    if args.kept_results:
        compare_kept(args.lessons, args.app_dir.resolve(), args.lang)
        return
    print(f"# {time.strftime('%Y-%m-%d %H:%M')} · {platform.node()} · {os.cpu_count()} cores · load average "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())} · {args.app_dir} · warm-up {args.warm_up}")
    rows = run(args.lessons, args.warm_up == "on", args.app_dir.resolve(), args.lang)
    for lesson in args.lessons:
        said = next((r["warm_up"] for r in rows if r["lesson"] == lesson), "")
        if said != "off":
            print(f"# {lesson}: {said}")
    print("| lesson | stop | page | first view s |")
    print("|---|---|---|---|")
    for row in rows:
        print(f"| {row['lesson']} | {row['stop']} | {row['page']} | {row['seconds']:.2f} |")
    for lesson in args.lessons:
        mine = [r for r in rows if r["lesson"] == lesson]
        slowest = max(mine, key=lambda r: r["seconds"])
        print(f"# {lesson}: slowest stop {slowest['stop']} ({slowest['page']}) {slowest['seconds']:.2f} s; "
              f"{sum(r['seconds'] > 2 for r in mine)} of {len(mine)} stops over 2 s")
    print(f"# load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()

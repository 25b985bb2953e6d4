"""A lecture's moves in Chromium, click to chart: decoding "Next token ▶", a head switched off, stop 17 opening (the real
encoder's grid), each beside a plain rerun of the same page measured in the same run.

    python bench/lecture_moves.py [--repeat 8] [--url http://127.0.0.1:8501]
    python bench/lecture_moves.py --start-up [--warm-up on|off] [--app-dir DIR]   # first clicks after start-up

Without --url it starts `streamlit run asgi.py` on a free port and warms it as serve.py does (serving/warmup.py:
the shipped models, the first charts, stop 17), so the figures are what a class meets on a warmed server; the
warm-up's own time is printed too. Projected at 1280×720 (presenter mode), the teacher's view.

Click to chart: the browser records the time of the click and of every DOM change after it (a MutationObserver on
the whole document, Plotly's SVG redraws included); the move ends when Streamlit's run has finished and nothing has
changed for 400 ms, and its time is the last change's. A plain rerun ("r", Streamlit's rerun shortcut, on the same
decoding page) is the floor every move pays: the ratio beside each move says how much more it costs.
Targets: decoding Next and a head switch ≤ 1 s, stop 17 ≤ 3 s.
"""
from __future__ import annotations

import argparse
import os
import platform
import shutil
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

WATCH = """() => { window.__lastChange = performance.now();
  if (!window.__watching) { window.__watching = true;
    new MutationObserver(() => { window.__lastChange = performance.now(); })
      .observe(document.body, {subtree: true, childList: true, attributes: true, characterData: true}); } }"""
SETTLED = """([since, quiet]) => !document.querySelector('[data-testid="stStatusWidget"]')
  && performance.now() - window.__lastChange > quiet && window.__lastChange >= since"""


def _settle(page, clicked_at: float, quiet_ms: int = 400, timeout_ms: int = 60000) -> float:
    """Seconds from clicked_at (performance.now() in the page) to the last DOM change of the move."""
    page.wait_for_function(SETTLED, arg=[clicked_at, quiet_ms], timeout=timeout_ms, polling=50)
    return (page.evaluate("() => window.__lastChange") - clicked_at) / 1000


# The real encoder's grid drawn: its 72 thumbnails' titles (on a loaded machine a pause between the click's first
# changes and the grid can end a move before the grid is there).
GRID_DRAWN = """() => document.querySelectorAll('.js-plotly-plot .heatmaplayer').length > 0
  && document.querySelectorAll('.js-plotly-plot .annotation-text-g').length >= 72"""
HOME_DRAWN = """() => !!document.querySelector('[data-testid="stMarkdownContainer"]')"""


def _move(page, act, drawn: str | None = None) -> float:
    """Seconds from act() to the move's last DOM change; drawn: a JS predicate the page meets once the move is done."""
    page.evaluate(WATCH)
    page.wait_for_timeout(200)
    clicked_at = page.evaluate("() => performance.now()")
    act()
    if drawn:
        page.wait_for_function(drawn, timeout=60000, polling=50)
    return _settle(page, clicked_at)


def _open(page, url: str, ready: str = ".js-plotly-plot") -> None:
    page.goto(url)
    page.wait_for_selector(ready, timeout=120000)
    page.evaluate(WATCH)
    page.wait_for_function(SETTLED, arg=[0, 600], timeout=120000, polling=100)


def measure(base: str, repeat: int) -> dict[str, list[float]]:
    from playwright.sync_api import sync_playwright

    times: dict[str, list[float]] = {"plain rerun (r)": [], "decoding Next ▶": [], "a head switched off": [],
                                     "lesson Next: stop 16 → 17": [],
                                     "a new tab: Home": [], "stop 17 opens (new tab, student)": [],
                                     "stop 17 opens (new tab, projected)": []}
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=shutil.which("chromium"), args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": 1280, "height": 720})
        # Decoding, stop 12: from step 1, Next ▶ through the sentence (each step's charts are new to this session).
        _open(page, f"{base}/decoding?lang=en&presenter=true&step=1")
        main = page.get_by_test_id("stMain")
        for _ in range(repeat):
            times["plain rerun (r)"].append(_move(page, lambda: page.keyboard.press("r")))
            nxt = main.get_by_role("button", name="Next token ▶")
            if nxt.is_disabled():  # the last step: back to the first (a new page load, not timed)
                _open(page, f"{base}/decoding?lang=en&presenter=true&step=1")
            times["decoding Next ▶"].append(_move(page, lambda: main.get_by_role("button", name="Next token ▶").click()))
        # Ablation on the Transformer translator: one more head switched off each time (the multiselect's options).
        _open(page, f"{base}/attention?lang=en&presenter=true&view=Ablation", '[data-testid="stMetric"]')
        heads = [f"{kind} L{layer} H{head}" for kind in ("Cross", "Decoder self", "Encoder self")
                 for layer in (2, 1) for head in (1, 2, 3, 4)]
        for name in heads[:repeat]:
            box = page.get_by_label("Switch these heads off")
            box.click()
            page.keyboard.type(name)  # the list filtered to that head (its first option would select all)

            def switch_off() -> None:  # the choice applies when the list closes: both are the teacher's one move
                page.keyboard.press("Enter")
                page.keyboard.press("Escape")

            times["a head switched off"].append(_move(page, switch_off))
            chosen = page.get_by_test_id("stMultiSelect").get_by_text(name, exact=True)
            assert chosen.count() == 1, f"{name} was not switched off"  # its chip in the box: the move happened
        # The lesson's Next from stop 16 (the train page) to stop 17 (the real encoder's grid), in the same tab.
        for _ in range(repeat):
            _open(page, f"{base}/train?lesson=intro&stop=16&lang=en", ".st-key-lesson_bar")
            times["lesson Next: stop 16 → 17"].append(
                _move(page, lambda: page.get_by_role("button", name="Next", exact=True).click(), GRID_DRAWN))
        # Stop 17 as a student's new tab opens it (and the teacher's, projected), beside Home in a new tab (the
        # front end's own start): navigation to the page drawn and settled.
        tabs = [("a new tab: Home", "?lang=en", HOME_DRAWN),
                ("stop 17 opens (new tab, student)", "/attention?lesson=intro&stop=17&lang=en", GRID_DRAWN),
                ("stop 17 opens (new tab, projected)", "/attention?lesson=intro&stop=17&lang=en&presenter=true",
                 GRID_DRAWN)]
        for _ in range(repeat):
            for name, path, ready in tabs:
                times[name].append(_new_tab(browser, f"{base}{path}", ready))
        browser.close()
    return times


def _new_tab(browser, url: str, ready: str) -> float:
    """Seconds from a new tab's navigation to url until its page is drawn (`ready`) and settled."""
    tab = browser.new_page(viewport={"width": 1280, "height": 720})
    started = time.perf_counter()
    tab.goto(url)
    tab.wait_for_function(ready, timeout=120000, polling=50)
    tab.evaluate(WATCH)
    tab.wait_for_function(SETTLED, arg=[0, 400], timeout=120000, polling=50)
    settled_at, now = tab.evaluate("() => [window.__lastChange, performance.now()]")
    tab.close()
    return time.perf_counter() - started - (now - settled_at) / 1000


# --start-up: each lesson's slowest first clicks on a server just started (bench/lesson_first_clicks.py
# finds them), each in a new tab, projected, on the server as `make run` starts it: after its warm-up, or (--warm-up
# off, or a checkout from before it with --app-dir) at once. Each twice: the first is the first click, the second the
# same new tab on a server that has drawn it once; Home in a new tab before and after is the front end's own floor.
LESSON_BAR = """() => !!document.querySelector('.st-key-lesson_bar')"""
START_UP_STOPS = [("intro stop 1 (compare)", "/compare?lesson=intro&stop=1", LESSON_BAR),
                  ("intro stop 16 (train)", "/train?lesson=intro&stop=16", LESSON_BAR),
                  ("intro stop 17 (the real encoder's grid)", "/attention?lesson=intro&stop=17", GRID_DRAWN),
                  ("llm stop 2 (SmolLM2)", "/llm?lesson=llm&stop=2", LESSON_BAR),
                  ("llm stop 7 (llm_heads)", "/llm_heads?lesson=llm&stop=7", LESSON_BAR)]


def start_up_clicks(app_dir: Path, warm_up: bool) -> dict[str, list[float]]:
    from playwright.sync_api import sync_playwright

    from bench.lesson_first_clicks import fresh_server

    with fresh_server(app_dir, warm_up) as (url, warmed):
        print(f"# {app_dir}, warm-up: {warmed}")
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=shutil.which("chromium"), args=["--no-sandbox"])
            # the floor first: Home in a new tab (the front end's own start, no stop's page)
            times = {"a new tab: Home": [_new_tab(browser, f"{url}/?lang=en&presenter=true", HOME_DRAWN)]}
            for name, path, ready in START_UP_STOPS:  # each stop's first click, then the same tab again
                times[name] = [_new_tab(browser, f"{url}{path}&lang=en&presenter=true", ready) for _ in range(2)]
            times["a new tab: Home"].append(_new_tab(browser, f"{url}/?lang=en&presenter=true", HOME_DRAWN))
            browser.close()
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=8)
    parser.add_argument("--url", help="a running, warmed app (default: start and warm one)")
    parser.add_argument("--start-up", action="store_true", help="only the lessons' slowest stops, each opened once "
                        "in a new tab on a server just started (after its own warm-up unless --warm-up off)")
    parser.add_argument("--warm-up", choices=("on", "off"), default="on")
    parser.add_argument("--app-dir", type=Path, default=ROOT, help="--start-up: the checkout whose asgi.py is served")
    args = parser.parse_args()
    print(f"# {time.strftime('%Y-%m-%d %H:%M')} · {platform.node()} · {os.cpu_count()} cores · "
          f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    if args.start_up:
        times = start_up_clicks(args.app_dir.resolve(), args.warm_up == "on")
        print("| new tab after start-up, projected | first s | again s |")
        print("|---|---|---|")
        for move, values in times.items():
            print(f"| {move} | {values[0]:.2f} | {values[1]:.2f} |")
        print(f"# load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
        return
    if args.url:
        times = measure(args.url.rstrip("/"), args.repeat)
    else:
        from serving.warmup import warm_replica
        from tests.conftest import streamlit_server

        with streamlit_server() as url:
            started = time.perf_counter()
            warm_replica(url)
            print(f"# warm-up (serving/warmup.py, stop 17 included): {time.perf_counter() - started:.1f} s")
            times = measure(url, args.repeat)
    floor = statistics.median(times["plain rerun (r)"])
    print("| move | median s | max s | n | × plain rerun |")
    print("|---|---|---|---|---|")
    for move, values in times.items():
        print(f"| {move} | {statistics.median(values):.2f} | {max(values):.2f} | {len(values)} | "
              f"{statistics.median(values) / floor:.1f} |")
    print(f"# load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()

"""A lecture's moves in Chromium, click to chart: decoding "Next token ▶", a head switched off, stop 17 opening (the real
encoder's grid), each beside a plain rerun of the same page measured in the same run.

    python bench/lecture_moves.py [--repeat 8] [--url http://127.0.0.1:8501]
    python bench/lecture_moves.py --start-up [--warm-up on|off] [--app-dir DIR] [--baseline DIR]
                        [--lang en ko] [--lessons intro ...]

Without --url it starts `streamlit run asgi.py` on a free port and warms it as serve.py does (serving/warmup.py:
the shipped models, the first charts, stop 17), so the figures are what a class meets on a warmed server; the
warm-up's own time is printed too. Projected at 1280×720 (presenter mode), the teacher's view.

Click to chart: the browser records the time of the click and of every DOM change after it (a MutationObserver on
the whole document, Plotly's SVG redraws included); the move ends when Streamlit's run has finished and nothing has
changed for 400 ms, and its time is the last change's. A plain rerun ("r", Streamlit's rerun shortcut, on the same
decoding page) is the floor every move pays: the ratio beside each move says how much more it costs.
Targets: decoding Next and a head switch ≤ 1 s, stop 17 ≤ 3 s.

--start-up measures what a teacher's browser does right after `make run`: one browser with a profile on disk, as
hers is, whose first tabs (Home twice, a stop with charts) have loaded Streamlit's front end and plotly.js (its
hashed bundle is served `Cache-Control: public, immutable`, so every later tab of that browser reads it from the
cache, and V8 keeps their compiled code); each lesson opened as she opens it, from Home in a new projected tab (its
button for the lesson, clicked READING_SECONDS after Home is drawn), and walked by the lesson bar's Next, every stop's
first click timed (issue 38's target: none over 2 s after the warm-up); then a new tab on the walk's slowest stop.
Home in a new tab of that browser, and in a new browser context (a browser that never loaded the lab: what a student's
first visit costs, and what each stop cost in this bench's earlier runs, which opened every stop in a context of its
own), are the front end's own floor beside them; and the same new tab of her browser on bench/streamlit_floor.py, a
Streamlit page with nothing of the lab's, bare and with one small Plotly chart: the least any charted stop's new tab
can cost where the browser runs.
"""
from __future__ import annotations

import argparse
import contextlib
import math
import os
import platform
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace

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
# bench/streamlit_floor.py?chart=plotly drawn: its text and its one chart's SVG.
FLOOR_CHART_DRAWN = """() => !!document.querySelector('[data-testid="stMarkdownContainer"]')
  && !!document.querySelector('.js-plotly-plot .main-svg')"""


def _move(page, act, drawn: str | None = None, arg=None, timeout_ms: int = 60000) -> float:
    """Seconds from act() to the move's last DOM change; drawn: a JS predicate (of arg) the page meets once the move
    is done."""
    page.evaluate(WATCH)
    page.wait_for_timeout(200)
    clicked_at = page.evaluate("() => performance.now()")
    act()
    if drawn:
        page.wait_for_function(drawn, arg=arg, timeout=timeout_ms, polling=50)
    return _settle(page, clicked_at, timeout_ms=timeout_ms)


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


def _new_tab(browser, url: str, ready: str, close: bool = True, arg=None) -> float:
    """Seconds from a new tab's navigation to url until its page is drawn (`ready`) and settled. browser.new_page
    opens it in a new context of its own (a browser that never loaded the lab) unless `browser` is a context's
    stand-in."""
    tab = browser.new_page(viewport={"width": 1280, "height": 720})
    started = time.perf_counter()
    tab.goto(url)
    tab.wait_for_function(ready, arg=arg, timeout=120000, polling=50)
    tab.evaluate(WATCH)
    tab.wait_for_function(SETTLED, arg=[0, 400], timeout=120000, polling=50)
    settled_at, now = tab.evaluate("() => [window.__lastChange, performance.now()]")
    if close:
        tab.close()
    return time.perf_counter() - started - (now - settled_at) / 1000


# --start-up: every lesson's first clicks on a server just started, as a teacher makes them: in one Chromium browser
# (one context: its HTTP cache holds Streamlit's bundle, served `immutable`, after her first tab), each lesson opened
# from Home in a new projected tab and walked by the lesson bar's Next to its last stop, each click (Home's button,
# then each Next) timed to the stop's page drawn and settled. No session had opened any stop before: the server only through its
# warm-up. Beside them the front end's own floor, Home in a new tab: in that same browser, and in a new context (a
# browser that never loaded the lab: the bundle fetched, parsed and compiled), the cold-context figure earlier runs of
# this bench gave for every stop (a tab per stop, each in a browser of its own).
NEXT = ".st-key-lesson_next button"
# A stop is drawn once the address names it, the lesson bar is there (a new tab: the run has begun drawing), Streamlit's
# run has ended and every plotly chart of the page has drawn its SVG (then _settle waits for 400 ms without a change).
STOP_STARTED = """(stop) => new URLSearchParams(location.search).get('stop') === String(stop)
  || !!document.querySelector('[data-testid="stStatusWidget"]')"""
STOP_STATE = """() => ({address: location.search, running: !!document.querySelector('[data-testid="stStatusWidget"]'),
  charts: document.querySelectorAll('.js-plotly-plot').length,
  undrawn: [...document.querySelectorAll('.js-plotly-plot')].filter(plot => !plot.querySelector('.main-svg')).length,
  error: [...document.querySelectorAll('[data-testid="stException"], [data-testid="stAlertContentError"]')]
    .map(e => e.innerText.slice(0, 200))})"""
STOP_DRAWN = """(stop) => new URLSearchParams(location.search).get('stop') === String(stop)
  && !!document.querySelector('.st-key-lesson_bar')
  && !document.querySelector('[data-testid="stStatusWidget"]')
  && [...document.querySelectorAll('.js-plotly-plot')].every(plot => plot.querySelector('.main-svg'))"""


def _lesson_walks(folder: Path) -> dict[str, list[str]]:
    """lesson id -> its stops' links in order ("attention?lesson=intro&stop=17"), from the served checkout's files."""
    from serving.warmup import lesson_stop_links
    from ui.page_list import PAGE_NAMES

    walks: dict[str, list[str]] = {}
    for link in lesson_stop_links(PAGE_NAMES, folder):
        walks.setdefault(link.split("lesson=")[1].split("&")[0], []).append(link)
    return walks


READING_SECONDS = 2.0  # a teacher reads Home's button before she clicks it


def _open_from_home(context, url: str, lesson: str, lang: str) -> tuple[object, float]:
    """Home in a new tab of `context`, then, READING_SECONDS after it is drawn, the click that opens `lesson` at its
    first stop in that tab: Home's button for it (a checkout whose Home has none: stop 1 in a new tab instead).
    -> (the tab, seconds from the click to stop 1 drawn and settled)."""
    tab = context.new_page()
    tab.goto(f"{url}/?lang={lang}&presenter=true")
    tab.wait_for_function(HOME_DRAWN, timeout=120000, polling=50)
    tab.wait_for_timeout(READING_SECONDS * 1000)
    button = tab.locator(f".st-key-open_lesson_{lesson} button")
    if button.count():
        return tab, _move(tab, button.click, STOP_DRAWN, 1, timeout_ms=300000)
    # a checkout whose Home has no button for it (before Home listed every lesson): stop 1 in a new tab, said so
    print(f"#   {lesson}: no button on Home, stop 1 opened in a new tab", flush=True)
    tab.close()
    link = next(link for link in _lesson_walks(ROOT / "lessons")[lesson] if link.endswith("stop=1"))
    seconds = _new_tab(SimpleNamespace(new_page=lambda **_: context.new_page()),
                       f"{url}/{link}&lang={lang}&presenter=true", STOP_DRAWN, close=False, arg=1)
    return context.pages[-1], seconds


def _walk(context, url: str, links: list[str], lang: str, each=lambda link, seconds: None) -> dict[str, float]:
    """Stop 1 opened from Home in a new tab of `context` (_open_from_home), then each Next to the last stop: {link:
    seconds} (stop 1's: the click on Home), each handed to each() as it is taken; NaN for a stop never drawn (the
    walk of that lesson ends there)."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    def took(link: str, seconds: float) -> None:
        walked[link] = seconds
        each(link, seconds)

    walked: dict[str, float] = {}
    tab, seconds = _open_from_home(context, url, links[0].split("lesson=")[1].split("&")[0], lang)
    took(links[0], seconds)
    for number in range(2, len(links) + 1):
        def click_next(number: int = number) -> None:
            tab.locator(NEXT).click()
            try:  # the run has begun (or is over) within seconds of the click
                tab.wait_for_function(STOP_STARTED, arg=number, timeout=20000, polling=50)
            except PlaywrightTimeout:  # a click lost on a page still busy (seen once at load 15): click once more
                print(f"#   stop {number}: Next clicked again {tab.evaluate(STOP_STATE)}", flush=True)
                tab.locator(NEXT).click()
        try:  # a cold server (--warm-up off) loads a model or runs a sweep at a first click: minutes on a busy machine
            took(links[number - 1], _move(tab, click_next, STOP_DRAWN, number, timeout_ms=300000))
        except PlaywrightTimeout:  # said, and the lesson left: the other lessons are still measured
            print(f"#   stop {number} never drawn: {tab.evaluate(STOP_STATE)}", flush=True)
            took(links[number - 1], math.nan)
            break
    tab.close()
    return walked


def _teacher_clicks(browser, teacher_browser, url: str, walks: dict[str, list[str]],
                    lang: str, floor_url: str | None = None) -> dict[str, float]:
    """Home in a new context, then in the teacher's browser (teacher_browser(): a browser context with a profile on
    disk, its caches filled by her first tabs), then each lesson walked by Next in that browser: {move: seconds},
    each also printed as it is taken (a run cut short keeps them); then, with floor_url (bench/streamlit_floor.py
    served), the same new tab of her browser on a bare Streamlit page and on one with a single Plotly chart."""
    times: dict[str, float] = {}

    def record(move: str, seconds: float) -> None:
        times[move] = seconds
        print(f"#   {move}: {seconds:.2f} s", flush=True)

    home = f"{url}/?lang={lang}&presenter=true"
    record("a new tab: Home, a new browser context (the front end's floor)", _new_tab(browser, home, HOME_DRAWN))
    context = teacher_browser()
    same = SimpleNamespace(new_page=lambda **_: context.new_page())
    # Her browser has opened the lab before (her rehearsal): Home twice and a stop with charts. Its disk cache then
    # holds Streamlit's bundle and plotly.js, and V8's code cache their compiled code, which a browser profile keeps
    # (an off-the-record context, Playwright's default, keeps no code cache: each of its tabs compiles plotly.js's
    # 4.7 MB again).
    first_stop = next(iter(walks.values()))[0]
    for path, ready, arg in ((home, HOME_DRAWN, None), (home, HOME_DRAWN, None),
                             (f"{url}/{first_stop}&lang={lang}&presenter=true", STOP_DRAWN, 1)):
        _new_tab(same, path, ready, arg=arg)
    record("a new tab: Home, the teacher's browser (its profile's caches filled)", _new_tab(same, home, HOME_DRAWN))
    for lesson, links in walks.items():
        def each(link: str, seconds: float, lesson: str = lesson) -> None:
            page, number = link.split("?")[0], link.rsplit("=", 1)[1]
            record(f"{lesson} stop {number} ({page}, {'from Home' if number == '1' else 'Next'})", seconds)

        walked = _walk(context, url, links, lang, each)
        # the issue's own figure: a new tab of the teacher's browser on the lesson's slowest stop (its server part is
        # a first click's: after the warm-up the server has drawn each stop before, walked or not)
        if any(math.isnan(seconds) for seconds in walked.values()):
            continue
        slowest = max(links[1:] or links, key=walked.get)
        number = int(slowest.rsplit("=", 1)[1])
        record(f"{lesson} stop {number} (the walk's slowest, new tab)",
               _new_tab(same, f"{url}/{slowest}&lang={lang}&presenter=true", STOP_DRAWN, arg=number))
    if floor_url:
        # The same kind of tab on a page with nothing of the lab's (bench/streamlit_floor.py), once her browser has
        # opened it twice too: Streamlit alone, and Streamlit with one Plotly chart.
        for name, path, ready in (("a bare Streamlit page", "/", HOME_DRAWN),
                                  ("a bare Streamlit page with one Plotly chart", "/?chart=plotly", FLOOR_CHART_DRAWN)):
            for _ in range(2):
                _new_tab(same, floor_url + path, ready)
            record(f"a new tab: {name}, the teacher's browser (the floor)", _new_tab(same, floor_url + path, ready))
    context.close()
    return times


def start_up_clicks(app_dirs: list[Path], warm_up: bool, languages: list[str],
                    lessons: list[str] | None) -> dict[str, dict[tuple[str, str], float]]:
    """{move: {(checkout, language): seconds}}: a server of each checkout started at once (each warming itself
    meanwhile), then, once all are warm, each language's clicks on each server in turn (the first checkout first)."""
    from concurrent.futures import ThreadPoolExecutor

    from playwright.sync_api import sync_playwright

    from bench.lesson_first_clicks import fresh_server

    times: dict[str, dict[tuple[str, str], float]] = {}
    with contextlib.ExitStack() as stack:
        managers = [fresh_server(app_dir, warm_up) for app_dir in app_dirs]
        with ThreadPoolExecutor(len(managers)) as pool:  # the warm-ups side by side: minutes each on 2 cores
            started = [pool.submit(manager.__enter__) for manager in managers]
        servers = []
        for manager, future in zip(managers, started, strict=True):
            if future.exception() is None:
                stack.push(manager.__exit__)
                servers.append(future.result())
        for future in started:
            future.result()  # raises a server's failure, the started ones stopped by the stack
        floor_url, _ = stack.enter_context(fresh_server(ROOT, warm_up=False, script="bench/streamlit_floor.py"))
        for app_dir, (_, warmed) in zip(app_dirs, servers, strict=True):
            print(f"# {app_dir} ({_checkout(app_dir)}), warm-up: {warmed}", flush=True)
        with sync_playwright() as pw, tempfile.TemporaryDirectory(prefix="teacher-profile-") as profiles:
            browser = pw.chromium.launch(executable_path=shutil.which("chromium"), args=["--no-sandbox"])
            for lang in languages:
                for index, (app_dir, (url, _)) in enumerate(zip(app_dirs, servers, strict=True)):
                    walks = {lesson: links for lesson, links in _lesson_walks(app_dir / "lessons").items()
                             if not lessons or lesson in lessons}
                    print(f"# {time.strftime('%H:%M:%S')} {_checkout(app_dir)} lang={lang}, load average "
                          f"{os.getloadavg()[0]:.2f}", flush=True)

                    def teacher_browser(folder: str = f"{profiles}/{lang}-{index}"):
                        return pw.chromium.launch_persistent_context(
                            folder, executable_path=shutil.which("chromium"), args=["--no-sandbox"],
                            viewport={"width": 1280, "height": 720})

                    for move, seconds in _teacher_clicks(browser, teacher_browser, url, walks, lang,
                                                         floor_url).items():
                        times.setdefault(move, {})[(_checkout(app_dir), lang)] = seconds
            browser.close()
    return times


def _checkout(app_dir: Path) -> str:
    """The checkout's short commit, or its folder's name."""
    import subprocess

    found = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=app_dir, capture_output=True, text=True)
    return found.stdout.strip() or app_dir.name


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=8)
    parser.add_argument("--url", help="a running, warmed app (default: start and warm one)")
    parser.add_argument("--start-up", action="store_true", help="every lesson walked by Next in one projected tab of "
                        "a teacher's browser on a server just started (after its own warm-up unless --warm-up off)")
    parser.add_argument("--warm-up", choices=("on", "off"), default="on")
    parser.add_argument("--app-dir", type=Path, default=ROOT, help="--start-up: the checkout whose asgi.py is served")
    parser.add_argument("--baseline", type=Path, help="--start-up: another checkout (e.g. a worktree of main) served "
                        "beside it, started at the same time and walked first, in turn with it")
    parser.add_argument("--lang", nargs="+", default=["en"], help="--start-up: the interface languages (en ko)")
    parser.add_argument("--lessons", nargs="*", help="--start-up: only these lessons (default: every lesson file)")
    args = parser.parse_args()
    print(f"# {time.strftime('%Y-%m-%d %H:%M')} · {platform.node()} · {os.cpu_count()} cores · "
          f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}", flush=True)
    if args.start_up:
        app_dirs = [path.resolve() for path in ([args.baseline] if args.baseline else []) + [args.app_dir]]
        times = start_up_clicks(app_dirs, args.warm_up == "on", args.lang, args.lessons)
        columns = list(dict.fromkeys(column for values in times.values() for column in values))
        print(f"| first click after start-up, projected | {' | '.join(f'{c} {l} s' for c, l in columns)} |")
        print(f"|---|{'---|' * len(columns)}")
        for move, values in times.items():
            print(f"| {move} | {' | '.join(f'{values[c]:.2f}' if c in values else '–' for c in columns)} |")
        for column in columns:
            clicks = {move: values[column] for move, values in times.items()
                      if " stop " in move and "slowest" not in move and column in values}
            for lesson in dict.fromkeys(move.split(" stop ")[0] for move in clicks):
                mine = {move: s for move, s in clicks.items() if move.startswith(f"{lesson} stop ")}
                slowest = sorted(mine, key=lambda move: math.inf if math.isnan(mine[move]) else mine[move],
                                 reverse=True)[:3]
                print(f"# {' '.join(column)} {lesson}: {len(mine)} stops, {sum(not s <= 2 for s in mine.values())} over "
                      "2 s; slowest " + ", ".join(f"{move.split(' stop ')[1]} {mine[move]:.2f} s" for move in slowest))
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

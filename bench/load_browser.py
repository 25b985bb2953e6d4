"""Classroom load in real browsers: 3–5 Chromium contexts use one `streamlit run app.py` server at once.

    python bench/load_browser.py [--students 4] [--timeout 240] [--json PATH]

The small, end-to-end companion of bench/load_classroom.py (which simulates 30 students at the protocol level):
here Debian's Chromium (Playwright, --headless --no-sandbox --disable-gpu --disable-background-networking) runs
the real front end, so the static files, plotly.js and the browser's rendering are part of every figure.

The script starts its own server (the same `Server` as load_classroom.py: 127.0.0.1, a free port) and one
browser with N contexts (separate cookies, separate Streamlit sessions) driven concurrently with asyncio. Every
request that is not to 127.0.0.1 is aborted and counted. Each student, at the same time as the others:

  load       open /attention                     until the first heatmap (.js-plotly-plot) is drawn
  sentence   type a sentence in the sidebar       until its translation (computed here beforehand) is shown
  layer      choose layer 2                       until the heatmap title says "layer 2 · head H"
  head       choose another head                  until the title says "layer 2 · head H'"
  decoding   click the sidebar link               until the page heading and a chart are drawn
  positional click the sidebar link               until the page heading and a chart are drawn

--train-and-close: memory after a session closed mid-training. One browser opens /train, starts the default
training, waits until it has run --train-steps steps, then closes its tab (the context). The server's RSS and
thread count (/proc/PID/status) are printed before the training, at its peak, and every second for
--after seconds after the tab closed: the job stops within SESSION_CHECK_EVERY steps (runtime/training_jobs.py), its
thread ends (one thread fewer), and its memory is returned (model/memory.py: malloc_trim when the job thread ends).

Every interaction is timed from the action to the page settling: the expected element visible, then Streamlit's
status widget gone and no stale element left. It fails on a timeout (--interaction-timeout), an exception element
or an `st.error`. The run is bounded by --timeout; the server is stopped at the end, also on errors and Ctrl-C.
"""
from __future__ import annotations

import argparse
import asyncio
import datetime
import json
import os
import random
import re
import shutil
import signal
import sys
import time
from collections import defaultdict
from dataclasses import asdict, dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from classroom_report import machine, ms, percentile  # noqa: E402
from load_classroom import HOST, Server, free_port  # noqa: E402

SENTENCES = ["she is a student", "the small cat eats the red apple", "i do not have a cat",
             "we like the big green trees", "the girl that watches the black dog has a pretty yellow hat"]
KINDS = ["load", "sentence", "layer", "head", "page:decoding", "page:positional"]
HEADINGS = {"decoding": "Decoding, one token at a time", "positional": "Positional encoding"}
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--no-first-run", "--disable-sync"]


@dataclass
class Interaction:
    student: int
    kind: str
    seconds: float | None
    ok: bool
    error: str = ""
    started: float = 0.0


def translations(sentences: list[str]) -> dict[str, str]:
    """What the shipped en-fr Transformer answers, so the browser can wait for exactly that text."""
    from model.checkpoint import load_checkpoint
    from model.decode import greedy_decode

    loaded = load_checkpoint(Path(__file__).resolve().parents[1] / "assets" / "checkpoints" / "transformer_en-fr")
    return {s: " ".join(greedy_decode(loaded, s).output_tokens) for s in sentences}


class Student:
    def __init__(self, index: int, browser, base: str, args, t0: float, expected: dict[str, str]):
        self.index, self.browser, self.base, self.args, self.t0 = index, browser, base, args, t0
        self.expected = expected
        self.rng = random.Random(args.seed * 1000 + index)
        self.results: list[Interaction] = []
        self.blocked: list[str] = []
        self.page = None

    async def _route(self, route) -> None:
        url = route.request.url
        if url.startswith((self.base, "data:", "blob:")):
            await route.continue_()
        else:  # loopback only: anything else is refused and reported
            self.blocked.append(url)
            await route.abort()

    async def settled(self, locator) -> None:
        """The expected element is visible, then no script run in progress and nothing stale on screen."""
        from playwright.async_api import expect

        timeout = self.args.interaction_timeout * 1000
        await expect(locator).to_be_visible(timeout=timeout)
        await expect(self.page.get_by_test_id("stStatusWidget")).to_have_count(0, timeout=timeout)
        await expect(self.page.locator("[data-stale='true']")).to_have_count(0, timeout=timeout)

    async def problems(self) -> str:
        errors = []
        if await self.page.get_by_test_id("stException").count():
            errors.append("exception element")
        for alert in await self.page.get_by_test_id("stAlertContentError").all():
            errors.append("st.error: " + (await alert.inner_text())[:200])
        return "; ".join(errors)

    async def timed(self, kind: str, action, locator_factory) -> bool:
        started = time.perf_counter()
        try:
            await action()
            await self.settled(locator_factory())
        except Exception as error:  # timeout or a broken page: a failed interaction, the student stops
            if self.args.screenshots:
                await self.page.screenshot(path=str(self.args.screenshots / f"student{self.index}_{kind[-10:]}.png"))
            self.results.append(Interaction(self.index, kind, None, False, f"{type(error).__name__}: "
                                            f"{str(error).splitlines()[0][:200]}", started - self.t0))
            return False
        seconds = time.perf_counter() - started
        problem = await self.problems()
        self.results.append(Interaction(self.index, kind, seconds, not problem, problem, started - self.t0))
        return not problem

    async def run(self, delay: float) -> None:
        await asyncio.sleep(delay)
        context = await self.browser.new_context(viewport={"width": 1400, "height": 1000})
        try:
            await context.route("**/*", self._route)
            self.page = page = await context.new_page()
            main = page.get_by_test_id("stMain")
            sidebar = page.get_by_test_id("stSidebar")
            sentence = self.rng.choice(SENTENCES)
            head = self.rng.choice([2, 3, 4])

            async def type_sentence():
                box = sidebar.get_by_label("Sentence", exact=True)
                await box.fill(sentence)
                await box.press("Enter")

            async def choose(label: str, option: str):
                await main.get_by_label(label, exact=True).click()
                await page.get_by_role("option", name=option, exact=True).click()

            def nav(path: str):
                return lambda: sidebar.get_by_test_id("stSidebarNav").locator(f"a[href$='/{path}']").click()

            def heading(path: str):
                return lambda: main.locator("h1", has_text=HEADINGS[path])

            steps = [
                ("load", lambda: page.goto(f"{self.base}/attention"), lambda: main.locator(".js-plotly-plot").first),
                ("sentence", type_sentence, lambda: main.get_by_test_id("stCode").filter(
                    has_text=re.compile("^" + re.escape(self.expected[sentence]) + "$")).first),
                ("layer", lambda: choose("Layer", "2"), lambda: main.get_by_text("layer 2 · head 1").first),
                ("head", lambda: choose("Head", str(head)), lambda: main.get_by_text(f"layer 2 · head {head}").first),
                ("page:decoding", nav("decoding"), heading("decoding")),
                ("page:positional", nav("positional"), heading("positional")),
            ]
            for number, (kind, action, locator) in enumerate(steps):
                if number:
                    await asyncio.sleep(self.rng.uniform(*self.args.think))
                if not await self.timed(kind, action, locator):
                    break
        finally:
            await context.close()


async def drive(args, base: str, expected: dict[str, str], server: Server, samples: list):
    from playwright.async_api import async_playwright

    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(executable_path=args.chromium, args=CHROMIUM_ARGS)
        try:
            t0 = time.perf_counter()
            students = [Student(i, browser, base, args, t0, expected) for i in range(args.students)]

            async def sample():
                while True:
                    status = server.status()
                    if status is not None:
                        samples.append((time.perf_counter() - t0, *status))
                    await asyncio.sleep(0.5)

            sampler = asyncio.create_task(sample())
            tasks = [asyncio.create_task(s.run(args.ramp * i / args.students)) for i, s in enumerate(students)]
            done, pending = await asyncio.wait(tasks, timeout=args.timeout)
            for task in pending:
                task.cancel()
            await asyncio.gather(*pending, return_exceptions=True)
            sampler.cancel()
            await asyncio.gather(sampler, return_exceptions=True)
            errors = [t.exception() for t in done if t.exception() is not None]
            return students, bool(pending), time.perf_counter() - t0, errors
        finally:
            await browser.close()


async def train_and_close(args, base: str, server: Server) -> dict:
    """Open /train, start a training, close the tab mid-training; RSS before / during / after."""
    server_started = server.started_at
    from playwright.async_api import async_playwright, expect

    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(executable_path=args.chromium, args=CHROMIUM_ARGS)
        try:
            context = await browser.new_context(viewport={"width": 1400, "height": 1000})
            page = await context.new_page()
            await page.goto(f"{base}/train")
            start = page.get_by_role("button", name="Start training")
            await expect(start).to_be_visible(timeout=60000)
            await expect(page.get_by_test_id("stStatusWidget")).to_have_count(0, timeout=60000)
            await asyncio.sleep(2)
            before = server.status()
            await start.click()
            progress = page.get_by_test_id("stProgress")
            await expect(progress).to_be_visible(timeout=60000)
            peak, steps, deadline = before, 0, time.perf_counter() + args.timeout
            while steps < args.train_steps and time.perf_counter() < deadline:
                text = await progress.first.inner_text()
                match = re.search(r"step (\d+) /", text)
                steps = int(match.group(1)) if match else 0
                status = server.status()
                if status is not None and status[0] > peak[0]:
                    peak = status
                await asyncio.sleep(0.5)
            during = server.status()
            await context.close()  # the student closes the tab mid-training
            closed = time.perf_counter()
            after = []
            while time.perf_counter() - closed < args.after:
                await asyncio.sleep(1.0)
                after.append((time.perf_counter() - closed, *server.status()))
        finally:
            await browser.close()
    print()
    print(f"## a session closed mid-training (default settings, tab closed at step {steps}; server up "
          f"{time.perf_counter() - server_started:.0f} s)")
    print(f"load average {os.getloadavg()[0]:.2f}")
    print()
    print("| moment | server RSS | threads |")
    print("|---|---|---|")
    print(f"| /train open, before Start | {before[0]:,.0f} MiB | {before[1]} |")
    print(f"| training, peak | {peak[0]:,.0f} MiB | {peak[1]} |")
    print(f"| training, when the tab closed | {during[0]:,.0f} MiB | {during[1]} |")
    for t, rss, threads, _ in after:
        if round(t) in (1, 2, 5, 10, 30, 60, 90, 120, 125, 130, 140, 150, 180) or t == after[-1][0]:
            print(f"| {t:.0f} s after the tab closed | {rss:,.0f} MiB | {threads} |")
    return {"before": before, "peak": peak, "during": during, "after": after, "steps": steps}


def report(args, students, timed_out: bool, wall: float, errors: list, samples: list, load: tuple,
           healthy: float) -> dict:
    results = [r for s in students for r in s.results]
    by_kind = defaultdict(list)
    for r in results:
        by_kind[r.kind].append(r)
    not_run = sum(len(KINDS) - len(s.results) for s in students if not any(not r.ok for r in s.results))
    failed = [r for r in results if not r.ok]
    failed_sessions = {r.student for r in failed} | {s.index for s in students if len(s.results) < len(KINDS)}
    ok = [r.seconds for r in results if r.ok]
    blocked = [url for s in students for url in s.blocked]
    peak_rss = max((s[1] for s in samples), default=float("nan"))
    server_cpu = samples[-1][3] - samples[0][3] if len(samples) > 1 else float("nan")
    today = datetime.date.today().isoformat()
    print()
    print(f"## real browsers: {args.students} Chromium contexts, {len(results)} interactions in {wall:.1f} s"
          + (" (global timeout reached)" if timed_out else ""))
    print(f"server healthy after {healthy:.1f} s; load average at start {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}, "
          f"at end {os.getloadavg()[0]:.2f}; server CPU {server_cpu:.1f} s, peak RSS {peak_rss:,.0f} MiB; "
          f"requests not to 127.0.0.1 (aborted): {len(blocked)}")
    print()
    print("| interaction | n | ok | p50 | p95 | max |")
    print("|---|---|---|---|---|---|")
    for kind in KINDS:
        values = [r.seconds for r in by_kind.get(kind, []) if r.ok]
        print(f"| {kind} | {len(by_kind.get(kind, []))} | {len(values)} | {ms(percentile(values, 50))} | "
              f"{ms(percentile(values, 95))} | {ms(max(values, default=float('nan')))} |")
    print(f"| **all** | {len(results)} | {len(ok)} | {ms(percentile(ok, 50))} | {ms(percentile(ok, 95))} | "
          f"{ms(max(ok, default=float('nan')))} |")
    if failed or errors or not_run:
        print()
        print(f"failures: {len(failed)} interactions failed, {not_run} not run, {len(errors)} student errors")
        for r in failed[:10]:
            print(f"  student {r.student} {r.kind}: {r.error}")
        for error in errors[:5]:
            print(f"  {type(error).__name__}: {error}")
    if blocked:
        print("blocked:", *sorted(set(blocked))[:5], sep="\n  ")
    print()
    print("| date | machine | N | interactions | p50 | p95 | max | failed sessions / interactions | peak RSS |")
    print("|---|---|---|---|---|---|---|---|---|")
    print(f"| {today} | {machine()}, load avg {load[0]:.1f} | {args.students} | {len(results)} | "
          f"{ms(percentile(ok, 50))} | {ms(percentile(ok, 95))} | {ms(max(ok, default=float('nan')))} | "
          f"{len(failed_sessions)} / {len(failed) + not_run} | {peak_rss:,.0f} MiB |")
    return {"date": today, "machine": machine(), "students": args.students, "wall_s": wall, "timed_out": timed_out,
            "load_average_start": load, "server_cpu_s": server_cpu, "peak_rss_mib": peak_rss,
            "failed_sessions": sorted(failed_sessions), "blocked_requests": blocked,
            "p50_s": percentile(ok, 50), "p95_s": percentile(ok, 95),
            "interactions": [asdict(r) for r in results]}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--students", type=int, default=4, choices=range(1, 6), metavar="{1..5}")
    parser.add_argument("--ramp", type=float, default=1.0, help="students start evenly over this many seconds")
    parser.add_argument("--think", type=float, nargs=2, default=(0.5, 1.5), metavar=("MIN", "MAX"))
    parser.add_argument("--timeout", type=float, default=240.0, help="global limit for the students, seconds")
    parser.add_argument("--interaction-timeout", type=float, default=60.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", type=Path)
    parser.add_argument("--train-and-close", action="store_true",
                        help="RSS before / during / after a session that closes its tab mid-training")
    parser.add_argument("--train-steps", type=int, default=60, help="close the tab after this many steps")
    parser.add_argument("--after", type=float, default=20.0, help="seconds to watch RSS after the tab closed")
    parser.add_argument("--rounds", type=int, default=2,
                        help="train-and-close this many times one after the other (the first pays one-time costs)")
    parser.add_argument("--screenshots", type=Path, help="save a screenshot of each failed interaction here")
    args = parser.parse_args()
    args.think = tuple(sorted(args.think))
    args.chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if args.chromium is None:
        parser.error("Debian's chromium is not installed (apt-get install chromium)")

    def on_sigterm(signum, frame):
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, on_sigterm)
    expected = translations(SENTENCES)
    load = os.getloadavg()
    server = Server(free_port())
    samples: list = []
    try:
        server.started_at = time.perf_counter()
        healthy = server.start(timeout=120.0)
        print(f"server healthy on {HOST}:{server.port} after {healthy:.1f} s; {args.students} browsers", flush=True)
        if args.train_and_close:
            figures = [asyncio.run(train_and_close(args, f"http://{HOST}:{server.port}", server))
                       for _ in range(args.rounds)]
            if args.json:
                args.json.write_text(json.dumps(figures, indent=1, default=str))
            return 0
        students, timed_out, wall, errors = asyncio.run(drive(args, f"http://{HOST}:{server.port}", expected,
                                                              server, samples))
    except KeyboardInterrupt:
        print("interrupted; stopping the server", file=sys.stderr)
        return 130
    finally:
        server.stop()
    summary = report(args, students, timed_out, wall, errors, samples, load, healthy)
    if args.json:
        args.json.write_text(json.dumps(summary, indent=1, default=str))
    return 0 if not summary["failed_sessions"] and not summary["blocked_requests"] else 1


if __name__ == "__main__":
    sys.exit(main())

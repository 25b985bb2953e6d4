"""One student's heavy links, or sessions flooding the explorer's layer and head pickers, against a bystander's page
on the same replica.

    python bench/adversary_fairness.py [--seconds 90] [--students 1 3] [--pickers 10] [--tabs 3]

Starts one replica (load_classroom.Server: `streamlit run asgi.py` on a free port of 127.0.0.1). For each count of
students in --students, for --seconds: each student reloads the LLM heads page from a link with a new 520-word
text, the widest window and the longest induction sequence
(`/llm_heads?sink_text=…&window=32&ind_len=256&ind_seed=<random>`), a new tab (session) each time, as soon as the
last load ended, in the same browser (its cookies, the seat among them, kept from tab to tab); meanwhile a bystander reloads /attention (the default sentence) every half second. Prints the
bystander's load times (p50, p95, max; the promise: at most 2 s) and how many heavy loads the students finished.
With --pickers N, a last row: N sessions (browsers of their own) on the attention explorer of SmolLM2 with a
60-word text, each picking another layer and then another head as soon as its last pick was drawn (each pick a rerun
of the explorer's fragment alone, as the browser sends it), issue 53 item 4: those reruns once skipped the page queue.
With --tabs N, a row of one student with N tabs open at once (one browser: its seat cookie shared), each reloading the
attention page on SmolLM2 with a new 300-word text as soon as its last load ended (issue 53 item 4: one student's
three tabs once held three places in the page queue).
"""
from __future__ import annotations

import argparse
import asyncio
import os
import random
import statistics
import sys
import time
from pathlib import Path
from urllib.parse import urlencode

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from load_classroom import Server, free_port  # noqa: E402
from model.gguf_weights import SMOLLM2_NAME  # noqa: E402
from serving.streamlit_client import StreamlitClient  # noqa: E402

WORDS = ("the teacher reads a short story to class while students write notes about birds rivers mountains old "
         "cities small boats green fields and quiet libraries where children learn numbers letters songs games "
         "because every morning sun rises over hills").split()
TEXT_WORDS = 520
BYSTANDER_EVERY = 0.5  # s between the bystander's loads
TARGET_SECONDS = 2.0


def heavy_link(rng: random.Random) -> str:
    text = " ".join(rng.choice(WORDS) for _ in range(TEXT_WORDS))
    return urlencode({"sink_text": text, "window": 32, "ind_len": 256, "ind_seed": rng.randrange(10_000)})


async def student(url: str, rng: random.Random, until: float, done: list[float]) -> None:
    """Reload the heavy link in a new tab of the same browser as soon as the last load ended, until `until`."""
    cookies: dict[str, str] = {}  # the browser's: its seat, set by the first page, goes with every later tab
    while time.perf_counter() < until:
        client = StreamlitClient(url, cookies)
        try:
            await client.connect("llm_heads")
            outcome = await client.rerun(client.open_page_msg("llm_heads", heavy_link(rng)),
                                         max(1.0, until - time.perf_counter() + 1))
            done.append(outcome.seconds)
        except (TimeoutError, ConnectionError):
            pass
        finally:
            cookies = client.cookies
            await client.close()


PICKER_TEXT = " ".join(WORDS[:60])


async def picker(url: str, rng: random.Random, until: float, done: list[float]) -> None:
    """Another layer, then another head, of SmolLM2's explorer, each a rerun of the explorer's fragment, until `until`."""
    client = StreamlitClient(url)
    try:
        await client.connect("attention")
        query = urlencode({"model": SMOLLM2_NAME, "sentence": PICKER_TEXT})
        outcome = await client.rerun(client.open_page_msg("attention", query), 600, "attention")
        if not outcome.ok:
            raise RuntimeError(f"the picker's page failed: {outcome.problems}")
        while time.perf_counter() < until:
            for key in ("attn_layer", "attn_head"):
                if problem := client.choose_option(key, rng.choice):
                    raise RuntimeError(problem)
                outcome = await client.rerun(client.widget_rerun_msg(client.fragment_id(key)),
                                             max(1.0, until - time.perf_counter() + 30))
                done.append(outcome.seconds)
    except (TimeoutError, ConnectionError):
        pass
    finally:
        await client.close()


def _row(who, loads: list[tuple[float, float]], done: list[float]) -> dict:
    """The table's row for `who` from the bystander's (start, seconds) loads and the others' finished loads."""
    ordered = sorted(seconds for _, seconds in loads)
    return {"students": who, "bystander_loads": len(loads), "p50_s": statistics.median(ordered),
            "p95_s": ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))], "max_s": ordered[-1],
            "max_at_s": max(loads, key=lambda load: load[1])[0], "heavy_loads_done": len(done)}


async def tab(url: str, cookies: dict[str, str], rng: random.Random, until: float, done: list[float]) -> None:
    """One of a student's tabs (her browser's cookies): SmolLM2's attention page with a new long text, until `until`."""
    client = StreamlitClient(url, cookies)
    try:
        await client.connect("attention")
        while time.perf_counter() < until:
            text = " ".join(rng.choice(WORDS) for _ in range(300))
            query = urlencode({"model": SMOLLM2_NAME, "sentence": text})
            outcome = await client.rerun(client.open_page_msg("attention", query),
                                         max(1.0, until - time.perf_counter() + 60))
            done.append(outcome.seconds)
    except (TimeoutError, ConnectionError):
        pass
    finally:
        await client.close()


async def tabs_of_one_student(url: str, tabs: int, seconds: float, seed: int) -> dict:
    first = StreamlitClient(url)  # her browser: the seat cookie its first page set, shared by every tab
    await first.connect("attention")
    cookies = first.cookies
    await first.close()
    until = time.perf_counter() + seconds
    done: list[float] = []
    loads, *_ = await asyncio.gather(bystander(url, until), *(tab(url, dict(cookies), random.Random(seed * 100 + i),
                                                                   until, done) for i in range(tabs)))
    return _row(f"1, {tabs} tabs", loads, done)


async def bystander(url: str, until: float) -> list[tuple[float, float]]:
    """-> (seconds into the row the load began, the seconds it took) of each load."""
    client = StreamlitClient(url)
    await client.connect("attention")
    times = []
    begun = time.perf_counter()
    try:
        while time.perf_counter() < until:
            at = time.perf_counter() - begun
            outcome = await client.rerun(client.open_page_msg("attention"), 300, "attention")
            if not outcome.ok:
                raise RuntimeError(f"the bystander's page failed: {outcome.problems}")
            times.append((at, outcome.seconds))
            await asyncio.sleep(BYSTANDER_EVERY)
    finally:
        await client.close()
    return times


async def phase(url: str, students: int, seconds: float, seed: int, pickers: bool = False) -> dict:
    until = time.perf_counter() + seconds
    done: list[float] = []
    rngs = [random.Random(seed * 100 + i) for i in range(students)]
    load = picker if pickers else student
    loads, *_ = await asyncio.gather(bystander(url, until), *(load(url, rng, until, done) for rng in rngs))
    return _row(f"{students} pickers" if pickers else students, loads, done)


async def _run(url: str, counts: list[int], seconds: float, pickers: int, tabs: int) -> list[dict]:
    warm = StreamlitClient(url)  # load the model and the bystander's page once, untimed
    await warm.connect("llm_heads")
    await warm.rerun(warm.open_page_msg("llm_heads"), 600)
    await warm.rerun(warm.open_page_msg("attention"), 120)
    if pickers:  # the pickers' text analysed once: the row measures their picks, not the first analysis
        await warm.rerun(warm.open_page_msg("attention", urlencode({"model": SMOLLM2_NAME, "sentence": PICKER_TEXT})),
                         600)
    await warm.close()
    rows = [await phase(url, 0, min(seconds, 10), 0)]  # the bystander alone
    for i, count in enumerate(counts):
        rows.append(await phase(url, count, seconds, i + 1))
    if pickers:
        rows.append(await phase(url, pickers, seconds, len(counts) + 1, pickers=True))
    if tabs:
        rows.append(await tabs_of_one_student(url, tabs, seconds, len(counts) + 2))
    return rows


def run(students: list[int] = (1, 3), seconds: float = 90, pickers: int = 0, tabs: int = 0) -> list[dict]:
    """The table's rows: the bystander alone, then with each count of students reloading heavy links, then with
    `pickers` sessions flooding the explorer's pickers."""
    server = Server(free_port())
    server.start(180)
    try:
        return asyncio.run(_run(server.url, list(students), seconds, pickers, tabs))
    finally:
        server.stop()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=90)
    parser.add_argument("--students", type=int, nargs="*", default=[1, 3])
    parser.add_argument("--pickers", type=int, default=0, help="sessions flooding the explorer's pickers (0: none)")
    parser.add_argument("--tabs", type=int, default=0, help="one student's tabs reloading long texts (0: none)")
    args = parser.parse_args(argv)
    rows = run(args.students, args.seconds, args.pickers, args.tabs)
    print(f"# {time.strftime('%Y-%m-%d %H:%M')}, one replica, {args.seconds:.0f} s per row")
    print(f"{'students':>8} {'bystander loads':>15} {'p50 s':>7} {'p95 s':>7} {'max s':>7} {'max at s':>8} "
          f"{'heavy loads / picks done':>24}")
    for row in rows:
        print(f"{row['students']!s:>8} {row['bystander_loads']:>15} {row['p50_s']:>7.2f} {row['p95_s']:>7.2f} "
              f"{row['max_s']:>7.2f} {row['max_at_s']:>8.1f} {row['heavy_loads_done']:>24}")
    print(f"load average {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    worst = max(row["max_s"] for row in rows)
    print(f"bystander's slowest load {worst:.2f} s ({'within' if worst <= TARGET_SECONDS else 'over'} "
          f"the {TARGET_SECONDS:.0f} s promise)")
    return 0 if worst <= TARGET_SECONDS else 1


if __name__ == "__main__":
    sys.exit(main())

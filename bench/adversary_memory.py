"""Memory: ten students each paste a different 512-token text on the LLM's attention page of one replica.

    python bench/adversary_memory.py [--students 10] [--budget-mb N] [--app-dir DIR]

Starts one `streamlit run asgi.py` (127.0.0.1, a free port; ATTENTION_LAB_CACHE_MB=N when --budget-mb is given) and
waits until it has warmed itself (as serve.py lets students in only once a replica is warm),
opens a bystander's /attention (the default translation model) and one short SmolLM2 text (the model loaded, as
serve.py's warm-up does), then lets each student open /attention?model=SmolLM2-135M-Instruct&sentence=<a different
~3,500-character text, cut to 512 tokens> through the project's protocol client (serving/streamlit_client.py), one
after another, every student's session kept open. While a student's text is analysed, the bystander reruns its
/attention page again and again. Prints, per text: the replica's RSS after it (/proc VmRSS) and its peak during it
(sampled every 50 ms), the budget, the student's page time and the bystander's slowest page time meanwhile.
--app-dir runs another checkout's app (e.g. the commit before a change) with this script.
"""
from __future__ import annotations

import argparse
import asyncio
import os
import random
import sys
import tempfile
import threading
import time
import urllib.parse
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from serving.local_server import free_port, start_streamlit, started  # noqa: E402
from serving.streamlit_client import StreamlitClient  # noqa: E402

LLM = "SmolLM2-135M-Instruct"
WORDS = ("the teacher explained how every word in a sentence looks at the other words and why some heads prefer "
         "the next token while others gather on the first token of the text students asked whether attention "
         "weights explain what a model does or only where it reads river bank money account picnic morning "
         "library window garden mountain question answer number colour music planet history science").split()
DEFAULT_BUDGET_MB = None  # the app's own default (runtime/result_cache.py) unless --budget-mb is given


def student_text(seed: int, chars: int = 3500) -> str:
    """A different text per seed, ~3,500 characters (SmolLM2 reads ~4 a token: more than its 512-token cut)."""
    rng = random.Random(seed)
    words: list[str] = [f"Student {seed} writes:"]
    while sum(len(w) + 1 for w in words) < chars:
        words.append(rng.choice(WORDS))
    return " ".join(words)[:chars]


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


class PeakSampler:
    """The largest VmRSS of a process between start() and stop(), sampled every 50 ms in a thread."""

    def __init__(self, pid: int):
        self.pid, self.peak, self._stop = pid, 0.0, threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def _sample(self) -> None:
        while not self._stop.is_set():
            self.peak = max(self.peak, rss_mib(self.pid))
            self._stop.wait(0.05)

    def __enter__(self) -> PeakSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, rss_mib(self.pid))


async def _open(url: str, path: str, query: str = "", timeout: float = 180.0) -> tuple[StreamlitClient, float]:
    client = StreamlitClient(url)
    await client.connect(path, timeout=timeout)
    outcome = await client.rerun(client.open_page_msg(path, query), timeout)
    if not outcome.ok:
        raise RuntimeError(f"/{path}?{query[:60]}…: {outcome.problems}")
    return client, outcome.seconds


async def _bystander(client: StreamlitClient, stop: asyncio.Event, times: list[float]) -> None:
    """Rerun the bystander's page until stop is set (each rerun is its page reopened: the whole script runs)."""
    while not stop.is_set():
        outcome = await client.rerun(client.open_page_msg("attention"), 120.0)
        if not outcome.ok:
            raise RuntimeError(f"bystander: {outcome.problems}")
        times.append(outcome.seconds)
        await asyncio.sleep(0.2)


async def _drive(url: str, pid: int, students: int) -> list[dict]:
    rows: list[dict] = []
    bystander, first = await _open(url, "attention")
    warm, _ = await _open(url, "attention", urllib.parse.urlencode({"model": LLM, "sentence": "A short warm-up."}))
    rows.append({"text": "idle (warm)", "rss_mib": rss_mib(pid), "peak_mib": rss_mib(pid), "student_s": None,
                 "bystander_max_s": first})
    kept = [bystander, warm]
    for i in range(students):
        query = urllib.parse.urlencode({"model": LLM, "sentence": student_text(i)})
        times: list[float] = []
        stop = asyncio.Event()
        with PeakSampler(pid) as peak:
            watcher = asyncio.create_task(_bystander(bystander, stop, times))
            student, seconds = await _open(url, "attention", query)
            stop.set()
            await watcher
        kept.append(student)
        rows.append({"text": f"student {i + 1}", "rss_mib": rss_mib(pid), "peak_mib": peak.peak,
                     "student_s": seconds, "bystander_max_s": max(times) if times else None})
    for client in kept:
        await client.close()
    return rows


def run(students: int = 10, budget_mb: float | None = DEFAULT_BUDGET_MB, app_dir: Path = ROOT) -> list[dict]:
    """One replica, `students` different 512-token texts on SmolLM2's attention page: the table's rows."""
    port = free_port()
    log = tempfile.NamedTemporaryFile("w+", prefix="adversary-memory-", suffix=".log")  # the server's stderr
    env = dict(os.environ)
    if budget_mb is not None:
        env["ATTENTION_LAB_CACHE_MB"] = str(budget_mb)
    server = start_streamlit(app_dir, port, env, stderr=log)
    try:
        url = started(server, port, timeout=120)
        _wait_for_warm_up(Path(log.name))
        return asyncio.run(_drive(url, server.pid, students))
    finally:
        server.terminate()
        server.wait(timeout=30)
        log.close()


def _wait_for_warm_up(log: Path, timeout: float = 600.0) -> None:
    """Wait until the replica has warmed itself (serving/warmup.py prints "Warm: …" or "Warm-up stopped …"): a class
    starts on a warm replica (serve.py lets students in after its warm-up), and the warm-up's own runs (every lesson
    stop, the training page's speed probe) would otherwise be counted against the bystander."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        text = log.read_text(encoding="utf-8", errors="replace")
        if "Warm: " in text or "Warm-up stopped" in text or "Warm-up skipped" in text:
            return
        time.sleep(1.0)
    raise RuntimeError(f"the replica did not finish warming in {timeout:.0f} s")


def _budget_of(app_dir: Path, budget_mb: float | None) -> str:
    if budget_mb is not None:
        return f"{budget_mb:g}"
    if any((app_dir / room / "result_cache.py").is_file() for room in ("runtime", "ui")):  # ui/: older checkouts
        from runtime.result_cache import DEFAULT_BUDGET_MB as default
        return f"{default} (default)"
    return "none (st.cache_data max_entries)"


def main(argv: list[str] | None = None) -> list[dict]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--students", type=int, default=10)
    parser.add_argument("--budget-mb", type=float, default=DEFAULT_BUDGET_MB,
                        help="ATTENTION_LAB_CACHE_MB for the replica (default: the app's own default)")
    parser.add_argument("--app-dir", type=Path, default=ROOT, help="the checkout whose app is served")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    rows = run(args.students, args.budget_mb, args.app_dir.resolve())
    print(f"load average: {Path('/proc/loadavg').read_text().strip()}; {time.perf_counter() - start:.0f} s in all")
    print(f"app: {args.app_dir.resolve()}; cache budget (MiB): {_budget_of(args.app_dir.resolve(), args.budget_mb)}\n")
    print("| after | replica RSS (MiB) | peak during it (MiB) | student's page (s) | bystander's slowest /attention (s) |")
    print("|---|---|---|---|---|")
    for row in rows:
        student = "–" if row["student_s"] is None else f"{row['student_s']:.1f}"
        bystander = "–" if row["bystander_max_s"] is None else f"{row['bystander_max_s']:.2f}"
        print(f"| {row['text']} | {row['rss_mib']:.0f} | {row['peak_mib']:.0f} | {student} | {bystander} |")
    return rows


if __name__ == "__main__":
    main()

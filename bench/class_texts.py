"""A flood of open-text answers on the class store: N students send a text within a few seconds; is every text
stored, how long does each wait, and how quickly does the teacher's moderation list read while they arrive?

    python bench/class_texts.py [--students 300] [--window 5] [--threads 8] [--dsn postgresql://...]

The store side of issue 55's "300 texts within 5 s" (classroom/text_answers.py), without Streamlit: each student's
text goes through ClassStore.answer_text (the rate limit's count, the caps, the one-statement insert) from a pool of
threads, as a replica's script threads call it, at a uniformly random moment of the window. Meanwhile the teacher's
private view reads her moderation list (ClassTeacher.text_groups) every --poll seconds, as her page's read-outs do.
After the last text: the list once more, her "Approve all not flagged", the Reveal, and the room's read
(ClassStore.approved_texts). On a SQLite file in a fresh folder, or the PostgreSQL database --dsn names.

Reported: texts stored (of N), each text's wait (p50, p95, max), the moderation list's read time during the flood
(median, max) and after it, the approval and the room's read.
"""
from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from classroom.store import ClassStore  # noqa: E402

WORDS = ("keys", "Keys", "relevance", "a match", "similarity", "context", "관련성", "키", "information", "🔑 keys",
         "the keys that match", "fuck", "which words matter", "attention", "값")


def _percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def run(args) -> dict:
    location = args.dsn or str(Path(tempfile.mkdtemp()) / "classroom.sqlite3")
    store = ClassStore(location)
    teacher = store.create_class("intro", stop=16, class_size=args.students)
    code, question = teacher.code, "intro:16"
    for n in range(args.students):
        store.join(code, f"student-{n}")
    rng = random.Random(args.seed)
    moments = sorted(rng.uniform(0, args.window) for _ in range(args.students))
    waits: list[float] = []
    failures: list[str] = []
    lock = threading.Lock()
    start = time.perf_counter() + 0.2

    def send(n: int) -> None:
        delay = start + moments[n] - time.perf_counter()
        if delay > 0:
            time.sleep(delay)
        text = f"{WORDS[n % len(WORDS)]} {n % 7}" if n % 3 else WORDS[n % len(WORDS)]
        sent = time.perf_counter()
        try:
            store.answer_text(code, f"student-{n}", question, text, None, stop=16)
        except Exception as error:  # noqa: BLE001 - counted and reported
            with lock:
                failures.append(f"{n}: {type(error).__name__}: {error}")
            return
        with lock:
            waits.append(time.perf_counter() - sent)

    reads: list[float] = []
    flooding = threading.Event()
    flooding.set()

    def teacher_reads() -> None:
        while flooding.is_set():
            began = time.perf_counter()
            teacher.text_groups(question)
            reads.append(time.perf_counter() - began)
            time.sleep(args.poll)

    reader = threading.Thread(target=teacher_reads)
    reader.start()
    with ThreadPoolExecutor(args.threads) as pool:
        list(pool.map(send, range(args.students)))
    flooding.clear()
    reader.join()
    began = time.perf_counter()
    groups = teacher.text_groups(question)
    after = time.perf_counter() - began
    began = time.perf_counter()
    approved = teacher.approve_texts(question)
    approve = time.perf_counter() - began
    teacher.reveal(question)
    began = time.perf_counter()
    room = store.approved_texts(code, question)
    room_read = time.perf_counter() - began
    stored = store.stored_answers(code)
    store.close()
    return {"engine": "PostgreSQL" if args.dsn else "SQLite", "stored": stored, "failures": failures,
            "waits": waits, "reads": reads, "after": after, "groups": len(groups), "flagged": sum(
                bool(g.flags) for g in groups), "approved": approved, "approve": approve, "room": len(room),
            "room_read": room_read}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=300)
    parser.add_argument("--window", type=float, default=5.0, help="seconds within which every text is sent")
    parser.add_argument("--threads", type=int, default=8, help="threads sending at once (a replica's script runs)")
    parser.add_argument("--poll", type=float, default=0.5, help="seconds between the teacher's list reads")
    parser.add_argument("--dsn", default=None, help="a PostgreSQL DSN (default: a SQLite file in a fresh folder)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    result = run(args)
    waits, reads = result["waits"], result["reads"] or [0.0]
    print(f"| engine | texts stored | wait p50 / p95 / max | list read during (median / max) | list after | "
          f"approve all | room read |\n|---|---|---|---|---|---|---|\n"
          f"| {result['engine']} | {result['stored']} of {args.students} | "
          f"{statistics.median(waits) * 1000:.1f} / {_percentile(waits, 0.95) * 1000:.1f} / {max(waits) * 1000:.1f} ms"
          f" | {statistics.median(reads) * 1000:.1f} / {max(reads) * 1000:.1f} ms ({len(reads)} reads) | "
          f"{result['after'] * 1000:.1f} ms ({result['groups']} groups, {result['flagged']} flagged) | "
          f"{result['approve'] * 1000:.1f} ms ({result['approved']}) | {result['room_read'] * 1000:.1f} ms "
          f"({result['room']} groups) |")
    for failure in result["failures"][:10]:
        print("failed:", failure)
    return 0 if result["stored"] == args.students and not result["failures"] else 1


if __name__ == "__main__":
    sys.exit(main())

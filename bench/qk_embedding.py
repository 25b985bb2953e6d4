"""A head across many texts (model/explain/qk_embedding.py, issue 41): one head's 2-D picture over the fixed texts.

    python bench/qk_embedding.py [--rounds 5] [--threads 1] [--layer 14] [--head 0]

Rows, each the median of --rounds rounds (wall and CPU time), on the process's one loaded SmolLM2-135M-Instruct at
--threads torch threads (the app's pages run at 1):
- after warm-up: embed_head on the fixed texts' queries and keys read once (read_texts, every layer: what a page
  holds in its cache), the picture of one head (issue 41's target: ≤ 2 s);
- the obvious alternative: the texts' forwards again for that head (read_texts stopped after its layer), then
  embed_head, every time; the ratio of the two;
- the one reading of every layer of every text (the cache miss, paid once per process), and the RoPE pair split of
  one head on the first text.

Prints a markdown table and `cat /proc/loadavg` at start and end. A figure belongs in bench/README.md only from a
quiet machine (1-minute load under 2.5 at both ends).
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import torch  # noqa: E402

from model.explain.fixed_sets import LANGUAGE_MODEL_TEXTS  # noqa: E402
from model.explain.qk_embedding import embed_head, read_texts, rotary_pair_scores  # noqa: E402
from model.families import LlamaAdapter  # noqa: E402
from model.llama import load_smollm2  # noqa: E402


def loadavg() -> str:
    return Path("/proc/loadavg").read_text().strip()


def timed(work, rounds: int) -> tuple[float, float]:
    """(median wall seconds, median CPU seconds) of `rounds` calls of work()."""
    walls, cpus = [], []
    for _ in range(rounds):
        wall, cpu = time.perf_counter(), time.process_time()
        work()
        walls.append(time.perf_counter() - wall)
        cpus.append(time.process_time() - cpu)
    return statistics.median(walls), statistics.median(cpus)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--threads", type=int, default=1, help="torch threads (the app's pages run at 1)")
    parser.add_argument("--layer", type=int, default=14, help="0-based layer of the head")
    parser.add_argument("--head", type=int, default=0, help="0-based head")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    print(f"load average at start: {loadavg()}")
    lab = LlamaAdapter("SmolLM2-135M-Instruct", load_smollm2())
    tokens = sum(len(lab.encode(text)) for text in LANGUAGE_MODEL_TEXTS)
    readings = read_texts(lab)  # warm-up: the cache a page holds
    embed_head(readings, args.layer, args.head)
    rows = {
        "read every layer of the fixed texts (once per process)": lambda: read_texts(lab),
        "embedding of one head, after warm-up (the cached readings)":
            lambda: embed_head(readings, args.layer, args.head),
        "the alternative: the forwards again, then the embedding":
            lambda: embed_head(read_texts(lab, layers=args.layer + 1), args.layer, args.head),
        "RoPE pair split of one head, first text": lambda: rotary_pair_scores(readings[0], args.layer, args.head),
    }
    results = {name: timed(work, args.rounds) for name, work in rows.items()}
    warm = results["embedding of one head, after warm-up (the cached readings)"][0]
    again = results["the alternative: the forwards again, then the embedding"][0]
    print(f"\n{len(LANGUAGE_MODEL_TEXTS)} fixed texts, {tokens} tokens; head L{args.layer} H{args.head} (0-based); "
          f"{args.threads} thread(s), median of {args.rounds}\n")
    print("| row | wall | CPU |\n|---|---|---|")
    for name, (wall, cpu) in results.items():
        print(f"| {name} | {wall * 1000:.1f} ms | {cpu * 1000:.1f} ms |")
    print(f"\nafter warm-up / the alternative: {warm / again:.4f}× (target: the warm embedding ≤ 2 s: "
          f"{'met' if warm <= 2 else 'NOT met'})")
    print(f"load average at end: {loadavg()}")


if __name__ == "__main__":
    main()

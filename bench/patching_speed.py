"""Activation patching's two sweeps (model/explain/patching.py), as they ran before issue 51 and as they run now, in
the same process, interleaved, at --threads torch threads (the analysis worker runs at 1):

    python bench/patching_speed.py [--rounds 1] [--threads 1]

Before (`by_block=True`): each block's runs a batch of their own through every later block (a residual batch of the
T positions of one block, a head batch of the H heads of one block). Now: the residual runs of one position as one
batch that grows block by block, every position's batch through each block together (one matrix of their rows), the
positions before the prompts' first difference not run again; the L × H head
runs as one batch that grows block by block. Pairs: bench/llm.py's 16-token pair (" teacher" → " student" at
position 1), Wang et al. 2022's 14-token sentence with the two names swapped in its first clause, and the answer
page's default 11-token pair (ui/specs/llm_answer.py). Each new sweep's cells are checked against the old one's.

Prints a markdown table (wall and CPU seconds, the median of --rounds, old / new) and `cat /proc/loadavg`.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
import torch  # noqa: E402

from bench.llm import text_of  # noqa: E402
from model.explain.patching import head_patching, residual_patching  # noqa: E402
from model.families import adapt  # noqa: E402
from model.llama import load_smollm2  # noqa: E402
from ui.specs.llm_answer import DEFAULT_ANSWER, DEFAULT_CLEAN, DEFAULT_CORRUPT, DEFAULT_WRONG  # noqa: E402

WANG_CLEAN = "When Mary and John went to the store, John gave a drink to"  # Wang et al. 2022, §2: 14 tokens
WANG_CORRUPT = "When John and Mary went to the store, Mary gave a drink to"


def timed(function, *args, **kwargs) -> tuple[float, float, object]:
    start, start_cpu = time.perf_counter(), time.process_time()
    result = function(*args, **kwargs)
    return time.perf_counter() - start, time.process_time() - start_cpu, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    print(f"load average at start: {Path('/proc/loadavg').read_text().strip()}")
    loaded = load_smollm2()
    lab = adapt(loaded.name, loaded)
    short = loaded.decode(text_of(loaded, 16))
    pairs = {"bench/llm.py's 16-token pair": (short, short.replace("teacher", "student", 1), " the", " a"),
             "Wang et al.'s 14-token sentence, names swapped": (WANG_CLEAN, WANG_CORRUPT, " Mary", " John"),
             "the page's default 11-token pair": (DEFAULT_CLEAN, DEFAULT_CORRUPT, DEFAULT_ANSWER, DEFAULT_WRONG)}
    residual_patching(lab, DEFAULT_CLEAN, DEFAULT_CORRUPT, DEFAULT_ANSWER)  # warm-up
    print(f"\n{args.threads} thread(s), median of {args.rounds} interleaved round(s):\n")
    print("| sweep | pair | runs | before (wall / CPU) | now (wall / CPU) | before / now (wall / CPU) | largest cell gap |")
    print("|---|---|---|---|---|---|---|")
    for name, sweep in (("residual", residual_patching), ("per head", head_patching)):
        for pair, (clean, corrupt, answer, wrong) in pairs.items():
            times = {True: [], False: []}
            results = {}
            for _ in range(args.rounds):
                for by_block in (True, False):
                    wall, cpu, results[by_block] = timed(sweep, lab, clean, corrupt, answer, wrong,
                                                         by_block=by_block)
                    times[by_block].append((wall, cpu))
            old = [statistics.median(column) for column in zip(*times[True])]
            new = [statistics.median(column) for column in zip(*times[False])]
            gap = float(np.abs(results[True].patched_probs - results[False].patched_probs).max())
            print(f"| {name} | {pair} | {results[False].patched_probs.size} | {old[0]:.2f} s / {old[1]:.2f} s | "
                  f"{new[0]:.2f} s / {new[1]:.2f} s | **{old[0] / new[0]:.2f}×** / {old[1] / new[1]:.2f}× | "
                  f"{gap:.1e} |")
    print(f"\nload average at end: {Path('/proc/loadavg').read_text().strip()}")


if __name__ == "__main__":
    main()

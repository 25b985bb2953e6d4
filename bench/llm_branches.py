"""SmolLM2-135M-Instruct: branching generations (model/branches.py) against one generation and against recomputing.

    python bench/llm_branches.py [--rounds 3] [--branches 5] [--tokens 16] [--threads 1]

After a chat prompt (the one bench/llm.py generates after), in interleaved rounds, the fastest of each (a load spike
on a shared machine only adds):
1. one --tokens-token greedy generation from the prompt with the KV cache (model.generation.generate: the prompt's
   forward, then one token per step), what the generation page does;
2. one branch of --tokens tokens forked at the first generated token, the prompt's keys and values read from that
   generation's cache (fork_top with k = 1);
3. --branches branches of --tokens tokens each from the same fork, the cache shared: one forward per step for all
   of them (k, 1) (the issue's target: ≤ 2× the generation of 1.);
4. the same branches without a cache given (the prefix run once, for every branch);
5. recomputing: the prefix for the fork's distribution, then each branch generated on its own from the prompt and
   its forced token (fork_by_recomputing).
3., 4. and 5. write the same tokens (checked). Prints a markdown table and `cat /proc/loadavg`.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import torch  # noqa: E402

from model.branches import fork_by_recomputing, fork_top  # noqa: E402
from model.generation import generate, generation_step  # noqa: E402
from model.llama import load_smollm2  # noqa: E402

QUESTION = "Explain in two sentences what attention does in a language model."  # as bench/llm.py


def fastest(run, rounds: int) -> tuple[float, object]:
    """(the fastest wall time of `rounds` calls, the last call's result)."""
    times, result = [], None
    for _ in range(rounds):
        start = time.perf_counter()
        result = run()
        times.append(time.perf_counter() - start)
    return min(times), result


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--branches", type=int, default=5)
    parser.add_argument("--tokens", type=int, default=16)
    parser.add_argument("--threads", type=int, default=1, help="torch threads (the app's pages run at 1)")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    print(f"load average at start: {Path('/proc/loadavg').read_text().strip()}")
    loaded = load_smollm2()
    model, k, n = loaded.model, args.branches, args.tokens
    prompt = loaded.encode(loaded.chat_prompt([{"role": "user", "content": QUESTION}]))
    ids, cache = list(prompt), None  # the page's generation: its cache holds every position but the newest
    for _ in range(2):
        step, cache = generation_step(model, ids, cache)
        ids.append(step.token_id)
    position = len(prompt)  # fork at the first generated token
    kinds = {
        "one generation": lambda: generate(model, prompt, n),
        "one branch, cache read": lambda: fork_top(model, ids, position, 1, n, cache=cache),
        f"{k} branches, cache read": lambda: fork_top(model, ids, position, k, n, cache=cache),
        f"{k} branches, prefix run once": lambda: fork_top(model, ids, position, k, n),
        f"{k} branches, recomputed": lambda: fork_by_recomputing(model, ids, position, k, n),
    }
    best = {name: float("inf") for name in kinds}
    results = {}
    for _ in range(args.rounds):  # interleaved: a load spike falls on one round of each, not on one kind
        for name, run in kinds.items():
            seconds, results[name] = fastest(run, 1)
            best[name] = min(best[name], seconds)
    shared = results[f"{k} branches, cache read"]
    tokens = [branch.token_ids for branch in shared.branches]
    assert tokens == [branch.token_ids for branch in results[f"{k} branches, prefix run once"].branches]
    assert tokens == results[f"{k} branches, recomputed"][0], "recomputing wrote other tokens"
    computed = {"one generation": len(prompt) + n - 1,
                "one branch, cache read": results["one branch, cache read"].computed,
                f"{k} branches, cache read": shared.computed,
                f"{k} branches, prefix run once": results[f"{k} branches, prefix run once"].computed,
                f"{k} branches, recomputed": results[f"{k} branches, recomputed"][1]}
    base = best["one generation"]
    print(f"\n{len(prompt)}-token prompt, {k} branches × {n} tokens, {args.threads} thread(s), "
          f"fastest of {args.rounds} interleaved rounds\n")
    print("| run | positions computed | wall | against one generation |")
    print("|---|---|---|---|")
    for name in kinds:
        print(f"| {name} | {computed[name]:,} | {best[name] * 1000:,.0f} ms | {best[name] / base:.2f}× |")
    print(f"\nrecomputed / cache read: {best[f'{k} branches, recomputed'] / best[f'{k} branches, cache read']:.2f}×")
    print(f"load average at end: {Path('/proc/loadavg').read_text().strip()}")


if __name__ == "__main__":
    main()

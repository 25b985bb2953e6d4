"""Dropout's cost on the CPU: torch's F.dropout (bernoulli_ mask) against model/dropout.py, interleaved.

    python bench/dropout_speed.py [--rounds 9] [--repeats 20]

Forward + backward of dropout(x, 0.1) and of residual + dropout(x, 0.1) on the tensors one training step of
bench/train_speed.py drops (batch 128, length 16, d_model 128, d_ff 512), one torch thread, this thread's CPU time.
Prints ns per element (median of the rounds) and the ratio.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

import torch
import torch.nn.functional as F

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from model.dropout import dropout, dropout_add  # noqa: E402

P = 0.1
SHAPES = {"residual (128, 16, 128)": (128, 16, 128), "feed-forward inner (128, 16, 512)": (128, 16, 512)}


def ns_per_element(fn, x: torch.Tensor, residual: torch.Tensor, repeats: int) -> float:
    start = time.thread_time()
    for _ in range(repeats):
        fn(x, residual).sum().backward()
    return (time.thread_time() - start) / repeats / x.numel() * 1e9


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--repeats", type=int, default=20)
    args = parser.parse_args()
    torch.set_num_threads(1)
    variants = {
        "F.dropout": lambda x, r: F.dropout(x, P),
        "model.dropout.dropout": lambda x, r: dropout(x, P),
        "r + F.dropout": lambda x, r: r + F.dropout(x, P),
        "model.dropout.dropout_add": lambda x, r: dropout_add(r, x, P),
    }
    print(f"# {time.strftime('%Y-%m-%d %H:%M')} torch {torch.__version__}, 1 thread, p = {P}, forward + backward, "
          f"{args.rounds} interleaved rounds of {args.repeats}")
    print("| tensor | variant | ns per element (median) |\n|---|---|---|")
    for label, shape in SHAPES.items():
        x = torch.randn(shape, requires_grad=True)
        residual = torch.randn(shape, requires_grad=True)
        times = {name: [] for name in variants}
        for fn in variants.values():
            ns_per_element(fn, x, residual, 2)  # warm-up
        for round_number in range(args.rounds):
            names = list(variants) if round_number % 2 == 0 else list(variants)[::-1]
            for name in names:
                times[name].append(ns_per_element(variants[name], x, residual, args.repeats))
        for name, values in times.items():
            print(f"| {label} | {name} | {statistics.median(values):.2f} |")
        median = {name: statistics.median(values) for name, values in times.items()}
        print(f"| {label} | torch / ours | {median['F.dropout'] / median['model.dropout.dropout']:.2f}× (with the "
              f"residual add: {median['r + F.dropout'] / median['model.dropout.dropout_add']:.2f}×) |")
    print(f"\nload average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()

"""Seconds for a model to reach a target exact match on en-fr from scratch (default: Transformer, 95%).

    python bench/time_to_accuracy.py [--model transformer] [--target 0.95] [--max-steps 800]

Validation (greedy exact match on 300 held-out sentences) runs every --eval-every steps; its time is
excluded from the reported training seconds (train() reports training time only).
"""
from __future__ import annotations

import argparse
import platform
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from model.data import make_dataset  # noqa: E402
from model.train import TrainConfig, train  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", default="transformer")
    parser.add_argument("--target", type=float, default=0.95)
    parser.add_argument("--max-steps", type=int, default=TrainConfig.steps,
                        help="training length; warmup-decay reaches lr 0 at this step")
    parser.add_argument("--eval-every", type=int, default=100)
    parser.add_argument("--lr", type=float, default=TrainConfig.lr)
    parser.add_argument("--schedule", default=TrainConfig.schedule)
    parser.add_argument("--warmup", type=int, default=TrainConfig.warmup)
    parser.add_argument("--dropout", type=float, default=TrainConfig.dropout)
    parser.add_argument("--batch-size", type=int, default=TrainConfig.batch_size)
    args = parser.parse_args()
    data = make_dataset("en-fr", seed=0)
    reached: dict = {}

    def on_step(info):
        if info.eval is not None:
            print(f"step {info.step:5d}  {info.elapsed_s:6.1f} s  exact match {info.eval['exact_match']:.3f}")
            if info.eval["exact_match"] >= args.target:
                reached.update(step=info.step, seconds=info.elapsed_s, em=info.eval["exact_match"])
                return True
        return False

    cfg = TrainConfig(model=args.model, task="en-fr", steps=args.max_steps, eval_every=args.eval_every, lr=args.lr,
                      schedule=args.schedule, warmup=args.warmup, dropout=args.dropout, batch_size=args.batch_size)
    print(cfg)
    result = train(cfg, data=data, on_step=on_step)
    print(f"\n# {time.strftime('%Y-%m-%d')} {platform.machine()} {torch.get_num_threads()} threads, torch {torch.__version__}")
    print("| model | target | reached at step | training seconds | exact match |\n|---|---|---|---|---|")
    if reached:
        print(f"| {args.model} | {args.target:.0%} | {reached['step']} | {reached['seconds']:.1f} | {reached['em']:.3f} |")
    else:
        print(f"| {args.model} | {args.target:.0%} | not reached in {len(result.history)} steps | "
              f"{result.history[-1]['elapsed_s']:.1f} | - |")


if __name__ == "__main__":
    main()

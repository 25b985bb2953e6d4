"""The train page's default run, as the page runs it (background job, one torch thread), timed.

    python bench/train_page_defaults.py [--model transformer] [--task en-fr]

Prints steps, wall seconds, training seconds and the final validation exact match for the defaults of
app_pages/train.py (600 steps, 2 layers, d_model 128, 4 heads, lr 2e-3 with linear warm-up and decay).
"""
from __future__ import annotations

import argparse
import platform
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from model.train import TrainConfig  # noqa: E402
from ui.training import start_job, wait  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", default="transformer")
    parser.add_argument("--task", default="en-fr")
    parser.add_argument("--steps", type=int, default=600)
    args = parser.parse_args()
    # The same config the page's form builds from its defaults (ui/train_view.py::training_form).
    config = TrainConfig(model=args.model, task=args.task, steps=args.steps, num_layers=2, d_model=128, num_heads=4,
                         d_ff=256, hidden_size=128, embed_dim=64, seed=0, schedule="warmup-decay", lr=2e-3, warmup=100,
                         eval_every=max(50, args.steps // 6), eval_size=150)
    start = time.perf_counter()
    job = start_job(config, "i am a student")
    wait(job, timeout=3600)
    wall = time.perf_counter() - start
    last = next(h for h in reversed(job.history) if "val_exact_match" in h)
    print(f"# {time.strftime('%Y-%m-%d')} {platform.machine()}, 1 torch thread (as on the page)")
    print("| model | task | steps | wall s (incl. data, evaluation) | training s | validation exact match |")
    print("|---|---|---|---|---|---|")
    print(f"| {args.model} | {args.task} | {job.steps_done} | {wall:.1f} | {job.elapsed_s:.1f} | "
          f"{last['val_exact_match']:.3f} |")


if __name__ == "__main__":
    main()

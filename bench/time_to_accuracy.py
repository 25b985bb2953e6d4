"""Steps and seconds for a model to reach a target exact match on en-fr from scratch, on several seeds.

    python bench/time_to_accuracy.py [--seeds 0 1 2] [--target 0.95] [--steps 400] [--eval-every 50]
                                     [any TrainConfig field as a flag, e.g. --lr 3e-3 --label-smoothing 0.1]

Each seed trains with TrainConfig(seed=…) on its own generated data (model/train.py::make_training_data), with
the default recipe unless flags change it; the schedule runs to --steps (warmup-decay reaches lr 0 there).
Validation (greedy exact match on the first 300 held-out sentences) runs every --eval-every steps and training
stops at the first evaluation at or above the target; evaluation time is excluded from the training seconds
(train() reports training time only). Prints one row per seed and the median.
"""
from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from model.device import pick_device  # noqa: E402
from model.train import TrainConfig, command_line_fields, train  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--target", type=float, default=0.95)
    parser.add_argument("--threads", type=int, default=0, help="torch threads (0: torch's default)")
    defaults = {**command_line_fields(), "eval_every": 50}  # python -m model.train's flags
    for name, value in defaults.items():
        if name == "seed":
            continue
        flag = "--" + name.replace("_", "-")
        if isinstance(value, bool):
            parser.add_argument(flag, action=argparse.BooleanOptionalAction, default=value)
        else:
            parser.add_argument(flag, type=type(value), default=value)
    args = vars(parser.parse_args())
    seeds, target, threads = args.pop("seeds"), args.pop("target"), args.pop("threads")
    if threads:
        torch.set_num_threads(threads)
    rows = []
    for seed in seeds:
        cfg = TrainConfig.for_model(**{**args, "seed": seed})
        reached: dict = {}

        def on_step(info, seed=seed, reached=reached):
            if info.eval is not None:
                print(f"seed {seed}  step {info.step:5d}  {info.elapsed_s:6.1f} s  exact match "
                      f"{info.eval['exact_match']:.3f}", flush=True)
                if info.eval["exact_match"] >= target:
                    reached.update(step=info.step, seconds=info.elapsed_s, em=info.eval["exact_match"])
                    return True
            return False

        result = train(cfg, on_step=on_step)
        last_eval = next((h for h in reversed(result.history) if "val_exact_match" in h), {})
        rows.append({"seed": seed, "step": reached.get("step"), "seconds": reached.get("seconds"),
                     "em": reached.get("em", last_eval.get("val_exact_match", float("nan"))),
                     "trained_s": result.history[-1]["elapsed_s"] if result.history else 0.0})
    changed = {name: value for name, value in args.items() if value != defaults[name]}
    print(f"\n# {time.strftime('%Y-%m-%d %H:%M')} {platform.machine()}, device {pick_device(args['device'])}, "
          f"{torch.get_num_threads()} threads, torch {torch.__version__}, load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"# recipe: python -m model.train's defaults{', ' + str(changed) if changed else ''}; target {target:.0%} within {args['steps']} steps")
    print("| seed | reached at step | training seconds | exact match |\n|---|---|---|---|")
    for row in rows:
        if row["step"]:
            print(f"| {row['seed']} | {row['step']} | {row['seconds']:.1f} | {row['em']:.3f} |")
        else:
            print(f"| {row['seed']} | not reached in {args['steps']} | {row['trained_s']:.1f} | {row['em']:.3f} (last) |")
    if all(row["step"] for row in rows):
        print(f"| median | {statistics.median(r['step'] for r in rows):g} | "
              f"{statistics.median(r['seconds'] for r in rows):.1f} | |")
    else:
        print(f"| median | not reached on {sum(not r['step'] for r in rows)} of {len(rows)} seeds | | |")


if __name__ == "__main__":
    main()

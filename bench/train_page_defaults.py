"""The train page's default run, as the page runs it (background job, one torch thread), timed against the
estimate the page shows before Start.

    python bench/train_page_defaults.py [--model transformer] [--task en-fr] [--steps 1000] [--runs 1]

For each run: the page's speed probe (runtime/training_jobs.py::probe_speed, the same one the page caches) gives
the estimate, then the job runs with the page's settings (ui/train/view.py::form_config) and its wall time (from Start
to the end: data, training, evaluation) is compared with the estimate. Prints steps, estimate, wall seconds,
training seconds, estimate / actual and the final validation exact match.

The same comparison in CPU seconds (--cpu, the default): the probe runs once more with this thread's CPU clock
(measure_training_speed(clock=time.thread_time)) and the job's CPU time is the process's while the main thread
waits (the job is the only thread computing, on one torch thread). On a shared machine the wall ratio also carries
the change of load between the probe and the run, which no probe can foresee; the CPU ratio shows the estimate's
own error (which steps, batch lengths, evaluations and data it counts).
"""
from __future__ import annotations

import argparse
import os
import threading
import platform
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import torch  # noqa: E402

from model.training_speed import TrainingSpeed, measure_training_speed  # noqa: E402
from ui.train.view import DEFAULTS, form_config  # noqa: E402
from runtime.training_jobs import probe_speed, start_job, wait  # noqa: E402


def cpu_probe(config) -> TrainingSpeed:
    """The page's probe (runtime/training_jobs.py::probe_speed: its own thread, one torch thread) on the thread's CPU
    clock."""
    measured: list = []

    def run() -> None:
        torch.set_num_threads(1)
        measured.append(measure_training_speed(config, clock=time.thread_time))

    thread = threading.Thread(target=run, name="cpu-probe")
    thread.start()
    thread.join()
    return measured[0]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", default="transformer")
    parser.add_argument("--task", default="en-fr")
    parser.add_argument("--steps", type=int, default=DEFAULTS["train_steps"])
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--cpu", action=argparse.BooleanOptionalAction, default=True,
                        help="also compare in CPU seconds (one more probe per run)")
    args = parser.parse_args()
    config = form_config(args.model, args.task, args.steps, DEFAULTS["train_layers"], DEFAULTS["train_width"],
                         DEFAULTS["train_heads"], DEFAULTS["train_seed"], DEFAULTS["train_schedule"],
                         DEFAULTS["train_lr"], DEFAULTS["train_warmup"])
    print(config)
    rows = []
    for _ in range(args.runs):
        load_before = os.getloadavg()[0]
        speed = probe_speed(config)
        estimate = speed.estimate_seconds(config)
        cpu_estimate = cpu_probe(config).estimate_seconds(config) if args.cpu else float("nan")
        start, cpu_start = time.perf_counter(), time.process_time()
        job = start_job(config, "i am a student")
        wait(job, timeout=3600)
        wall, cpu = time.perf_counter() - start, time.process_time() - cpu_start
        last = next(h for h in reversed(job.history) if "val_exact_match" in h)
        rows.append((job.steps_done, estimate, wall, job.elapsed_s, last["val_exact_match"], speed,
                     f"{load_before:.2f}-{os.getloadavg()[0]:.2f}", cpu_estimate, cpu))
    print(f"# {time.strftime('%Y-%m-%d %H:%M')} {platform.machine()}, 1 torch thread (as on the page)")
    print("| model | task | steps | estimate s (step ms = probe's × length factor, eval s, data s) | wall s (data, "
          "training, evaluation) | training s | estimate / actual | CPU s: estimate / actual | validation exact match "
          "| load average |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for steps, estimate, wall, trained, em, speed, load, cpu_estimate, cpu in rows:
        print(f"| {args.model} | {args.task} | {steps} | {estimate:.1f} ({1000 * speed.run_step_s:.0f} ms = "
              f"{1000 * speed.step_s:.0f} × {speed.length_factor:.2f}, {speed.eval_s:.1f} s, {speed.data_s:.1f} s) | "
              f"{wall:.1f} | {trained:.1f} | {estimate / wall:.2f} | {cpu_estimate:.1f} / {cpu:.1f} = "
              f"{cpu_estimate / cpu:.2f} | {em:.3f} | {load} |")


if __name__ == "__main__":
    main()

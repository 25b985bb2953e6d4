"""SmolLM2's load in a fresh process: read from its GGUF file against read back from the copy another process kept
(model/gguf_weights.read_gguf_kept, ATTENTION_LAB_WEIGHTS_CACHE: what serve.py's replicas and the test suite's
processes do after the first).

    python bench/weights_kept.py [--rounds 3] [--threads 1]

Each round starts one `python -c` process per way, in turn (file, then kept), each timing load_smollm2() alone (wall
and the process's CPU seconds) after torch's import; the kept copy is written once before the rounds, in a folder of
the bench's own, removed after. Prints a markdown table (medians, the ratio) and `cat /proc/loadavg`.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LOAD = """
import json, os, resource, time
import torch
torch.set_num_threads({threads})
from model.llama import load_smollm2
cpu, wall = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter()
loaded = load_smollm2()
after = resource.getrusage(resource.RUSAGE_SELF)
print(json.dumps({{"wall": time.perf_counter() - wall,
                  "cpu": after.ru_utime + after.ru_stime - cpu.ru_utime - cpu.ru_stime}}))
"""


def load_once(kept_folder: str | None, threads: int) -> dict[str, float]:
    from model.gguf_weights import WEIGHTS_CACHE_ENV

    env = {key: value for key, value in os.environ.items() if key != WEIGHTS_CACHE_ENV}
    if kept_folder is not None:
        env[WEIGHTS_CACHE_ENV] = kept_folder
    done = subprocess.run([sys.executable, "-c", LOAD.format(threads=threads)], cwd=ROOT, env=env, check=True,
                          capture_output=True, text=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    folder = tempfile.mkdtemp(prefix="weights-kept-bench-")
    try:
        first = load_once(folder, args.threads)  # reads the file and writes the kept copy
        times: dict[str, list[dict[str, float]]] = {"file": [], "kept": []}
        for _ in range(args.rounds):
            times["file"].append(load_once(None, args.threads))
            times["kept"].append(load_once(folder, args.threads))
        size = sum(path.stat().st_size for path in Path(folder).iterdir())
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    median = {way: {measure: statistics.median(run[measure] for run in runs) for measure in ("wall", "cpu")}
              for way, runs in times.items()}
    print(f"| way | load_smollm2() wall (median of {args.rounds}) | CPU s |")
    print("|---|---|---|")
    print(f"| the GGUF file (sha256, parse, dequantize) | {median['file']['wall']:.2f} s | {median['file']['cpu']:.2f} |")
    print(f"| the kept copy (sha256, safetensors) | {median['kept']['wall']:.2f} s | {median['kept']['cpu']:.2f} |")
    print(f"\nfile / kept: wall {median['file']['wall'] / median['kept']['wall']:.1f}x, "
          f"CPU {median['file']['cpu'] / median['kept']['cpu']:.1f}x; the first load (reading and writing the copy) "
          f"{first['wall']:.2f} s; the copy {size / 2**20:.0f} MiB; threads {args.threads}")
    print("load:", Path("/proc/loadavg").read_text().strip())


if __name__ == "__main__":
    main()

"""Heads switched off while SmolLM2 writes (model/switch_off.py): does the head mask cost the generation anything?

    python bench/switch_off.py [--rounds 3] [--steps 16] [--heads 18.4,18.5,19.7,19.8,24.3] [--threads 1]

In the same process and rounds, interleaved: --steps greedy tokens after the LLM page's default prompt by the intact
model and by the model with --heads off (the top 5 induction heads by default), both with the KV cache (one token a
step); the switched-off generation once more without the cache (the whole text each step), to show what the cache
still saves with heads off; and the page's copy losses (two forwards of 2 × 20 tokens). Wall and CPU seconds, the
fastest of the rounds each (a load spike on a shared machine only adds). Prints a markdown table and the load.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import torch  # noqa: E402

from model.families import open_model  # noqa: E402
from model.generation import generate  # noqa: E402
from model.gguf_weights import SMOLLM2_NAME  # noqa: E402
from model.switch_off import copy_losses, first_divergence, heads_text, parse_heads  # noqa: E402
from ui.llm.specs import DEFAULT_PROMPT  # noqa: E402


def timed(run) -> tuple[float, float, object]:
    wall, cpu = time.perf_counter(), time.process_time()
    result = run()
    return time.perf_counter() - wall, time.process_time() - cpu, result


def load() -> str:
    return Path("/proc/loadavg").read_text().split()[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--steps", type=int, default=16)
    parser.add_argument("--heads", default="18.4,18.5,19.7,19.8,24.3")
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    lab = open_model(SMOLLM2_NAME)
    heads = parse_heads(args.heads)
    prompt = lab.encode(DEFAULT_PROMPT)
    mask = torch.ones(lab.config.num_layers, lab.config.num_heads)
    for layer, head in heads:
        mask[layer, head] = 0.0
    runs = {
        "intact, KV cache": lambda: lab.generate_with_heads_off(prompt, args.steps, ()),
        "heads off, KV cache": lambda: lab.generate_with_heads_off(prompt, args.steps, heads),
        "heads off, no cache": lambda: generate(lab.network.model, prompt, args.steps, use_cache=False,
                                                head_mask=mask).new_ids,
        "copy losses, both models": lambda: copy_losses(lab, lab.config.vocab_size, heads),
    }
    start_load = load()
    best: dict[str, tuple[float, float]] = {}
    outputs = {}
    lab.generate_with_heads_off(prompt, 2, heads)  # warm-up: the first forward's allocations
    for _ in range(args.rounds):
        for name, run in runs.items():
            wall, cpu, outputs[name] = timed(run)
            old = best.get(name, (float("inf"), float("inf")))
            best[name] = (min(old[0], wall), min(old[1], cpu))
    assert outputs["heads off, KV cache"] == outputs["heads off, no cache"], "the cache changed the tokens"
    intact = best["intact, KV cache"]
    print(f"{args.steps} greedy tokens after a {len(prompt)}-token prompt, heads {heads_text(heads)} off; "
          f"{args.threads} thread(s), {args.rounds} rounds, the fastest each\n")
    print("| run | wall s | CPU s | against intact (wall) | against intact (CPU) |")
    print("|---|---|---|---|---|")
    for name, (wall, cpu) in best.items():
        print(f"| {name} | {wall:.3f} | {cpu:.3f} | {wall / intact[0]:.2f}× | {cpu / intact[1]:.2f}× |")
    copy = outputs["copy losses, both models"]
    print(f"\nsecond copy's loss: intact {copy.second_half(copy.intact):.2f}, heads off "
          f"{copy.second_half(copy.switched):.2f} nats; the texts part at new token (0-based) "
          f"{first_divergence(outputs['intact, KV cache'], outputs['heads off, KV cache'])}")
    print(f"load: {start_load} → {load()}")


if __name__ == "__main__":
    main()

"""Prompt influence by three methods (model/explain/influence.py) against one forward of the same prompt, same run.

    python bench/influence.py [--rounds 3] [--threads 1] [--long-tokens 32]

On the logit lens's default prompt ("The capital of France is", 5 tokens) and on a prompt of --long-tokens tokens
(the page's bound, ui/llm/influence.INFLUENCE_MAX_TOKENS), each for the model's own next token: the whole
prompt_influence (gradient × input: one forward and one backward through the blocks; occlusion: the T shorter prompts,
each run from its removed token on, the positions before it read from the prompt's KV cache, and for comparison each
run whole in one batch of T × (T − 1) positions; rollout: one forward with every map), and each method apart, beside one plain forward of the
same prompt (LoadedLlama.run: logits and every map, as the page's analyses run). Interleaved rounds, the median of
each. Prints a markdown table and /proc/loadavg (the machine is shared: the ratio is the figure to compare).
"""
from __future__ import annotations

import argparse
import statistics
from dataclasses import replace
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import torch  # noqa: E402

from model.explain.influence import last_row_rollout, occluded_finals, prompt_influence  # noqa: E402
from model.families import open_model  # noqa: E402
from ui.specs.llm_answer import DEFAULT_LENS_TEXT  # noqa: E402

WORDS = ("the teacher explained how every word in a sentence looks at the other words and why some heads "
         "prefer the next token while others gather on the first token of the text").split()


def timed(function) -> float:
    start = time.perf_counter()
    function()
    return time.perf_counter() - start


def prompt_of(lab, tokens: int) -> str:
    """A text of exactly `tokens` tokens, cut from WORDS repeated."""
    words = (WORDS * 4)[:tokens]
    while len(lab.encode(" ".join(words))) > tokens:
        words = words[:-1]
    return " ".join(words)


def gradient_only(lab, text: str, token_id: int) -> None:
    embedded = lab.residual_stream(text).hidden[0].clone().requires_grad_(True)
    with torch.enable_grad():
        final = lab.blocks_from(0, embedded[None])[0, -1]
        torch.log_softmax(lab.unembed(final), -1)[token_id].backward()


def occlusion_only(lab, text: str, whole: bool = False) -> None:
    """The stream, the T shorter prompts' final rows and their unembedding; whole: each shorter prompt run whole (the
    batch of T × (T − 1) positions, what a family without a KV cache does)."""
    stream = lab.residual_stream(text)
    with torch.no_grad():
        lab.unembed(occluded_finals(lab, replace(stream, cache=None) if whole else stream))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--long-tokens", type=int, default=32)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    lab = open_model("SmolLM2-135M-Instruct")
    print("| prompt | tokens | one forward | influence, all three | ratio | gradient × input | occlusion "
          "| occlusion, prompts run whole | rollout |")
    print("|---|---|---|---|---|---|---|---|---|")
    for text in (DEFAULT_LENS_TEXT, prompt_of(lab, args.long_tokens)):
        ids = lab.encode(text)
        token_id = int(lab.network.run(ids).logits[0, -1].argmax())
        prompt_influence(lab, text, token_id)  # warm
        runs = {"forward": lambda ids=ids: lab.network.run(ids),
                "all": lambda text=text, token_id=token_id: prompt_influence(lab, text, token_id),
                "gradient": lambda text=text, token_id=token_id: gradient_only(lab, text, token_id),
                "occlusion": lambda text=text: occlusion_only(lab, text),
                "whole": lambda text=text: occlusion_only(lab, text, whole=True),
                "rollout": lambda text=text: last_row_rollout(lab, text)}
        times: dict[str, list[float]] = {name: [] for name in runs}
        for _ in range(args.rounds):  # interleaved: a load spike touches every kind alike
            for name, run in runs.items():
                times[name].append(timed(run))
        median = {name: statistics.median(values) * 1000 for name, values in times.items()}
        shown = text if len(text) < 40 else text[:37] + "…"
        print(f"| {shown!r} | {len(ids)} | {median['forward']:.0f} ms | {median['all']:.0f} ms | "
              f"**{median['all'] / median['forward']:.1f}×** | {median['gradient']:.0f} ms | "
              f"{median['occlusion']:.0f} ms | {median['whole']:.0f} ms | {median['rollout']:.0f} ms |")
    print(f"\nthreads {args.threads}, rounds {args.rounds}, load {Path('/proc/loadavg').read_text().strip()}")


if __name__ == "__main__":
    main()

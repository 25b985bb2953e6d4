"""The LLM analyses a teacher clicks through, uncached, at their default inputs and at 512 tokens.

    python bench/llm_heads.py [--rounds 3] [--threads 1] [--profile NAME]

Each row is the work one cache miss of the page costs (ui/llm_heads/view.py's st.cache_data functions, and the attention
explorer's analyse and explain for SmolLM2), timed on the process's one loaded SmolLM2-135M-Instruct, at --threads
torch threads (the app's pages run at 1). Every row is given as a ratio to a plain 128-token forward with every map
(LoadedLlama.run) timed in the same rounds, interleaved: a shared machine's speed drifts between days, the ratio less.
Median of --rounds rounds; CPU time (time.process_time) beside wall time, the steadier figure on a shared machine.

--profile NAME runs that row once under cProfile and prints its 25 most expensive calls (cumulative time).

Prints a markdown table and `cat /proc/loadavg` at start and end.
"""
from __future__ import annotations

import argparse
import cProfile
import pstats
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import torch  # noqa: E402

from model.explain.induction import induction_analysis_with_weights  # noqa: E402
from model.explain.sinks import next_token_losses, sink_analysis, window_losses  # noqa: E402
from model.families import LlamaAdapter  # noqa: E402
from model.generation import generate  # noqa: E402
from model.llama import MAX_TOKENS, load_smollm2  # noqa: E402
from ui.llm_heads.view import COPY_PROMPT, COPY_TOKENS  # noqa: E402
from ui.llm_heads.specs import DEFAULT_SINK_TEXT, INDUCTION_LENGTH, INDUCTION_SEED, WINDOW  # noqa: E402

WORDS = ("the teacher explained how every word in a sentence looks at the other words and why some heads "
         "prefer the next token while others gather on the first token of the text").split()


def text_of(loaded, tokens: int) -> list[int]:
    """Ids of English text that tokenises to exactly `tokens` tokens."""
    words = []
    while len(loaded.encode(" ".join(words))) < tokens:
        words.append(WORDS[len(words) % len(WORDS)])
    return loaded.encode(" ".join(words))[:tokens]


def loadavg() -> str:
    return Path("/proc/loadavg").read_text().strip()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--threads", type=int, default=1, help="torch threads (the app's pages run at 1)")
    parser.add_argument("--profile", default=None, help="a row's name: run it once under cProfile")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    print(f"load average at start: {loadavg()}")
    start_all = time.perf_counter()
    loaded = load_smollm2()
    lab = LlamaAdapter("SmolLM2-135M-Instruct", loaded)
    model = loaded.model
    default_ids = loaded.encode(DEFAULT_SINK_TEXT)
    long_ids = text_of(loaded, MAX_TOKENS)
    long_text = loaded.decode(long_ids)
    window, length, seed = WINDOW.default, INDUCTION_LENGTH.default, INDUCTION_SEED.default
    copy_ids = loaded.encode(COPY_PROMPT)

    def copy_view() -> None:  # ui/llm_heads.copy_view: the live greedy continuation and one head's row
        generate(model, copy_ids, COPY_TOKENS)
        loaded.run(copy_ids)

    full_long = next_token_losses(model, long_ids)  # classroom/measures/llm.shared_full_losses: once per text
    analysed = lab.analyse(long_text)  # what the explorer holds (cached) when the teacher clicks Explain

    rows = {
        "plain 128-token forward, every map (the reference)": lambda: loaded.run(long_ids[:128]),
        f"plain {MAX_TOKENS}-token forward, every map": lambda: loaded.run(long_ids),
        f"sink analysis, default text ({len(default_ids)} tokens)": lambda: sink_analysis(model, default_ids),
        f"sink analysis, {MAX_TOKENS} tokens": lambda: sink_analysis(model, long_ids),
        f"sliding-window losses (window {window}), default text": lambda: window_losses(model, default_ids, window),
        f"sliding-window losses (window {window}), {MAX_TOKENS} tokens": lambda: window_losses(model, long_ids, window),
        f"… another window, {MAX_TOKENS} tokens (the text's full-attention losses cached, as the page does)":
            lambda: window_losses(model, long_ids, window, full=full_long),
        f"induction scores, n = {length} (2n = {2 * length} tokens)":
            lambda: induction_analysis_with_weights(model, loaded.config.vocab_size, length, seed),
        f"induction scores, n = {MAX_TOKENS // 2} (2n = {MAX_TOKENS} tokens)":
            lambda: induction_analysis_with_weights(model, loaded.config.vocab_size, MAX_TOKENS // 2, seed),
        f"live copy: {COPY_TOKENS} greedy tokens + one forward ({len(copy_ids)}-token prompt)": copy_view,
        f"explorer: a new text analysed (every map), {MAX_TOKENS} tokens": lambda: lab.analyse(long_text),
        f"explorer: Explain (rollout, value norms), {MAX_TOKENS} tokens": lambda: lab.explain(analysed),
    }
    if args.profile:
        name = next(n for n in rows if args.profile in n)
        profile = cProfile.Profile()
        profile.runcall(rows[name])
        print(f"\ncProfile of: {name}")
        pstats.Stats(profile).sort_stats("cumulative").print_stats(25)
        return
    walls = {name: [] for name in rows}
    cpus = {name: [] for name in rows}
    for _ in range(args.rounds):  # interleaved: a load spike touches every row of a round alike
        for name, run in rows.items():
            wall, cpu = time.perf_counter(), time.process_time()
            run()
            walls[name].append(time.perf_counter() - wall)
            cpus[name].append(time.process_time() - cpu)
    reference = next(iter(rows))
    ref_wall, ref_cpu = statistics.median(walls[reference]), statistics.median(cpus[reference])
    print(f"\n{args.threads} torch thread(s), median of {args.rounds} interleaved rounds, uncached:\n")
    print("| analysis | wall | CPU | ÷ 128-token forward (wall / CPU) |")
    print("|---|---|---|---|")
    for name in rows:
        wall, cpu = statistics.median(walls[name]), statistics.median(cpus[name])
        print(f"| {name} | {wall:.2f} s | {cpu:.2f} s | {wall / ref_wall:.1f}× / {cpu / ref_cpu:.1f}× |")
    print(f"\n{time.perf_counter() - start_all:.0f} s in all")
    print(f"load average at end: {loadavg()}")


if __name__ == "__main__":
    main()

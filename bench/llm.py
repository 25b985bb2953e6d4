"""SmolLM2-135M-Instruct in our code (model/llama.py): load time, memory, forward speed and the KV cache's gain.

    python bench/llm.py [--rounds 3] [--generation-rounds 1] [--tokens 128] [--new-tokens 32] [--threads 1]

1. Loading once per process, in a fresh `python -c` process without transformers: torch's import and
   load_smollm2() (sha256, GGUF read, dequantizing, building, tokenizer) timed apart; RSS before loading, after
   loading, and after one --tokens analysis with every map kept (what one cached analysis adds).
2. A --tokens-token forward with every attention map: ours (LoadedLlama.run: logits, weights and scores of all
   30 layers) against transformers' LlamaForCausalLM (attn_implementation="eager", output_attentions=True) loaded
   from the same GGUF file, on the same ids, at --threads torch threads; interleaved rounds, median. Then one
   forward of the longest text the lab takes (MAX_TOKENS = 512), ours only, and the size of its maps.
3. Generation of --new-tokens tokens after a chat prompt, greedy: with the KV cache (each step runs one token
   against the cached keys and values) and without it (each step runs the whole text again), both without maps;
   the cached run again with the new token's attention row in every layer and head (what the step-by-step view
   shows); and transformers' generate() with its cache for reference. All choose the same tokens (checked).
   --generation-rounds interleaved rounds, the fastest of each kind (a load spike on a shared machine only adds).

4. The logit lens of a --lens-tokens-token text (model.explain.logit_lens: the residual stream once, then (L+1)·T
   unembeddings) and one patched run (model.explain.patching.patched_run at block 0, the worst case: 29 blocks run
   again, from the corrupted run's residual), each beside one plain forward of the same text (logits, no maps);
   then the full residual sweep of a 16-token pair (30 × 16 runs). The direct logit attribution of the same text
   (model.explain.attribution: one run of the blocks, each part read at the last position) in the same rounds, and
   the per-head patching sweep of the same pair (model.explain.patching.head_patching: 30 × 9 runs in one batch that
   grows block by block, each from the corrupted residual entering its block, at the last position only, the earlier
   positions' keys and values read from the corrupted run's cache), timed once, both beside one forward.
   bench/patching_speed.py times both sweeps against the way they ran before issue 51. The lens's parts in the same
   rounds (issue 56): the grid on a stream already made, against its floor (the final norm and the output matmul of
   the same rows, nothing else), the last position alone (every row) and one cell, as the page computes them.
   `--lens-only` runs this part alone.

Prints markdown tables and `cat /proc/loadavg` (results are noisy on a shared machine).
"""
from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import torch  # noqa: E402

from model.gguf_weights import SMOLLM2_FILE, smollm2_path  # noqa: E402
from model.generation import generate  # noqa: E402
from model.llama import MAX_TOKENS, load_smollm2  # noqa: E402

WORDS = ("the teacher explained how every word in a sentence looks at the other words and why some heads "
         "prefer the next token while others gather on the first token of the text").split()
QUESTION = "Explain in two sentences what attention does in a language model."

LOAD_PROBE = r"""
import json, resource, sys, time
def rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * resource.getpagesize() / 2**20
start = time.perf_counter()
import torch
torch.set_num_threads(THREADS)
torch_s = time.perf_counter() - start
sys.path.insert(0, ROOT)
from model.llama import load_smollm2
before = rss()
start = time.perf_counter()
loaded = load_smollm2()
load_s = time.perf_counter() - start
after = rss()
ids = list(range(1000, 1000 + TOKENS))
out = loaded.run(ids)
analysed = rss()
print(json.dumps({"torch_s": torch_s, "load_s": load_s, "rss_before": before, "rss_loaded": after,
                  "rss_analysed": analysed, "maps_mib": (out.weights.nbytes + out.scores.nbytes) / 2**20,
                  "transformers": "transformers" in sys.modules}))
"""


def text_of(loaded, tokens: int) -> list[int]:
    """Ids of English text that tokenises to exactly `tokens` tokens."""
    words = []
    while len(loaded.encode(" ".join(words))) < tokens:
        words.append(WORDS[len(words) % len(WORDS)])
    return loaded.encode(" ".join(words))[:tokens]


def probe_load(tokens: int, threads: int) -> dict:
    code = (LOAD_PROBE.replace("ROOT", repr(str(ROOT))).replace("TOKENS", str(tokens))
            .replace("THREADS", str(threads)))
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=True)
    return json.loads(result.stdout.strip().splitlines()[-1])


def median_ms(times: list[float]) -> float:
    return 1000 * statistics.median(times)


def interleaved_rounds(functions: dict, rounds: int) -> tuple[dict[str, list[float]], dict[str, list[float]]]:
    """Each function once untimed (warm-up), then `rounds` rounds of all of them in turn (a load spike touches every
    kind alike) -> (wall seconds, CPU seconds) per name."""
    wall = {name: [] for name in functions}
    cpu = {name: [] for name in functions}
    for function in functions.values():
        function()
    for _ in range(rounds):
        for name, function in functions.items():
            start, start_cpu = time.perf_counter(), time.process_time()
            function()
            wall[name].append(time.perf_counter() - start)
            cpu[name].append(time.process_time() - start_cpu)
    return wall, cpu


def time_lens_and_patching(loaded, tokens: int, rounds: int) -> None:
    """Section 4 of the module docstring: medians of `rounds` interleaved rounds, CPU time beside wall time."""
    from model.explain.attribution import direct_logit_attribution
    from model.explain.logit_lens import LENS_CHUNK_ROWS, lens_cell, lens_column, logit_lens
    from model.explain.patching import head_patching, matched_streams, patched_run, residual_patching
    from model.families import adapt

    lab = adapt(loaded.name, loaded)
    text = loaded.decode(text_of(loaded, tokens))
    ids = torch.tensor([loaded.encode(text)])
    corrupt = text.replace("teacher", "student", 1)  # one token changed: " teacher" and " student" are one each
    clean_stream, corrupt_stream = matched_streams(lab, text, corrupt)

    @torch.no_grad()
    def forward():
        loaded.model(ids, need_weights=False)

    def lens():
        logit_lens(lab, text)

    def grid():  # the lens of the stream a forward has made: the unembeddings and their top k
        logit_lens(lab, text, stream=clean_stream)

    rows = clean_stream.hidden.reshape(-1, clean_stream.hidden.shape[-1])

    def floor():  # the grid's own floor: the final norm and the output matmul of the same rows, nothing else
        for chunk in rows.split(LENS_CHUNK_ROWS):
            lab.unembed(chunk)

    def column():  # what the lens section opens with: the last position, every row
        lens_column(lab, clean_stream.hidden, -1, token_id=7)

    def cell():
        lens_cell(lab, clean_stream.hidden, 12, 3)

    def patched():
        patched_run(lab, clean_stream, corrupt_stream, 0, len(clean_stream.ids) // 2)

    def attribution():
        direct_logit_attribution(lab, text)

    functions = {"one forward (logits, no maps)": forward, "logit lens": lens, "one patched run (from block 0)": patched,
                 "direct logit attribution": attribution, "lens grid, its stream given": grid,
                 "the grid's unembedding matmul alone (its floor)": floor,
                 "lens at the last position, every row, its stream given": column, "one lens cell (top 10)": cell}
    wall, cpu = interleaved_rounds(functions, rounds)
    base, base_cpu = median_ms(wall["one forward (logits, no maps)"]), median_ms(cpu["one forward (logits, no maps)"])
    print(f"\nLogit lens and activation patching, a {len(clean_stream.ids)}-token text, median of {rounds} interleaved "
          "rounds:\n")
    print("| run | wall | CPU | × one forward (wall / CPU) | target |\n|---|---|---|---|---|")
    targets = ("", "≤ 1.5×", "≤ 1.1×", "", "≤ 1.3× the floor", "", "≤ 0.15×", "≤ 50 ms")
    for (name, times), target in zip(wall.items(), targets):
        ratio, cpu_ratio = median_ms(times) / base, median_ms(cpu[name]) / base_cpu
        print(f"| {name} | {median_ms(times):.0f} ms | {median_ms(cpu[name]):.0f} ms | {ratio:.2f}× / "
              f"{cpu_ratio:.2f}× | {target} |")
    floor_ms = median_ms(wall["the grid's unembedding matmul alone (its floor)"])
    print(f"| lens grid ÷ its floor, the same run | | | {median_ms(wall['lens grid, its stream given']) / floor_ms:.2f}× "
          "| ≤ 1.3× |")
    answer = loaded.token_texts(text_of(loaded, 1))[0]
    start, start_cpu = time.perf_counter(), time.process_time()
    heads = head_patching(lab, text, corrupt, answer)
    seconds, cpu_seconds = time.perf_counter() - start, time.process_time() - start_cpu
    print(f"| per-head sweep, the same pair ({heads.patched_probs.size} runs), once | {seconds:.1f} s | "
          f"{cpu_seconds:.1f} s | {1000 * seconds / base:.0f}× / {1000 * cpu_seconds / base_cpu:.0f}× | |")
    short = loaded.decode(text_of(loaded, 16))
    pair = short, short.replace("teacher", "student", 1)
    start, start_cpu = time.perf_counter(), time.process_time()
    sweep = residual_patching(lab, *pair, answer)
    print(f"| full residual sweep, 16-token pair ({sweep.patched_probs.size} runs) | {time.perf_counter() - start:.1f} s "
          f"| {time.process_time() - start_cpu:.1f} s | | ≤ 30 s |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--tokens", type=int, default=128)
    parser.add_argument("--new-tokens", type=int, default=32)
    parser.add_argument("--generation-rounds", type=int, default=1)
    parser.add_argument("--threads", type=int, default=1, help="torch threads (the app's pages run at 1)")
    parser.add_argument("--lens-tokens", type=int, default=64)
    parser.add_argument("--lens-only", action="store_true", help="only section 4: the logit lens and patching")
    args = parser.parse_args()
    print(f"load average at start: {Path('/proc/loadavg').read_text().strip()}")
    if args.lens_only:
        torch.set_num_threads(args.threads)
        time_lens_and_patching(load_smollm2(), args.lens_tokens, args.rounds)
        print(f"load average at end: {Path('/proc/loadavg').read_text().strip()}")
        return

    probe = probe_load(args.tokens, args.threads)
    print("\n| what | value |\n|---|---|")
    print(f"| import torch | {probe['torch_s']:.2f} s |")
    print(f"| load_smollm2() (sha256, GGUF read, dequantize, build, tokenizer) | {probe['load_s']:.2f} s |")
    print(f"| RSS before loading / after / after one {args.tokens}-token analysis | {probe['rss_before']:.0f} / "
          f"{probe['rss_loaded']:.0f} / {probe['rss_analysed']:.0f} MiB (its maps: {probe['maps_mib']:.0f} MiB) |")
    print(f"| transformers imported by the app's path | {probe['transformers']} |")

    torch.set_num_threads(args.threads)
    loaded = load_smollm2()
    from transformers import LlamaForCausalLM
    reference = LlamaForCausalLM.from_pretrained(str(smollm2_path().parent), gguf_file=SMOLLM2_FILE,
                                                 attn_implementation="eager", dtype=torch.float32).eval()
    ids = text_of(loaded, args.tokens)
    tensor = torch.tensor([ids])

    def ours():
        loaded.run(ids)

    @torch.no_grad()
    def theirs():
        reference(tensor, output_attentions=True)

    ours(), theirs()  # warm-up
    mine, ref, mine_cpu, ref_cpu = [], [], [], []
    for _ in range(args.rounds):  # interleaved, so load changes hit both alike
        for function, times, cpu in ((ours, mine, mine_cpu), (theirs, ref, ref_cpu)):
            start, start_cpu = time.perf_counter(), time.process_time()
            function()
            times.append(time.perf_counter() - start)
            cpu.append(time.process_time() - start_cpu)
    ratio = statistics.median(mine) / statistics.median(ref)
    cpu_ratio = statistics.median(mine_cpu) / statistics.median(ref_cpu)
    print(f"\n{args.tokens}-token forward with every attention map, {args.threads} torch thread(s), median of "
          f"{args.rounds} interleaved rounds (CPU time: this process's own work, less disturbed by other "
          "processes than the wall time on a shared machine):\n")
    print("| | ours (LoadedLlama.run) | LlamaForCausalLM eager, output_attentions | ratio | target |\n"
          "|---|---|---|---|---|")
    print(f"| wall | {median_ms(mine):.0f} ms | {median_ms(ref):.0f} ms | **{ratio:.2f}×** | ≤ 1.2× "
          f"({'met' if ratio <= 1.2 else 'missed'}) |")
    print(f"| CPU | {median_ms(mine_cpu):.0f} ms | {median_ms(ref_cpu):.0f} ms | **{cpu_ratio:.2f}×** | ≤ 1.2× "
          f"({'met' if cpu_ratio <= 1.2 else 'missed'}) |")

    longest = text_of(loaded, MAX_TOKENS)
    start = time.perf_counter()
    out = loaded.run(longest)
    long_s = time.perf_counter() - start
    print(f"| {MAX_TOKENS} tokens (the longest text), ours once | {1000 * long_s:.0f} ms | maps "
          f"{(out.weights.nbytes + out.scores.nbytes) / 2**20:.0f} MiB (weights + scores) | |")
    del out

    prompt = loaded.encode(loaded.chat_prompt([{"role": "user", "content": QUESTION}]))
    n = args.new_tokens
    runs = {}
    kinds = (("cached", {}), ("uncached", {"use_cache": False}), ("cached, with maps", {"need_weights": True}))
    for _ in range(args.generation_rounds):  # interleaved; the fastest of each kind (load spikes only add time)
        for name, kwargs in kinds:
            start, start_cpu = time.perf_counter(), time.process_time()
            run = generate(loaded.model, prompt, n, **kwargs)
            seconds, cpu = time.perf_counter() - start, time.process_time() - start_cpu
            if name not in runs or seconds < runs[name][1]:
                runs[name] = (run, seconds, cpu)
    start = time.perf_counter()
    with torch.no_grad():
        hf = reference.generate(torch.tensor([prompt]), max_new_tokens=n, do_sample=False, eos_token_id=None,
                                attention_mask=torch.ones(1, len(prompt), dtype=torch.long),
                                pad_token_id=loaded.eos_id)
    hf_s = time.perf_counter() - start
    same = all(run.new_ids == runs["cached"][0].new_ids for run, _, _ in runs.values())
    same = same and hf[0, len(prompt):].tolist() == runs["cached"][0].new_ids
    speedup = runs["uncached"][1] / runs["cached"][1]
    cpu_speedup = runs["uncached"][2] / runs["cached"][2]
    print(f"\nGeneration of {n} tokens after a {len(prompt)}-token chat prompt, greedy, {args.threads} thread(s), "
          f"fastest of {args.generation_rounds} interleaved rounds (same tokens in every run: {same}):\n")
    print("| run | total (wall) | CPU | per token (wall) | last step (wall) |\n|---|---|---|---|---|")
    for name, (run, seconds, cpu) in runs.items():
        print(f"| ours, {name} | {seconds:.2f} s | {cpu:.2f} s | {1000 * seconds / n:.0f} ms | "
              f"{1000 * run.steps[-1].seconds:.0f} ms |")
    print(f"| transformers generate (its cache) | {hf_s:.2f} s | — | {1000 * hf_s / n:.0f} ms | — |")
    print(f"\nKV-cache speed-up (uncached / cached): wall **{speedup:.1f}×**, CPU **{cpu_speedup:.1f}×** "
          f"(target ≥ 3×: {'met' if min(speedup, cpu_speedup) >= 3 else 'missed'})")
    time_lens_and_patching(loaded, args.lens_tokens, args.rounds)
    print(f"load average at end: {Path('/proc/loadavg').read_text().strip()}")


if __name__ == "__main__":
    main()

"""all-MiniLM-L6-v2: analysis speed against transformers' BertModel, load time, memory.

    python bench/bert_speed.py [--rounds 30] [--tokens 128] [--loads 3]

1. Analysis of one sentence of --tokens tokens (every attention map): our encoder (model/bert.py, what the page
   runs: PretrainedEncoder.run -> weights and scores of every layer) against transformers' BertModel
   (attn_implementation="eager", output_attentions=True) on the same ids and weights, interleaved rounds, median;
   at 1 torch thread (the app's page setting, ui/models.py) and at 2 (the machine's cores). Also the whole
   model.sources.analyse_encoder (tokenising, numpy copies, sentence embedding) at 1 thread.
2. Loading once per process: fresh `python -c` processes, torch's import and load_minilm (zip read + sha256 +
   build + tokenizer) timed apart, --loads times.
3. Memory, in a fresh process without transformers: RSS before loading, after loading, and after 30 different
   sentences were analysed and kept (what 30 students' cached analyses add; the model is one shared copy,
   st.cache_resource), with the bytes of those analyses' arrays.

Prints markdown tables; `cat /proc/loadavg` is printed with them (results are noisy on a shared machine).
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import torch  # noqa: E402

from model.bert import load_minilm, minilm_zip_path  # noqa: E402
from model.sources import analyse_encoder  # noqa: E402

WORDS = ("the teacher explained how every word in a sentence looks at the other words and why some heads "
         "prefer the next token while others gather on punctuation or the separator").split()


def sentence_of(model, tokens: int) -> str:
    """English text that tokenises to exactly `tokens` tokens ([CLS] and [SEP] included)."""
    words = []
    while len(model.encode(" ".join(words)).ids) < tokens:
        words.append(WORDS[len(words) % len(WORDS)])
    while len(model.encode(" ".join(words)).ids) > tokens:
        words.pop()
    return " ".join(words)


def timed(function, rounds: int) -> list[float]:
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return times


def compare(model, reference, text: str, rounds: int, threads: int) -> tuple[float, float, float]:
    torch.set_num_threads(threads)
    encoded = model.encode(text)
    ids = torch.tensor([encoded.ids])

    def ours():
        model.run(encoded)

    def theirs():
        with torch.no_grad():
            reference(ids, output_attentions=True)

    for function in (ours, theirs):  # warm-up
        function()
    mine, ref = [], []
    for _ in range(rounds):  # interleaved, so load changes hit both alike
        mine += timed(ours, 1)
        ref += timed(theirs, 1)
    whole = timed(lambda: analyse_encoder("bench", text, model), rounds)
    return statistics.median(mine), statistics.median(ref), statistics.median(whole)


def fresh_process(snippet: str) -> dict:
    """Run `snippet` in a new Python (nothing imported yet); it prints one JSON object."""
    code = f"import sys; sys.path.insert(0, {str(ROOT)!r})\n{snippet}"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


LOAD = """
import json, time
start = time.perf_counter()
import torch
imported = time.perf_counter()
from model.bert import load_minilm
load_minilm()
print(json.dumps({"torch": imported - start, "load": time.perf_counter() - imported}))
"""

MEMORY = """
import json
from pathlib import Path
def rss():
    return next(int(l.split()[1]) / 1024 for l in Path("/proc/self/status").read_text().splitlines()
                if l.startswith("VmRSS:"))
import torch
torch.set_num_threads(1)  # the app's page setting
from model.bert import load_minilm
from model.sources import analyse_encoder
before = rss()
model = load_minilm()
loaded = rss()
words = "the teacher explained how every word in a sentence looks at the other words".split()
kept = [analyse_encoder("bench", " ".join(words[i % 7:]) + f" number {i}", model) for i in range(30)]
arrays = sum(m.weights.nbytes + m.scores.nbytes for a in kept for m in a.maps.values())
print(json.dumps({"before": before, "loaded": loaded, "after": rss(), "arrays": arrays / 2**20}))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--tokens", type=int, default=128)
    parser.add_argument("--loads", type=int, default=3)
    args = parser.parse_args()
    os.environ["HF_HUB_OFFLINE"] = "1"

    model = load_minilm()

    from transformers import BertModel

    with tempfile.TemporaryDirectory() as folder:
        with zipfile.ZipFile(minilm_zip_path()) as archive:
            archive.extractall(folder)
        reference = BertModel.from_pretrained(folder, attn_implementation="eager").eval()
    text = sentence_of(model, args.tokens)
    print(f"load average: {Path('/proc/loadavg').read_text().strip()}")
    print(f"\n### Analysis of a {len(model.encode(text).ids)}-token sentence (median of {args.rounds}, ms)\n")
    print("| torch threads | ours (PretrainedEncoder.run) | BertModel(output_attentions) | ratio | "
          "whole analyse_encoder |")
    print("|---|---|---|---|---|")
    for threads in (1, 2):
        mine, ref, whole = compare(model, reference, text, args.rounds, threads)
        print(f"| {threads} | {mine * 1e3:.1f} | {ref * 1e3:.1f} | {mine / ref:.2f}× | {whole * 1e3:.1f} |")

    print("\n### Loading all-MiniLM-L6-v2 once per process (fresh processes, s)\n")
    loads = [fresh_process(LOAD) for _ in range(args.loads)]
    print("| import torch (the server does it anyway) | load_minilm: zip + sha256 + build + tokenizer | median load |")
    print("|---|---|---|")
    torch_times = ", ".join(f"{r['torch']:.2f}" for r in loads)
    load_times = ", ".join(f"{r['load']:.2f}" for r in loads)
    print(f"| {torch_times} | {load_times} | {statistics.median(r['load'] for r in loads):.2f} |")

    memory = fresh_process(MEMORY)
    print("\n### Memory (RSS of a fresh process, MiB; 1 torch thread)\n")
    print("| before loading | after loading (the one copy every session shares) | after 30 different sentences "
          "analysed and kept (30 students' cached analyses) | those analyses' arrays |")
    print("|---|---|---|---|")
    print(f"| {memory['before']:.0f} | {memory['loaded']:.0f} | {memory['after']:.0f} | {memory['arrays']:.1f} |")
    print(f"\nload average: {Path('/proc/loadavg').read_text().strip()}")


if __name__ == "__main__":
    main()

"""Exact match against source length for the shipped en-fr checkpoints, on their held-out splits.

    python bench/accuracy_by_length.py [--write]

Each checkpoint's data is rebuilt from the training configuration saved in its JSON (model/train.py::
TrainConfig.from_dict, make_training_data), so the held-out splits are the ones it was measured on, plus
longest_test (100 sentences of 41-60 words, none of them a training sentence: model/data.py::make_en_fr).
Prints one markdown row per model (exact match and sentences per length bucket, test, long_test, longest_test, and
all held-out sentences of 20-50 words, the target range);
--write puts these metrics into the checkpoints' JSON (train_seconds kept), where the seq2seq page's
accuracy-against-length chart reads them.
"""
from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from model.checkpoint import load_checkpoint, write_metrics  # noqa: E402
from model.metrics import exact_match  # noqa: E402
from model.evaluation import HELD_OUT_SPLITS, LENGTH_BUCKETS, final_metrics, translate_pairs  # noqa: E402
from model.train import TrainConfig, make_training_data  # noqa: E402

CHECKPOINTS = Path(__file__).resolve().parents[1] / "assets" / "checkpoints"
MODELS = ("transformer_en-fr", "bahdanau_en-fr", "no-attention_en-fr")
TARGET_WORDS = (20, 50)  # the target: >= 90% exact match on sentences of 20-50 words


def exact_match_between(loaded, data, low: int, high: int) -> tuple[float, int]:
    """(exact match, sentences) over every held-out sentence of low..high source words."""
    pairs = [pair for split in HELD_OUT_SPLITS for pair in data.splits.get(split, []) if low <= len(pair[0]) <= high]
    hyps, _, _ = translate_pairs(loaded.model, data, pairs)
    return exact_match(hyps, [tgt for _, tgt in pairs]), len(pairs)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--write", action="store_true", help="store the metrics in the checkpoints' JSON")
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    header = " | ".join(f"{low}–{high}" for low, high in LENGTH_BUCKETS)
    print(f"| model | {header} | test | long_test ≥ 20 words | longest_test 41–60 words | 20–50 words | seconds |")
    print("|---" * (len(LENGTH_BUCKETS) + 6) + "|")
    for name in MODELS:
        start = time.perf_counter()
        loaded = load_checkpoint(CHECKPOINTS / name)
        data = make_training_data(TrainConfig.from_dict(loaded.meta["train_config"]))
        metrics = final_metrics(loaded, data)
        buckets = {(row["min_words"], row["max_words"]): row for row in metrics["by_length"]}
        cells = [f"{buckets[b]['exact_match']:.3f} ({buckets[b]['sentences']})" if b in buckets else "–"
                 for b in LENGTH_BUCKETS]
        splits = [f"{metrics[s]['exact_match']:.3f} ({metrics[s]['sentences']})"
                  for s in ("test", "long_test", "longest_test")]
        target_em, target_sentences = exact_match_between(loaded, data, *TARGET_WORDS)
        splits.append(f"{target_em:.3f} ({target_sentences})")
        print(f"| {name} | {' | '.join(cells)} | {' | '.join(splits)} | {time.perf_counter() - start:.0f} |",
              flush=True)
        if args.write:
            kept = {k: v for k, v in loaded.metrics.items() if k == "train_seconds"}
            write_metrics(CHECKPOINTS / name, {**metrics, **kept})
    print(f"# {time.strftime('%Y-%m-%d %H:%M')} {platform.machine()}, {torch.get_num_threads()} torch threads, "
          f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()

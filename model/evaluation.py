"""How well a translation model does on held-out pairs: greedy exact match, BLEU, teacher-forced token accuracy, and
the same by source length. Training validates with evaluate(); a saved checkpoint's metrics are final_metrics()."""
from __future__ import annotations

import torch

from model.checkpoint import LoadedModel
from model.data import PAD_ID, Dataset, pad_batch
from model.decode import greedy_decode_batch
from model.metrics import corpus_bleu, exact_match


@torch.no_grad()
def translate_pairs(model, data: Dataset, pairs, batch_size: int = 128) -> tuple[list[list[str]], int, int]:
    """Greedy translations of pairs (in their order), plus teacher-forced (correct, total) target tokens."""
    was_training = model.training
    model.eval()
    device = next(model.parameters()).device
    hyps: list = [None] * len(pairs)
    correct = total = 0
    order = sorted(range(len(pairs)), key=lambda i: len(pairs[i][0]))  # similar lengths batch together
    for start in range(0, len(order), batch_size):
        indices = order[start:start + batch_size]
        src, tgt_in, tgt_out = pad_batch([pairs[i] for i in indices], data, device)
        logits, _ = model(src, tgt_in)
        mask = tgt_out != PAD_ID
        correct += int(((logits.argmax(-1) == tgt_out) & mask).sum())
        total += int(mask.sum())
        for i, ids in zip(indices, greedy_decode_batch(model, src, tgt_out.size(1) + 5)):
            hyps[i] = data.tgt_vocab.decode(ids)
    model.train(was_training)
    return hyps, correct, total


def evaluate(model, data: Dataset, split: str = "test", limit: int | None = None, batch_size: int = 128) -> dict:
    """Greedy exact match, BLEU and teacher-forced token accuracy on a split."""
    pairs = data.splits[split][:limit] if limit else data.splits[split]
    hyps, correct, total = translate_pairs(model, data, pairs, batch_size)
    refs = [tgt for _, tgt in pairs]
    return {"exact_match": exact_match(hyps, refs), "bleu": corpus_bleu(hyps, refs),
            "token_accuracy": correct / max(total, 1), "sentences": len(pairs)}


LENGTH_BUCKETS = ((1, 5), (6, 10), (11, 15), (16, 20), (21, 25), (26, 30), (31, 40), (41, 60))


HELD_OUT_SPLITS = ("test", "long_test", "longest_test")  # longest_test: en-fr only (model/data.py::make_en_fr)


def accuracy_by_length(model, data: Dataset, splits=HELD_OUT_SPLITS) -> list[dict]:
    """Exact match and BLEU per source-length bucket (words), over the given splits (those the data has) together."""
    pairs = [pair for split in splits for pair in data.splits.get(split, [])]
    hyps, _, _ = translate_pairs(model, data, pairs)
    rows = []
    for low, high in LENGTH_BUCKETS:
        chosen = [i for i, (src, _) in enumerate(pairs) if low <= len(src) <= high]
        if chosen:
            h, r = [hyps[i] for i in chosen], [pairs[i][1] for i in chosen]
            rows.append({"min_words": low, "max_words": high, "sentences": len(chosen),
                         "exact_match": exact_match(h, r), "bleu": corpus_bleu(h, r)})
    return rows


def final_metrics(loaded: LoadedModel, data: Dataset) -> dict:
    metrics = {split: evaluate(loaded.model, data, split) for split in HELD_OUT_SPLITS if data.splits.get(split)}
    metrics["by_length"] = accuracy_by_length(loaded.model, data)
    return metrics

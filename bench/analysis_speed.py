"""Cost of the Explain view's computations (model/explain/) and the shipped models' head-pattern label counts.

    python bench/analysis_speed.py [--repeats 10]

1. Rollout + value-weighted norms on the longest input the toy en-fr Transformer takes (127 words + <eos> = 128
   tokens): the page's forward pass with weights (what every view pays)
   against the same pass with the input hooks, the norms of every head of every kind and both rollouts. Median
   of --repeats, interleaved; "extra" is the difference of the medians.
2. Head importance of the shipped en-fr Transformer on the 300 held-out sentences: 24 single-head ablations (plus
   the baseline), the gradient estimate, and the 13-point pruning curve, timed once each.
3. Head-pattern label counts of every shipped Transformer over the first 100 held-out sentences.
4. all-MiniLM-L6-v2 (the real encoder): rollout + norms of its 72 heads on a 128-token text (the fixed English
   sentences joined, cut to 126 pieces between [CLS] and [SEP]) against the page's forward pass with weights,
   median of --repeats, interleaved; then head importance on the 24 fixed sentences (72 ablations + baseline),
   its gradient estimate, the 13-point curve, and the encoder's label counts. `--encoder-only` runs just this part.
5. SmolLM2-135M-Instruct: head importance as the gradient of the next-token loss over the fixed
   LANGUAGE_MODEL_TEXTS (one forward + backward pass), the 14-point pruning curve, and the head-pattern labels
   (8 texts with weights + the induction sequence), timed once each, with the label counts. `--llm-only` runs
   just this part.
"""
from __future__ import annotations

import argparse
import collections
import os
import platform
import statistics
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from model.explain import fixed_sets, patterns  # noqa: E402
from model.explain import explanations as text_explanations  # noqa: E402
from model.explain import importance as head_importance_measures  # noqa: E402
from model.checkpoint import load_checkpoint  # noqa: E402
from model.data import BOS_ID, EOS_ID, make_dataset  # noqa: E402

CHECKPOINTS = Path(__file__).resolve().parents[1] / "assets" / "checkpoints"


def _load(name: str):
    loaded = load_checkpoint(CHECKPOINTS / name, device="cpu")
    for p in loaded.model.parameters():
        p.requires_grad_(False)
    return loaded


def _time(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def _timed(fn):
    """-> (wall seconds, CPU seconds of this process, result). On a shared machine the wall time depends on the
    others' load; the CPU time is what the work costs (with 2 threads, the wall time on 2 idle cores is at least
    half of it)."""
    wall, cpu = time.perf_counter(), time.process_time()
    result = fn()
    return time.perf_counter() - wall, time.process_time() - cpu, result


def long_input(loaded) -> tuple[torch.Tensor, torch.Tensor]:
    """A 128-token source (held-out long sentences joined, cut to 127 words + <eos>) and a 128-token target."""
    data = make_dataset("en-fr", seed=0)
    words, target = [], []
    for en, fr in data.splits["long_test"]:
        words += en
        target += fr
        if len(words) >= 127 and len(target) >= 127:
            break
    src = loaded.src_vocab.encode(words[:127])[0] + [EOS_ID]
    tgt = [BOS_ID] + loaded.tgt_vocab.encode(target[:127])[0]
    return torch.tensor([src]), torch.tensor([tgt])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--encoder-only", action="store_true", help="only part 4 (all-MiniLM-L6-v2)")
    parser.add_argument("--llm-only", action="store_true", help="only part 5 (SmolLM2-135M-Instruct)")
    args = parser.parse_args()
    print(f"# {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {platform.processor() or platform.machine()}, "
          f"{os.cpu_count()} cores, torch {torch.__version__}, {torch.get_num_threads()} threads, "
          f"load average {open('/proc/loadavg').read().split()[:3]}")
    if not (args.encoder_only or args.llm_only):
        translation_model(args)
    if not args.llm_only:
        encoder(args)
    if not args.encoder_only:
        language_model()
    print(f"\nload average after: {open('/proc/loadavg').read().split()[:3]}")


def encoder(args) -> None:
    import dataclasses

    from model.bert import load_minilm

    minilm = load_minilm()
    encoded = minilm.encode(" ".join(fixed_sets.ENCODER_SENTENCES))
    keep = 127  # 126 pieces + [CLS], then the final [SEP]: 128 tokens
    encoded = dataclasses.replace(encoded, **{name: getattr(encoded, name)[:keep] + getattr(encoded, name)[-1:]
                                              for name in ("tokens", "ids", "token_type_ids", "word_ids", "special")})
    forward, explained = [], []
    for _ in range(args.repeats + 1):  # the first of each is a warm-up
        forward.append(_timed(lambda: minilm.run(encoded))[:2])
        explained.append(_timed(lambda: text_explanations.encoder_explanations(minilm, encoded))[:2])
    f, e = (statistics.median(t[0] for t in forward[1:]), statistics.median(t[0] for t in explained[1:]))
    fc, ec = (statistics.median(t[1] for t in forward[1:]), statistics.median(t[1] for t in explained[1:]))
    print(f"\n| all-MiniLM-L6-v2, {len(encoded.ids)}-token input, median of {args.repeats} | wall ms | CPU ms |"
          "\n|---|---:|---:|")
    print(f"| forward with weights (every view) | {1000 * f:.1f} | {1000 * fc:.1f} |")
    print(f"| forward + hooks + norms (72 heads) + rollout | {1000 * e:.1f} | {1000 * ec:.1f} |")
    print(f"| **extra for rollout + norms** | **{1000 * (e - f):.1f}** | **{1000 * (ec - fc):.1f}** |")

    cfg = minilm.config
    embed = head_importance_measures.encoder_sentence_embedder(minilm, fixed_sets.ENCODER_SENTENCES)
    sentences = len(fixed_sets.ENCODER_SENTENCES)
    ablation_s, ablation_cpu, change = _timed(lambda: head_importance_measures.embedding_importance(
        embed, cfg.num_layers, cfg.num_heads))
    gradient_s, gradient_cpu, gradient = _timed(lambda: head_importance_measures.embedding_gradient_importance(
        embed, cfg.num_layers, cfg.num_heads, sentences))
    importance = head_importance_measures.EncoderImportance(change, gradient, sentences)
    counts = sorted(set(range(0, 73, 6)) | {72})
    curve_s, curve_cpu, curve = _timed(lambda: head_importance_measures.encoder_pruning_curve(
        minilm, importance, counts))
    print(f"\n| head importance, all-MiniLM-L6-v2, {sentences} fixed sentences | wall s | CPU s |\n|---|---:|---:|")
    print(f"| ablation of 72 heads + baseline (1 − cos of the sentence embedding) | {ablation_s:.2f} | "
          f"{ablation_cpu:.2f} |")
    print(f"| gradient estimate ({head_importance_measures.GRADIENT_PROBES} probes: 1 forward + "
          f"{head_importance_measures.GRADIENT_PROBES} backward) | {gradient_s:.2f} | {gradient_cpu:.2f} |")
    print(f"| pruning curve ({len(counts)} points) | {curve_s:.2f} | {curve_cpu:.2f} |")
    order = importance.order()
    print(f"\nleast important L{order[0][0] + 1} H{order[0][1] + 1} ({change[order[0]]:.4f}), most "
          f"L{order[-1][0] + 1} H{order[-1][1] + 1} ({change[order[-1]]:.4f}); Spearman(gradient, ablation) "
          f"{importance.spearman():+.2f}")
    print("curve (mean cos to all heads on): " + ", ".join(f"k={r['k']}: {r['similarity']:.3f}" for r in curve))
    tally = collections.Counter(patterns.encoder_head_labels(minilm).labels.ravel().tolist())
    print("\n| model | kind | " + " | ".join(patterns.PATTERNS) + " |\n|---|---|" + "---:|" * len(patterns.PATTERNS))
    print("| all-MiniLM-L6-v2 | encoder_self | " + " | ".join(str(tally.get(p, 0)) for p in patterns.PATTERNS) + " |")


def language_model() -> None:
    from model.families import curve_counts
    from model.llama import load_smollm2

    loaded = load_smollm2()
    model = loaded.model
    texts = head_importance_measures.language_model_texts(loaded.encode, fixed_sets.LANGUAGE_MODEL_TEXTS)
    gradient_s, gradient_cpu, importance = _timed(lambda: head_importance_measures.language_model_importance(
        model, texts))
    counts = curve_counts(importance.gradient.size)
    curve_s, curve_cpu, curve = _timed(lambda: head_importance_measures.language_model_pruning_curve(
        model, texts, importance, counts))
    labels_s, labels_cpu, scores = _timed(lambda: patterns.language_model_head_labels(loaded))
    print(f"\n| SmolLM2-135M-Instruct, {texts.texts} fixed texts ({texts.tokens} predicted tokens, packed "
          f"{tuple(texts.ids.shape)}) | wall s | CPU s |\n|---|---:|---:|")
    print(f"| head importance: gradient of the next-token loss (1 forward + 1 backward) | {gradient_s:.2f} | "
          f"{gradient_cpu:.2f} |")
    print(f"| pruning curve ({len(counts)} points, one forward each) | {curve_s:.2f} | {curve_cpu:.2f} |")
    print(f"| pattern labels ({len(fixed_sets.LANGUAGE_MODEL_TEXTS)} texts with weights + induction sequence) | "
          f"{labels_s:.2f} | {labels_cpu:.2f} |")
    order = importance.order()
    print(f"\nbaseline loss {importance.baseline_loss:.3f} nats; least important L{order[0][0] + 1} H{order[0][1] + 1}, "
          f"most L{order[-1][0] + 1} H{order[-1][1] + 1}")
    print("curve (next-token loss): " + ", ".join(f"k={r['k']}: {r['loss']:.2f}" for r in curve))
    tally = collections.Counter(scores.labels.ravel().tolist())
    print("\n| model | kind | " + " | ".join(patterns.PATTERNS) + " |\n|---|---|" + "---:|" * len(patterns.PATTERNS))
    print("| SmolLM2-135M-Instruct | decoder_self | " + " | ".join(str(tally.get(p, 0)) for p in patterns.PATTERNS)
          + " |")


def translation_model(args) -> None:
    loaded = _load("transformer_en-fr")
    model = loaded.model
    src, tgt = long_input(loaded)
    with torch.no_grad():
        forward, explained = [], []
        for _ in range(args.repeats + 1):  # the first of each is a warm-up
            forward.append(_timed(lambda: model(src, tgt, need_weights=True))[:2])
            explained.append(_timed(lambda: text_explanations.transformer_explanations(model, src, tgt))[:2])
    f, e = (statistics.median(t[0] for t in forward[1:]), statistics.median(t[0] for t in explained[1:]))
    fc, ec = (statistics.median(t[1] for t in forward[1:]), statistics.median(t[1] for t in explained[1:]))
    print(f"\n| {src.size(1)}-token input, median of {args.repeats} | wall ms | CPU ms |\n|---|---:|---:|")
    print(f"| forward with weights (every view) | {1000 * f:.1f} | {1000 * fc:.1f} |")
    print(f"| forward + hooks + norms (24 heads) + 2 rollouts | {1000 * e:.1f} | {1000 * ec:.1f} |")
    print(f"| **extra for rollout + norms** | **{1000 * (e - f):.1f}** | **{1000 * (ec - fc):.1f}** |")

    pairs_start = time.perf_counter()
    evaluation = head_importance_measures.evaluation_set(loaded, fixed_sets.held_out_pairs(loaded))
    setup = time.perf_counter() - pairs_start
    total, total_cpu, importance = _timed(lambda: head_importance_measures.head_importance(model, evaluation))
    gradient, gradient_cpu, _ = _timed(lambda: head_importance_measures.gradient_importance(model, evaluation))
    counts = sorted(set(range(0, 25, 2)) | {24})
    curve_s, curve_cpu, curve = _timed(lambda: head_importance_measures.pruning_curve(
        model, evaluation, importance, counts))
    print(f"\n| head importance, en-fr Transformer, {evaluation.sentences} held-out sentences | wall s | CPU s |"
          "\n|---|---:|---:|")
    print(f"| held-out set (dataset + encoding) | {setup:.2f} | |")
    print(f"| ablation of 24 heads + baseline, with the gradient estimate | {total:.2f} | {total_cpu:.2f} |")
    print(f"| gradient estimate alone (1 forward + backward) | {gradient:.2f} | {gradient_cpu:.2f} |")
    print(f"| pruning curve ({len(counts)} points) | {curve_s:.2f} | {curve_cpu:.2f} |")
    order = importance.order()
    print(f"\nbaseline {importance.baseline}; least important {importance.heads[order[0]]}, "
          f"most {importance.heads[order[-1]]}; Spearman(gradient, loss rise) {importance.spearman():+.2f}")
    print("curve: " + ", ".join(f"k={r['k']}: {r['exact_match']:.1%}" for r in curve))

    print("\n| model | kind | " + " | ".join(patterns.PATTERNS) + " |\n|---|---|" + "---:|" * len(patterns.PATTERNS))
    for name in sorted(p.stem for p in CHECKPOINTS.glob("transformer_*.json")):
        other = _load(name)
        sentences = patterns.labelling_sentences(other, fixed_sets.held_out_pairs(other, 100))
        scores = patterns.transformer_head_labels(other.model, sentences)
        for kind, s in scores.items():
            tally = collections.Counter(s.labels.ravel().tolist())
            print(f"| {name} | {kind} | " + " | ".join(str(tally.get(p, 0)) for p in patterns.PATTERNS) + " |")


if __name__ == "__main__":
    main()

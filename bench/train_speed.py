"""Training throughput: our Transformer vs torch.nn.Transformer with the same configuration, interleaved.

    python bench/train_speed.py [--rounds 5] [--steps 10] [--device auto|cpu|cuda]

On a CUDA GPU (--device auto picks it when present) both models train under the same bf16 autocast that
model/train.py uses (model.train.mixed_precision), and the clock waits for the GPU before each reading.

Both models get the same embeddings × √d_model + sinusoidal PE (+ dropout) + output projection around the core,
the same random batch (batch 128, length 16), Adam, forward + backward + step. Prints a table and the ratio.
"""
from __future__ import annotations

import argparse
import math
import os
import platform
import statistics
import sys
import time
from pathlib import Path

import torch
from torch import nn

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from model.attention import causal_mask  # noqa: E402
from model.config import TransformerConfig  # noqa: E402
from model.dropout import Dropout  # noqa: E402
from model.device import pick_device  # noqa: E402
from model.positional import sinusoidal_encoding  # noqa: E402
from model.train import mixed_precision  # noqa: E402
from model.transformer import Transformer  # noqa: E402


class TorchReference(nn.Module):
    def __init__(self, cfg: TransformerConfig):
        super().__init__()
        self.cfg = cfg
        self.src_embed = nn.Embedding(cfg.src_vocab_size, cfg.d_model, padding_idx=0)
        self.tgt_embed = nn.Embedding(cfg.tgt_vocab_size, cfg.d_model, padding_idx=0)
        self.register_buffer("pe", sinusoidal_encoding(cfg.max_len, cfg.d_model))
        self.core = nn.Transformer(cfg.d_model, cfg.num_heads, cfg.num_layers, cfg.num_layers, cfg.d_ff, cfg.dropout,
                                   batch_first=True, norm_first=cfg.norm_first)
        self.generator = nn.Linear(cfg.d_model, cfg.tgt_vocab_size)
        # The paper's dropout on embeddings + positions (§5.4) with the module ours uses there (model/dropout.py), so
        # the wrapper around both cores is the same and the ratio compares the cores (torch.nn.Transformer's own
        # dropouts stay torch's).
        self.embed_dropout = Dropout(cfg.dropout)

    def forward(self, src, tgt):
        scale = math.sqrt(self.cfg.d_model)
        s = self.embed_dropout(self.src_embed(src) * scale + self.pe[: src.size(1)])
        t = self.embed_dropout(self.tgt_embed(tgt) * scale + self.pe[: tgt.size(1)])
        mask = ~causal_mask(tgt.size(1), tgt.device)  # torch: True = blocked
        out = self.core(s, t, tgt_mask=mask, src_key_padding_mask=src == 0, tgt_key_padding_mask=tgt == 0,
                        memory_key_padding_mask=src == 0)
        return self.generator(out), None


def time_steps(model, src, tgt, steps: int, clock=time.perf_counter) -> float:
    """Seconds for `steps` training steps by `clock`: wall time, or with --cpu-time this thread's CPU time (with
    one torch thread all the work runs in this thread, so other users' load on a shared machine counts less)."""
    opt = torch.optim.Adam(model.parameters(), lr=1e-4, betas=(0.9, 0.98), eps=1e-9)
    loss_fn = nn.CrossEntropyLoss(ignore_index=0)
    device = src.device
    sync = torch.cuda.synchronize if device.type == "cuda" else (lambda: None)  # a GPU runs ahead of Python
    sync()
    start = clock()
    for _ in range(steps):
        with mixed_precision(device):  # bf16 on a CUDA GPU that supports it, as training does; nothing on a CPU
            logits, _ = model(src, tgt[:, :-1])
        loss = loss_fn(logits.float().reshape(-1, logits.size(-1)), tgt[:, 1:].reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
    sync()
    return clock() - start


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--batch", type=int, default=128)
    parser.add_argument("--length", type=int, default=16)
    parser.add_argument("--dropout", type=float, default=0.1, help="0.1: the paper's; 0: our training default")
    parser.add_argument("--threads", type=int, default=0, help="torch threads (0: torch's default)")
    parser.add_argument("--cpu-time", action="store_true",
                        help="time by this thread's CPU seconds (needs --threads 1) instead of wall seconds")
    parser.add_argument("--device", default="auto", help="auto (a CUDA GPU when present), cpu or cuda")
    args = parser.parse_args()
    device = pick_device(args.device)
    if args.cpu_time and (args.threads != 1 or device.type != "cpu"):
        parser.error("--cpu-time measures one CPU thread: add --threads 1 (and run on the CPU)")
    clock = time.thread_time if args.cpu_time else time.perf_counter
    if args.threads:
        torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    cfg = TransformerConfig(200, 200, num_layers=2, d_model=128, num_heads=4, d_ff=512, dropout=args.dropout)
    models = {"ours": Transformer(cfg).to(device).train(),
              "torch.nn.Transformer": TorchReference(cfg).to(device).train()}
    src = torch.randint(4, 200, (args.batch, args.length), device=device)
    tgt = torch.randint(4, 200, (args.batch, args.length + 1), device=device)
    tokens = args.batch * (2 * args.length) * args.steps
    for model in models.values():
        time_steps(model, src, tgt, 2)  # warm-up
    rates = {name: [] for name in models}
    names = list(models)
    for round_number in range(args.rounds):
        order = names if round_number % 2 == 0 else names[::-1]  # interleaved, alternating who goes first,
        for name in order:  # so the machine's drift and other users' load hit both alike
            rates[name].append(tokens / time_steps(models[name], src, tgt, args.steps, clock))
    round_ratios = [a / b for a, b in zip(rates["ours"], rates["torch.nn.Transformer"])]
    where = torch.cuda.get_device_name(device) + (", bf16 autocast" if torch.cuda.is_bf16_supported() else "") \
        if device.type == "cuda" else f"{platform.machine()} {torch.get_num_threads()} threads"
    print(f"# {time.strftime('%Y-%m-%d')} {where}, torch {torch.__version__}")
    print(f"# d_model {cfg.d_model}, heads {cfg.num_heads}, layers {cfg.num_layers}+{cfg.num_layers}, "
          f"d_ff {cfg.d_ff}, dropout {cfg.dropout}, batch {args.batch}, length {args.length}")
    print(f"# clock: {'thread CPU time' if args.cpu_time else 'wall time'}, {args.rounds} rounds of {args.steps} steps")
    print("| model | median tokens/s | min | max |\n|---|---|---|---|")
    for name, r in rates.items():
        print(f"| {name} | {statistics.median(r):,.0f} | {min(r):,.0f} | {max(r):,.0f} |")
    ratio = statistics.median(rates["ours"]) / statistics.median(rates["torch.nn.Transformer"])
    print(f"\nratio ours / torch.nn.Transformer: {ratio:.2f}x (of the medians); median of the {args.rounds} "
          f"per-round ratios {statistics.median(round_ratios):.2f}x (range {min(round_ratios):.2f}-{max(round_ratios):.2f}); "
          f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()

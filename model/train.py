"""Training loop with an on_step callback (live curves, stopping from outside) and a CLI.

    python -m model.train --model transformer --task en-fr --steps 1500 --out assets/checkpoints/transformer_en-fr
"""
from __future__ import annotations

import argparse
import contextlib
import random
import sys
import time
from dataclasses import asdict, dataclass, field, replace
from dataclasses import fields as dataclass_fields
from collections.abc import Callable

import torch
import torch.nn.functional as F
from tqdm import tqdm

from model.checkpoint import LoadedModel, build_model, save_checkpoint
from model.config import DecoderOnlyConfig, ModelConfig, Seq2SeqConfig, TransformerConfig, config_from_dict, family_of
from model.data import PAD_ID, Dataset, make_dataset, pad_batch
from model.device import pick_device
from model.evaluation import evaluate, final_metrics

FAMILIES = ("transformer", "bahdanau", "no-attention", "decoder-only")


# The architecture a training run builds unless told otherwise: TransformerConfig's defaults (model/config.py: 2+2
# layers, d_model 128, 4 heads, sinusoidal positions, post-norm), with two training choices on top: dropout 0 (the
# generated tasks do not overfit at these sizes, and 0 learns fastest) and d_ff 256.
RECIPE_OVERRIDES = {"dropout": 0.0}
TRANSFORMER_OVERRIDES = {**RECIPE_OVERRIDES, "d_ff": 256}


# The decoder-only translator: DecoderOnlyConfig's defaults (4 layers, d_model 128, 4 heads, d_ff 256, pre-norm: 0.65 M
# parameters against the encoder-decoder's 0.78 M, in one causal stack), dropout 0 as above.
DECODER_ONLY_OVERRIDES = {**RECIPE_OVERRIDES}


def default_model(family: str = "transformer") -> ModelConfig:
    """The model configuration of a family as training builds it by default (vocabulary sizes still 0)."""
    if family not in FAMILIES:
        raise ValueError(f"unknown model {family!r}; choose one of {', '.join(FAMILIES)}")
    if family == "transformer":
        return TransformerConfig(**TRANSFORMER_OVERRIDES)
    if family == "decoder-only":
        return DecoderOnlyConfig(**DECODER_ONLY_OVERRIDES)
    return Seq2SeqConfig(attention=family == "bahdanau", **RECIPE_OVERRIDES)


# Fields of the model configurations that a training run sets from its data, never from a flag.
DATA_FIELDS = ("src_vocab_size", "tgt_vocab_size", "pad_id")


@dataclass(frozen=True)
class TrainConfig:
    """One training run: what to train (model, a TransformerConfig or Seq2SeqConfig whose vocabulary sizes the
    data fills in), on which task, and the optimisation recipe."""

    model: ModelConfig = field(default_factory=default_model)
    task: str = "en-fr"
    steps: int = 800
    batch_size: int = 64
    lr: float = 2e-3
    schedule: str = "warmup-decay"  # "constant"; "noam": the paper's; "warmup-decay": linear warm-up, then to 0;
    # "warmup-hold-decay": linear warm-up, hold the peak, then linearly to 0 over the last decay_fraction of steps
    warmup: int = 100
    decay_fraction: float = 0.4
    label_smoothing: float = 0.0
    clip: float = 1.0
    seed: int = 0
    device: str = "auto"
    eval_every: int = 200
    eval_size: int = 300
    train_size: int = 40000
    long_train_size: int = 0  # en-fr only: extra 3-5-clause training sentences (model/data.py::make_en_fr)
    batching: str = "by-length"  # or "mixed": see training_batches

    @property
    def family(self) -> str:
        return family_of(self.model)

    @classmethod
    def for_model(cls, model: str = "transformer", **fields_: object) -> TrainConfig:
        """A TrainConfig from a family name and one flat set of fields, as the command line and the train page give
        them: architecture fields (d_model, num_heads, embed_dim, dropout, ...) go into the model configuration, on
        top of default_model(model); the rest are training fields. Fields of the other family are ignored, so one
        set of flags (the command line lists both families') serves every family; TypeError names a field of none."""
        architecture = default_model(model)
        own = {f.name for f in dataclass_fields(architecture)} - set(DATA_FIELDS)
        other = {f.name for config in (TransformerConfig, Seq2SeqConfig, DecoderOnlyConfig)
                 for f in dataclass_fields(config)}
        training = {f.name for f in dataclass_fields(cls)} - {"model"}
        unknown = set(fields_) - own - other - training
        if unknown:
            raise TypeError(f"unknown training fields: {', '.join(sorted(unknown))}")
        return cls(model=replace(architecture, **{k: v for k, v in fields_.items() if k in own}),
                   **{k: v for k, v in fields_.items() if k in training})

    def to_dict(self) -> dict:
        """JSON-ready: the training fields and model: the model configuration's to_dict() (with its family)."""
        return {**{f.name: getattr(self, f.name) for f in dataclass_fields(self) if f.name != "model"},
                "model": self.model.to_dict()}

    @classmethod
    def from_dict(cls, saved: dict) -> TrainConfig:
        """Rebuild a TrainConfig from to_dict()."""
        saved = dict(saved)
        return cls(model=config_from_dict(saved.pop("model")), **saved)


@dataclass
class StepInfo:
    step: int
    total_steps: int
    loss: float
    lr: float
    elapsed_s: float
    tokens_per_s: float
    eval: dict | None = None  # validation metrics on evaluation steps
    token_accuracy: float = 0.0  # teacher-forced accuracy on this training batch


@dataclass
class TrainResult:
    loaded: LoadedModel
    history: list[dict] = field(default_factory=list)
    stopped: str = "finished"  # "finished", "stopped by user", or the non-finite-loss message
    seconds: float = 0.0
    # Why it ended, as a stable id a user interface can word in its own language:
    # "finished", "user", "nonfinite_loss" or "nonfinite_gradient" (at step len(history) + 1).
    reason: str = "finished"


def make_training_data(cfg: TrainConfig) -> Dataset:
    """The dataset a TrainConfig trains on (the same one evaluation and the saved checkpoint use)."""
    sizes = {"train_size": cfg.train_size}
    if cfg.long_train_size:
        if cfg.task != "en-fr":
            raise ValueError("long_train_size applies to the en-fr task only")
        sizes["long_train_size"] = cfg.long_train_size
    return make_dataset(cfg.task, seed=cfg.seed, **sizes)


def model_config(cfg: TrainConfig, data: Dataset) -> ModelConfig:
    """cfg.model with the data's vocabulary sizes (tied embeddings only where source and target share one)."""
    sizes = {"src_vocab_size": len(data.src_vocab), "tgt_vocab_size": len(data.tgt_vocab)}
    if isinstance(cfg.model, TransformerConfig):
        sizes["tie_embeddings"] = cfg.model.tie_embeddings and sizes["src_vocab_size"] == sizes["tgt_vocab_size"]
    return replace(cfg.model, **sizes)


def noam_rate(step: int, d_model: int, warmup: int, factor: float = 1.0) -> float:
    """Vaswani et al. 2017 eq. 3: d_model^-0.5 · min(step^-0.5, step · warmup^-1.5)."""
    step = max(step, 1)
    return factor * d_model ** -0.5 * min(step ** -0.5, step * warmup ** -1.5)


def learning_rate(cfg: TrainConfig, step: int, d_model: int) -> float:
    if cfg.schedule == "noam":
        return noam_rate(step, d_model, cfg.warmup)
    if cfg.schedule == "warmup-decay":
        return cfg.lr * min(1.0, step / max(cfg.warmup, 1)) * max(0.0, 1 - step / (cfg.steps + 1))
    if cfg.schedule == "warmup-hold-decay":
        decay_steps = max(1.0, cfg.decay_fraction * cfg.steps)
        return cfg.lr * min(1.0, step / max(cfg.warmup, 1), max(0.0, (cfg.steps + 1 - step) / decay_steps))
    if cfg.schedule == "constant":
        return cfg.lr
    raise ValueError(f"unknown schedule {cfg.schedule!r}; choose constant, noam, warmup-decay or warmup-hold-decay")


def length_bucketed_batches(pairs, batch_size: int, rng: random.Random):
    """Endless batches of similar-length pairs (less padding than random batches)."""
    while True:
        order = list(range(len(pairs)))
        rng.shuffle(order)
        pool = batch_size * 50
        batches = []
        for start in range(0, len(order), pool):
            chunk = sorted(order[start:start + pool], key=lambda i: len(pairs[i][0]))
            batches += [chunk[i:i + batch_size] for i in range(0, len(chunk), batch_size)]
        rng.shuffle(batches)
        for batch in batches:
            yield [pairs[i] for i in batch]


def mixed_batches(pairs, batch_size: int, rng: random.Random):
    """Endless batches drawn at random: each mixes short and long pairs (more padding than length_bucketed_batches;
    every step sees the whole range of lengths)."""
    while True:
        order = list(range(len(pairs)))
        rng.shuffle(order)
        for start in range(0, len(order), batch_size):  # the last batch of a pass may be smaller
            yield [pairs[i] for i in order[start:start + batch_size]]


BATCHING = {"by-length": length_bucketed_batches, "mixed": mixed_batches}


def training_batches(cfg: TrainConfig, data: Dataset):
    """The endless stream of batches (lists of pairs) train(cfg) draws from, the same for the same cfg.seed."""
    if cfg.batching not in BATCHING:
        raise ValueError(f"unknown batching {cfg.batching!r}; choose {' or '.join(BATCHING)}")
    return BATCHING[cfg.batching](data.splits["train"], cfg.batch_size, random.Random(cfg.seed))


def mixed_precision(device: torch.device):
    """bf16 autocast on a CUDA GPU that supports it (weights, optimiser state and loss stay float32; bf16 needs
    no loss scaling); a no-op context elsewhere, so the CPU (the tested default) trains in float32."""
    if device.type == "cuda" and torch.cuda.is_bf16_supported():
        return torch.autocast(device_type="cuda", dtype=torch.bfloat16)
    return contextlib.nullcontext()


def train(cfg: TrainConfig, data: Dataset | None = None,
          on_step: Callable[[StepInfo], bool | None] | None = None, progress: bool = False,
          on_model: Callable[[torch.nn.Module], None] | None = None) -> TrainResult:
    """Train from scratch. on_step returning True stops training at that step, keeping what was learned.

    on_model receives the model once it is built (e.g. to take attention snapshots from on_step).
    """
    random.seed(cfg.seed)
    torch.manual_seed(cfg.seed)
    data = data or make_training_data(cfg)
    device = pick_device(cfg.device)
    mcfg = model_config(cfg, data)
    model = build_model(mcfg).to(device).train()
    if on_model is not None:
        on_model(model)
    optimizer = torch.optim.Adam(model.parameters(), lr=cfg.lr, betas=(0.9, 0.98), eps=1e-9)
    autocast = mixed_precision(device)
    batches = training_batches(cfg, data)
    history: list[dict] = []
    stopped, reason, start, tokens_seen, eval_seconds = "finished", "finished", time.perf_counter(), 0, 0.0
    bar = tqdm(total=cfg.steps, desc=f"{cfg.family} {cfg.task}", disable=not progress)
    for step in range(1, cfg.steps + 1):
        lr = learning_rate(cfg, step, getattr(mcfg, "d_model", getattr(mcfg, "hidden_size", 0)))
        for group in optimizer.param_groups:
            group["lr"] = lr
        src, tgt_in, tgt_out = pad_batch(next(batches), data, device)
        with autocast:
            logits, _ = model(src, tgt_in)
        logits = logits.float()  # the loss and the accuracy in float32 whatever autocast computed in
        loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)), tgt_out.reshape(-1), ignore_index=PAD_ID,
                               label_smoothing=cfg.label_smoothing)
        if not torch.isfinite(loss):
            stopped = f"training stopped at step {step}: the loss became {loss.item()} (non-finite); " \
                      "the weights from the last good step are kept"
            reason = "nonfinite_loss"
            break
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), cfg.clip)
        if not torch.isfinite(grad_norm):
            stopped = f"training stopped at step {step}: the gradient became non-finite; " \
                      "the weights from the last good step are kept"
            reason = "nonfinite_gradient"
            break
        optimizer.step()
        target_mask = tgt_out != PAD_ID
        train_accuracy = float(((logits.argmax(-1) == tgt_out) & target_mask).sum() / target_mask.sum().clamp(min=1))
        tokens_seen += int((tgt_out != PAD_ID).sum()) + int((src != PAD_ID).sum())
        elapsed = time.perf_counter() - start - eval_seconds  # training time, evaluation excluded
        record = {"step": step, "loss": loss.item(), "lr": lr, "elapsed_s": elapsed, "token_accuracy": train_accuracy}
        metrics = None
        if cfg.eval_every and (step % cfg.eval_every == 0 or step == cfg.steps):
            eval_start = time.perf_counter()
            metrics = evaluate(model, data, "test", limit=cfg.eval_size)
            eval_seconds += time.perf_counter() - eval_start
            record.update({f"val_{k}": v for k, v in metrics.items() if k != "sentences"})
        history.append(record)
        bar.update(1)
        bar.set_postfix(loss=f"{loss.item():.3f}", **({"em": f"{metrics['exact_match']:.3f}"} if metrics else {}))
        if on_step is not None and on_step(StepInfo(step, cfg.steps, loss.item(), lr, elapsed,
                                                    tokens_seen / max(elapsed, 1e-9), metrics, train_accuracy)):
            stopped, reason = "stopped by user", "user"
            break
    bar.close()
    model.eval()
    loaded = LoadedModel(model, mcfg, data.src_vocab, data.tgt_vocab, cfg.task,
                         meta={"train_config": cfg.to_dict(), "steps_done": len(history)})
    return TrainResult(loaded, history, stopped, time.perf_counter() - start, reason)


def command_line_fields() -> dict:
    """Every flag of `python -m model.train` with its default: --model FAMILY, the training fields, and the
    architecture fields of both families (as flat as the commands recorded in checkpoints)."""
    training = TrainConfig().to_dict()
    training["model"] = "transformer"
    architecture = {**asdict(default_model("bahdanau")), **asdict(default_model("transformer"))}
    for name in (*DATA_FIELDS, "attention", "max_len"):
        architecture.pop(name)
    return {**training, **architecture}


def parse_command(argv: list[str]) -> tuple[TrainConfig, str | None]:
    """`python -m model.train` arguments -> (the TrainConfig they stand for, --out or None)."""
    parser = argparse.ArgumentParser(description="Train an Attention Lab model on a generated task.")
    for name, value in command_line_fields().items():
        flag = "--" + name.replace("_", "-")
        if isinstance(value, bool):
            parser.add_argument(flag, action=argparse.BooleanOptionalAction, default=None)
        else:
            parser.add_argument(flag, type=type(value), default=None)
    parser.add_argument("--out", help="checkpoint path stem, e.g. assets/checkpoints/transformer_en-fr")
    args = vars(parser.parse_args(argv))
    out = args.pop("out")
    # Only the flags given: the rest keep default_model(family)'s values (a seq2seq family has no d_ff, ...).
    return TrainConfig.for_model(**{k: v for k, v in args.items() if v is not None}), out


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    cfg, out = parse_command(argv)
    result = train(cfg, progress=True)
    print(result.stopped, f"({result.seconds:.1f} s)")
    if result.stopped.startswith("training stopped"):
        raise SystemExit("not saving: " + result.stopped)
    data = make_training_data(cfg)
    metrics = final_metrics(result.loaded, data)
    metrics["train_seconds"] = round(result.seconds, 1)
    print({split: m for split, m in metrics.items()})
    if out:
        save_checkpoint(out, result.loaded.model, result.loaded.config, data.src_vocab, data.tgt_vocab, cfg.task,
                        metrics=metrics, meta={**result.loaded.meta, "seed": cfg.seed,
                                               "command": "python -m model.train " + " ".join(argv)})
        print("saved", out)


if __name__ == "__main__":
    main()

"""How long a training run will take on this machine: a short probe of the run's own first steps, then the estimate
(the train page shows it before Start)."""
from __future__ import annotations

import itertools
import time
from collections.abc import Callable
from dataclasses import dataclass, replace

from model.data import Dataset
from model.evaluation import evaluate
from model.train import StepInfo, TrainConfig, make_training_data, train, training_batches


@dataclass(frozen=True)
class TrainingSpeed:
    """Seconds this machine took, measured by measure_training_speed(), for one configuration's parts."""

    data_s: float  # building the generated dataset once
    step_s: float  # one training step (forward, backward, clip, Adam), mean of the timed probe steps
    eval_s: float  # one validation pass over eval_size sentences (greedy decoding + teacher-forced accuracy)
    # The run's mean padded batch length over the probe's: a step's work grows with the length of its batch, and the
    # probe's few batches (the run's first, same seed) are a sample, e.g. 19 tokens against the run's 26 on en-fr.
    length_factor: float = 1.0

    @property
    def run_step_s(self) -> float:
        """The expected mean step of the whole run: the probe's, scaled to the run's mean batch length."""
        return self.step_s * self.length_factor

    def estimate_seconds(self, cfg: TrainConfig) -> float:
        """Wall seconds for a whole run of cfg: data + steps × step + evaluations × evaluation (as train() runs)."""
        evaluations = len(evaluation_steps(cfg))
        return self.data_s + cfg.steps * self.run_step_s + evaluations * self.eval_s


class SpeedProbeError(RuntimeError):
    """measure_training_speed() timed no training step: the probe's training stopped at its first step (reason:
    "nonfinite_loss" or "nonfinite_gradient", as TrainResult.reason), so there is no speed to estimate from."""

    def __init__(self, reason: str, step: int, stopped: str):
        super().__init__(f"the speed probe timed no training step: {stopped}")
        self.reason, self.step = reason, step


def evaluation_steps(cfg: TrainConfig) -> list[int]:
    """The steps at which train() evaluates (every eval_every steps, and the last step)."""
    if not cfg.eval_every:
        return []
    return [step for step in range(1, cfg.steps + 1) if step % cfg.eval_every == 0 or step == cfg.steps]


def padded_batch_lengths(cfg: TrainConfig, data: Dataset, steps: int) -> list[int]:
    """Padded source + target length (with <eos>/<bos>) of each of the first `steps` batches train(cfg) draws."""
    batches = training_batches(cfg, data)
    return [max(len(src) for src, _ in batch) + max(len(tgt) for _, tgt in batch) + 2
            for batch in itertools.islice(batches, steps)]


def measure_training_speed(cfg: TrainConfig, probe_steps: int = 16, data: Dataset | None = None,
                           clock: Callable[[], float] = time.perf_counter) -> TrainingSpeed:
    """Time cfg's real work on this machine, in this thread's torch settings: build its data, train probe_steps
    steps (the first two are warm-up, not counted) and evaluate once on eval_size sentences of the untrained model
    (which decodes to the length limit, as long as a trained model's longest sentence plus a few steps).
    The probe trains on the run's own first batches; length_factor scales its mean step to the run's mean batch
    length (padded_batch_lengths). A few seconds for the page's default configuration; callers cache the result
    per process. clock: wall time (tests pass a simulated one). Raises SpeedProbeError when the probe's training
    stops at its first step (a non-finite loss or gradient), before any step could be timed."""
    start = clock()
    data = data or make_training_data(cfg)
    data_s = clock() - start
    step_times: list[float] = []
    last = [clock()]

    def time_step(info: StepInfo) -> None:
        now = clock()
        step_times.append(now - last[0])
        last[0] = now

    warmup = 2
    probe = replace(cfg, steps=probe_steps + warmup, eval_every=0)
    result = train(probe, data=data, on_step=time_step)
    if not step_times:  # stopped at step 1 (on_step runs after a finished step): nothing was timed
        raise SpeedProbeError(result.reason, len(result.history) + 1, result.stopped)
    timed = step_times[warmup:] or step_times  # (a probe stopped early by a non-finite loss still gives a time)
    step_s = sum(timed) / len(timed)  # the mean, as a run's total is a sum (not the median)
    lengths = padded_batch_lengths(cfg, data, max(cfg.steps, len(step_times)))
    timed_lengths = lengths[warmup:len(step_times)] if len(step_times) > warmup else lengths[:len(step_times)]
    length_factor = (sum(lengths[:cfg.steps]) / cfg.steps) / (sum(timed_lengths) / len(timed_lengths))
    start = clock()
    evaluate(result.loaded.model, data, "test", limit=cfg.eval_size)
    eval_s = clock() - start
    return TrainingSpeed(data_s, step_s, eval_s, length_factor)

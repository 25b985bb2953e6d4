"""The train page's time estimate comes from a speed measured on this machine, and the schedule has its shape."""
from dataclasses import replace

import re
import threading

import pytest

from model.data import make_algorithmic
from model.train import TrainConfig, learning_rate
from model.training_speed import SpeedProbeError, TrainingSpeed, evaluation_steps, measure_training_speed
from model.transformer import Transformer
from runtime.training_jobs import probe_speed
from tests.app_links import open_page

TINY = dict(task="copy", batch_size=8, num_layers=1, d_model=16, num_heads=2, d_ff=32, eval_size=8, eval_every=10)


@pytest.fixture(scope="module")
def tiny_copy():
    return make_algorithmic("copy", seed=0, train_size=64, test_size=16, long_size=8, max_len=6)


def test_the_probe_measures_the_step_it_times(tiny_copy, monkeypatch):
    """On a simulated clock that only the model's forward pass moves (40 ms a call), the probe must report exactly
    one forward pass per training step: the number comes from timing real steps, not from a constant. (A wall
    clock is too noisy for a test on a shared machine; bench/train_page_defaults.py checks the real estimate.)"""
    now = [0.0]
    original = Transformer.forward

    def timed_forward(self, *args, **kwargs):
        now[0] += 0.04
        return original(self, *args, **kwargs)

    monkeypatch.setattr(Transformer, "forward", timed_forward)
    speed = measure_training_speed(TrainConfig.for_model(**TINY), probe_steps=4, data=tiny_copy, clock=lambda: now[0])
    assert speed.step_s == pytest.approx(0.04)
    assert speed.data_s == 0.0  # data was given: nothing built
    assert speed.eval_s >= 0.04  # evaluation runs the model too (teacher-forced pass; greedy decoding steps)
    # and on the real clock the probe returns positive, finite times
    monkeypatch.setattr(Transformer, "forward", original)
    real = measure_training_speed(TrainConfig.for_model(**TINY), probe_steps=2, data=tiny_copy)
    assert 0 < real.step_s < 60 and 0 < real.eval_s < 60


def _nan_from_call(monkeypatch, first_bad_call: int) -> None:
    """Make the Transformer's forward pass return NaN logits from its first_bad_call-th call on."""
    original, calls = Transformer.forward, [0]

    def forward(self, *args, **kwargs):
        calls[0] += 1
        logits, attention = original(self, *args, **kwargs)
        return (logits * float("nan") if calls[0] >= first_bad_call else logits), attention

    monkeypatch.setattr(Transformer, "forward", forward)


def test_a_probe_whose_first_step_has_a_non_finite_loss_says_so_instead_of_dividing_by_zero(tiny_copy, monkeypatch):
    _nan_from_call(monkeypatch, 1)
    config = TrainConfig.for_model(**TINY)
    with pytest.raises(SpeedProbeError) as raised:
        measure_training_speed(config, probe_steps=4, data=tiny_copy)
    assert (raised.value.reason, raised.value.step) == ("nonfinite_loss", 1)
    assert "step 1" in str(raised.value) and "non-finite" in str(raised.value)
    with pytest.raises(SpeedProbeError):  # the page's probe runs in a thread: the error reaches its caller
        probe_speed(replace(config, train_size=64))


def test_a_probe_stopped_later_by_a_non_finite_loss_still_reports_the_steps_it_timed(tiny_copy, monkeypatch):
    _nan_from_call(monkeypatch, 4)  # steps 1-3 train, step 4's loss is NaN
    speed = measure_training_speed(TrainConfig.for_model(**TINY), probe_steps=4, data=tiny_copy)
    assert 0 < speed.step_s < 60 and 0 < speed.length_factor < 10


def test_the_estimate_scales_with_steps_and_evaluations():
    speed = TrainingSpeed(data_s=2.0, step_s=0.1, eval_s=1.5)
    cfg = TrainConfig(steps=600, eval_every=100)
    assert evaluation_steps(cfg) == [100, 200, 300, 400, 500, 600]
    assert speed.estimate_seconds(cfg) == pytest.approx(2.0 + 600 * 0.1 + 6 * 1.5)
    assert evaluation_steps(TrainConfig(steps=250, eval_every=100)) == [100, 200, 250]  # and the last step
    assert TrainingSpeed(2.0, 0.2, 1.5).estimate_seconds(cfg) == pytest.approx(2.0 + 120 + 9)


def test_the_page_shows_the_estimate_from_the_measured_speed(monkeypatch):
    import ui.train.view as train_view

    probed, threads = [], []

    def fake_probe(config):
        probed.append(config)
        threads.append(threading.current_thread().name)
        return TrainingSpeed(data_s=1.0, step_s=0.25, eval_s=2.0)

    monkeypatch.setattr(train_view, "probe_speed", fake_probe)
    train_view.SPEEDS.clear()
    try:
        at = open_page("train")
        text = " ".join(c.value for c in at.caption)
        # the page's defaults: 1000 steps, evaluation every 166 steps and at the end -> 1 + 1000 × 0.25 + 7 × 2 = 265 s
        assert "4 min 25 s" in text and "250 ms" in text, text
        assert len(probed) == 1 and probed[0].family == "transformer" and probed[0].model.d_model == 128
        # in one of the analysis queue's threads, the browser's turn (issue 53), not the page's; which one depends on
        # how many threads earlier tests in this process started (up to STARTED_PER_WORKER per computing slot)
        assert len(threads) == 1 and re.fullmatch(r"analysis-\d+", threads[0]), threads
        at.run()
        assert len(probed) == 1  # measured once per process, not on every rerun
    finally:
        train_view.SPEEDS.clear()


@pytest.mark.parametrize("language", ["en", "ko"])
def test_the_page_says_why_there_is_no_estimate_when_the_probe_timed_no_step(monkeypatch, language):
    import ui.train.view as train_view
    from i18n import translate

    def failing_probe(config):
        raise SpeedProbeError("nonfinite_loss", 1, "training stopped at step 1: the loss became nan (non-finite)")

    monkeypatch.setattr(train_view, "probe_speed", failing_probe)
    train_view.SPEEDS.clear()
    try:
        at = open_page("train", {"lang": language})  # open_page also asserts no exception reached the page
        warnings = " ".join(w.value for w in at.warning)
        assert translate(language, "train.job_nonfinite_loss", step=1) in warnings, warnings
        assert translate(language, "training_probe.no_estimate", why="").split(".")[0] in warnings
        assert not any("ms" in c.value for c in at.caption)  # no made-up estimate beside it
        assert translate(language, "train.start") in [b.label for b in at.button]  # the form is still there
    finally:
        train_view.SPEEDS.clear()


@pytest.mark.parametrize("schedule", ["warmup-decay", "warmup-hold-decay"])
def test_schedules_warm_up_peak_and_end_near_zero(schedule):
    cfg = TrainConfig(steps=400, warmup=50, lr=3e-3, schedule=schedule)
    rates = [learning_rate(cfg, step, 128) for step in range(1, 401)]
    decay = (lambda step: 1 - step / 401) if schedule == "warmup-decay" else (lambda step: 1)  # from step 1 on
    assert rates[0] == pytest.approx(3e-3 / 50 * decay(1))  # linear warm-up from lr / warmup
    peak = 3e-3 * decay(50)
    assert max(rates) == pytest.approx(peak) and rates.index(max(rates)) == 49  # peak at the end of warm-up
    assert all(a <= b for a, b in zip(rates[:50], rates[1:50]))  # rising during warm-up
    assert all(a >= b for a, b in zip(rates[49:], rates[50:]))  # never rising after it
    assert rates[-1] < 0.01 * 3e-3  # (almost) 0 at the last step
    if schedule == "warmup-hold-decay":  # holds the peak until the last decay_fraction (40%) of the steps
        assert rates[239] == pytest.approx(3e-3) and rates[300] < 3e-3
        assert rates[300] == pytest.approx(3e-3 * (401 - 301) / 160)


def test_mixed_precision_is_bf16_autocast_on_a_cuda_gpu_and_nothing_on_the_cpu(monkeypatch):
    """The GPU path (no GPU here): training and bench/train_speed.py run the forward pass under this context."""
    import contextlib

    import torch

    from model.train import mixed_precision

    assert isinstance(mixed_precision(torch.device("cpu")), contextlib.nullcontext)
    monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda *args, **kwargs: True)
    context = mixed_precision(torch.device("cuda"))
    assert isinstance(context, torch.autocast) and context.device == "cuda" and context.fast_dtype == torch.bfloat16
    monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda *args, **kwargs: False)  # e.g. a V100: float32
    assert isinstance(mixed_precision(torch.device("cuda")), contextlib.nullcontext)

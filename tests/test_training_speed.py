"""The train page's time estimate comes from a speed measured on this machine, and the schedule has its shape."""
import time

import pytest
import torch

from model.data import make_algorithmic
from model.train import TrainConfig, TrainingSpeed, evaluation_steps, learning_rate, measure_training_speed
from model.transformer import Transformer
from tests.test_app_pages import open_page

TINY = dict(task="copy", batch_size=8, num_layers=1, d_model=16, num_heads=2, d_ff=32, eval_size=8, eval_every=10)


@pytest.fixture(scope="module")
def tiny_copy():
    return make_algorithmic("copy", seed=0, train_size=64, test_size=16, long_size=8, max_len=6)


def test_the_probe_measures_the_step_it_times(tiny_copy, monkeypatch):
    """Make every forward pass 40 ms slower: the measured step time must grow by about that, so the number
    comes from timing real steps on this machine, not from a constant."""
    fast = measure_training_speed(TrainConfig(**TINY), probe_steps=4, data=tiny_copy)
    original = Transformer.forward

    def slow_forward(self, *args, **kwargs):
        time.sleep(0.04)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(Transformer, "forward", slow_forward)
    slow = measure_training_speed(TrainConfig(**TINY), probe_steps=4, data=tiny_copy)
    assert slow.step_s >= fast.step_s + 0.035
    assert slow.eval_s > fast.eval_s  # evaluation runs the (slowed) model too
    assert fast.step_s > 0 and fast.eval_s > 0 and fast.data_s == pytest.approx(0, abs=1e-3)  # data was given


def test_the_estimate_scales_with_steps_and_evaluations():
    speed = TrainingSpeed(data_s=2.0, step_s=0.1, eval_s=1.5)
    cfg = TrainConfig(steps=600, eval_every=100)
    assert evaluation_steps(cfg) == [100, 200, 300, 400, 500, 600]
    assert speed.estimate_seconds(cfg) == pytest.approx(2.0 + 600 * 0.1 + 6 * 1.5)
    assert evaluation_steps(TrainConfig(steps=250, eval_every=100)) == [100, 200, 250]  # and the last step
    assert TrainingSpeed(2.0, 0.2, 1.5).estimate_seconds(cfg) == pytest.approx(2.0 + 120 + 9)


def test_the_page_shows_the_estimate_from_the_measured_speed(monkeypatch):
    import ui.train_view as train_view

    probed = []

    def fake_probe(config):
        probed.append(config)
        return TrainingSpeed(data_s=1.0, step_s=0.25, eval_s=2.0)

    monkeypatch.setattr(train_view, "probe_speed", fake_probe)
    train_view.measured_speed.clear()
    try:
        at = open_page("train")
        text = " ".join(c.value for c in at.caption)
        # the page's defaults: 600 steps, evaluation every 100 steps -> 1 + 600 × 0.25 + 6 × 2 = 163 s
        assert "2 min 43 s" in text and "250 ms" in text, text
        assert len(probed) == 1 and probed[0].model == "transformer" and probed[0].d_model == 128
        at.run()
        assert len(probed) == 1  # measured once per process, not on every rerun
    finally:
        train_view.measured_speed.clear()

"""The train page's estimate scales the probe's steps to the run's own batches (model/training_speed.py::TrainingSpeed)."""
import pytest

from model.data import make_algorithmic
from model.train import TrainConfig, train
from model.training_speed import measure_training_speed
from model.transformer import Transformer


@pytest.mark.parametrize("batching", ["by-length", "mixed"])
def test_the_estimate_predicts_a_run_whose_step_cost_grows_with_batch_length(monkeypatch, batching):
    """On a simulated clock where a forward pass costs 1 ms per padded position (source + target), the probe's
    few steps see the run's first batches only; the estimate must still give the whole run's training time."""
    data = make_algorithmic("copy", seed=0, train_size=256, test_size=16, long_size=8, max_len=12)
    cfg = TrainConfig.for_model(task="copy", steps=60, batch_size=8, eval_every=0, num_layers=1, d_model=16,
                                num_heads=2, d_ff=32, batching=batching)
    now = [0.0]
    original = Transformer.forward

    def forward_by_length(self, src, tgt_in, *args, **kwargs):
        now[0] += 0.001 * (src.size(1) + tgt_in.size(1))
        return original(self, src, tgt_in, *args, **kwargs)

    monkeypatch.setattr(Transformer, "forward", forward_by_length)
    speed = measure_training_speed(cfg, probe_steps=4, data=data, clock=lambda: now[0])
    start = now[0]
    train(cfg, data=data)
    actual = now[0] - start
    assert speed.estimate_seconds(cfg) == pytest.approx(actual, rel=1e-6)  # data_s 0 (given), no evaluations
    if batching == "by-length":  # the probe's first few length buckets are not the run's average
        assert speed.length_factor != pytest.approx(1.0, abs=0.02)
        assert cfg.steps * speed.step_s != pytest.approx(actual, rel=0.02)  # the unscaled probe would miss

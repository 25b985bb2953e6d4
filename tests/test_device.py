"""model/device.py: where models run, and what a CUDA device turns off (no GPU needed: the flag is process state)."""
import torch

from model.device import pick_device


def test_a_cuda_device_runs_attention_without_cudnns_per_shape_plans():
    before = torch.backends.cuda.cudnn_sdp_enabled()
    try:
        torch.backends.cuda.enable_cudnn_sdp(True)
        assert pick_device("cpu").type == "cpu" and torch.backends.cuda.cudnn_sdp_enabled()
        assert pick_device("cuda").type == "cuda" and not torch.backends.cuda.cudnn_sdp_enabled()
    finally:
        torch.backends.cuda.enable_cudnn_sdp(before)


def test_auto_picks_the_cpu_on_a_machine_without_cuda_or_mps(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr(torch.backends.mps, "is_available", lambda: False)
    assert pick_device("auto") == torch.device("cpu")

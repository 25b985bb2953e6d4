"""Where models run: CUDA when present, then Apple's MPS, else the CPU."""
from __future__ import annotations

import torch


def pick_device(name: str = "auto") -> torch.device:
    device = torch.device(name) if name != "auto" else _best_available()
    if device.type == "cuda":
        # cuDNN's fused attention builds an execution plan for each new shape, and the lab's shapes change with every
        # batch (by-length batching) and every text: the flash and memory-efficient kernels need no plan, so they run
        # instead (scripts/gpu_check.py; the measured cost is in bench/README.md). Process-wide and never undone, so
        # no thread sees it half set.
        torch.backends.cuda.enable_cudnn_sdp(False)
    return device


def _best_available() -> torch.device:
    if torch.cuda.is_available():
        return torch.device("cuda")
    if getattr(torch.backends, "mps", None) is not None and torch.backends.mps.is_available():
        return torch.device("mps")
    return torch.device("cpu")

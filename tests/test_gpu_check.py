"""`make gpu-check` (scripts/gpu_check.py) on a machine without CUDA: it says so and succeeds, so the command is safe
to run anywhere. Its CUDA path compares the CPU with a GPU and runs only where one is lent."""
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_without_cuda_it_says_so_and_exits_0():
    env = {**os.environ, "CUDA_VISIBLE_DEVICES": ""}  # no device visible, even on a machine with one
    result = subprocess.run([sys.executable, str(ROOT / "scripts" / "gpu_check.py")], capture_output=True, text=True,
                            env=env, cwd=ROOT, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "no CUDA device" in result.stdout and "nothing to check" in result.stdout
    assert "Traceback" not in result.stderr


def test_the_recipe_is_the_shipped_checkpoints_command_without_its_output():
    sys.path.insert(0, str(ROOT / "scripts"))
    from gpu_check import shipped_recipe

    cfg, argv = shipped_recipe(400)
    assert "--out" not in argv and argv[:2] == ["--model", "transformer"]
    assert (cfg.task, cfg.steps, cfg.lr, cfg.model.dropout, cfg.long_train_size) == ("en-fr", 4000, 1e-3, 0.1, 20000)

"""A student who closes the tab mid-training: the job stops, its model is freed and the server's RSS falls back."""
import gc
import json
import platform
import subprocess
import sys
import textwrap
import time
import weakref
from pathlib import Path

import pytest

import model.memory
from model.memory import return_freed_memory
from model.train import TrainConfig
from runtime.training_jobs import SESSION_CHECK_EVERY, start_job, wait

ROOT = Path(__file__).resolve().parents[1]
# What a closed session may leave behind, as a share of what its training took above `before`: torch/glibc caches and
# fragmentation. Measured: 22-24 MiB of ~225 alone, 49.7 beside the suite's other worker, 80.6 of 226 once in CI on
# 2 busy cores (a fixed 64 MiB margin failed there). A session kept alive leaves about all of it (~220 of 225).
LEFT_BEHIND_SHARE = 0.5


def _rss_mib() -> float:
    status = Path("/proc/self/status").read_text()
    return int(status.split("VmRSS:")[1].split()[0]) / 1024


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="malloc_trim is glibc's")
def test_return_freed_memory_gives_freed_heap_pages_back():
    blocks = [bytes(range(256)) * 16 for _ in range(20_000)]  # ~78 MiB of 4 KiB blocks from glibc's heap
    pinned = bytes(range(256)) * 16  # allocated after them: the heap's top stays in use, free() cannot trim it
    del blocks
    before = _rss_mib()
    assert return_freed_memory() is True
    assert before - _rss_mib() > 40, "malloc_trim released less than half of the freed blocks"
    del pinned


def test_return_freed_memory_is_a_safe_no_op_without_malloc_trim(monkeypatch):
    monkeypatch.setattr(model.memory, "_malloc_trim", lambda: None)  # musl, macOS, Windows
    assert return_freed_memory() is False


def test_a_closed_sessions_training_stops_and_frees_its_model():
    alive = {"value": True}
    config = TrainConfig.for_model(task="reverse", steps=3000, eval_every=0, d_model=32, num_heads=2, d_ff=64, train_size=2000)
    job = start_job(config, "1 2 3", session_alive=lambda: alive["value"])
    while job.steps_done < 3 and job.active:
        time.sleep(0.02)
    closed_at = job.steps_done
    alive["value"] = False  # the tab is closed: Runtime.is_active_session(session_id) turns False
    wait(job, timeout=60)
    assert job.finished.wait(10)
    assert job.state == "stopped" and job.session_closed
    assert job.steps_done <= closed_at + SESSION_CHECK_EVERY + 1
    model_ref, job_ref = weakref.ref(job.result.loaded.model), weakref.ref(job)
    del job  # the session's state goes with the session: nothing else may keep the job or its model alive
    gc.collect()
    assert job_ref() is None
    assert model_ref() is None, [type(r).__name__ for r in gc.get_referrers(model_ref())]


MEASURE = textwrap.dedent("""
    import gc, json, sys, time, weakref
    from pathlib import Path
    sys.path.insert(0, {root!r})
    from model.memory import return_freed_memory
    from model.train import TrainConfig
    from runtime.training_jobs import start_job, wait

    def rss():
        status = Path("/proc/self/status").read_text()
        return int(status.split("VmRSS:")[1].split()[0]) / 1024

    def closed_session(config, steps):
        alive = [True]
        job = start_job(config, "i am a student", session_alive=lambda: alive[0])
        peak = rss()
        while job.steps_done < steps and job.active:
            time.sleep(0.02)
            peak = max(peak, rss())
        alive[0] = False
        wait(job, 120)
        job.finished.wait(10)
        model = weakref.ref(job.result.loaded.model)
        del job
        gc.collect()
        return peak, model() is None

    tiny = TrainConfig.for_model(task="en-fr", steps=3000, eval_every=0, d_model=32, num_heads=2, d_ff=64, train_size=2000)
    closed_session(tiny, 3)  # torch's one-time allocations (thread pools, kernels) happen here
    gc.collect()
    return_freed_memory()
    before = rss()
    big = TrainConfig.for_model(task="en-fr", steps=3000, eval_every=0, d_model=256, num_heads=8, d_ff=1024, batch_size=128)
    peak, freed = closed_session(big, 3)
    time.sleep(0.5)
    print(json.dumps({{"before": before, "peak": peak, "after": rss(), "model_freed": freed}}))
""")


@pytest.mark.slow
def test_rss_falls_back_after_a_closed_session_mid_training():
    """In a fresh process, as in the server: RSS before, during and after a closed session's training."""
    out = subprocess.run([sys.executable, "-c", MEASURE.format(root=str(ROOT))], capture_output=True, text=True,
                         timeout=300, cwd=ROOT)
    assert out.returncode == 0, out.stderr[-2000:]
    figures = json.loads(out.stdout.strip().splitlines()[-1])
    assert figures["model_freed"]
    assert figures["peak"] - figures["before"] > 100, figures  # the training really allocated something
    assert figures["after"] - figures["before"] <= LEFT_BEHIND_SHARE * (figures["peak"] - figures["before"]), figures

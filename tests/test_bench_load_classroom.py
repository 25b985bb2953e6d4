"""bench/load_classroom.py through serve.py: the replicas' peak RSS is kept per replica (issue 24 asks for it at 300
students), and a replica restarted under the same name keeps the larger of its peaks."""
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[1] / "bench" / "load_classroom.py"


def load_bench():
    spec = importlib.util.spec_from_file_location("load_classroom", BENCH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_peak_rss_is_kept_per_replica(tmp_path):
    bench = load_bench()
    # A second process that holds ~64 MiB more than a bare interpreter: the two "replicas" differ visibly.
    big = subprocess.Popen([sys.executable, "-c", "import sys, time; b = bytearray(64 << 20); b[::4096] = b'x' * "
                            "len(b[::4096]); sys.stdout.write('ready\\n'); sys.stdout.flush(); time.sleep(60)"],
                           stdout=subprocess.PIPE, text=True)
    try:
        assert big.stdout.readline() == "ready\n"
        state = tmp_path / "serve.json"
        state.write_text(json.dumps({"replicas": {"r1": {"pid": os.getpid()}, "r2": {"pid": big.pid}}}))
        sampler = bench.ReplicaSampler(state)
        rss, threads, cpu = sampler.status()
        peaks = dict(sampler.peak_rss_by_replica)
        assert set(peaks) == {"r1", "r2"} and abs(sum(peaks.values()) - rss) < 1e-6
        assert peaks["r2"] >= 64  # MiB: the bytearray is resident
        # r2 restarted as a small process (a few MiB): its peak stays the larger one.
        small = subprocess.Popen(["sleep", "60"])
        try:
            state.write_text(json.dumps({"replicas": {"r1": {"pid": os.getpid()}, "r2": {"pid": small.pid}}}))
            sampler.status()
            assert sampler.peak_rss_by_replica["r2"] == peaks["r2"]
            assert sampler.peak_rss_by_replica["r1"] >= peaks["r1"]
        finally:
            small.kill()
            small.wait()
    finally:
        big.kill()
        big.wait()

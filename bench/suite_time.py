"""The suite's time as a newcomer and CI meet it: the README's test command (`make test`) in a fresh clone of a commit.

    python bench/suite_time.py [--commit HEAD] [--baseline COMMIT] [--venv DIR] [--pytest-args ARGS] [--keep]

Each commit is cloned from this repository into a folder of its own under the system's temp folder, and `make test`
runs there (the clone's own .venv from the lock, the apt packages, ruff, then pytest on two workers), one commit after
the other (the baseline first). The run's pytest writes every test phase with its tier and worker
(tests/suite_times.py, `--suite-times`); into a commit from before that plugin, this checkout's copy is loaded with
`-p suite_times`, so both runs are measured the same way. Printed: the wall time of `make test`, pytest's own wall
time, the tiers, the slowest files and each worker's idle tail, and the ratios of the two runs.

--venv DIR links an existing environment into each clone instead of making one, when its stamp matches that commit's
locks (scripts/venv.sh would remake it otherwise, as CI does); the wall time then leaves the install out, and the
table says so. --pytest-args adds pytest arguments (a file, -k ...): a quick check of this script, not a measure.
"""
from __future__ import annotations

import argparse
import hashlib
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.suite_times import Record, read_records, summary  # noqa: E402

PLUGIN = ROOT / "tests" / "suite_times.py"


@dataclass
class Run:
    commit: str
    status: int
    wall: float  # make test, from start to exit
    records: list[Record]
    start: float  # pytest's session, as the plugin saw it
    end: float
    venv_linked: bool
    load: tuple[float, float]  # 1-minute load average before and after


def git(*args: str, cwd: Path = ROOT) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout.strip()


def locks_digest(folder: Path) -> str:
    return hashlib.sha256((folder / "requirements.lock").read_bytes()
                          + (folder / "requirements-nodeps.lock").read_bytes()).hexdigest()


def measure(commit: str, folder: Path, venv: Path | None, pytest_args: str) -> Run:
    clone = folder / "clone"
    subprocess.run(["git", "clone", "--quiet", "--no-checkout", str(ROOT), str(clone)], check=True)
    git("checkout", "--quiet", commit, cwd=clone)
    linked = False
    if venv is not None:
        stamp = venv / "requirements.lock.sha256"
        if stamp.exists() and stamp.read_text().strip() == locks_digest(clone):
            (clone / ".venv").symlink_to(venv.resolve())
            linked = True
        else:
            print(f"{commit[:10]}: {venv} was made from other locks; the clone makes its own", flush=True)
    times = folder / "suite-times.json"
    args = f"--suite-times={times} {pytest_args}".strip()
    env = dict(os.environ)
    if not (clone / "tests" / "suite_times.py").exists():  # a commit from before the plugin: this checkout's copy
        plugin = folder / "plugin"
        plugin.mkdir()
        shutil.copy(PLUGIN, plugin / "suite_times.py")
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(plugin), env.get("PYTHONPATH")]))
        args = f"-p suite_times {args}"
    load_before = os.getloadavg()[0]
    print(f"{commit[:10]}: make test PYTEST_ARGS={shlex.quote(args)} in {clone}", flush=True)
    started = time.monotonic()
    status = subprocess.run(["make", "test", f"PYTEST_ARGS={args}"], cwd=clone, env=env).returncode
    wall = time.monotonic() - started
    records, start, end = read_records(times) if times.exists() else ([], 0.0, 0.0)
    return Run(commit, status, wall, records, start, end, linked, (load_before, os.getloadavg()[0]))


def tier_seconds(run: Run) -> dict[str, float]:
    seconds: dict[str, float] = {}
    for record in run.records:
        seconds[record.tier] = seconds.get(record.tier, 0.0) + record.stop - record.start
    return seconds


def idle_tails(run: Run) -> dict[str, float]:
    last: dict[str, float] = {}
    for record in run.records:
        last[record.worker] = max(last.get(record.worker, record.stop), record.stop)
    return {worker: max(0.0, run.end - stop) for worker, stop in sorted(last.items())}


def report(runs: list[Run]) -> None:
    for run in runs:
        print(f"\n## {run.commit[:10]}: make test exited {run.status} after {run.wall:.0f} s wall"
              f"{' (its .venv linked, not made)' if run.venv_linked else ''}; load {run.load[0]:.1f} -> "
              f"{run.load[1]:.1f}")
        print("\n".join(summary(run.records, run.start, run.end)) if run.records else
              "pytest wrote no times (it did not reach its summary)")
    if len(runs) != 2 or not all(run.records for run in runs):
        return
    baseline, candidate = runs

    def row(name: str, before: float, after: float) -> None:
        ratio = f"{after / before:.2f}x" if before else "-"
        print(f"| {name} | {before:.0f} s | {after:.0f} s | {ratio} |")

    print(f"\n| measure | baseline {baseline.commit[:10]} | {candidate.commit[:10]} | ratio |\n|---|---|---|---|")
    row("make test, wall", baseline.wall, candidate.wall)
    row("pytest, wall", baseline.end - baseline.start, candidate.end - candidate.start)
    before, after = tier_seconds(baseline), tier_seconds(candidate)
    for tier in sorted(set(before) | set(after)):
        row(f"{tier} (test seconds)", before.get(tier, 0.0), after.get(tier, 0.0))
    before, after = idle_tails(baseline), idle_tails(candidate)
    for worker in sorted(set(before) | set(after)):
        row(f"{worker}'s idle tail", before.get(worker, 0.0), after.get(worker, 0.0))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--commit", default="HEAD", help="the commit to measure (default HEAD)")
    parser.add_argument("--baseline", help="a commit measured the same way, first")
    parser.add_argument("--venv", type=Path, help="link this .venv into each clone when its lock stamp matches")
    parser.add_argument("--pytest-args", default="", help="more pytest arguments (a quick check, not a measure)")
    parser.add_argument("--keep", action="store_true", help="keep the clones (printed) instead of deleting them")
    args = parser.parse_args(argv)
    commits = [git("rev-parse", f"{name}^{{commit}}") for name in filter(None, [args.baseline, args.commit])]
    print(f"# {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {os.cpu_count()} cores, load "
          f"{os.getloadavg()[0]:.1f}; commits {', '.join(commit[:10] for commit in commits)}", flush=True)
    runs = []
    for commit in commits:
        folder = Path(tempfile.mkdtemp(prefix=f"suite-time-{commit[:10]}-"))
        try:
            runs.append(measure(commit, folder, args.venv, args.pytest_args))
        finally:
            if args.keep:
                print(f"{commit[:10]}: kept in {folder}")
            else:
                shutil.rmtree(folder, ignore_errors=True)
    report(runs)
    return max(run.status for run in runs)


if __name__ == "__main__":
    sys.exit(main())

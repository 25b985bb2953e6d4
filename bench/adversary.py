"""The adversarial benches: what one student can cost or do, each replayed at a size that once hurt a replica.

    python bench/adversary.py                 # every scenario, one after the other
    python bench/adversary.py memory seats    # only those
    python bench/adversary.py --list

Each scenario is a script of its own, `bench/adversary_<name>.py`, that can also run alone with its own options
(`python bench/adversary_memory.py --help`); it starts what it needs on 127.0.0.1, bounds its own loops in count and
time, stops by itself, and prints a markdown table of what was refused or bounded. This script finds them, runs each
in its own process (one scenario's server and memory never colour the next one's figures) and prints
`cat /proc/loadavg` before and after, since every figure depends on what else the machine was doing. The CI tests
replay the same findings at test size (docs/security.md).
"""
from __future__ import annotations

import argparse
import ast
import subprocess
import sys
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
PREFIX = "adversary_"


def scenarios() -> dict[str, Path]:
    """name -> script, for every bench/adversary_<name>.py."""
    return {path.stem.removeprefix(PREFIX): path for path in sorted(BENCH.glob(f"{PREFIX}*.py"))}


def _load() -> str:
    return Path("/proc/loadavg").read_text().strip() if Path("/proc/loadavg").exists() else "unknown"


def main(argv: list[str] | None = None) -> int:
    found = scenarios()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", help=f"scenarios to run (default: all of {', '.join(found)})")
    parser.add_argument("--list", action="store_true", help="list the scenarios and stop")
    args = parser.parse_args(argv)
    if args.list:
        for name, path in found.items():
            doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
            print(f"{name:12} {doc.splitlines()[0] if doc else ''}")
        return 0
    unknown = [name for name in args.names if name not in found]
    if unknown:
        parser.error(f"unknown scenario(s) {', '.join(unknown)}; choose from {', '.join(found)}")
    failed = []
    for name in args.names or list(found):
        print(f"\n## {name} (`python bench/{found[name].name}`)\n\nload average at start: {_load()}\n", flush=True)
        started = time.monotonic()
        code = subprocess.call([sys.executable, str(found[name])], cwd=BENCH.parent)
        print(f"\n{name}: exit {code} after {time.monotonic() - started:.0f} s; load average: {_load()}", flush=True)
        if code:
            failed.append(name)
    if failed:
        print(f"\nfailed: {', '.join(failed)}")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())

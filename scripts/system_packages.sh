#!/usr/bin/env bash
# What the test suite needs from the system, not from PyPI: Debian's Chromium (the browser tests drive it through
# Playwright, which never downloads a browser), HAProxy (serve.py's load balancer), PostgreSQL (the class store's
# tests start a throwaway server from its binaries: tests/postgres_server.py) and fonts (Korean and emoji in
# screenshots), openssl (a throwaway TLS certificate). As root, missing ones are installed with apt-get; otherwise this says the exact line to run and stops.
set -euo pipefail

PACKAGES="chromium chromium-headless-shell fonts-noto-color-emoji fonts-nanum haproxy openssl postgresql"
missing=()
command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 || missing+=(chromium)
# the browser tests run Debian's headless shell where it is installed (tests/conftest.py: a tenth less CPU a page)
command -v chromium-headless-shell >/dev/null 2>&1 || missing+=(chromium-headless-shell)
command -v haproxy >/dev/null 2>&1 || missing+=(haproxy)
command -v openssl >/dev/null 2>&1 || missing+=(openssl)  # a throwaway certificate for serve.py --tls-cert's test
# Debian puts initdb and pg_ctl under /usr/lib/postgresql/<version>/bin, not on PATH
command -v pg_ctl >/dev/null 2>&1 || compgen -G "/usr/lib/postgresql/*/bin/pg_ctl" >/dev/null || missing+=(postgresql)
fonts=$(fc-list 2>/dev/null || true)
grep -qi nanum <<<"$fonts" || missing+=(fonts-nanum)
grep -qi "noto color emoji" <<<"$fonts" || missing+=(fonts-noto-color-emoji)
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "Installing from Debian's packages: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends $PACKAGES >/dev/null
  exit 0
fi
echo "The tests need these system packages, missing here: ${missing[*]}" >&2
echo "Install them (as root), then run make test again:" >&2
echo "  sudo apt-get install -y --no-install-recommends $PACKAGES" >&2
exit 1

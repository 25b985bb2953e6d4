"""A throwaway PostgreSQL server for the store tests, from Debian's package (apt-get install postgresql).

initdb into a temporary folder, then pg_ctl start listening only on a unix socket in that folder (no TCP port to
collide with another test run), with durability off (fsync, synchronous_commit: a test database is thrown away).
PostgreSQL refuses to run as root, so as root the server runs as the `postgres` user (runuser), owning the folder;
the tests connect over the socket as the database superuser `postgres`, trusted (nothing else can reach the socket's
folder). One server per test session; one database per test (`fresh_database`)."""
from __future__ import annotations

import contextlib
import glob
import os
import pwd
import secrets
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

SERVER_USER = "postgres"


def postgres_bin() -> Path | None:
    """The folder of initdb and pg_ctl: on PATH (Debian links none there by default), else the newest
    /usr/lib/postgresql/<version>/bin; None when PostgreSQL is not installed."""
    initdb = shutil.which("initdb")
    if initdb and shutil.which("pg_ctl"):
        return Path(initdb).resolve().parent
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"), key=lambda p: int(Path(p).parts[-3]))
    return Path(found[-1]).parent if found else None


def _as_server_user(command: list[str]) -> list[str]:
    return ["runuser", "-u", SERVER_USER, "--", *command] if os.geteuid() == 0 else command


@contextlib.contextmanager
def postgres_server(bin_folder: Path) -> Iterator[str]:
    """Start a server; yield the DSN of its `postgres` database; stop it and delete its files at the end."""
    folder = Path(tempfile.mkdtemp(prefix="attention-lab-pg-"))
    data, log = folder / "data", folder / "server.log"
    if os.geteuid() == 0:
        user = pwd.getpwnam(SERVER_USER)
        os.chown(folder, user.pw_uid, user.pw_gid)
    try:
        subprocess.run(_as_server_user([str(bin_folder / "initdb"), "-D", str(data), "-U", "postgres", "-A", "trust",
                                        "-E", "UTF8", "--no-locale", "--no-sync"]),
                       check=True, capture_output=True, timeout=120)
        options = (f"-k {folder} -c listen_addresses='' -c fsync=off -c synchronous_commit=off "
                   "-c full_page_writes=off -c max_connections=100")
        started = subprocess.run(_as_server_user([str(bin_folder / "pg_ctl"), "-D", str(data), "-l", str(log), "-o",
                                                  options, "-w", "-t", "60", "start"]),
                                 capture_output=True, text=True, timeout=90)
        if started.returncode != 0:
            raise RuntimeError(f"pg_ctl start failed: {started.stdout}{started.stderr}"
                               f"{log.read_text() if log.exists() else ''}")
        try:
            yield f"postgresql://postgres@/postgres?host={folder}"
        finally:
            subprocess.run(_as_server_user([str(bin_folder / "pg_ctl"), "-D", str(data), "-m", "immediate", "-w",
                                            "stop"]), capture_output=True, timeout=60)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@contextlib.contextmanager
def fresh_database(server_dsn: str) -> Iterator[str]:
    """An empty database on the server for one test; dropped afterwards (WITH FORCE: pooled connections included)."""
    import psycopg

    name = f"test_{secrets.token_hex(6)}"
    with psycopg.connect(server_dsn, autocommit=True) as admin:
        admin.execute(f"CREATE DATABASE {name}")
    try:
        yield server_dsn.replace("/postgres?", f"/{name}?", 1)
    finally:
        with psycopg.connect(server_dsn, autocommit=True) as admin:
            admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")

"""One `streamlit run` of the lab on a free loopback port, as the browser tests and the benches start it.

The same entry `make run` serves (asgi.py, with its seat cookie), or app.py in a folder without one (a toy app);
headless, no usage statistics, bound to 127.0.0.1 only.
"""
from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path
from typing import IO

from serving.warmup import wait_healthy


def free_port() -> int:
    """A TCP port nothing listens on now (the OS picks it)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def start_streamlit(folder: Path, port: int, env: dict[str, str] | None = None,
                    stderr: int | IO | None = subprocess.DEVNULL) -> subprocess.Popen:
    """`streamlit run` of the folder's asgi.py (else app.py) on 127.0.0.1:port; returns at once (see started)."""
    script = "asgi.py" if (folder / "asgi.py").exists() else "app.py"
    return subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", script, "--server.headless", "true", "--server.port", str(port),
         "--server.address", "127.0.0.1", "--browser.gatherUsageStats", "false"],
        cwd=folder, env=env, stdout=subprocess.DEVNULL, stderr=stderr)


def started(process: subprocess.Popen, port: int, timeout: float) -> str:
    """The server's URL once /_stcore/health answers; RuntimeError (the process killed) when it does not within
    `timeout` seconds or exits first."""
    url = f"http://127.0.0.1:{port}"
    if not wait_healthy(url, timeout, alive=lambda: process.poll() is None):
        process.kill()
        raise RuntimeError(f"streamlit did not become healthy within {timeout:.0f} s")
    return url

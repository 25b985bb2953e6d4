"""Warm a replica before it takes students: real script runs through its websocket, as a browser would make them.

Streamlit has no start-up hook, and the first script run of a process imports torch, loads the shipped models
(st.cache_resource) and builds the first charts (the shared figure caches): seconds that the first students
would otherwise wait for. serve.py runs this against the replica's own port while HAProxy holds it in
maintenance, and enables it only when every page below has run without an error.
"""
from __future__ import annotations

import asyncio
import time

from serving.streamlit_client import StreamlitClient

# The first pages students open: home (the models table loads every shipped model), then the pages whose first
# runs are the slowest (attention: analysis and head charts; decoding; positional: the shared PE figures; compare:
# the three en-fr models).
WARM_PAGES = ["", "attention", "decoding", "positional", "compare"]


async def _warm(base_url: str, pages: list[str], timeout: float) -> list[tuple[str, float]]:
    client = StreamlitClient(base_url)
    timings = []
    try:
        await client.connect(pages[0], timeout=timeout)
        for number, path in enumerate(pages):
            payload = client.open_page_msg(path) if number == 0 else client.change_page_msg(path)
            if payload is None:
                raise RuntimeError(f"warm-up: no page {path!r} in the app's navigation")
            outcome = await client.rerun(payload, timeout, path)
            if not outcome.ok:
                raise RuntimeError(f"warm-up of /{path}: {'; '.join(outcome.problems)}")
            timings.append((path or "home", outcome.seconds))
    finally:
        await client.close()
    return timings


def warm_replica(base_url: str, pages: list[str] = WARM_PAGES, timeout: float = 120.0) -> list[tuple[str, float]]:
    """Run each page once on the replica at base_url; (page, seconds) per page. Raises on any error."""
    return asyncio.run(_warm(base_url, pages, timeout))


def wait_healthy(base_url: str, timeout: float, alive=lambda: True) -> bool:
    """Poll /_stcore/health until it answers 200 (False after timeout or when alive() turns False)."""
    from serving.streamlit_client import http_get

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and alive():
        if http_get(f"{base_url}/_stcore/health", timeout=1.0)[0] == 200:
            return True
        time.sleep(0.2)
    return False

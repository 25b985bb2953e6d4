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

# The first pages students open: home, then the pages whose first runs are the slowest (attention: analysis and
# head charts; decoding; positional: the shared PE figures; compare: the three en-fr models). Then, back on the
# attention page, every other model of the sidebar's model choice, so that each shipped model is loaded. The LLM page
# loads SmolLM2 (6-10 s, once per process): here, not at the first student's visit, and never at the app's start.
WARM_PAGES = ["", "attention", "decoding", "positional", "compare", "llm"]
MODEL_CHOICE = "model_id"  # the sidebar's model selectbox (ui/sidebar.py)
# Lesson stops whose first run is slow, opened by their link: the real encoder's all-heads grid with its 72 pattern
# labels (issue 22: 7.5-8.8 s at the first student's click before it was warmed here); SmolLM2's pattern labels
# (issue 26: 1.5 CPU s, seconds of wall time on a busy server), which its "All heads" grid and Explain share.
WARM_STOPS = ["attention?lesson=intro&stop=17",
              "attention?model=SmolLM2-135M-Instruct&view=Explain&explain=patterns"]


async def _warm(base_url: str, pages: list[str], timeout: float) -> list[tuple[str, float]]:
    client = StreamlitClient(base_url)
    timings = []
    try:
        await client.connect(pages[0], timeout=timeout)
        for number, path in enumerate(pages):
            payload = client.open_page_msg(path) if number == 0 else client.change_page_msg(path)
            if payload is None:
                raise RuntimeError(f"warm-up: no page {path!r} in the app's navigation")
            timings.append((path or "home", await _run(client, payload, timeout, path)))
        if "attention" in client.pages:
            await _run(client, client.change_page_msg("attention"), timeout, "attention")
            found = client.find(MODEL_CHOICE)
            if found is not None:
                first = client.widgets[found[0]].string_value
                others = [option for option in found[1].options if option != first]
                for model in others + [first]:  # every shipped model once, ending on the default
                    if client.choose_option(MODEL_CHOICE, model) is None:
                        timings.append((model, await _run(client, client.widget_rerun_msg(), timeout, "attention")))
        for stop in WARM_STOPS:  # the slow stops, as a class opens them (stop 17: the encoder's grid)
            path, query = stop.split("?")
            timings.append((stop, await _run(client, client.open_page_msg(path, query), timeout, path)))
    finally:
        await client.close()
    return timings


async def _run(client: StreamlitClient, payload: bytes, timeout: float, path: str) -> float:
    outcome = await client.rerun(payload, timeout, path)
    if not outcome.ok:
        raise RuntimeError(f"warm-up of /{path}: {'; '.join(outcome.problems)}")
    return outcome.seconds


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

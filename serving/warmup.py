"""Warm a server before students' first clicks: real script runs through its websocket, as a browser would make them.

Streamlit has no start-up hook, and the first script run of a process imports torch, loads the shipped models
(st.cache_resource) and builds the first charts (the shared figure caches): seconds that the first students
would otherwise wait for. Two callers, never both on one server:
- serve.py and serving/replica.py run warm_replica() against each replica's own port while the replica is held out
  of HAProxy (or the Service), and let students in only when the pages, the models and BEFORE_READY_LINKS have run
  without an error; the other lesson stops are opened right after (warm_in_background). They start their replicas
  with ATTENTION_LAB_WARMUP=0.
- Every other `streamlit run asgi.py` (`make run`, the by-hand block of docs/development.md) warms itself: asgi.py's lifespan calls
  start_self_warm_up(), a thread that waits for the server to answer and then makes the same runs against its own
  port in the background, so the server answers from its first second. While it runs, is_warming() is true and Home
  says so (ui/warm_notice.py). ATTENTION_LAB_WARMUP=0 turns it off (the test suite's servers, the benches that warm
  on their own).
What is warmed: the pages below, every shipped model of the sidebar's choice, and every stop of every lesson file,
each opened as a class opens it (a new session on its link), so a stop added to a lesson is warmed too; each stop as a
student opens it and as the teacher projects it, in every language of the interface.
"""
from __future__ import annotations

import asyncio
import os
import sys
import threading
import time
from collections.abc import Iterable
from pathlib import Path

from serving.streamlit_client import StreamlitClient

WARMUP_ENV = "ATTENTION_LAB_WARMUP"  # "0": this server does not warm itself (serve.py warms its replicas from outside)
# "0" in serve.py's or serving/replica.py's environment: a replica is still warmed before it takes students, but the
# other lesson stops are not opened after (warm_in_background). The test suite sets it: no test there needs them, and
# each replica's pass over every stop took minutes of CPU from the other test worker.
WARM_STOPS_ENV = "ATTENTION_LAB_WARM_STOPS"
# The first pages students open: home, then the pages whose first runs are the slowest (attention: analysis and
# head charts; decoding; positional: the shared PE figures; compare: the three en-fr models). Then, back on the
# attention page, every other model of the sidebar's model choice, so that each shipped model is loaded. The LLM page
# loads SmolLM2 (seconds, once per process): here, not at the first student's visit, and never at the app's start.
WARM_PAGES = ["", "attention", "decoding", "positional", "compare", "llm"]
MODEL_CHOICE = "model_id"  # the sidebar's model selectbox (ui/sidebar.py)
# Views outside the lessons whose first run is slow, opened by their link: SmolLM2's pattern labels (seconds on a busy
# server), which its "All heads" grid and Explain share.
WARM_LINKS = ["attention?model=SmolLM2-135M-Instruct&view=Explain&explain=patterns"]

_warming = threading.Event()  # set while this process warms itself (start_self_warm_up)


def is_warming() -> bool:
    """True while this server process warms itself in the background (Home says so)."""
    return _warming.is_set()


def lesson_stop_links(page_names: Iterable[str], folder: Path | None = None) -> list[str]:
    """Every stop of every lesson file on one of the app's pages (`page_names`, as a stop names them: "home",
    "attention"), as the link a class opens it by ("attention?lesson=intro&stop=17"), in the lessons' order. A file
    that cannot be read is left out (the app shows its error)."""
    from classroom.lessons import load_lessons

    pages = tuple(page_names)
    # Only each stop's page and number are read here; the server checks the rest (sections included) when it opens.
    found, _ = load_lessons({page: () for page in pages}, folder)
    return [f"{stop.page}?lesson={lesson.id}&stop={stop.number}"
            for lesson in found.values() for stop in lesson.stops if stop.page in pages]


async def served_page_names(base_url: str, timeout: float = 120.0) -> list[str]:
    """The pages the server at base_url has, as lessons name them ("home" for its default page): what its navigation
    tells a new session in its first run (Home's). The warm-up asks the server rather than reading the interface's
    page list (a floor above)."""
    client = StreamlitClient(base_url)
    try:
        await client.connect("", timeout=timeout)
        await _run(client, client.open_page_msg(""), timeout, "")
        return [path or "home" for path in client.pages]
    finally:
        await client.close()


def warm_links(page_names: Iterable[str]) -> list[str]:
    """The links warmed after the pages and models: the slow views outside lessons, then every lesson stop as the
    students open it and as the teacher projects it (presenter mode sizes and caches its charts apart, so a warm-up of
    the students' links alone leaves the projected stops cold), then both in each other language of the interface (a
    figure and an answer stated in words are kept per language: an English warm-up leaves a Korean class cold)."""
    from i18n import DEFAULT_LANGUAGE, LANGUAGES

    stops = lesson_stop_links(page_names)
    projected = [f"{link}&presenter=true" for link in stops]
    links = WARM_LINKS + stops + projected
    for language in (code for code in LANGUAGES if code != DEFAULT_LANGUAGE):  # the teacher's projected stops first
        links += [f"{link}&lang={language}" for link in projected + stops]
    return links


async def _warm(base_url: str, pages: list[str], links: list[str] | None, timeout: float) -> list[tuple[str, float]]:
    client = StreamlitClient(base_url)
    timings = []
    try:
        await client.connect(pages[0], timeout=timeout)
        for number, path in enumerate(pages):
            payload = client.open_page_msg(path) if number == 0 else client.change_page_msg(path)
            if payload is None:
                raise RuntimeError(f"warm-up: no page {path!r} in the app's navigation")
            timings.append((path or "home", await _run(client, payload, timeout, path)))
        if links is None:  # the app's pages, as its navigation named them in the first run
            links = warm_links(name or "home" for name in client.pages)
        if "attention" in client.pages:
            await _run(client, client.change_page_msg("attention"), timeout, "attention")
            found = client.find(MODEL_CHOICE)
            if found is not None:
                first = client.widgets[found[0]].string_value
                others = [option for option in found[1].options if option != first]
                for model in others + [first]:  # every shipped model once, ending on the default
                    if client.choose_option(MODEL_CHOICE, model) is None:
                        timings.append((model, await _run(client, client.widget_rerun_msg(), timeout, "attention")))
    finally:
        await client.close()
    timings += await open_links(base_url, links, timeout)
    return timings


async def open_links(base_url: str, links: list[str], timeout: float = 120.0) -> list[tuple[str, float]]:
    """Open each link ("page?query") in a session of its own, as a new tab would; (link, seconds of its first run).
    Raises on any error."""
    timings = []
    for link in links:
        path, _, query = link.partition("?")
        client = StreamlitClient(base_url)
        try:
            await client.connect(path, timeout=timeout)
            timings.append((link, await _run(client, client.open_page_msg(path, query), timeout, path)))
        finally:
            await client.close()
    return timings


async def _run(client: StreamlitClient, payload: bytes, timeout: float, path: str) -> float:
    outcome = await client.rerun(payload, timeout, path)
    if not outcome.ok:
        raise RuntimeError(f"warm-up of /{path}: {'; '.join(outcome.problems)}")
    return outcome.seconds


def warm_replica(base_url: str, pages: list[str] = WARM_PAGES, timeout: float = 120.0,
                 links: list[str] | None = None) -> list[tuple[str, float]]:
    """Run each page once on the server at base_url, then open each link (default: warm_links() of the server's own
    pages) in a new session; (page or link, seconds) each. Raises on any error."""
    return asyncio.run(_warm(base_url, pages, links, timeout))


# What serve.py's replicas (and the Kubernetes replica) run before they take students: the pages, every model and
# the slowest first view of the lessons (the real encoder's grid with its 72 pattern labels); every other lesson stop
# is opened just after the replica takes students (warm_in_background), so that a replica restarted mid-class is back
# without waiting for every stop.
BEFORE_READY_LINKS = WARM_LINKS + ["attention?lesson=intro&stop=17"]


def warm_in_background(base_url: str, alive=lambda: True, stream=sys.stdout) -> threading.Thread:
    """Open every lesson stop not warmed before the replica was ready, each in a session of its own, from a daemon
    thread; a failure only means a slower first click there, so it is said and nothing else. Nothing is opened when
    ATTENTION_LAB_WARM_STOPS is "0" (the test suite)."""
    enabled = _switched_on(WARM_STOPS_ENV)

    def warm() -> None:
        if not enabled:
            print(f"{base_url}: the other lesson stops are left cold ({WARM_STOPS_ENV}=0)", file=stream, flush=True)
            return
        started = time.monotonic()
        try:
            pages = asyncio.run(served_page_names(base_url))
            links = [link for link in warm_links(pages) if link not in BEFORE_READY_LINKS]
            for link in links:
                if not alive():
                    return
                asyncio.run(open_links(base_url, [link]))
            print(f"{base_url}: the {len(links)} other lesson stops warm after {time.monotonic() - started:.0f} s",
                  file=stream, flush=True)
        except Exception as error:  # noqa: BLE001
            print(f"{base_url}: warming the lesson stops stopped: {error}", file=stream, flush=True)

    thread = threading.Thread(target=warm, name="attention-lab-warm-stops", daemon=True)
    thread.start()
    return thread


def _switched_on(variable: str) -> bool:
    return os.environ.get(variable, "1").strip().lower() not in ("0", "false", "no", "off")


def self_warm_up_enabled() -> bool:
    return _switched_on(WARMUP_ENV)


def own_url() -> str | None:
    """This Streamlit server's address as its own loopback client reaches it; None where the warm-up's client cannot
    speak to it (TLS: the client speaks plain ws://)."""
    from serving.internals import server_option

    if server_option("server.sslCertFile"):
        return None
    address = server_option("server.address") or ""
    host = "127.0.0.1" if address in ("", "0.0.0.0", "localhost") else "::1" if address == "::" else address
    host = f"[{host}]" if ":" in host else host
    base = (server_option("server.baseUrlPath") or "").strip("/")
    return f"http://{host}:{server_option('server.port')}" + (f"/{base}" if base else "")


def start_self_warm_up(base_url: str | None = None, stream=sys.stderr) -> threading.Thread | None:
    """In a `streamlit run asgi.py` that nobody else warms (ATTENTION_LAB_WARMUP not "0"): warm this server from a
    background thread once it answers; is_warming() is true meanwhile. Returns the thread, or None when off."""
    if not self_warm_up_enabled():
        return None
    base_url = base_url or own_url()
    if base_url is None:
        print("Warm-up skipped: the server speaks TLS (the first clicks load the models).", file=stream, flush=True)
        return None
    _warming.set()

    def warm() -> None:
        started = time.monotonic()
        try:
            if not wait_healthy(base_url, 120.0):
                raise RuntimeError("the server did not answer within 120 s")
            timings = warm_replica(base_url)
            slowest = ", ".join(f"{page} {seconds:.1f} s" for page, seconds in sorted(timings, key=lambda t: -t[1])[:3])
            print(f"Warm: {len(timings)} pages, models and lesson stops run in {time.monotonic() - started:.0f} s "
                  f"(slowest: {slowest})", file=stream, flush=True)
        except Exception as error:  # noqa: BLE001 (a failed warm-up only means slower first clicks: say why, go on)
            print(f"Warm-up stopped after {time.monotonic() - started:.0f} s: {error}", file=stream, flush=True)
        finally:
            _warming.clear()

    thread = threading.Thread(target=warm, name="attention-lab-warm-up", daemon=True)
    thread.start()
    print("Warming up in the background: the shipped models and the lessons' stops (Home says so until done).",
          file=stream, flush=True)
    return thread


def wait_healthy(base_url: str, timeout: float, alive=lambda: True) -> bool:
    """Poll /_stcore/health until it answers 200 (False after timeout or when alive() turns False)."""
    from serving.streamlit_client import http_get

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and alive():
        if http_get(f"{base_url}/_stcore/health", timeout=1.0)[0] == 200:
            return True
        time.sleep(0.2)
    return False

"""The simulated students of bench/load_classroom.py: what each one does, with think times, and how long it waited.

A student is a serving.streamlit_client.StreamlitClient with a plan. Default plan: open the attention page, change
the sentence (sidebar text input "sentence"), the layer ("attn_layer") and the head ("attn_head"), then visit the
decoding and positional pages, with a random think time between them. --cold-herd plan: open the attention page,
switch the sidebar model ("model_id") to another shipped model, visit decoding and positional.

Each interaction is timed from sending the BackMsg to receiving `script_finished`; it fails on a timeout, a closed
socket, a script that did not finish successfully, an `exception` element, an `st.error` alert, page_not_found, a
missing widget or a wrong page.

With `reconnect` (a proxy in front of several replicas), a student whose websocket closes does what the front end
does: it connects again at once with the same cookies (HAProxy's sticky cookie names the dead replica; `option
redispatch` sends it to a live one) and opens the page it was on with the query string the server last wrote
(the view is in the URL). The time from noticing the close to that run's `script_finished` is its reconnect time;
an interaction that was in flight when the socket closed counts as failed.
"""
from __future__ import annotations

import asyncio
import random
import time
from dataclasses import dataclass

from i18n import translate
from serving.streamlit_client import StreamlitClient

SENTENCES = ["i am a student", "the small cat eats the red apple", "she is a student", "we like the big green trees"]
FIRST_PAGE = "attention"
DEFAULT_MODEL = "transformer_en-fr"
NEXT_STEP = translate("en", "decoding.next")  # the decoding page's Next button, as a student reads it
STICKY_COOKIE = "attention_lab_replica"  # HAProxy's cookie (deploy/haproxy.cfg.template): the replica's name


@dataclass
class Interaction:
    student: int
    step: int
    kind: str
    seconds: float | None
    ok: bool
    error: str = ""
    started: float = 0.0  # seconds since the run began
    replica: str = ""  # HAProxy's cookie at the time (empty without a proxy)


@dataclass
class Reconnect:
    student: int
    replica_before: str
    replica_after: str
    seconds: float | None  # close noticed -> the page's first run finished on a live replica
    ok: bool
    error: str = ""
    at: float = 0.0  # seconds since the run began
    same_view: bool = False  # the new replica drew the view of the URL the student had


def plan_for(cold_herd: bool, index: int, models: list[str]) -> tuple[list[str], str | None]:
    if cold_herd:
        others = [m for m in models if m != DEFAULT_MODEL] or models
        return ["load", "model", "page:decoding", "page:positional"], others[index % len(others)]
    return ["load", "sentence", "layer", "head", "page:decoding", "page:positional"], None


class Student:
    """args: think (MIN, MAX), interaction_timeout, seed; optional full_reruns, reconnect."""

    def __init__(self, index: int, base_url: str, plan: list[str], args, t0: float, model: str | None = None):
        self.index, self.base_url, self.plan, self.args, self.t0, self.model = index, base_url, plan, args, t0, model
        self.rng = random.Random(args.seed * 1000 + index)
        self.results: list[Interaction] = []
        self.reconnects: list[Reconnect] = []
        self.client = StreamlitClient(base_url)
        self.connect_seconds: float | None = None
        self.bytes_in = 0
        self.fragment_runs = 0

    @property
    def replica(self) -> str:
        return self.client.cookies.get(STICKY_COOKIE, "")

    async def connect(self) -> float:
        return await self.client.connect(FIRST_PAGE, timeout=60.0)

    async def interact(self, step: int, kind: str) -> bool:
        """One timed interaction; returns False when the session cannot go on."""
        client = self.client
        expected_page = None
        error = None
        payload = None
        if kind == "load":
            payload, expected_page = client.open_page_msg(FIRST_PAGE), FIRST_PAGE
        elif kind.startswith("page:"):
            path = kind.split(":", 1)[1]
            payload = client.change_page_msg(path)
            expected_page = path
            if payload is None:
                error = f"no page {path!r} in the navigation"
        else:
            fragment = ""
            if kind == "sentence":
                current = client.text_of("sentence")
                error = client.set_text("sentence", self.rng.choice([s for s in SENTENCES if s != current]))
            elif kind in ("layer", "head"):
                key = f"attn_{kind}"
                error = client.choose_option(key, self.rng.choice)
                # A widget drawn inside st.fragment reruns only that fragment, as the browser asks.
                if not getattr(self.args, "full_reruns", False):
                    fragment = client.fragment_id(key)
            elif kind == "model":
                error = client.choose_option("model_id", self.model)
            elif kind in ("step", "step_full"):  # the decoding page's Next (step_full: as a full rerun, to compare)
                button = client.button_id(NEXT_STEP)
                if button is None:
                    error = f"no {NEXT_STEP!r} button drawn"
                else:
                    fragment = "" if kind == "step_full" or getattr(self.args, "full_reruns", False) \
                        else client.fragment_of.get(button, "")
                    payload = client.click_msg(button, fragment)
            else:
                raise ValueError(kind)
            if payload is None and error is None:
                payload = client.widget_rerun_msg(fragment)
        started = time.perf_counter() - self.t0
        replica = self.replica
        if error is not None:
            self.results.append(Interaction(self.index, step, kind, None, False, error, started, replica))
            return True
        try:
            outcome = await client.rerun(payload, self.args.interaction_timeout, expected_page)
        except TimeoutError as timeout:
            self.results.append(Interaction(self.index, step, kind, None, False, str(timeout), started, replica))
            return False
        except ConnectionError as closed:
            self.results.append(Interaction(self.index, step, kind, None, False, str(closed), started, replica))
            return await self.reconnect() if getattr(self.args, "reconnect", False) else False
        self.results.append(Interaction(self.index, step, kind, outcome.seconds, outcome.ok,
                                        "; ".join(outcome.problems), started, replica))
        return True

    async def reconnect(self) -> bool:
        """As the front end after its websocket closed: a new session, same cookies, same page and query string."""
        old = self.client
        noticed = time.perf_counter()
        before = self.replica
        self.bytes_in += old.bytes_in
        self.fragment_runs += old.fragment_runs
        await old.close()
        path, query = old.page_path, old.query_string
        self.client = StreamlitClient(self.base_url, cookies=old.cookies)
        record = Reconnect(self.index, before, "", None, False, at=noticed - self.t0)
        self.reconnects.append(record)
        try:
            await self.client.connect(path, timeout=30.0)
            outcome = await self.client.rerun(self.client.open_page_msg(path, query), self.args.interaction_timeout,
                                              path)
        except (ConnectionError, TimeoutError, OSError) as error:
            record.error = f"{type(error).__name__}: {error}"
            return False
        record.seconds, record.replica_after = time.perf_counter() - noticed, self.replica
        record.ok, record.error = outcome.ok, "; ".join(outcome.problems)
        record.same_view = self.client.query_string == query  # the new replica wrote back the URL it was given
        return outcome.ok

    async def think(self) -> bool:
        """Wait a think time; with reconnect, a websocket that closes meanwhile is reconnected at once."""
        seconds = self.rng.uniform(*self.args.think)
        if not getattr(self.args, "reconnect", False):
            await asyncio.sleep(seconds)
            return True
        end = time.perf_counter() + seconds
        while (left := end - time.perf_counter()) > 0:
            if self.client.closed:
                if not await self.reconnect():
                    return False
                continue
            await asyncio.sleep(min(left, 0.05))
        return True

    async def run(self, start_delay: float, barrier: tuple[asyncio.Event, list] | None) -> None:
        await asyncio.sleep(start_delay)
        step = 0
        try:
            try:
                self.connect_seconds = await self.connect()
            except Exception as error:
                self.results.append(Interaction(self.index, -1, "connect", None, False,
                                                f"{type(error).__name__}: {error}", time.perf_counter() - self.t0))
                return
            if barrier is not None:
                go, arrived = barrier
                arrived.append(self.index)
                await go.wait()
            for step, kind in enumerate(self.plan):
                if step and not await self.think():
                    break
                if not await self.interact(step, kind):
                    break
        except Exception as error:  # a bug here must show up as a failed session, not end the whole run
            self.results.append(Interaction(self.index, step, self.plan[step], None, False,
                                            f"client error {type(error).__name__}: {error}",
                                            time.perf_counter() - self.t0))
        finally:
            self.bytes_in += self.client.bytes_in
            self.fragment_runs += self.client.fragment_runs
            await self.client.close()

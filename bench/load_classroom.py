"""Classroom load: N simulated students use one `streamlit run app.py` server the way a browser does.

    python bench/load_classroom.py [--students 30] [--ramp 5] [--think 0.5 1.5] [--timeout 300]
    python bench/load_classroom.py --cold-herd [--students 30]

The script starts its own server (`python -m streamlit run app.py --server.headless true`, 127.0.0.1, a free
port, `--logger.level info`) and stops it at the end, also on Ctrl-C, SIGTERM and errors. Nothing but
127.0.0.1 is contacted.

Each student is a browser without the front end: like the real one it fetches the page, `/_stcore/health`
(which sets the `_streamlit_xsrf` cookie) and `/_stcore/host-config`, then opens
`ws://127.0.0.1:PORT/_stcore/stream` with the subprotocols ["streamlit", <xsrf token>] and speaks the
BackMsg/ForwardMsg protobufs shipped in the streamlit package:

* a rerun is a BackMsg `rerun_script` (ClientState) carrying the widget states of every widget the last run
  drew (ids, option labels and defaults are read from the element protos the server sent; `set_value` from the
  server overrides the student's value, as in the front end), the current page's `page_script_hash`, the
  ForwardMsg hashes the student has cached (`ref_hash` replies are resolved from that cache) and a ContextInfo;
* the first rerun names the page by URL path (`page_name="attention"`, as when the browser opens /attention);
  a page change sends the target's `page_script_hash` (from the Navigation message) with only the entry
  script's (sidebar) widget states, as the front end's onPageChange does;
* widget ids are never computed here: a widget is found by the user key embedded in its id
  (`$$ID-<hash>-<key>`); a selectbox is sent as `string_value` = the option's label (what AppTest and the
  front end send in this version), a text input as `string_value`, a segmented control / multiselect as
  `string_array_value`, a slider as `double_array_value`, a checkbox/toggle as `bool_value`.

Interactions (default): open the attention page, change the sentence (sidebar text input "sentence"), the layer
("attn_layer") and the head ("attn_head"), then visit the decoding and positional pages, with a random think
time between them; students start staggered over --ramp seconds. Each interaction is timed from sending the
BackMsg to receiving `script_finished`; it fails on a timeout, a closed socket, a script that did not finish
successfully, an `exception` element, an `st.error` alert, page_not_found, a missing widget or a wrong page.

--cold-herd: a freshly started server; all N students open their websockets, wait at a barrier and request the
attention page at the same instant, then each switches the sidebar model to one of the other shipped models
(round robin) and visits the decoding and positional pages. The server's stderr is read for the line
"loaded shipped model NAME" (logger attention_lab.models in ui/models.py::load_shipped, st.cache_resource):
each model requested must be loaded exactly once.

Every 0.5 s the server's RSS and thread count are read from /proc/PID/status. Before and after the run the
sha256 of every shipped checkpoint file and of the state dict loaded from it are recorded (the server's own
in-memory weights are not observable from outside; tests/test_shared_models.py checks that analyses leave a
loaded model's state dict unchanged). The script ends with markdown tables; --json PATH also saves raw results.
"""
from __future__ import annotations

import argparse
import asyncio
import datetime
import hashlib
import json
import math
import os
import platform
import random
import re
import resource
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections import Counter, defaultdict
from dataclasses import asdict, dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHECKPOINT_DIR = ROOT / "assets" / "checkpoints"
HOST = "127.0.0.1"
SENTENCES = ["i am a student", "the small cat eats the red apple", "she is a student", "we like the big green trees"]
FIRST_PAGE = "attention"
DEFAULT_MODEL = "transformer_en-fr"
MAX_STUDENTS = 200
LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"  # the server's log lines name their logger
LOAD_LINE = re.compile(r"attention_lab\.models: loaded shipped model (\S+)")
SERVER_PROBLEM = re.compile(r"Traceback|\bERROR\b|\bCRITICAL\b|Exception")

from streamlit import __version__ as STREAMLIT_VERSION  # noqa: E402
from streamlit.proto.Alert_pb2 import Alert  # noqa: E402
from streamlit.proto.BackMsg_pb2 import BackMsg  # noqa: E402
from streamlit.proto.ClientState_pb2 import ClientState, ContextInfo  # noqa: E402
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg  # noqa: E402
from streamlit.proto.WidgetStates_pb2 import WidgetState  # noqa: E402
from websockets.asyncio.client import connect as ws_connect  # noqa: E402  (a dependency of streamlit)
from websockets.exceptions import ConnectionClosed  # noqa: E402

FINISHED_OK = {ForwardMsg.FINISHED_SUCCESSFULLY, ForwardMsg.FINISHED_FRAGMENT_RUN_SUCCESSFULLY}
WIDGET_KINDS = {"selectbox", "text_input", "text_area", "button_group", "multiselect", "slider", "checkbox",
                "radio", "number_input", "button", "download_button", "color_picker", "date_input", "time_input",
                "file_uploader", "camera_input", "chat_input", "menu_button", "pagination", "feedback"}
PROC_CLOCK = os.sysconf("SC_CLK_TCK")


# --------------------------------------------------------------------------------------------- the server

def free_port() -> int:
    with socket.socket() as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


class Server:
    """`streamlit run app.py` on 127.0.0.1; its merged stdout/stderr is read by a thread."""

    def __init__(self, port: int):
        self.port = port
        self.lines: list[str] = []
        self.loads: Counter[str] = Counter()
        self.problems: list[str] = []
        self.process: subprocess.Popen | None = None
        self._reader: threading.Thread | None = None

    def start(self, timeout: float) -> float:
        command = [sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true",
                   "--server.address", HOST, "--server.port", str(self.port), "--browser.gatherUsageStats", "false",
                   "--logger.level", "info", "--logger.messageFormat", LOG_FORMAT]
        start = time.perf_counter()
        self.process = subprocess.Popen(command, cwd=ROOT, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                        stderr=subprocess.STDOUT, env={**os.environ, "PYTHONUNBUFFERED": "1"})
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        while time.perf_counter() - start < timeout:
            if self.process.poll() is not None:
                raise RuntimeError("streamlit exited with code %s:\n%s" % (self.process.returncode,
                                                                            "".join(self.lines[-30:])))
            if http_get(f"http://{HOST}:{self.port}/_stcore/health", timeout=1.0)[0] == 200:
                return time.perf_counter() - start
            time.sleep(0.1)
        raise RuntimeError(f"streamlit did not become healthy within {timeout:.0f} s")

    def _read(self) -> None:
        assert self.process is not None and self.process.stdout is not None
        for raw in self.process.stdout:
            line = raw.decode("utf-8", "replace")
            self.lines.append(line)
            match = LOAD_LINE.search(line)
            if match:
                self.loads[match.group(1)] += 1
            elif SERVER_PROBLEM.search(line):
                self.problems.append(line.rstrip())

    def status(self) -> tuple[float, int, float] | None:
        """(RSS MiB, threads, CPU seconds) from /proc, or None when the process is gone."""
        if self.process is None:
            return None
        try:
            fields = dict(line.split(":", 1) for line in Path(f"/proc/{self.process.pid}/status").read_text()
                          .splitlines() if ":" in line)
            stat = Path(f"/proc/{self.process.pid}/stat").read_text()
        except OSError:
            return None
        cpu_ticks = stat.rsplit(")", 1)[1].split()
        cpu = (int(cpu_ticks[11]) + int(cpu_ticks[12])) / PROC_CLOCK  # utime + stime
        return int(fields["VmRSS"].split()[0]) / 1024, int(fields["Threads"]), cpu

    def stop(self) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        self.process.terminate()
        try:
            self.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=5)
        if self._reader is not None:
            self._reader.join(timeout=5)


_OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # never a proxy: 127.0.0.1 only


def http_get(url: str, cookie: str | None = None, timeout: float = 30.0) -> tuple[int, dict[str, list[str]]]:
    assert url.startswith(f"http://{HOST}:"), url
    request = urllib.request.Request(url, headers={"Cookie": cookie} if cookie else {})
    try:
        with _OPENER.open(request, timeout=timeout) as response:
            response.read()
            headers: dict[str, list[str]] = defaultdict(list)
            for key, value in response.headers.items():
                headers[key.lower()].append(value)
            return response.status, headers
    except OSError:
        return 0, {}


# ------------------------------------------------------------------------------------ widget states

def default_widget_state(kind: str, proto) -> WidgetState | None:
    """The state the front end reports for a widget it has just drawn (the server's value when set_value)."""
    state = WidgetState(id=proto.id)
    set_value = getattr(proto, "set_value", False)
    if kind == "selectbox" or kind == "radio":
        if set_value:
            if proto.HasField("raw_value"):
                state.string_value = proto.raw_value
        elif proto.HasField("default") and 0 <= proto.default < len(proto.options):
            state.string_value = proto.options[proto.default]
    elif kind in ("text_input", "text_area"):
        if set_value:
            if proto.HasField("value"):
                state.string_value = proto.value
        elif proto.HasField("default"):
            state.string_value = proto.default
    elif kind == "button_group":
        values = list(proto.raw_values) if set_value else [proto.options[i].content for i in proto.default]
        state.string_array_value.data[:] = values
    elif kind == "multiselect":
        values = list(proto.raw_values) if set_value else [proto.options[i] for i in proto.default]
        state.string_array_value.data[:] = values
    elif kind == "slider":
        if proto.options:  # st.select_slider: option labels
            values = list(proto.raw_value) if set_value else [proto.options[int(i)] for i in proto.default]
            state.string_array_value.data[:] = values
        else:
            state.double_array_value.data[:] = list(proto.value if set_value else proto.default)
    elif kind == "checkbox":
        state.bool_value = proto.value if set_value else proto.default
    elif kind == "number_input":
        value = proto.value if set_value and proto.HasField("value") else (
            proto.default if proto.HasField("default") else None)
        if value is not None:
            if proto.data_type == type(proto).INT:
                state.int_value = int(value)
            else:
                state.double_value = value
    else:  # buttons (trigger values only when clicked) and widgets these pages do not use: no state
        return None
    return state


def user_key(widget_id: str) -> str | None:
    """'$$ID-<hash>-<user key>' -> user key (same rule as streamlit.runtime.state.common)."""
    key = widget_id.split("-", maxsplit=2)[-1]
    return None if key == "None" else key


# ------------------------------------------------------------------------------------------- a student

@dataclass
class Interaction:
    student: int
    step: int
    kind: str
    seconds: float | None
    ok: bool
    error: str = ""
    started: float = 0.0  # seconds since the run began


class Student:
    def __init__(self, index: int, port: int, plan: list[str], args, t0: float, model: str | None = None):
        self.index, self.port, self.plan, self.args, self.t0, self.model = index, port, plan, args, t0, model
        self.rng = random.Random(args.seed * 1000 + index)
        self.results: list[Interaction] = []
        self.ws = None
        self.events: asyncio.Queue = asyncio.Queue()
        self.closed: str | None = None
        # The front end's state.
        self.widgets: dict[str, WidgetState] = {}
        self.meta: dict[str, tuple[str, object, str]] = {}  # id -> (kind, proto, active_script_hash)
        self.cache: dict[str, list] = {}  # ForwardMsg hash -> [message, run count at last use]
        self.run_count = 0
        self.fragment_of: dict[str, str] = {}  # widget id -> id of the st.fragment that drew it ("" = none)
        self.pending_fragment = ""  # set while an interaction's widget lives in a fragment
        self.fragment_runs = 0
        self.max_cache_age = 2
        self.main_hash = ""
        self.page_hash = ""
        self.page_path = FIRST_PAGE
        self.pages: dict[str, str] = {}  # url path -> page_script_hash
        self.run_widgets: dict[str, tuple[str, object, str]] = {}
        self.run_errors: list[str] = []
        self.bytes_in = 0
        self.connect_seconds: float | None = None
        self._reader_task: asyncio.Task | None = None

    # ---- connection
    async def connect(self) -> float:
        start = time.perf_counter()
        base = f"http://{HOST}:{self.port}"
        status, _ = await asyncio.to_thread(http_get, f"{base}/{FIRST_PAGE}")
        if status != 200:
            raise RuntimeError(f"GET /{FIRST_PAGE} -> {status}")
        status, headers = await asyncio.to_thread(http_get, f"{base}/_stcore/health")
        if status != 200:
            raise RuntimeError(f"GET /_stcore/health -> {status}")
        xsrf = None
        for cookie in headers.get("set-cookie", []):
            name, _, rest = cookie.partition("=")
            if name.strip() == "_streamlit_xsrf":
                xsrf = rest.split(";", 1)[0].strip().strip('"')
        cookie = f"_streamlit_xsrf={xsrf}" if xsrf else None
        await asyncio.to_thread(http_get, f"{base}/_stcore/host-config", cookie)
        self.ws = await ws_connect(f"ws://{HOST}:{self.port}/_stcore/stream",
                                   subprotocols=["streamlit", xsrf or "PLACEHOLDER_AUTH_TOKEN"], origin=base,
                                   additional_headers={"Cookie": cookie} if cookie else None, proxy=None,
                                   max_size=None, open_timeout=60, ping_interval=None,
                                   user_agent_header="Mozilla/5.0 (attention-lab bench/load_classroom.py)")
        if self.ws.subprotocol != "streamlit":
            raise RuntimeError(f"server chose subprotocol {self.ws.subprotocol!r}")
        self._reader_task = asyncio.create_task(self._reader())
        return time.perf_counter() - start

    async def _reader(self) -> None:
        try:
            async for data in self.ws:
                self.bytes_in += len(data)
                message = ForwardMsg()
                message.ParseFromString(data)
                self._handle(message, time.perf_counter())
        except ConnectionClosed as closed:
            self.closed = f"websocket closed ({closed})"
        except Exception as error:  # a message we could not handle: fail loudly, never hang
            self.closed = f"reader error: {type(error).__name__}: {error}"
        else:
            self.closed = "websocket closed by the server"
        self.events.put_nowait(("closed", time.perf_counter(), None, [self.closed]))

    def _handle(self, message: ForwardMsg, received: float) -> None:
        kind = message.WhichOneof("type")
        if kind == "ref_hash":  # the server trusts our cache: replay the cached message with the new metadata
            entry = self.cache.get(message.ref_hash)
            if entry is None:
                self.run_errors.append(f"ref_hash {message.ref_hash} not in the client cache")
                return
            entry[1] = self.run_count
            full = ForwardMsg()
            full.CopyFrom(entry[0])
            full.metadata.CopyFrom(message.metadata)
            message, kind = full, full.WhichOneof("type")
        elif message.metadata.cacheable and message.hash:
            self.cache[message.hash] = [message, self.run_count]

        if kind == "new_session":
            session = message.new_session
            self.main_hash = session.main_script_hash
            self.max_cache_age = session.config.max_cached_message_age or self.max_cache_age
            if message.metadata.run.fragment_ids:  # a fragment rerun: widgets outside the fragment stay as drawn
                self.fragment_runs += 1
                self.run_errors = []
            else:
                self.run_widgets, self.run_errors = {}, []
        elif kind == "navigation":
            self.pages = {p.url_pathname: p.page_script_hash for p in message.navigation.app_pages}
            self.page_hash = message.navigation.page_script_hash
        elif kind == "page_not_found":
            self.run_errors.append(f"page_not_found {message.page_not_found.page_name!r}")
        elif kind == "delta" and message.delta.WhichOneof("type") == "new_element":
            element = message.delta.new_element
            element_kind = element.WhichOneof("type")
            if element_kind == "exception":
                self.run_errors.append(f"exception {element.exception.type}: {element.exception.message[:300]}")
            elif element_kind == "alert" and element.alert.format == Alert.ERROR:
                self.run_errors.append(f"st.error: {element.alert.body[:300]}")
            elif element_kind in WIDGET_KINDS:
                proto = getattr(element, element_kind)
                self.run_widgets[proto.id] = (element_kind, proto, message.metadata.active_script_hash)
                self.fragment_of[proto.id] = message.delta.fragment_id
        elif kind == "script_finished":
            status = message.script_finished
            if status in FINISHED_OK:
                self._widgets_after_run()
            self.run_count += 1
            self.cache = {h: e for h, e in self.cache.items() if self.run_count - e[1] <= self.max_cache_age}
            self.events.put_nowait(("finished", received, status, list(self.run_errors)))

    def _widgets_after_run(self) -> None:
        """Keep the student's value of every widget drawn again, take the server's on set_value, drop the rest."""
        widgets: dict[str, WidgetState] = {}
        for widget_id, (kind, proto, _) in self.run_widgets.items():
            if widget_id in self.widgets and not getattr(proto, "set_value", False):
                widgets[widget_id] = self.widgets[widget_id]
            else:
                state = default_widget_state(kind, proto)
                if state is not None:
                    widgets[widget_id] = state
        self.widgets, self.meta = widgets, dict(self.run_widgets)

    # ---- interactions
    def _find(self, key: str) -> tuple[str, object] | None:
        for widget_id, (_, proto, _) in self.meta.items():
            if user_key(widget_id) == key and widget_id in self.widgets:
                return widget_id, proto
        return None

    def _choose_option(self, key: str, target: str | None = None) -> str | None:
        found = self._find(key)
        if found is None:
            return f"widget {key!r} not drawn"
        widget_id, proto = found
        current = self.widgets[widget_id].string_value
        options = [o for o in proto.options if o != current] if target is None else [target]
        if not options or (target is not None and target not in proto.options):
            return f"widget {key!r}: no option to choose ({list(proto.options)})"
        self.widgets[widget_id].string_value = self.rng.choice(options)
        return None

    def _back_msg(self, page_hash: str, page_name: str = "", only_entry_widgets: bool = False) -> bytes:
        context = ContextInfo(timezone="UTC", timezone_offset=0, locale="en-US", is_embedded=False,
                              url=f"http://{HOST}:{self.port}/{self.page_path}", color_scheme="light")
        state = ClientState(query_string="", page_script_hash=page_hash, page_name=page_name, context_info=context,
                            fragment_id=self.pending_fragment)
        for widget_id, widget in self.widgets.items():
            if not only_entry_widgets or self.meta[widget_id][2] == self.main_hash:
                state.widget_states.widgets.append(widget)
        state.cached_message_hashes.extend(self.cache)
        return BackMsg(rerun_script=state).SerializeToString()

    async def interact(self, step: int, kind: str) -> bool:
        """One timed interaction; returns False when the session cannot go on."""
        expected_page = None
        error = None
        if kind == "load":
            payload = self._back_msg("", FIRST_PAGE)
            expected_page = FIRST_PAGE
        elif kind.startswith("page:"):
            path = kind.split(":", 1)[1]
            if path not in self.pages:
                error = f"no page {path!r} in the navigation"
            else:
                self.page_path = expected_page = path
                payload = self._back_msg(self.pages[path], only_entry_widgets=True)
        else:
            if kind == "sentence":
                found = self._find("sentence")
                if found is None:
                    error = "widget 'sentence' not drawn"
                else:
                    current = self.widgets[found[0]].string_value
                    self.widgets[found[0]].string_value = self.rng.choice([s for s in SENTENCES if s != current])
            elif kind in ("layer", "head"):
                key = f"attn_{kind}"
                error = self._choose_option(key)
                found = self._find(key)
                # A widget drawn inside st.fragment reruns only that fragment, as the browser asks.
                full = getattr(self.args, "full_reruns", False)  # profile_server.py's students have no such flag
                self.pending_fragment = self.fragment_of.get(found[0], "") if found and not full else ""
            elif kind == "model":
                error = self._choose_option("model_id", self.model)
            else:
                raise ValueError(kind)
            payload = self._back_msg(self.page_hash)
            self.pending_fragment = ""
        started = time.perf_counter() - self.t0
        if error is not None:
            self.results.append(Interaction(self.index, step, kind, None, False, error, started))
            return True
        while not self.events.empty():  # nothing should be pending; never let a stale event end this run
            self.events.get_nowait()
        sent = time.perf_counter()
        try:
            await self.ws.send(payload)
            deadline = sent + self.args.interaction_timeout
            while True:
                event, received, status, errors = await asyncio.wait_for(self.events.get(),
                                                                         max(0.0, deadline - time.perf_counter()))
                if event == "closed":
                    raise ConnectionError(errors[0])
                if status != ForwardMsg.FINISHED_EARLY_FOR_RERUN:
                    break
        except asyncio.TimeoutError:
            self.results.append(Interaction(self.index, step, kind, None, False,
                                            f"no script_finished within {self.args.interaction_timeout:.0f} s",
                                            started))
            return False
        except (ConnectionError, ConnectionClosed) as closed:
            self.results.append(Interaction(self.index, step, kind, None, False, str(closed), started))
            return False
        seconds = received - sent
        problems = list(errors)
        if status not in FINISHED_OK:
            problems.append(f"script_finished status {ForwardMsg.ScriptFinishedStatus.Name(status)}")
        if expected_page is not None and self.page_hash != self.pages.get(expected_page):
            problems.append(f"expected page {expected_page!r}, got page hash {self.page_hash!r}")
        self.results.append(Interaction(self.index, step, kind, seconds, not problems, "; ".join(problems), started))
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
                if step:
                    await asyncio.sleep(self.rng.uniform(*self.args.think))
                if not await self.interact(step, kind):
                    break
        except Exception as error:  # a bug here must show up as a failed session, not end the whole run
            self.results.append(Interaction(self.index, step, self.plan[step], None, False,
                                            f"client error {type(error).__name__}: {error}",
                                            time.perf_counter() - self.t0))
        finally:
            if self.ws is not None:
                try:
                    await asyncio.wait_for(self.ws.close(), 5)
                except Exception:
                    pass
            if self._reader_task is not None:
                self._reader_task.cancel()


# -------------------------------------------------------------------------------------------- the run

def plan_for(args, index: int, models: list[str]) -> tuple[list[str], str | None]:
    if args.cold_herd:
        others = [m for m in models if m != DEFAULT_MODEL] or models
        return ["load", "model", "page:decoding", "page:positional"], others[index % len(others)]
    return ["load", "sentence", "layer", "head", "page:decoding", "page:positional"], None


async def drive(args, server: Server, models: list[str], samples: list) -> tuple[list[Student], bool, float]:
    if args.warmup:  # one untimed visit first, as when the teacher has opened the app before the class
        teacher = Student(-1, server.port, ["load"], args, time.perf_counter())
        await asyncio.wait_for(teacher.run(0.0, None), args.interaction_timeout + 30)
        if not all(r.ok for r in teacher.results):
            print(f"warm-up visit failed: {[r.error for r in teacher.results]}", file=sys.stderr)
    t0 = time.perf_counter()
    students = []
    for i in range(args.students):
        plan, model = plan_for(args, i, models)
        students.append(Student(i, server.port, plan, args, t0, model))
    barrier = (asyncio.Event(), []) if args.cold_herd else None
    delays = [0.0 if args.cold_herd else args.ramp * i / max(1, args.students) for i in range(args.students)]
    tasks = [asyncio.create_task(s.run(d, barrier)) for s, d in zip(students, delays)]

    async def sample() -> None:
        planned = sum(len(s.plan) for s in students)
        while True:
            status = server.status()
            if status is not None:
                samples.append((time.perf_counter() - t0, *status))
                if len(samples) % 20 == 0:  # a progress line every 10 s
                    done = sum(1 for s in students for r in s.results if r.kind != "connect")
                    print(f"  {samples[-1][0]:5.0f} s: {done}/{planned} interactions, server RSS {status[0]:,.0f} MiB, "
                          f"{status[1]} threads", flush=True)
            await asyncio.sleep(0.5)

    sampler = asyncio.create_task(sample())
    if barrier is not None:  # release the herd once every student has its websocket open (or gave up)
        go, arrived = barrier
        while len(arrived) + sum(1 for s in students if s.results and s.results[0].kind == "connect") < len(students):
            if time.perf_counter() - t0 > args.timeout / 2:
                break
            await asyncio.sleep(0.02)
        go.set()
    remaining = args.timeout - (time.perf_counter() - t0)
    done, pending = await asyncio.wait(tasks, timeout=max(1.0, remaining))
    timed_out = bool(pending)
    for task in pending:
        task.cancel()
    await asyncio.gather(*pending, return_exceptions=True)
    sampler.cancel()
    await asyncio.gather(sampler, return_exceptions=True)
    for task in done:
        if task.exception() is not None:
            raise task.exception()
    return students, timed_out, time.perf_counter() - t0


# ------------------------------------------------------------------------------ model hashes, report

def model_hashes() -> dict[str, dict[str, str]]:
    sys.path.insert(0, str(ROOT))
    from model.checkpoint import load_checkpoint, state_dict_sha256

    hashes = {}
    for name in shipped_names():
        files = hashlib.sha256()
        for suffix in (".safetensors", ".json"):
            files.update((CHECKPOINT_DIR / name).with_suffix(suffix).read_bytes())
        hashes[name] = {"files": files.hexdigest(),
                        "state_dict": state_dict_sha256(load_checkpoint(CHECKPOINT_DIR / name).model.state_dict())}
    return hashes


def shipped_names() -> list[str]:
    """Same rule as ui.models.shipped_model_names (not imported: it would pull streamlit caching in here)."""
    return sorted(p.stem for p in CHECKPOINT_DIR.glob("*.json") if p.with_suffix(".safetensors").exists())


def percentile(values: list[float], q: float) -> float:
    """Linear interpolation between closest ranks (numpy's default)."""
    if not values:
        return math.nan
    ordered = sorted(values)
    k = (len(ordered) - 1) * q / 100
    low = math.floor(k)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (k - low)


def ms(seconds: float) -> str:
    return "–" if math.isnan(seconds) else f"{seconds * 1000:,.0f} ms"


def machine() -> str:
    cpus = len(os.sched_getaffinity(0))
    memory = ""
    try:
        kib = int(re.search(r"MemTotal:\s+(\d+)", Path("/proc/meminfo").read_text()).group(1))
        memory = f", {kib / 2**20:.0f} GiB"
    except (OSError, AttributeError):
        pass
    return f"{platform.system()} {platform.machine()}, {cpus} CPUs (os.cpu_count {os.cpu_count()}){memory}"


def report(args, students: list[Student], server: Server, samples: list, timed_out: bool, wall: float,
           healthy: float, hashes_before: dict, hashes_after: dict, load_before: tuple, client_cpu: float) -> dict:
    results = [r for s in students for r in s.results]
    planned = {s.index: len(s.plan) for s in students}
    done = Counter(r.student for r in results if r.kind != "connect")
    not_run = sum(max(0, planned[i] - done[i]) for i in planned)
    failed = [r for r in results if not r.ok]
    failed_sessions = {r.student for r in failed} | {i for i in planned if done[i] < planned[i]}
    ok = [r for r in results if r.ok and r.seconds is not None]
    by_kind: dict[str, list[Interaction]] = defaultdict(list)
    for r in results:
        if r.kind != "connect":
            by_kind[r.kind].append(r)
    overall = [r.seconds for r in ok]
    peak_rss = max((s[1] for s in samples), default=math.nan)
    peak_threads = max((s[2] for s in samples), default=0)
    server_cpu = samples[-1][3] - samples[0][3] if len(samples) > 1 else math.nan
    connects = [s.connect_seconds for s in students if s.connect_seconds is not None]
    mode = "cold herd" if args.cold_herd else "classroom"
    today = datetime.date.today().isoformat()

    print()
    print(f"## {mode}: {args.students} students, {len(results)} interactions in {wall:.1f} s"
          + (" (global timeout reached)" if timed_out else ""))
    print(f"server healthy after {healthy:.1f} s; load average at start {load_before[0]:.2f}; websocket connect "
          f"(3 HTTP GETs + handshake) p50 {ms(percentile(connects, 50))}, max {ms(max(connects, default=math.nan))}")
    print(f"throughput {len(ok) / wall:.2f} interactions/s; server CPU {server_cpu:.1f} s = "
          f"{server_cpu / max(1, len(ok)):.2f} s per interaction, {server_cpu / wall:.2f} cores on average; this load "
          f"generator's CPU {client_cpu:.1f} s (same {len(os.sched_getaffinity(0))} CPUs); ForwardMsg bytes received "
          f"{sum(s.bytes_in for s in students) / 2**20:.1f} MiB; fragment-only reruns "
          f"{sum(s.fragment_runs for s in students)}")
    print()
    print("| interaction | n | ok | p50 | p95 | p99 | max |")
    print("|---|---|---|---|---|---|---|")
    for kind in sorted(by_kind, key=lambda k: min(r.step for r in by_kind[k])):
        values = [r.seconds for r in by_kind[kind] if r.ok and r.seconds is not None]
        print(f"| {kind} | {len(by_kind[kind])} | {len(values)} | {ms(percentile(values, 50))} | "
              f"{ms(percentile(values, 95))} | {ms(percentile(values, 99))} | {ms(max(values, default=math.nan))} |")
    print(f"| **all** | {sum(len(v) for v in by_kind.values())} | {len(overall)} | {ms(percentile(overall, 50))} | "
          f"{ms(percentile(overall, 95))} | {ms(percentile(overall, 99))} | {ms(max(overall, default=math.nan))} |")
    if failed or not_run:
        print()
        print(f"failures: {len(failed)} interactions failed, {not_run} planned interactions not run")
        for reason, count in Counter(f"{r.kind}: {r.error}" for r in failed).most_common(10):
            print(f"  {count} × {reason}")
    if server.problems:
        print()
        print(f"server log: {len(server.problems)} lines look like errors, first ones:")
        for line in server.problems[:8]:
            print("  " + line[:200])

    print()
    print("| model | students who asked for it | 'loaded shipped model' lines | files sha256 before = after | "
          "state_dict sha256 before = after |")
    print("|---|---|---|---|---|")
    wanted = Counter()
    for s in students:
        kinds = {r.kind for r in s.results}
        wanted[DEFAULT_MODEL] += "load" in kinds  # the attention page opens with the default model
        if s.model and "model" in kinds:
            wanted[s.model] += 1
    loads_ok = True
    for name in sorted(set(hashes_before) | set(server.loads)):
        count = server.loads.get(name, 0)
        if wanted[name]:
            loads_ok &= count == 1
        same_files = hashes_before.get(name, {}).get("files") == hashes_after.get(name, {}).get("files")
        same_state = hashes_before.get(name, {}).get("state_dict") == hashes_after.get(name, {}).get("state_dict")
        short = hashes_after.get(name, {}).get("state_dict", "?")[:12]
        print(f"| {name} | {wanted[name]} | {count} | {'yes' if same_files else '**NO**'} | "
              f"{'yes' if same_state else '**NO**'} ({short}…) |")
    print(f"each model that was asked for loaded exactly once: {'yes' if loads_ok else '**NO**'}")

    target_met = not failed and not not_run and percentile(overall, 95) <= 2.0
    print()
    print("| date | machine | mode | N | interactions | p50 | p95 | p99 | failed sessions | failed interactions "
          "| peak RSS | peak threads | target (0 failed, p95 ≤ 2 s) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    print(f"| {today} | {machine()}, load avg {load_before[0]:.1f} | {mode} | {args.students} | {len(results)} | "
          f"{ms(percentile(overall, 50))} | {ms(percentile(overall, 95))} | {ms(percentile(overall, 99))} | "
          f"{len(failed_sessions)} | {len(failed) + not_run} | {peak_rss:,.0f} MiB | {peak_threads} | "
          f"{'met' if target_met else '**not met**'} |")
    return {"date": today, "machine": machine(), "python": platform.python_version(),
            "streamlit": STREAMLIT_VERSION, "mode": mode, "args": vars(args), "wall_s": wall, "timed_out": timed_out,
            "server_healthy_s": healthy, "load_average_start": load_before, "server_cpu_s": server_cpu,
            "client_cpu_s": client_cpu, "p50_s": percentile(overall, 50), "p95_s": percentile(overall, 95),
            "p99_s": percentile(overall, 99), "failed_sessions": sorted(failed_sessions),
            "failed_interactions": len(failed), "not_run": not_run, "peak_rss_mib": peak_rss,
            "peak_threads": peak_threads, "model_loads": dict(server.loads), "models_loaded_once": loads_ok,
            "hashes_before": hashes_before, "hashes_after": hashes_after,
            "samples": [{"t": t, "rss_mib": r, "threads": n, "cpu_s": c} for t, r, n, c in samples],
            "interactions": [asdict(r) for r in results], "target_met": target_met}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--students", type=int, default=30)
    parser.add_argument("--ramp", type=float, default=5.0, help="students start evenly over this many seconds")
    parser.add_argument("--think", type=float, nargs=2, default=(0.5, 1.5), metavar=("MIN", "MAX"),
                        help="think time between interactions, uniform in [MIN, MAX] seconds")
    parser.add_argument("--timeout", type=float, default=300.0, help="global limit for the students, seconds")
    parser.add_argument("--interaction-timeout", type=float, default=60.0)
    parser.add_argument("--cold-herd", action="store_true",
                        help="all students connect at once to a fresh server; check each model loads once")
    parser.add_argument("--full-reruns", action="store_true",
                        help="send layer/head changes as full reruns even where the widget is inside st.fragment "
                             "(the browser sends a fragment rerun; this measures the old behaviour)")
    parser.add_argument("--warmup", action="store_true",
                        help="open the attention page once (untimed) before the students come (not with --cold-herd)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--port", type=int, default=0, help="0: a free port")
    parser.add_argument("--json", type=Path, help="also write raw results here")
    args = parser.parse_args()
    if not 1 <= args.students <= MAX_STUDENTS:
        parser.error(f"--students must be 1..{MAX_STUDENTS}")
    args.think = tuple(sorted(args.think))
    if args.cold_herd and args.warmup:
        parser.error("--cold-herd measures a cold server: no --warmup")

    def on_sigterm(signum, frame):
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, on_sigterm)
    print(f"hashing shipped models ({', '.join(shipped_names())}) …", flush=True)
    hashes_before = model_hashes()
    load_before = os.getloadavg()
    server = Server(args.port or free_port())
    samples: list = []
    try:
        print(f"starting streamlit on {HOST}:{server.port} …", flush=True)
        healthy = server.start(timeout=min(120.0, args.timeout))
        print(f"healthy after {healthy:.1f} s; {args.students} students "
              + ("connect at once (cold herd)" if args.cold_herd else f"start over {args.ramp:g} s"), flush=True)
        cpu_before = resource.getrusage(resource.RUSAGE_SELF)
        students, timed_out, wall = asyncio.run(drive(args, server, shipped_names(), samples))
        cpu_after = resource.getrusage(resource.RUSAGE_SELF)
        client_cpu = (cpu_after.ru_utime + cpu_after.ru_stime) - (cpu_before.ru_utime + cpu_before.ru_stime)
    except KeyboardInterrupt:
        print("interrupted; stopping the server", file=sys.stderr)
        return 130
    finally:
        server.stop()
    hashes_after = model_hashes()
    summary = report(args, students, server, samples, timed_out, wall, healthy, hashes_before, hashes_after,
                     load_before, client_cpu)
    if args.json:
        args.json.write_text(json.dumps(summary, indent=1, default=str))
        print(f"raw results: {args.json}")
    # The latency target is informative; failures and a model loaded twice make the exit status 1.
    return 0 if not summary["failed_sessions"] and summary["models_loaded_once"] else 1


if __name__ == "__main__":
    sys.exit(main())

"""Live class: N students answer the same question within a few seconds; is every answer stored, and how soon
does the teacher's chart show them all?

    python bench/class_answers.py [--students 30] [--window 5] [--poll 2]
    python bench/class_answers.py --url http://127.0.0.1:8500 [--data DIR]   # serve.py running
    python bench/class_answers.py --text ...   # the intro's text question instead: each student types a word
    python bench/class_answers.py --cell ...   # a cell question (issue 55): the class at intro stop 12, taps a key

Every participant is a serving.streamlit_client.StreamlitClient (the protocol client of bench/load_classroom.py:
a browser without the front end that fetches the page, opens /_stcore/stream and sends BackMsg reruns) that also
keeps the metrics its runs draw. Without --url the script starts its own server (load_classroom.py's Server:
`streamlit run app.py` on 127.0.0.1) with its class database in a fresh temporary folder (ATTENTION_LAB_DATA).
With --url it targets a running server or serve.py's HAProxy (each client keeps the sticky cookie it is given,
so students spread over the replicas, which share one SQLite file); --data names that server's data folder
(default: $ATTENTION_LAB_DATA, else ./data beside app.py, as classroom/store.py) so the stored answers can be
counted. The teacher page must be open (no ATTENTION_LAB_TEACHER_PASSWORD in the server's environment).

1. The teacher opens /teacher and presses "Start a class" (the form's submit button); the class code is read
   from the "Class code" metric.
2. N students open /?class=CODE (the join link of the QR code): the app joins them and opens stop 1 of the
   lesson. Each finds the stop's radio question (key q_intro_1_choice) and the "Answer" submit button.
3. Within --window seconds (uniformly random start times) every student picks an option and submits. From the
   window's start each student's page also follows her class, as her browser does, until every student's page is
   drawn: where the page holds a class watch (ui/live_class/class_watch.py), the client does what its JavaScript
   does: a GET of the class's version every `every_ms` over one kept connection (serving/class_version.py), and
   a rerun of the watch's fragment with its trigger value when the version differs from the page's; a page
   without one (an older commit) has its class poll's fragment rerun at the interval of its st.fragment(run_every)
   timer (ui/live_class/live_question.py, ui/lesson_bar/bar._class_poll).
   Measured per student, from the click: the confirmation ("Your answer is taken") reaching her (a browser draws
   each element as it arrives, before the run ends). In a class the stop's page (its chart gives the answer away)
   waits for the teacher's Reveal: once every student's answer is confirmed, the teacher presses "Reveal the answer
   to everyone", and each student's class poll then draws the stop's chart (her live question's fragment run, or a
   whole-page run where the app reruns the page): measured from the Reveal's click to the end of the first run
   after it that drew a chart (the same chart for the whole class, at once). A timer poll ticks at the interval
   its fragment's st.fragment(run_every) timer message names (the app under test's), STUDENT_POLL_SECONDS until
   seen.
4. Meanwhile the teacher's results fragment reruns every --poll seconds, as the browser's st.fragment(run_every)
   timer makes it do; each rerun's "Answered" metric is recorded.
5. With --late-joiners K, K more students open the join link at random times within the window (a burst must not
   starve joins): the time from their first request to the question on their screen is reported.

Reported: answers stored in the database (counted through classroom/store.py after the run: the SQLite file, or
the PostgreSQL database of $ATTENTION_LAB_DATABASE_URL), answers confirmed on the students' screens, the students'
answer latency, the students per replica (HAProxy's cookie), and the time from the last answer's confirmation to
the first teacher refresh whose "Answered" shows all N (target: within 3 s).

From the start of the answer window to the end: the server's CPU (its own server, or serve.py's replicas from
--serve-state) beside this bench client's own CPU (it shares the machine's cores: a large share means the figures
measure the client too), and, every 0.5 s, each replica's health as HAProxy would see it: Streamlit's
/_stcore/health on the replica's port (on its event loop) and, under serve.py, the liveness port HAProxy checks
(serving/liveness.py), with HAProxy's own view of the replicas (any not UP is reported).
"""
from __future__ import annotations

import argparse
import asyncio
import datetime
import json
import os
import re
import random
import statistics
import sys
import resource
import tempfile
import threading
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urljoin, urlsplit

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from classroom.store import DATA_ENV, DATABASE_URL_ENV, DB_NAME, ClassStore, data_folder  # noqa: E402
from classroom.teacher_password import teacher_password  # noqa: E402
from classroom_report import machine, percentile  # noqa: E402
from load_classroom import SERVE_STATE, Server, free_port, process_status, read_serve_state  # noqa: E402
from serving.haproxy import HEALTH_PATH, STICKY_COOKIE, server_states  # noqa: E402
from serving.kept_connection import KeptConnection  # noqa: E402
from serving.streamlit_client import StreamlitClient, http_get  # noqa: E402
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg  # noqa: E402
from streamlit.proto.WidgetStates_pb2 import WidgetState  # noqa: E402

QUESTION_KEY = "q_intro_1_choice"  # stop 1's radio question (lessons/)
TEXT_STOP = 16  # --text: the intro's text question ("Before you train one: in one word, what does a query ask for?")
TEXT_WORDS = ("keys", "Keys", "relevance", "a match", "similarity", "context", "관련성", "키", "information",
              "🔑 keys", "which words matter", "attention")  # what --text's students type (several spellings a group)
# --cell: intro stop 12's cell question (issue 55), its key list: the tap's keyboard twin, the same answer path
CELL_STOP, CELL_KEY = 12, "q_intro_12_key"
STUDENT_POLL_SECONDS = 3  # a class poll's interval until its timer message says (ui/lesson_bar/bar.FOLLOW_SECONDS)
CHARTS = ("plotly_chart", "arrow_vega_lite_chart")  # the elements that are a stop's chart
IN_CLASS = "In class "  # how the class poll's caption starts: the bench finds the poll's fragment by it
CONFIRMATIONS = ("Right", "Your answer")  # how the student's answer message starts
REVEAL = "Reveal the answer to everyone"  # the teacher's button (i18n/en/class_teacher.toml: reveal)
WATCH_COMPONENT = "attention_lab_class_watch"  # ui/live_class/class_watch.py's component (its element's name)
VERSION = re.compile(r"[0-9a-f]{16}|ended")  # what the route answers (classroom/recent.class_version)
HELD_SECONDS = 20.0  # the longest the server holds a watch's GET (serving/class_version.HOLD_SECONDS)


@dataclass
class ClassWatch:
    """A page's class watch as its last run drew it: the component's element id, its fragment, the version route
    (relative to the page), the version the page was drawn at, how often it asks, and the version it last rerun
    for (class_watch.js's `asked`)."""
    element: str
    fragment: str
    url: str
    version: str
    every: float
    fallback: float
    asked: str | None = None


class ClassClient(StreamlitClient):
    """A StreamlitClient that also keeps the metrics its runs drew: label -> (value, id of the fragment)."""

    def __init__(self, index: int, base_url: str):
        super().__init__(base_url)
        self.index = index
        self.metrics: dict[str, tuple[str, str]] = {}
        self.confirmation_seen: float | None = None  # when the answer's message first reached this client
        self.page_drawn: float | None = None  # when the first run after the Reveal that drew a chart ended
        self.watching_confirmation = False
        self.watching_page = False  # the teacher has revealed: the next run that draws a chart draws the stop's
        self.needs_chart = True  # --text: the text stop's page (the train page) draws no chart: any run after it
        self.poll_fragment = ""  # the id of the class poll's st.fragment (its run_every timer is simulated)
        self.timers: dict[str, float] = {}  # fragment id -> its run_every seconds (the app's auto_rerun messages)
        self._run_chart = False  # the run under way drew a chart
        self.watch: ClassWatch | None = None  # the page's class watch, if it has one
        self.connection = KeptConnection(base_url)  # the browser's kept connection for the watch's GETs
        self.version_gets: list[float] = []  # seconds each GET of the class's version took
        self.change_seen: float | None = None  # after the Reveal: when the watch's GET first saw the class changed
        self.lock = asyncio.Lock()  # a session runs one script at a time: the watch's reruns and the answer take turns

    @property
    def poll_seconds(self) -> float:
        """How often the page asks about its class: its class watch's interval, or its poll fragment's timer."""
        if self.watch is not None:
            return self.watch.every
        return self.timers.get(self.poll_fragment, STUDENT_POLL_SECONDS)

    def _keep_watch(self, element, fragment: str) -> None:
        component = element.bidi_component
        if component.component_name != WATCH_COMPONENT:
            return
        data = json.loads(component.json or component.mixed.json or "{}")
        asked = self.watch.asked if self.watch is not None else None
        self.watch = ClassWatch(component.id, fragment, data["url"], data["version"], data["every_ms"] / 1000,
                                data["fallback_ms"] / 1000, asked)

    def trigger_msg(self, component_id: str, event: str, value, fragment_id: str = "") -> bytes:
        """What an st.components.v2 component's setTriggerValue(event, value) sends: a rerun (of the fragment the
        component is drawn in) carrying the component's trigger payload once, beside the other widgets' states."""
        trigger_id = f"$$STREAMLIT_INTERNAL_KEY_{component_id}__events"  # bidi_component.main._make_trigger_id
        self.widgets[trigger_id] = WidgetState(id=trigger_id, json_trigger_value=json.dumps(
            [{"event": event, "value": value}]))
        try:
            return self.widget_rerun_msg(fragment_id)
        finally:
            del self.widgets[trigger_id]

    async def follow_class(self) -> tuple[bytes | None, str]:
        """One ask of the class watch, as class_watch.js does it (naming the version its page was drawn at, so the
        server may hold it until the class changes): -> (the rerun to send, or None; what happened)."""
        watch = self.watch
        page = f"{self.base_url}/{self.page_path}"
        path = f"{urlsplit(urljoin(page, watch.url)).path}?seen={watch.asked or watch.version}"
        start = time.perf_counter()
        status, body = await self.connection.get(path, self.cookie_header(), timeout=HELD_SECONDS + 10)
        self.version_gets.append(time.perf_counter() - start)
        version = body.strip()
        if status != 200 or not VERSION.fullmatch(version):  # no answer: the watch reruns its fragment, the old poll
            return self.trigger_msg(watch.element, "changed", f"poll {time.time()}", watch.fragment), f"GET {status}"
        if version in (watch.version, watch.asked):
            return None, "unchanged"
        watch.asked = version
        if self.watching_page and self.change_seen is None:
            self.change_seen = time.perf_counter()
        return self.trigger_msg(watch.element, "changed", version, watch.fragment), "changed"

    def _handle(self, message: ForwardMsg, received: float) -> None:
        shown = message
        if message.WhichOneof("type") == "ref_hash" and message.ref_hash in self.cache:  # a delta sent before
            shown = self.cache[message.ref_hash][0]
        if shown.WhichOneof("type") == "auto_rerun":
            self.timers[shown.auto_rerun.fragment_id] = shown.auto_rerun.interval
        elif shown.WhichOneof("type") == "delta" and shown.delta.WhichOneof("type") == "new_element":
            element = shown.delta.new_element
            kind = element.WhichOneof("type")
            if kind in CHARTS:
                self._run_chart = True
            elif kind == "metric":
                self.metrics[element.metric.label] = (element.metric.body, shown.delta.fragment_id)
            elif kind == "bidi_component":
                self._keep_watch(element, shown.delta.fragment_id)
            elif kind == "markdown" and element.markdown.body.startswith(IN_CLASS) and shown.delta.fragment_id:
                self.poll_fragment = shown.delta.fragment_id
            elif (self.watching_confirmation and self.confirmation_seen is None and kind in ("alert", "markdown")
                  and getattr(element, kind).body.startswith(CONFIRMATIONS)):
                # the browser draws a delta as it arrives, before the run ends: the student sees it from now
                self.confirmation_seen = received
        elif shown.WhichOneof("type") == "new_session":
            self._run_chart = False
        elif (shown.WhichOneof("type") == "script_finished" and (self._run_chart or not self.needs_chart)
              and self.watching_page
              and self.page_drawn is None and shown.script_finished in (
                  ForwardMsg.FINISHED_SUCCESSFULLY, ForwardMsg.FINISHED_FRAGMENT_RUN_SUCCESSFULLY)):
            self.page_drawn = received
        super()._handle(message, received)

    @property
    def replica(self) -> str:
        return self.cookies.get(STICKY_COOKIE, "")

    def confirmed(self) -> bool:
        return any(text.startswith(CONFIRMATIONS) for text in self.run_texts)

    def choose_pill(self, key: str, choose) -> str | None:
        """Pick one option of an st.pills (a cell question's key list) as its front end reports it: the option's
        label; sent with the next click (Answer), as a tap's pick then its Answer; returns a problem or None."""
        found = self.find(key)
        if found is None:
            return f"widget {key!r} not drawn"
        widget_id, proto = found
        self.widgets[widget_id].string_array_value.data[:] = [choose([option.content for option in proto.options])]
        return None


def client_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


class Watch:
    """From the answer window's start: server CPU (summed over `pids()`, re-read: a restarted replica counts), and
    every 0.5 s each process's RSS (its peak, by name), the health endpoints' answer times and HAProxy's view of the
    replicas (`stats_socket`). `pids()`: process name (a replica's, or "server") -> pid."""

    def __init__(self, pids, probes: dict[str, str], stats_socket: Path | None):
        self.pids, self.probes, self.stats_socket = pids, probes, stats_socket
        self.cpu_by_pid: dict[int, list[float]] = {}  # pid -> [CPU at start, latest]
        self.peak_rss: dict[str, float] = {}  # name -> its largest RSS sample, MiB
        self.health: dict[str, list[float]] = {name: [] for name in probes}  # seconds; 5.0+ = no answer in time
        self.not_up: Counter[str] = Counter()  # "r1 DOWN" -> samples
        self.stop = threading.Event()
        self.threads: list[threading.Thread] = []

    def server_cpu(self) -> float:
        for name, pid in self.pids().items():
            status = process_status(pid)
            if status is not None:
                self.cpu_by_pid.setdefault(pid, [status[2], status[2]])[1] = status[2]
                self.peak_rss[name] = max(self.peak_rss.get(name, 0.0), status[0])
        return sum(latest - first for first, latest in self.cpu_by_pid.values())

    def _memory(self) -> None:
        while not self.stop.wait(0.5):
            self.server_cpu()

    def _probe(self, name: str, url: str) -> None:
        while not self.stop.is_set():
            start = time.perf_counter()
            status, _ = http_get(url, timeout=5.0)  # HAProxy's `timeout check 5s`
            took = time.perf_counter() - start
            self.health[name].append(took if status == 200 else max(took, 5.0))
            self.stop.wait(max(0.0, 0.5 - took))

    def _haproxy(self) -> None:
        while not self.stop.wait(0.5):
            try:
                for name, state in server_states(self.stats_socket).items():
                    if not state.startswith("UP"):
                        self.not_up[f"{name} {state}"] += 1
            except OSError:
                self.not_up["stats socket unreachable"] += 1

    def start(self) -> None:
        self.server_cpu()
        self.client_start = client_cpu()
        self.threads = [threading.Thread(target=self._probe, args=item, daemon=True) for item in self.probes.items()]
        self.threads.append(threading.Thread(target=self._memory, daemon=True))
        if self.stats_socket is not None:
            self.threads.append(threading.Thread(target=self._haproxy, daemon=True))
        for thread in self.threads:
            thread.start()

    def finish(self) -> dict:
        self.stop.set()
        for thread in self.threads:
            thread.join(timeout=6)
        return {"server_cpu": self.server_cpu() if self.cpu_by_pid else None,
                "client_cpu": client_cpu() - self.client_start, "health": self.health, "not_up": dict(self.not_up),
                "peak_rss": dict(self.peak_rss)}


async def run(args, base_url: str) -> dict:
    timeout = args.interaction_timeout
    teacher = ClassClient(-1, base_url)
    await teacher.connect("teacher")
    outcome = await teacher.rerun(teacher.open_page_msg("teacher"), timeout, "teacher")
    start = teacher.button_id("Start a class")
    if not outcome.ok or start is None:
        raise RuntimeError(f"no 'Start a class' button on /teacher: {outcome.problems}")
    problem = (teacher.set_text("class_start_password", args.password)  # a class as large as the bench's
               or teacher.set_number("class_start_size", args.students + args.late_joiners))
    if problem:
        raise RuntimeError(problem)
    outcome = await teacher.rerun(teacher.click_msg(start), timeout)
    code = teacher.metrics.get("Class code", ("", ""))[0]
    if not outcome.ok or len(code) != 6 or "Answered" not in teacher.metrics:
        raise RuntimeError(f"no class started: {outcome.problems} {teacher.metrics}")
    question_key = QUESTION_KEY
    if args.text:  # her phone moves the class to the text stop; her projected page follows it
        ClassStore(args.location).take_back(code).move(TEXT_STOP)
        question_key = f"q_intro_{TEXT_STOP}_text"
        outcome = await teacher.rerun(teacher.open_page_msg("teacher"), timeout, "teacher")
        if not outcome.ok or "Answered" not in teacher.metrics:
            raise RuntimeError(f"the teacher's page did not follow the class to stop {TEXT_STOP}: {outcome.problems}")
    if args.cell:  # her Next stop up to the cell question (the students join there)
        for _ in range(CELL_STOP - 1):
            outcome = await teacher.rerun(teacher.click_msg(teacher.button_id("Next stop")), timeout)
            if not outcome.ok:
                raise RuntimeError(f"the teacher's Next stop failed: {outcome.problems}")
        question_key = CELL_KEY
    live_fragment = teacher.metrics["Answered"][1]

    students = [ClassClient(i, base_url) for i in range(args.students)]
    for student in students:  # joins happen before the answer window (not timed here)
        # each connects just before it joins: a websocket that sends nothing for 30 s is closed (serving/socket_caps),
        # and 300 joins one after another take longer than that on a loaded machine
        await student.connect()
        student.needs_chart = not args.text
        outcome = await student.rerun(student.open_page_msg("", f"class={code}"), timeout)
        if not outcome.ok or student.button_id("Answer") is None or student.find(question_key) is None:
            raise RuntimeError(f"student {student.index} did not reach the question: {outcome.problems}")

    rng = random.Random(args.seed)
    # (when the confirmation was seen, click to confirmation, Reveal to the page drawn, the answer's own run)
    confirmed: list[tuple[float, float, float, float]] = []
    answered = {"count": 0}  # students whose answer is confirmed (or failed): at all of them the teacher reveals
    everyone_answered = asyncio.Event()
    reveal: dict[str, float] = {}  # "at": when the teacher's Reveal was clicked
    drawn_students: set[int] = set()
    failures: list[str] = []
    polls: list[tuple[float, str]] = []  # (time of the teacher refresh, its "Answered" value)
    args.watch.start()
    window_start = time.perf_counter()

    done = {"pages": 0}  # students whose page is drawn after their answer (or who failed)
    everyone_done = asyncio.Event()

    def answer_done() -> None:
        answered["count"] += 1
        if answered["count"] == len(students):
            everyone_answered.set()

    def finished(student: ClassClient) -> None:
        if not student.watching_confirmation or student.confirmation_seen is None:
            answer_done()  # failed before its answer was confirmed: the Reveal does not wait for it
        done["pages"] += 1
        if done["pages"] == len(students):
            everyone_done.set()

    async def poll(student: ClassClient) -> bool:
        """One tick of the student's page following her class: her class watch's GET (and its fragment's rerun when
        the class changed), or, on a page without one, her class poll's run as its run_every timer sends it; False
        if it failed."""
        try:
            if student.watch is not None:
                message, _ = await student.follow_class()
                if message is None:
                    return True
            else:
                message = student.widget_rerun_msg(student.poll_fragment)
            outcome = await student.rerun(message, timeout)
        except (TimeoutError, ConnectionError) as error:
            failures.append(f"student {student.index} poll: {type(error).__name__}: {error}")
            return False
        if not outcome.ok:
            failures.append(f"student {student.index} poll: {outcome.problems}")
            return False
        return True

    async def send_answer(student: ClassClient) -> tuple[float, float] | None:
        """Her choice, then her click on "Answer" as a browser sends it (the click names the st.fragment the form is
        in, which reruns alone; her session runs one script at a time, so it waits for her watch's rerun) -> (when she
        clicked, the run's seconds), or None when it failed (said in `failures`)."""
        problem = (student.set_text(question_key, f"{TEXT_WORDS[student.index % len(TEXT_WORDS)]} {student.index % 5}")
                   if args.text else student.choose_pill(question_key, rng.choice) if args.cell
                   else student.choose_option(question_key, rng.choice))
        if problem is not None:
            failures.append(f"student {student.index}: {problem}")
            return None
        async with student.lock:
            student.watching_confirmation = True
            clicked = time.perf_counter()
            button = student.button_id("Answer")
            try:
                outcome = await student.rerun(student.click_msg(button, student.fragment_of.get(button, "")), timeout)
            except (TimeoutError, ConnectionError) as error:
                failures.append(f"student {student.index}: {type(error).__name__}: {error}")
                return None
        if not outcome.ok or student.confirmation_seen is None:
            failures.append(f"student {student.index}: {outcome.problems} {student.run_texts[-3:]}")
            return None
        return clicked, outcome.seconds

    async def follow(student: ClassClient) -> None:
        """The page's class watch, as class_watch.js runs it beside everything else on the page: its GET (held by the
        server until the class changes), its fragment's rerun when it changed, a pause, again."""
        while not everyone_done.is_set():
            message, _ = await student.follow_class()
            if message is not None:
                async with student.lock:
                    try:
                        outcome = await student.rerun(message, timeout)
                    except (TimeoutError, ConnectionError) as error:
                        failures.append(f"student {student.index} watch: {type(error).__name__}: {error}")
                        return
                if not outcome.ok:
                    failures.append(f"student {student.index} watch: {outcome.problems}")
            await asyncio.sleep(student.watch.every)

    async def answer_watching(student: ClassClient) -> None:
        """A page with a class watch: the watch runs on its own; her answer at a random moment of the window; then
        her page drawn after the Reveal (or a failure, or the Reveal's timeout) ends her part."""
        follower = asyncio.create_task(follow(student))
        try:
            await asyncio.sleep(max(0.0, window_start + rng.uniform(0, args.window) - time.perf_counter()))
            sent = await send_answer(student)
            if sent is None:
                finished(student)
                return
            clicked, answer_run = sent
            answer_done()
            while student.page_drawn is None and not follower.done():
                if "at" in reveal and time.perf_counter() - reveal["at"] > timeout:
                    failures.append(f"student {student.index}: no page within {timeout:.0f} s of the Reveal")
                    finished(student)
                    return
                await asyncio.sleep(0.05)
            if student.page_drawn is None:
                failures.append(f"student {student.index}: her class watch stopped before the Reveal reached her")
                finished(student)
                return
            drawn_students.add(student.index)
            confirmed.append((student.confirmation_seen, student.confirmation_seen - clicked,
                              student.page_drawn - reveal["at"], answer_run))
            finished(student)
        finally:
            follower.cancel()

    async def answer(student: ClassClient) -> None:
        """The student's tab from the window's start: her class poll at its timer's interval (her browser's
        timer), her answer at a random moment of the window, and polls on until everyone's page is drawn."""
        if student.watch is not None:
            await answer_watching(student)
            return
        answer_at = window_start + rng.uniform(0, args.window)
        next_poll = window_start + rng.uniform(0, student.poll_seconds)
        clicked: float | None = None
        answer_run = 0.0
        while not everyone_done.is_set():
            if clicked is not None and student.page_drawn is not None and student.index not in drawn_students:
                drawn_students.add(student.index)
                confirmed.append((student.confirmation_seen, student.confirmation_seen - clicked,
                                  student.page_drawn - reveal["at"], answer_run))
                finished(student)
            if clicked is None and answer_at <= next_poll:
                await asyncio.sleep(max(0.0, answer_at - time.perf_counter()))
                sent = await send_answer(student)
                if sent is None:
                    finished(student)
                    return
                clicked, answer_run = sent
                answer_done()
                continue
            if "at" in reveal and time.perf_counter() - reveal["at"] > timeout:
                failures.append(f"student {student.index}: no page within {timeout:.0f} s of the Reveal")
                finished(student)
                return
            await asyncio.sleep(max(0.0, next_poll - time.perf_counter()))
            next_poll += student.poll_seconds
            if not (student.poll_fragment or student.watch) or not await poll(student):
                if not (student.poll_fragment or student.watch):
                    failures.append(f"student {student.index}: no class poll on the page")
                finished(student)
                return

    joins: list[float] = []
    late = [ClassClient(args.students + i, base_url) for i in range(args.late_joiners)]

    async def join_late(student: ClassClient) -> None:
        await asyncio.sleep(rng.uniform(0, args.window))
        start = time.perf_counter()
        try:
            await student.connect()
            outcome = await student.rerun(student.open_page_msg("", f"class={code}"), timeout)
        except (TimeoutError, ConnectionError) as error:
            failures.append(f"late joiner {student.index}: {type(error).__name__}: {error}")
            return
        if not outcome.ok or student.find(question_key) is None:
            failures.append(f"late joiner {student.index}: no question: {outcome.problems}")
        else:
            joins.append(time.perf_counter() - start)

    async def teacher_timer(stop: asyncio.Event) -> None:
        """Her live results every --poll s (her browser's timer); once every answer is confirmed, her Reveal (one
        click at a time: a session runs one script at a time)."""
        while not stop.is_set():
            await asyncio.sleep(args.poll)
            await teacher.rerun(teacher.widget_rerun_msg(live_fragment), timeout)
            polls.append((time.perf_counter(), teacher.metrics.get("Answered", ("?", ""))[0]))
            if everyone_answered.is_set() and "at" not in reveal:
                button = teacher.button_id(REVEAL)
                if button is None:
                    raise RuntimeError(f"no {REVEAL!r} button on the teacher's page")
                for student in students:
                    student.watching_page = True
                reveal["at"] = time.perf_counter()
                outcome = await teacher.rerun(teacher.click_msg(button), timeout)
                if not outcome.ok:
                    raise RuntimeError(f"the teacher's Reveal failed: {outcome.problems}")
                reveal["run"] = outcome.seconds

    lags: list[tuple[float, float]] = []  # (when, how late) this client's event loop woke from a 20 ms sleep

    async def loop_lag() -> None:
        """This bench client's own lateness: a reading taken while it parsed 300 pages' messages is its, not the
        server's; reported for the seconds after the Reveal."""
        while True:
            before = time.perf_counter()
            await asyncio.sleep(0.02)
            lags.append((before, time.perf_counter() - before - 0.02))

    lag_task = asyncio.create_task(loop_lag())
    stop = asyncio.Event()
    timer = asyncio.create_task(teacher_timer(stop))
    await asyncio.gather(*(answer(s) for s in students), *(join_late(s) for s in late))
    last_answer = max((t for t, _, _, _ in confirmed), default=time.perf_counter())

    def seen_all() -> list[float]:
        return [t for t, v in polls if v == str(args.students) and t >= last_answer]

    deadline = time.perf_counter() + 15
    while time.perf_counter() < deadline and not seen_all() and not timer.done():
        await asyncio.sleep(0.1)
    stop.set()
    lag_task.cancel()
    await timer  # a teacher refresh that failed raises here: the run cannot be judged
    watched = args.watch.finish()
    for client in students + late + [teacher]:
        await client.close()
        await client.connection.close()
    return {"code": code, "confirmed": confirmed, "failures": failures, "polls": polls, "joins": joins,
            "replicas": Counter(s.replica for s in students if s.replica), "teacher_replica": teacher.replica,
            "answer_window": last_answer - window_start,
            "watched": sum(s.watch is not None for s in students),
            "change_seen": [s.change_seen - reveal["at"] for s in students if s.change_seen and "at" in reveal],
            "reveal_run": reveal.get("run"),
            "client_lag": max((lag for at, lag in lags if "at" in reveal and at >= reveal["at"]), default=None),
            "version_gets": [t for s in students for t in s.version_gets],
            "chart_delay": (seen_all()[0] - last_answer) if seen_all() else None,
            "wall": time.perf_counter() - window_start, **watched}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--students", type=int, default=30)
    parser.add_argument("--window", type=float, default=5.0, help="students answer within this many seconds")
    parser.add_argument("--poll", type=float, default=2.0, help="the teacher fragment's run_every, seconds")
    parser.add_argument("--late-joiners", type=int, default=0,
                        help="this many more students join the class during the answer window")
    parser.add_argument("--interaction-timeout", type=float, default=60.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--text", action="store_true",
                        help=f"answer the intro's text question (stop {TEXT_STOP}) by typing: the class is moved there "
                             "first; afterwards the teacher's moderation list is read from the store and timed")
    parser.add_argument("--cell", action="store_true",
                        help=f"the class at intro stop {CELL_STOP}'s cell question: each student picks a key of its "
                             "row (the store checks it is on the map)")
    parser.add_argument("--url", help="target this running server or proxy (e.g. serve.py's) instead of starting one")
    parser.add_argument("--data", type=Path,
                        help=f"with --url: the server's data folder (default ${DATA_ENV}, else ./data; "
                             f"${DATABASE_URL_ENV} when set)")
    parser.add_argument("--serve-state", type=Path, default=SERVE_STATE,
                        help="with --url: serve.py's state file (replica pids and ports: CPU and health probes)")
    parser.add_argument("--json", type=Path, help="also write the run's figures here (bench/serve_classroom.py reads it)")
    return parser


def watch_for(args, server: Server | None) -> Watch:
    """What to watch: the own server's process, or serve.py's replicas and HAProxy (from its state file)."""
    if server is not None:
        return Watch(lambda: {"server": server.process.pid}, {"streamlit health": f"{server.url}{HEALTH_PATH}"}, None)
    state = read_serve_state(args.serve_state) or {}
    replicas = state.get("replicas", {})
    probes = {f"{name} streamlit health": f"http://127.0.0.1:{r['port']}{HEALTH_PATH}" for name, r in replicas.items()}
    probes |= {f"{name} liveness (HAProxy's check)": f"http://127.0.0.1:{r['liveness_port']}{HEALTH_PATH}"
               for name, r in replicas.items() if r.get("liveness_port")}

    def pids() -> dict[str, int]:
        now = read_serve_state(args.serve_state) or {}
        return {name: r["pid"] for name, r in now.get("replicas", {}).items() if r.get("pid")}

    socket = Path(state["config"]).parent / "haproxy.sock" if state.get("config") else None
    return Watch(pids, probes, socket)


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.students < 1:
        parser.error("--students must be at least 1")
    if args.data and not args.url:
        parser.error("--data goes with --url (without it the script's own server uses a fresh folder)")
    if args.url:
        database = (args.data or data_folder()) / DB_NAME
        os.environ[DATA_ENV] = str(database.parent)  # teacher_password() reads the server's password file there
        if read_serve_state(args.serve_state) is None:
            print(f"no serve.py state at {args.serve_state}: no server CPU or health probes", file=sys.stderr)
    else:
        data = tempfile.mkdtemp(prefix="class_bench_")
        os.environ[DATA_ENV] = data  # the server (a child process) inherits it
        os.environ.pop("ATTENTION_LAB_TEACHER_PASSWORD", None)
        database = Path(data) / DB_NAME
    args.password = teacher_password()  # the operator's, or the one the server generates (the same file)
    args.location = os.environ.get(DATABASE_URL_ENV) or str(database)
    load_before = os.getloadavg()
    server = None if args.url else Server(free_port())
    try:
        if server is not None:
            server.start(timeout=120)
        args.watch = watch_for(args, server)
        result = asyncio.run(run(args, args.url.rstrip("/") if args.url else server.url))
    finally:
        if server is not None:
            server.stop()
    location = os.environ.get(DATABASE_URL_ENV) or str(database)
    if location == str(database) and not database.exists():
        print(f"no class database at {database} (with --url, give the server's --data folder)", file=sys.stderr)
        return 1
    stored = ClassStore(location).stored_answers(result["code"])
    latencies = [seen for _, seen, _, _ in result["confirmed"]]  # click -> the answer's message on screen
    drawn = [page for _, _, page, _ in result["confirmed"]]  # Reveal -> a whole-page run ended: the stop's chart
    delay = result["chart_delay"]
    load_after = os.getloadavg()
    target = f"{args.url}" if args.url else "own server"
    spread = (f"; students per replica {dict(sorted(result['replicas'].items()))}, teacher on "
              f"{result['teacher_replica'] or '?'}") if result["replicas"] else ""
    print(f"\n{datetime.date.today()} · {machine()} · {target}{spread} · load average before {load_before[0]:.2f}, "
          f"after {load_after[0]:.2f}\n")
    fmt = "{:.2f} s".format

    def spread_of(values: list[float]) -> str:
        if not values:
            return "–"
        return f"{fmt(statistics.median(values))} / {fmt(percentile(values, 95))} / {fmt(max(values))}"

    print("| students | answered within | stored in the DB | confirmed on screen | confirmation p50 / p95 / max "
          "| page drawn after the Reveal p50 / p95 / max | teacher chart shows all after the last answer | target |")
    print("|---|---|---|---|---|---|---|---|")
    print(f"| {args.students} | {result['answer_window']:.1f} s | {stored} | {len(latencies)} | "
          f"{spread_of(latencies)} | {spread_of(drawn)} | "
          f"{fmt(delay) if delay is not None else 'never'} (poll every {args.poll:g} s) | "
          f"all stored, confirmation p95 ≤ 2 s, chart ≤ 3 s |")
    server_cpu = result["server_cpu"]
    print(f"\nFrom the window's start to the end ({result['wall']:.1f} s): server CPU "
          f"{'–' if server_cpu is None else f'{server_cpu:.1f} s'}, this bench client's CPU "
          f"{result['client_cpu']:.1f} s ({result['client_cpu'] / max(result['wall'], 1e-9):.0%} of one core; the "
          f"same {os.cpu_count()} cores); peak RSS "
          + ", ".join(f"{name} {mib:,.0f} MiB" for name, mib in sorted(result["peak_rss"].items())))
    gets = result["version_gets"]
    print(f"Following the class: {result['watched']} of {args.students} pages with a class watch"
          + (f"; {len(gets)} GETs of the class's version (each held by the server until the class changed), answered "
             f"after p50 {fmt(statistics.median(gets))}, p95 {fmt(percentile(gets, 95))}" if gets
             else " (each page's poll fragment on its timer)"))
    if result["change_seen"]:
        print(f"After the Reveal, each watch saw the class changed (p50 / p95 / max): "
              f"{spread_of(result['change_seen'])}, then its fragment's run drew the chart; the teacher's Reveal run "
              f"took {fmt(result['reveal_run'] or 0)}; this bench client's event loop was at most "
              f"{fmt(result['client_lag'] or 0)} late after the Reveal")
    if args.late_joiners:
        joins = result["joins"]
        print(f"Joining during the burst: {len(joins)} of {args.late_joiners} reached the question; "
              f"p50 {fmt(statistics.median(joins)) if joins else '–'}, max {fmt(max(joins)) if joins else '–'}")
    print("\n| health endpoint (probed every 0.5 s) | probes | p50 | max | answered within 5 s |")
    print("|---|---|---|---|---|")
    for name, times in result["health"].items():
        print(f"| {name} | {len(times)} | {fmt(statistics.median(times)) if times else '–'} | "
              f"{fmt(max(times)) if times else '–'} | {sum(t < 5.0 for t in times)} of {len(times)} |")
    if result["not_up"] or args.url:
        print(f"\nHAProxy's replicas not UP (samples every 0.5 s): {result['not_up'] or 'none'}")
    if args.text:  # her moderation list once every text is in, as her private view reads it
        handle = ClassStore(location).take_back(result["code"])
        began = time.perf_counter()
        groups = handle.text_groups(f"intro:{TEXT_STOP}")
        print(f"\nThe teacher's moderation list of the {stored} texts: {len(groups)} groups "
              f"({sum(bool(g.flags) for g in groups)} flagged), read in {(time.perf_counter() - began) * 1000:.0f} ms")
    for failure in result["failures"][:10]:
        print("FAILED", failure)
    ok = (stored == args.students == len(latencies) and delay is not None and delay <= 3.0
          and len(result["joins"]) == args.late_joiners)
    if args.json:
        args.json.write_text(json.dumps({
            "students": args.students, "window": args.window, "answer_window_s": result["answer_window"],
            "stored": stored, "confirmed": len(latencies), "confirmation_s": latencies, "chart_s": drawn,
            "teacher_shows_all_s": delay, "late_joiners": args.late_joiners, "joined": len(result["joins"]),
            "server_cpu_s": server_cpu, "client_cpu_s": result["client_cpu"], "wall_s": result["wall"],
            "client_lag_s": result["client_lag"], "reveal_run_s": result["reveal_run"],
            "peak_rss_mib": result["peak_rss"], "replicas": dict(result["replicas"]), "not_up": result["not_up"],
            "failures": result["failures"], "load_before": load_before[0], "load_after": load_after[0]}, indent=1))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

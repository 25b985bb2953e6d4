"""Live class: N students answer the same question within a few seconds; is every answer stored, and how soon
does the teacher's chart show them all?

    python bench/class_answers.py [--students 30] [--window 5] [--poll 2]

Same protocol as bench/load_classroom.py (imported from it: its Server, its websocket Student and the ForwardMsg
handling): each student is a browser without the front end that fetches the page, opens
/_stcore/stream and sends BackMsg reruns. The server is `streamlit run app.py` on 127.0.0.1 with its class
database in a fresh temporary folder (ATTENTION_LAB_DATA).

1. The teacher opens /teacher and presses "Start a class" (the form's submit button); the class code is read
   from the "Class code" metric.
2. N students open /?class=CODE (the join link of the QR code): the app joins them and opens stop 1 of the
   lesson. Each finds the stop's radio question (key q_intro_1_choice) and the "Answer" submit button.
3. Within --window seconds (uniformly random start times) every student picks an option and submits; an answer
   counts as confirmed when the student's run finishes with the "Right"/"Your answer" message.
4. Meanwhile the teacher's results fragment reruns every --poll seconds, as the browser's st.fragment(run_every)
   timer makes it do; each rerun's "Answered" metric is recorded.

Reported: answers stored in the database (read with sqlite3 after the run), answers confirmed on the students'
screens, the students' answer latency, and the time from the last answer's confirmation to the first teacher
refresh whose "Answered" shows all N (target: within 3 s).
"""
from __future__ import annotations

import argparse
import asyncio
import datetime
import os
import random
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from load_classroom import (HOST, BackMsg, ClientState, ContextInfo, ForwardMsg, Server, Student,  # noqa: E402
                            WidgetState, free_port, machine, percentile)
from streamlit.proto.Alert_pb2 import Alert  # noqa: E402

OPTIONS = ["Transformer", "GRU with Bahdanau attention", "GRU without attention (one context vector)"]


class ClassClient(Student):
    """A Student that also keeps the metrics and success/warning messages of its runs, sends a query string
    (the ?class= of the join link) and sends no cached-message hashes (so every element arrives in full)."""

    def __init__(self, index: int, port: int, args, t0: float, query: str = ""):
        super().__init__(index, port, [], args, t0)
        self.query = query
        self.metrics: dict[str, tuple[str, str]] = {}  # label -> (value, fragment id)
        self.messages: list[str] = []

    def _handle(self, message: ForwardMsg, received: float) -> None:
        if message.WhichOneof("type") == "delta" and message.delta.WhichOneof("type") == "new_element":
            element = message.delta.new_element
            if element.WhichOneof("type") == "metric":
                self.metrics[element.metric.label] = (element.metric.body, message.delta.fragment_id)
            elif element.WhichOneof("type") == "alert" and element.alert.format in (Alert.SUCCESS, Alert.WARNING):
                self.messages.append(element.alert.body)
        super()._handle(message, received)

    def button(self, label: str) -> str | None:
        for widget_id, (kind, proto, _) in self.meta.items():
            if kind == "button" and proto.label == label:
                return widget_id
        return None

    async def request(self, page_name: str = "", fragment: str = "", click: str | None = None,
                      choose: tuple[str, str] | None = None) -> tuple[float, list[str]]:
        """One rerun (a page load, a click, or a fragment's timer) -> (seconds to script_finished, problems)."""
        if choose is not None:
            found = self._find(choose[0])
            if found is None:
                return 0.0, [f"widget {choose[0]!r} not drawn"]
            self.widgets[found[0]].string_value = choose[1]
        context = ContextInfo(timezone="UTC", timezone_offset=0, locale="en-US", is_embedded=False,
                              url=f"http://{HOST}:{self.port}/{page_name or self.page_path}", color_scheme="light")
        state = ClientState(query_string=self.query, page_script_hash="" if page_name else self.page_hash,
                            page_name=page_name, context_info=context, fragment_id=fragment)
        for widget in self.widgets.values():
            state.widget_states.widgets.append(widget)
        if click:
            state.widget_states.widgets.append(WidgetState(id=click, trigger_value=True))
        self.messages = []
        while not self.events.empty():
            self.events.get_nowait()
        sent = time.perf_counter()
        await self.ws.send(BackMsg(rerun_script=state).SerializeToString())
        while True:
            event, received, status, errors = await asyncio.wait_for(self.events.get(), 60)
            if event == "closed":
                return time.perf_counter() - sent, errors
            if status != ForwardMsg.FINISHED_EARLY_FOR_RERUN:
                break
        self.page_path = next((p for p, h in self.pages.items() if h == self.page_hash), self.page_path)
        return received - sent, list(errors) + ([] if status in (ForwardMsg.FINISHED_SUCCESSFULLY,
                                                                 ForwardMsg.FINISHED_FRAGMENT_RUN_SUCCESSFULLY)
                                                else [f"status {status}"])


async def run(args, port: int) -> dict:
    t0 = time.perf_counter()
    teacher = ClassClient(-1, port, args, t0)
    await teacher.connect()
    await teacher.request(page_name="teacher")
    start = teacher.button("Start a class")
    if start is None:
        raise RuntimeError("no 'Start a class' button on /teacher")
    _, problems = await teacher.request(click=start)
    code = teacher.metrics.get("Class code", ("", ""))[0]
    if problems or len(code) != 6:
        raise RuntimeError(f"no class started: {problems} {teacher.metrics}")
    live_fragment = teacher.metrics["Answered"][1]

    students = [ClassClient(i, port, args, t0, query=f"class={code}") for i in range(args.students)]
    await asyncio.gather(*(s.connect() for s in students))
    for student in students:  # joins happen before the answer window (not timed here)
        _, problems = await student.request(page_name="")
        if problems or student.button("Answer") is None:
            raise RuntimeError(f"student {student.index} did not reach the question: {problems}")

    rng = random.Random(args.seed)
    confirmed: list[tuple[float, float]] = []  # (finish time, latency)
    failures: list[str] = []
    polls: list[tuple[float, str]] = []
    window_start = time.perf_counter()

    async def answer(student: ClassClient) -> None:
        await asyncio.sleep(rng.uniform(0, args.window))
        seconds, problems = await student.request(click=student.button("Answer"),
                                                  choose=("q_intro_1_choice", rng.choice(OPTIONS)))
        if problems or not any(m.startswith(("Right", "Your answer")) for m in student.messages):
            failures.append(f"student {student.index}: {problems} {student.messages}")
        else:
            confirmed.append((time.perf_counter(), seconds))

    async def teacher_timer(stop: asyncio.Event) -> None:
        while not stop.is_set():
            await asyncio.sleep(args.poll)
            await teacher.request(fragment=live_fragment)
            polls.append((time.perf_counter(), teacher.metrics.get("Answered", ("?", ""))[0]))

    stop = asyncio.Event()
    timer = asyncio.create_task(teacher_timer(stop))
    await asyncio.gather(*(answer(s) for s in students))
    last_answer = max((t for t, _ in confirmed), default=time.perf_counter())
    deadline = time.perf_counter() + 15
    while time.perf_counter() < deadline and not any(v == str(args.students) and t >= last_answer
                                                     for t, v in polls):
        await asyncio.sleep(0.1)
    stop.set()
    await timer
    seen_all = [t for t, v in polls if v == str(args.students) and t >= last_answer]
    for client in students + [teacher]:
        await client.ws.close()
    return {"code": code, "confirmed": confirmed, "failures": failures, "polls": polls,
            "answer_window": last_answer - window_start,
            "chart_delay": (seen_all[0] - last_answer) if seen_all else None}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--students", type=int, default=30)
    parser.add_argument("--window", type=float, default=5.0, help="students answer within this many seconds")
    parser.add_argument("--poll", type=float, default=2.0, help="the teacher fragment's run_every, seconds")
    parser.add_argument("--interaction-timeout", type=float, default=60.0)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    args.think = (0.0, 0.0)
    data = tempfile.mkdtemp(prefix="class_bench_")
    os.environ["ATTENTION_LAB_DATA"] = data  # the server (a child process) inherits it
    os.environ.pop("ATTENTION_LAB_TEACHER_PASSWORD", None)
    load_before = os.getloadavg()
    server = Server(free_port())
    try:
        server.start(timeout=120)
        result = asyncio.run(run(args, server.port))
    finally:
        server.stop()
    with sqlite3.connect(Path(data) / "classroom.sqlite3") as db:
        stored = db.execute("SELECT COUNT(*) FROM answers WHERE code = ?", (result["code"],)).fetchone()[0]
    latencies = [s for _, s in result["confirmed"]]
    delay = result["chart_delay"]
    load_after = os.getloadavg()
    print(f"\n{datetime.date.today()} · {machine()} · load average before {load_before[0]:.2f}, "
          f"after {load_after[0]:.2f}\n")
    print("| students | answered within | stored in the DB | confirmed on screen | answer p50 / p95 / max "
          "| teacher chart shows all after the last answer | target |")
    print("|---|---|---|---|---|---|---|")
    fmt = "{:.2f} s".format
    print(f"| {args.students} | {result['answer_window']:.1f} s | {stored} | {len(latencies)} | "
          f"{fmt(statistics.median(latencies)) if latencies else '–'} / "
          f"{fmt(percentile(latencies, 95)) if latencies else '–'} / {fmt(max(latencies)) if latencies else '–'} | "
          f"{fmt(delay) if delay is not None else 'never'} (poll every {args.poll:g} s) | all stored, ≤ 3 s |")
    for failure in result["failures"][:10]:
        print("FAILED", failure)
    ok = stored == args.students == len(latencies) and delay is not None and delay <= 3.0
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

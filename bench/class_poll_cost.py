"""Server CPU per run of a student's class poll (her live question's fragment: rerun by her class watch at each change
of her class, ui/live_class/class_watch.py; before the watch, by a st.fragment(run_every) timer every 2 s all lesson
long), beside the same kind of run of an empty fragment in a one-line app.

    python bench/class_poll_cost.py [--students 10] [--seconds 15]

Starts the app (load_classroom.Server: `streamlit run asgi.py`, a fresh data folder), a teacher starts a class,
N students join (bench/class_answers.py's ClassClient), then each ticks its poll fragment back to back for
--seconds, before and after answering stop 1's question, and after the teacher's Reveal; the server's CPU from /proc over the runs, per run. The
floor: the same loop against a one-fragment app (an st.caption in a fragment) run with this repository's
.streamlit/config.toml (runner.postScriptGC = false), in a temporary folder.
"""
from __future__ import annotations

import argparse
import asyncio
import datetime
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import class_answers  # noqa: E402
from classroom_report import machine  # noqa: E402
from load_classroom import Server, free_port, process_status  # noqa: E402
from serving.streamlit_client import StreamlitClient, http_get  # noqa: E402

FLOOR_APP = '''import streamlit as st

@st.fragment(run_every=600)
def poll():
    st.caption("In class ABC123: this page follows the teacher.")

st.write("page")
poll()
'''


def server_cpu(pid: int) -> float:
    return process_status(pid)[2]


async def tick(clients, fragment_of, seconds: float) -> int:
    """Every client reruns its fragment back to back for `seconds`; -> runs done."""
    runs = 0
    start = time.perf_counter()

    async def loop(client) -> None:
        nonlocal runs
        while time.perf_counter() - start < seconds:
            outcome = await client.rerun(client.widget_rerun_msg(fragment_of(client)), 60)
            if not outcome.ok:
                raise RuntimeError(f"a poll run failed: {outcome.problems}")
            runs += 1

    await asyncio.gather(*(loop(c) for c in clients))
    return runs


async def app_polls(url: str, pid: int, students: int, seconds: float) -> list[tuple[str, int, float]]:
    from classroom.teacher_password import teacher_password

    teacher = class_answers.ClassClient(-1, url)
    await teacher.connect("teacher")
    await teacher.rerun(teacher.open_page_msg("teacher"), 60, "teacher")
    teacher.set_text("class_start_password", teacher_password())
    teacher.set_number("class_start_size", max(students, 1))
    await teacher.rerun(teacher.click_msg(teacher.button_id("Start a class")), 60)
    code = teacher.metrics["Class code"][0]
    clients = [class_answers.ClassClient(i, url) for i in range(students)]
    for client in clients:
        await client.connect()
        await client.rerun(client.open_page_msg("", f"class={code}"), 60)
        if not client.poll_fragment:
            raise RuntimeError("no class poll on the student's page")
    rows = []
    for label in ("before answering", "after answering", "after the Reveal"):
        if label == "after answering":
            for client in clients:
                client.choose_option(class_answers.QUESTION_KEY, lambda options: options[0])
                await client.rerun(client.click_msg(client.button_id("Answer")), 60)
        if label == "after the Reveal":  # her ticks from now on (until she opens the whole page or the class moves)
            outcome = await teacher.rerun(teacher.click_msg(teacher.button_id(class_answers.REVEAL)), 60)
            if not outcome.ok:
                raise RuntimeError(f"the teacher's Reveal failed: {outcome.problems}")
            for client in clients:  # the first tick after it (the verdict and the chart's first drawing), untimed
                await client.rerun(client.widget_rerun_msg(client.poll_fragment), 60)
        cpu = server_cpu(pid)
        runs = await tick(clients, lambda c: c.poll_fragment, seconds)
        rows.append((f"the app's class poll, {label}", runs, server_cpu(pid) - cpu))
    return rows


class FragmentClient(StreamlitClient):
    fragment = ""

    def _handle(self, message, received: float) -> None:
        if message.WhichOneof("type") == "delta" and message.delta.fragment_id:
            self.fragment = message.delta.fragment_id
        super()._handle(message, received)


async def floor_polls(url: str, pid: int, students: int, seconds: float) -> tuple[str, int, float]:
    clients = [FragmentClient(url) for _ in range(students)]
    for client in clients:
        await client.connect()
        await client.rerun(client.open_page_msg(""), 60)
    cpu = server_cpu(pid)
    runs = await tick(clients, lambda c: c.fragment, seconds)
    return ("an empty app's fragment (Streamlit's floor)", runs, server_cpu(pid) - cpu)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--students", type=int, default=10)
    parser.add_argument("--seconds", type=float, default=15.0)
    args = parser.parse_args()
    load_before = os.getloadavg()[0]
    os.environ["ATTENTION_LAB_DATA"] = tempfile.mkdtemp(prefix="poll-cost-")
    os.environ.pop("ATTENTION_LAB_TEACHER_PASSWORD", None)
    server = Server(free_port())
    server.start(timeout=120)
    try:
        rows = asyncio.run(app_polls(server.url, server.process.pid, args.students, args.seconds))
    finally:
        server.stop()
    floor = Path(tempfile.mkdtemp(prefix="poll-floor-"))
    (floor / "app.py").write_text(FLOOR_APP)
    shutil.copytree(ROOT / ".streamlit", floor / ".streamlit")
    port = free_port()
    process = subprocess.Popen([sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true",
                                "--server.port", str(port), "--server.address", "127.0.0.1"], cwd=floor,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        url = f"http://127.0.0.1:{port}"
        for _ in range(120):
            if http_get(f"{url}/_stcore/health", timeout=2)[0] == 200:
                break
            time.sleep(0.5)
        rows.append(asyncio.run(floor_polls(url, process.pid, args.students, args.seconds)))
    finally:
        process.terminate()
        process.wait(10)
    print(f"\n{datetime.date.today()} · {machine()} · load average before {load_before:.2f}, "
          f"after {os.getloadavg()[0]:.2f} · {args.students} students, {args.seconds:g} s each\n")
    print("| run | runs | server CPU | per run |")
    print("|---|---|---|---|")
    for label, runs, cpu in rows:
        print(f"| {label} | {runs} | {cpu:.2f} s | {cpu / runs * 1000:.2f} ms |")
    return 0


if __name__ == "__main__":
    sys.exit(main())

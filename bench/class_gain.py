"""Peer instruction and learning gain through the real protocol: does the class report give back exactly what a
simulated class learned?

    python bench/class_gain.py --students 30 --seed S

Every simulated student has a hidden state: for each check question of the shipped lesson whether she knows it
before the lecture (probability --know), whether she learns it during the lecture (--learn); for the peer question
(stop 8, d_k with d_model = 8 and h = 2) whether she knows it alone (--know) and whether the discussion turns her
answer right (--switch) or, rarely, wrong (--unlearn). She answers right exactly when she knows; otherwise she picks
one of the wrong options at random (the misconceptions they name are counted too).

Played through the app as browsers do, with the protocol client of the other benches
(serving/streamlit_client.StreamlitClient) against a `streamlit run asgi.py` this script starts (load_classroom's
Server; its own data folder): the teacher starts the class on /teacher; each student joins by the class link and
answers the three pre check questions at stop 1; the teacher's Next moves the class to stop 8 (peer instruction by
the lesson's default); students answer round 1; the teacher starts the discussion and opens round 2; students answer
again; the teacher reveals and moves the class to the last stop; students answer the post check questions. Every
step of a student is a reload (a new session with her cookies: her seat cookie keeps her the same student).
Finally the teacher ends the class, builds the class report and the script downloads its CSV with her cookie (the report's download button, served to her browser only).

Printed: per check question and for the lecture, the share right before and after, the students who answered both
and the normalized gain ⟨g⟩ = (post − pre)/(1 − pre) (Hake 1998), from the report's CSV beside the same from the
simulation's ground truth; the peer question's switch matrix from both. Exit code 0 only when they are all equal.
"""
from __future__ import annotations

import argparse
import asyncio
import csv
import io
import os
import random
import sys
import tempfile
import time
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from classroom.store import DATA_ENV  # noqa: E402
from classroom.teacher_password import teacher_password  # noqa: E402
from load_classroom import Server, free_port  # noqa: E402
from serving.streamlit_client import StreamlitClient, user_key  # noqa: E402
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg  # noqa: E402

CHECKS = {"scale": 2, "weight": 2, "order": 1}  # check id -> right option (lessons/intro.toml, 3 options each)
CHECK_OPTIONS = 3
PEER_STOP, PEER_RIGHT, PEER_OPTIONS = 8, 2, 4  # stop 8: d_k for d_model = 8, h = 2 -> "4", the second of four
LAST_STOP = len(tomllib.loads((ROOT / "lessons" / "intro.toml").read_text(encoding="utf-8"))["stop"])  # post-test


@dataclass
class Student:
    index: int
    knows_before: dict[str, bool]
    knows_after: dict[str, bool]
    right_alone: bool
    right_after_discussion: bool
    cookies: dict[str, str] = field(default_factory=dict)


def simulate(students: int, seed: int, know: float, learn: float, switch: float, unlearn: float) -> list[Student]:
    rng = random.Random(seed)
    made = []
    for index in range(students):
        before = {c: rng.random() < know for c in CHECKS}
        after = {c: before[c] or rng.random() < learn for c in CHECKS}
        alone = rng.random() < know
        discussed = (rng.random() >= unlearn) if alone else (rng.random() < switch)
        made.append(Student(index, before, after, alone, discussed))
    return made


def ground_truth(students: list[Student]) -> dict:
    """The gains and the switch matrix from the hidden states alone (every student answers everything)."""
    truth = {}
    pooled_pre, pooled_post = [], []
    for check in CHECKS:
        pre = [s.knows_before[check] for s in students]
        post = [s.knows_after[check] for s in students]
        pooled_pre += pre
        pooled_post += post
        truth[check] = _gain_row(pre, post)
    truth["lecture"] = _gain_row(pooled_pre, pooled_post)
    truth["switches"] = tuple(sum(1 for s in students if (s.right_alone, s.right_after_discussion) == cell)
                              for cell in ((True, True), (False, True), (True, False), (False, False)))
    return truth


def _gain_row(pre: list[bool], post: list[bool]) -> tuple[float, float, float | None]:
    before, after = sum(pre) / len(pre), sum(post) / len(post)
    return before, after, None if before == 1 else (after - before) / (1 - before)


def option(rng: random.Random, right: int, count: int, knows: bool) -> int:
    return right if knows else rng.choice([n for n in range(1, count + 1) if n != right])


class Browser(StreamlitClient):
    """A StreamlitClient that also keeps the metrics its runs drew (label -> value) and finds a form's button."""

    def __init__(self, base_url: str, cookies: dict[str, str] | None = None):
        super().__init__(base_url, cookies)
        self.metrics: dict[str, str] = {}

    def _handle(self, message: ForwardMsg, received: float) -> None:
        if message.WhichOneof("type") == "delta" and message.delta.WhichOneof("type") == "new_element":
            element = message.delta.new_element
            if element.WhichOneof("type") == "metric":
                self.metrics[element.metric.label] = element.metric.body
        super()._handle(message, received)

    def button_in_form(self, form_id: str) -> str | None:
        for widget_id, (kind, proto, _) in self.meta.items():
            if kind == "button" and getattr(proto, "form_id", "") == form_id:
                return widget_id
        return None

    def keyed(self, key: str) -> tuple[str, object] | None:
        """(id, proto) of the widget with this key drawn by the last run, buttons included (find() skips widgets
        that keep no state, as buttons)."""
        return next(((i, proto) for i, (_, proto, _) in self.meta.items() if user_key(i) == key), None)

    def element(self, key: str):
        found = self.find(key)
        return None if found is None else found[1]


async def open_student(base_url: str, student: Student, code: str, timeout: float) -> Browser:
    """A reload: a new session with the student's cookies, opening the class link (she lands on the class's stop)."""
    browser = Browser(base_url, student.cookies)
    await browser.connect()
    outcome = await browser.rerun(browser.open_page_msg("", f"class={code}"), timeout)
    if not outcome.ok:
        raise RuntimeError(f"student {student.index}: {outcome.problems}")
    student.cookies = dict(browser.cookies)
    return browser


async def send(browser: Browser, key: str, form: str, number: int, timeout: float, who: str) -> None:
    """Pick option `number` (1-based) of radio `key` and press its form's submit button (a fragment rerun)."""
    radio = browser.element(key)
    if radio is None:
        raise RuntimeError(f"{who}: no question {key!r} drawn; the page said {browser.run_texts[-4:]}")
    problem = browser.choose_option(key, radio.options[number - 1])
    submit = browser.button_in_form(form)
    if problem or submit is None:
        raise RuntimeError(f"{who}: {problem or f'no submit button in {form!r}'}")
    outcome = await browser.rerun(browser.click_msg(submit, browser.fragment_of.get(submit, "")), timeout)
    if not outcome.ok:
        raise RuntimeError(f"{who}: {outcome.problems}")


async def teacher_click(teacher: Browser, key: str, timeout: float) -> None:
    found = teacher.keyed(key)
    if found is None:
        raise RuntimeError(f"teacher: no button {key!r}; the page said {teacher.run_texts[-4:]}")
    outcome = await teacher.rerun(teacher.click_msg(found[0], teacher.fragment_of.get(found[0], "")), timeout)
    if not outcome.ok:
        raise RuntimeError(f"teacher {key}: {outcome.problems}")


async def play(args, base_url: str, students: list[Student]) -> list[dict]:
    timeout = args.interaction_timeout
    rng = random.Random(args.seed + 1)  # which wrong option a student picks
    teacher = Browser(base_url)
    await teacher.connect("teacher")
    await teacher.rerun(teacher.open_page_msg("teacher"), timeout, "teacher")
    start = teacher.button_id("Start a class")
    if start is None or teacher.set_text("class_start_password", args.password) or teacher.set_number(
            "class_start_size", max(len(students), 1)):
        raise RuntimeError("no start form on /teacher")
    await teacher.rerun(teacher.click_msg(start), timeout)
    code = teacher.metrics.get("Class code", "")
    if len(code) != 6:
        raise RuntimeError(f"no class started: {teacher.run_texts[-4:]}")
    limit = asyncio.Semaphore(args.parallel)

    async def each(step) -> None:
        async def one(student: Student) -> None:
            async with limit:
                browser = await open_student(base_url, student, code, timeout)
                try:
                    await step(browser, student)
                finally:
                    await browser.close()
        await asyncio.gather(*(one(s) for s in students))

    async def pre(browser: Browser, student: Student) -> None:
        for check, right in CHECKS.items():
            await send(browser, f"check_pre_{check}_choice", f"check_pre_{check}_form",
                       option(rng, right, CHECK_OPTIONS, student.knows_before[check]), timeout, f"s{student.index}")

    async def round_one(browser: Browser, student: Student) -> None:
        await send(browser, f"q_intro_{PEER_STOP}_choice", f"q_intro_{PEER_STOP}_form",
                   option(rng, PEER_RIGHT, PEER_OPTIONS, student.right_alone), timeout, f"s{student.index}")

    async def round_two(browser: Browser, student: Student) -> None:
        await send(browser, f"q_intro_{PEER_STOP}_round2_choice", f"q_intro_{PEER_STOP}_round2_form",
                   option(rng, PEER_RIGHT, PEER_OPTIONS, student.right_after_discussion), timeout, f"s{student.index}")

    async def post(browser: Browser, student: Student) -> None:
        for check, right in CHECKS.items():
            await send(browser, f"check_post_{check}_choice", f"check_post_{check}_form",
                       option(rng, right, CHECK_OPTIONS, student.knows_after[check]), timeout, f"s{student.index}")

    await each(pre)
    for _ in range(PEER_STOP - 1):
        await teacher_click(teacher, "class_next", timeout)
    await each(round_one)
    await teacher_click(teacher, "peer_discuss", timeout)
    await teacher_click(teacher, "peer_round2", timeout)
    await each(round_two)
    await teacher_click(teacher, "class_reveal", timeout)
    for _ in range(LAST_STOP - PEER_STOP):
        await teacher_click(teacher, "class_next", timeout)
    await each(post)
    # The report takes the post-test once the class has ended (it asks the pre-test's questions again); the ended
    # class's report opens by itself, and its CSV is made on the click, from what is stored then
    await teacher_click(teacher, "class_end", timeout)
    download = (teacher.keyed("report_csv") or (None, None))[1]
    if download is None or not download.deferred_file_id:
        raise RuntimeError("no CSV download (made on its click) in the teacher's class report")
    url = await teacher.deferred_file_url(download.deferred_file_id, timeout)
    rows = await asyncio.to_thread(fetch_csv, f"{base_url}{url}", teacher.cookie_header())
    await teacher.close()
    return rows


def fetch_csv(url: str, cookie: str | None) -> list[dict]:
    from urllib.request import Request, urlopen

    request = Request(url, headers={"Cookie": cookie} if cookie else {})
    with urlopen(request, timeout=30) as response:  # noqa: S310 (our own server on 127.0.0.1)
        return list(csv.DictReader(io.StringIO(response.read().decode("utf-8"))))


def _number(text: str) -> float | None:
    return None if text in ("", "<NA>") else float(text)


def compare(rows: list[dict], truth: dict, students: int) -> tuple[list[str], bool]:
    lines = ["| check | report pre → post | truth pre → post | report ⟨g⟩ | truth ⟨g⟩ | students (report) | equal |",
             "|---|---|---|---|---|---|---|"]
    ok = True
    for check in [*CHECKS, "lecture"]:
        row = next((r for r in rows if r["table"] == "checks" and r["check"] == check), None)
        pre, post, gain = truth[check]
        got = (None, None, None) if row is None else (_number(row["pre_right"]), _number(row["post_right"]),
                                                      _number(row["gain"]))
        both = None if row is None else int(row["students_both"])
        equal = row is not None and both == students and all(
            (a is None and b is None) or (a is not None and b is not None and abs(a - b) < 1e-12)
            for a, b in zip(got, (pre, post, gain), strict=True))
        ok &= equal
        fmt = lambda x: "–" if x is None else f"{x:.4f}"  # noqa: E731
        lines.append(f"| {check} | {fmt(got[0])} → {fmt(got[1])} | {fmt(pre)} → {fmt(post)} | {fmt(got[2])} | "
                     f"{fmt(gain)} | {both} | {'yes' if equal else 'NO'} |")
    row = next((r for r in rows if r["table"] == "questions" and r["stop"] == str(PEER_STOP)), None)
    got = None if row is None else tuple(int(row[c]) for c in ("right_right", "wrong_right", "right_wrong",
                                                                  "wrong_wrong"))
    equal = got == truth["switches"]
    ok &= equal
    lines += ["", "| stop 8 switch matrix (right→right, wrong→right, right→wrong, wrong→wrong) | report | truth | "
              "equal |", "|---|---|---|---|",
              f"| students {students} | {got} | {truth['switches']} | {'yes' if equal else 'NO'} |"]
    return lines, ok


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--students", type=int, default=30)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--know", type=float, default=0.4, help="chance a student knows a question alone")
    parser.add_argument("--learn", type=float, default=0.5, help="chance the lecture teaches a check question")
    parser.add_argument("--switch", type=float, default=0.5, help="chance the discussion turns a wrong answer right")
    parser.add_argument("--unlearn", type=float, default=0.05, help="chance it turns a right answer wrong")
    parser.add_argument("--parallel", type=int, default=6, help="students acting at once")
    parser.add_argument("--interaction-timeout", type=float, default=90.0)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.students < 1:
        raise SystemExit("--students must be at least 1")
    os.environ[DATA_ENV] = tempfile.mkdtemp(prefix="class_gain_")  # the server (a child) inherits it
    os.environ.pop("ATTENTION_LAB_TEACHER_PASSWORD", None)
    args.password = teacher_password()  # the one the server reads from the same data folder
    students = simulate(args.students, args.seed, args.know, args.learn, args.switch, args.unlearn)
    server = Server(free_port())
    began = time.perf_counter()
    try:
        server.start(timeout=180)
        rows = asyncio.run(play(args, server.url, students))
    finally:
        server.stop()
    lines, ok = compare(rows, ground_truth(students), args.students)
    print(f"\nclass_gain: {args.students} students, seed {args.seed}, {time.perf_counter() - began:.0f} s\n")
    print("\n".join(lines))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

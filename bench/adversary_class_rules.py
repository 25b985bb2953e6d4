"""Adversary: students answering ahead of the class to fake its gain, and the report's file
fetched without the teacher's cookie. Prints one table; `run()` returns its rows.

Answering ahead: N students answer the lesson's "before" checks wrong at stop 1, then every later stop's question and
the "after" checks right while the class stays on stop 1 (as a script pressing Next past the class would), each
answer sent to the class store as the page sends it. Reported: answers tried, stored, refused, and the lecture's gain
and shares before and after in the report once the class ended (a faked gain would read ⟨g⟩ = 1.00).
The report file: a CSV registered for the teacher's seat, fetched through serving/private_media.py's middleware in
front of a media route, without a cookie, with another seat, with hers. In-process (a temporary SQLite store, or
--store a DSN), bounded: a few seconds.

    .venv/bin/python bench/adversary_class_rules.py [--students 10] [--store postgresql://...]
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from classroom.lessons import load_lessons  # noqa: E402
from classroom.report import build_report, reportable  # noqa: E402
from classroom.store import ClassElsewhere, ClassStore  # noqa: E402


def _answer_ahead(store: ClassStore, students: int) -> dict:
    from ui.lessons.catalogue import known_pages

    lesson = load_lessons(known_pages())[0]["intro"]
    teacher = store.create_class("intro", class_size=max(students, 1))  # every student has a seat
    code = teacher.code
    tried = stored = refused = 0
    started = time.perf_counter()
    for index in range(students):
        student = f"student-{index}"
        store.join(code, student)
        for check in lesson.stops[0].checks:
            tried += 1
            store.answer(code, student, f"intro:pre:{check.id}", "wrong", False, stop=1)
            stored += 1
        for stop in lesson.stops[1:]:
            asked = [(f"intro:{stop.number}", stop.number)] if stop.question else []
            asked += [(f"intro:post:{c.id}", stop.number) for c in stop.checks if c.when == "post"]
            for question, number in asked:
                tried += 1
                try:
                    store.answer(code, student, question, "right", True, stop=number)
                    stored += 1
                except ClassElsewhere:
                    refused += 1
    seconds = time.perf_counter() - started
    class_stop = store.session(code).stop
    teacher.end()
    lecture = build_report(lesson, reportable(teacher.report_answers())).lecture
    shares = "–" if lecture.pre is None else f"{lecture.pre:.0%} → {lecture.post:.0%}"
    return {"check": f"{students} students answer ahead (class on stop {class_stop})", "tried": tried,
            "stored": stored, "refused": refused, "result": f"⟨g⟩ {'–' if lecture.gain is None else f'{lecture.gain:.2f}'}"
            f", {shares}", "seconds": round(seconds, 2)}


def _report_file() -> list[dict]:
    from starlette.applications import Starlette
    from starlette.responses import Response
    from starlette.routing import Route
    from starlette.testclient import TestClient
    from streamlit.runtime.media_file_storage import MediaFileKind
    from streamlit.runtime.memory_media_file_storage import MemoryFile

    from serving.private_media import PrivateMediaMiddleware, keep_private, private_file_name
    from serving.seat import SEAT_COOKIE

    teacher, student = "a" * 32, "b" * 32
    data = keep_private(b"table,stop\nquestions,1\n", teacher)
    files = {"c5": MemoryFile(data, "text/csv", MediaFileKind.DOWNLOADABLE, private_file_name("ABC234", "csv"))}
    app = Starlette(routes=[Route("/media/{name}", lambda request: Response(files["c5"].content))])
    client = TestClient(PrivateMediaMiddleware(app, lookup=files.get))
    rows = []
    for who, cookie in (("no cookie", None), ("a student's seat", student), ("the teacher's seat", teacher)):
        started = time.perf_counter()
        status = client.get("/media/c5.csv", headers={"cookie": f"{SEAT_COOKIE}={cookie}"} if cookie else {}).status_code
        rows.append({"check": f"report CSV fetched with {who}", "tried": 1, "stored": "", "refused": int(status == 403),
                     "result": f"HTTP {status}", "seconds": round(time.perf_counter() - started, 3)})
    return rows


def run(students: int = 10, store_location: str | None = None) -> list[dict]:
    with tempfile.TemporaryDirectory() as folder:
        store = ClassStore(store_location or Path(folder) / "adversary.sqlite3")
        try:
            rows = [_answer_ahead(store, students)]
        finally:
            store.close()
    return rows + _report_file()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=10)
    parser.add_argument("--store", default=None, help="a PostgreSQL DSN (default: a temporary SQLite file)")
    args = parser.parse_args(argv)
    rows = run(args.students, args.store)
    print("| check | tried | stored | refused | result | seconds |")
    print("|---|---|---|---|---|---|")
    for row in rows:
        print(f"| {row['check']} | {row['tried']} | {row['stored']} | {row['refused']} | {row['result']} | "
              f"{row['seconds']} |")


if __name__ == "__main__":
    main()

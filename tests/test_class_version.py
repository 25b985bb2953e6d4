"""serving/class_version.py and classroom/recent.class_version: a student's browser asks her class's version with a
plain GET instead of a fragment run; the version changes exactly when what her page follows changes, names nothing,
and is answered only to a browser with a seat in that class (or the one that started it), for a well-formed code,
under any path prefix; any other seat is answered as for a code that names no class."""
import time
from pathlib import Path
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace

import pytest
from starlette.applications import Starlette
from starlette.responses import PlainTextResponse
from starlette.routing import Route
from starlette.testclient import TestClient

from classroom.database import DATABASE_URL_ENV
from classroom.recent import ENDED, class_version
from classroom.records import ClassSession
from classroom.store import WAITING, QuestionPhase, process_store
from serving import class_version as version_route
from serving.class_version import ClassVersionMiddleware, version_url
from serving.seat import SEAT_COOKIE, seat_student
from tests.conftest import run_in_own_loop

SEAT = "0123456789abcdef0123456789abcdef"
QID = "intro:1"


def _app(request):
    return PlainTextResponse("the app")


@pytest.fixture
def store(tmp_path, monkeypatch):
    monkeypatch.setenv("ATTENTION_LAB_DATA", str(tmp_path))
    monkeypatch.delenv(DATABASE_URL_ENV, raising=False)
    return process_store()  # the one the route reads: this process's, for this data folder


def _class(store):
    """A live class that the client's seat joined (a student's browser after her join)."""
    teacher = store.create_class("intro")
    store.join(teacher.code, seat_student(SEAT))
    return teacher


@pytest.fixture
def client(store) -> TestClient:
    app = Starlette(routes=[Route("/{path:path}", _app, methods=["GET", "POST"])])
    return TestClient(ClassVersionMiddleware(app), cookies={SEAT_COOKIE: SEAT})


def test_the_version_changes_with_what_a_students_page_follows_and_only_then(store, client):
    teacher = _class(store)
    url = "/" + version_url(teacher.code)
    asked = client.get(url)
    assert asked.status_code == 200 and asked.headers["cache-control"] == "no-store"
    first = asked.text
    assert first == class_version(store.session(teacher.code)) and first != ENDED
    store.join(teacher.code, "s1")
    store.answer(teacher.code, "s1", QID, "1", False, stop=1)
    assert client.get(url).text == first  # answers and joins change nothing a student's page shows
    versions = [first]
    for change in (lambda: teacher.reveal(QID), lambda: teacher.move(2), lambda: teacher.end()):
        change()  # a teacher's write through this process: the shared read is forgotten at once
        versions.append(client.get(url).text)
    assert len(set(versions)) == 4 and versions[-1] == ENDED


def test_the_version_is_a_keyed_hash_of_what_the_page_follows():
    phase = QuestionPhase(QID, "peer", "discussion", 2e9, False)
    live = ClassSession("ABC123", "intro", 12, 2e9, frozenset({QID, "intro:3"}), phases=frozenset({phase}))
    version = class_version(live)
    assert len(version) == 16 and all(ch in "0123456789abcdef" for ch in version)  # a hash: it names nothing
    same = ClassSession("ABC123", "intro", 12, 2e9, frozenset({"intro:3", QID}), phases=frozenset({phase}))
    assert class_version(same) == version  # a set's order is no change
    assert class_version(replace(live, expires=3e9, uploads=False)) == version  # nothing a student's page follows
    for changed in (replace(live, stop=13), replace(live, revealed=frozenset({QID})), replace(live, phases=frozenset()),
                    replace(live, lesson="llm")):
        assert class_version(changed) != version
    assert class_version(None) == ENDED


def test_only_a_browser_with_a_seat_asks_a_well_formed_code_under_any_prefix(store, client):
    teacher = _class(store)
    path = "/" + version_url(teacher.code)
    assert client.get(path).status_code == 200
    assert client.get("/lab/deeper" + path).text == client.get(path).text  # server.baseUrlPath, an ingress's path
    assert client.get("/" + version_url("ZZZZZZ")).text == ENDED  # no such class: nothing to follow
    assert client.get("/" + version_url("abc12")).status_code == 404  # not a code: no read at all
    assert client.get("/" + version_url("<script>")).status_code == 404
    assert client.post(path).status_code == 405
    anonymous = TestClient(client.app)
    assert anonymous.get(path).status_code == 403  # no seat cookie
    assert anonymous.get(path, headers={"Cookie": f"{SEAT_COOKIE}=forged"}).status_code == 403
    assert client.get("/intro").text == "the app"  # every other request passes to the app
    assert client.get(path + "/more").text == "the app"


def test_only_a_seat_in_the_class_or_its_teachers_learns_its_version_and_any_other_seat_learns_nothing(store, client):
    """A forged seat cookie asking codes one by one is answered "ended" for a live class as for no class (no oracle);
    a seat that joined (admitted or waiting) or started the class is answered its version, as soon as it joined."""
    teacher = store.create_class("intro", teacher_seat="f" * 32, class_size=1)
    store.join(teacher.code, "s0")  # the one seat: a later join waits for the teacher
    live, unknown = "/" + version_url(teacher.code), "/" + version_url("ZZZZZZ")
    version = class_version(store.session(teacher.code))
    guesser = TestClient(client.app, cookies={SEAT_COOKIE: "a" * 32})
    for path in (live, unknown, live + f"?seen={version}", unknown + f"?seen={ENDED}"):
        start = time.monotonic()
        answer = guesser.get(path)
        assert (answer.status_code, answer.text) == (200, ENDED) and time.monotonic() - start < 0.5  # never held
    assert TestClient(client.app, cookies={SEAT_COOKIE: "f" * 32}).get(live).text == version  # her teacher's browser
    assert store.join(teacher.code, seat_student("a" * 32)) == WAITING  # she joins after all, and waits
    assert guesser.get(live).text == version  # a "no" was not kept
    assert client.get(live).text == ENDED  # the client's seat never joined this class
    teacher.end()
    assert guesser.get(live).text == ENDED


def test_a_request_that_names_its_pages_version_is_held_until_the_class_changes(store, client, monkeypatch):
    """`?seen=V`: answered when the class's version is no longer V (a Reveal through this process: within a check),
    else after HOLD_SECONDS with V; a page drawn at an older version is answered at once; past MAX_HELD at once."""
    teacher = _class(store)
    url = "/" + version_url(teacher.code)
    first = client.get(url).text
    with ThreadPoolExecutor(1) as pool:
        start = time.monotonic()
        held = pool.submit(client.get, f"{url}?seen={first}")
        time.sleep(1.0)
        assert not held.done()  # nothing changed: the request waits, no answer to ask again after
        teacher.reveal(QID)
        revealed = held.result(timeout=10).text
        took = time.monotonic() - start
    assert revealed == client.get(url).text != first and took < 1.0 + 1.0  # the Reveal, within a check or two
    start = time.monotonic()
    assert client.get(f"{url}?seen={first}").text == revealed and time.monotonic() - start < 0.5  # drawn before it
    monkeypatch.setattr(version_route, "HOLD_SECONDS", 0.4)
    start = time.monotonic()
    assert client.get(f"{url}?seen={revealed}").text == revealed and time.monotonic() - start >= 0.4  # held, unchanged
    monkeypatch.setattr(version_route, "MAX_HELD", 0)
    start = time.monotonic()
    assert client.get(f"{url}?seen={revealed}").text == revealed and time.monotonic() - start < 0.3  # none held


def test_a_write_here_wakes_the_held_requests_at_once_and_another_replicas_within_a_check(store, client, monkeypatch):
    """A Reveal through this process answers the requests held on its class without waiting for the next check; a
    write through another replica (the database alone) is seen at the next check, not after the shared read's age."""
    teacher = _class(store)
    url = "/" + version_url(teacher.code)
    first = client.get(url).text
    monkeypatch.setattr(version_route, "HOLD_SECONDS", 8.0)
    monkeypatch.setattr(version_route, "CHECK_SECONDS", 6.0)  # only the write's wake-up answers within 5 s
    with ThreadPoolExecutor(1) as pool:
        held = pool.submit(client.get, f"{url}?seen={first}")
        time.sleep(0.5)
        assert not held.done()
        start = time.monotonic()
        teacher.reveal(QID)
        revealed = held.result(timeout=10).text
        assert revealed != first and time.monotonic() - start < 5.0
    monkeypatch.setattr(version_route, "CHECK_SECONDS", 0.1)
    monkeypatch.setattr(store.recent, "max_age", 60.0)  # the shared read alone would keep the old stop for a minute
    with ThreadPoolExecutor(1) as pool:
        held = pool.submit(client.get, f"{url}?seen={revealed}")
        time.sleep(0.5)
        with store.connect() as db:  # the teacher's move through another replica: this process is not told
            db.execute("UPDATE classes SET stop = 2 WHERE code = ?", (teacher.code,))
        moved = held.result(timeout=10).text
    assert moved not in (first, revealed) and moved == class_version(store.session(teacher.code))


def test_a_held_request_ends_when_its_browser_goes_or_the_server_stops(store):
    """A request held on an unchanged class ends at once when its browser goes away (no longer held against
    MAX_HELD) and when the server is told to stop (answered with the version then); once stopping, none is held."""
    import asyncio

    teacher = _class(store)
    version = class_version(store.session(teacher.code))

    async def held_until(end) -> tuple[str, float, int]:
        held = version_route._HeldRequests()
        gone = asyncio.get_running_loop().create_future()

        async def browser_gone():
            await gone

        start = time.monotonic()
        request = asyncio.ensure_future(held.until_changed(teacher.code, version, 10.0, browser_gone()))
        await asyncio.sleep(0.3)
        assert not request.done() and held.held == 1
        end(gone, held)
        answer = await asyncio.wait_for(request, 5.0)
        return answer, time.monotonic() - start, held.held

    answer, took, still_held = run_in_own_loop(held_until(lambda gone, held: gone.set_result(None)))
    assert answer == version and took < 3.0 and still_held == 0
    answer, took, still_held = run_in_own_loop(held_until(lambda gone, held: held.released.set()))
    assert answer == version and took < 3.0 and still_held == 0


@pytest.mark.slow
@pytest.mark.server  # a `streamlit run asgi.py` of its own
def test_a_server_with_held_class_watches_stops_at_once(store, tmp_path):
    """`streamlit run asgi.py` told to stop (SIGTERM) while a student's class watch is held answers it and exits in
    seconds; uvicorn waits for open requests, so without release_held_requests_on_stop it took HOLD_SECONDS."""
    import os

    import requests

    from serving.local_server import free_port, start_streamlit, started

    teacher = _class(store)  # in tmp_path's database, which the server reads too
    env = {**os.environ, "ATTENTION_LAB_DATA": str(tmp_path), "ATTENTION_LAB_WARMUP": "0"}
    env.pop(DATABASE_URL_ENV, None)
    port = free_port()
    server = start_streamlit(Path(__file__).resolve().parents[1], port, env)
    try:
        url = f"{started(server, port, timeout=60)}/{version_url(teacher.code)}"
        cookies = {SEAT_COOKIE: SEAT}
        version = requests.get(url, cookies=cookies, timeout=30).text
        with ThreadPoolExecutor(1) as pool:
            held = pool.submit(requests.get, f"{url}?seen={version}", cookies=cookies, timeout=60)
            time.sleep(1.0)
            assert not held.done()  # the class has not changed: held
            start = time.monotonic()
            server.terminate()
            server.wait(timeout=15)
            answered = held.result(timeout=5)
            took = time.monotonic() - start
    finally:
        server.kill()
        server.wait()
    assert answered.status_code == 200 and answered.text == version
    assert took < version_route.HOLD_SECONDS / 2, took

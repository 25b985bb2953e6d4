"""A class's version for students' browsers: `GET <base>/_lab/class/<CODE>/version` answers, as plain text, an
opaque version of what a student's page follows (classroom/recent.class_version: the stop, the revealed questions,
the peer-instruction phases, the lesson; "ended" for a class that is not live), without a script run.

Why: a page that reran a fragment every few seconds to ask its class whether anything had changed would cost the
replica a script run per student and tick, almost always to redraw what was already there (bench/README.md, the class
rows). Her page holds a small component (ui/live_class/class_watch.py) that asks this version, naming the one her page
was drawn at (`?seen=V`): the request is held until the class changes (HOLD_SECONDS at most), and her fragment reruns
only then: once per change of her class, not once per tick. A held request costs
nothing while it waits; one task per class and process checks the class's version for all of them every
CHECK_SECONDS (the class as read at most that long ago; the read is shared with every session of this process and
runs in a worker thread), and at once when this process writes the class (a Reveal by a teacher on this replica).
Without `seen` the version is answered at once.

Who may ask: a browser with a seat cookie (serving/seat.py: every page of the lab sets one), else 403; a code that is
not one (wrong length or letters) is 404 before any read. Only a seat that joined the class (admitted or waiting) or
started it is told its version (ClassStore.follows); any other seat is answered "ended" at once, as for a code that
names no class, so the route tells a guesser nothing about which codes are live (a forged cookie is a new seat: the
seat alone proved nothing). Wrong codes are not counted against the guessing limit here: with no oracle there is
nothing to gain by guessing, and a write per request would make every forged-cookie request cost a write. The version
is a keyed hash (a random key per process), so it tells a joined student nothing but "changed". The path ends
in `/_lab/class/<CODE>/version` under whatever prefix (server.baseUrlPath, an ingress's path): the browser asks it
relative to its page, as Streamlit's own front end asks its routes.
"""
from __future__ import annotations

import asyncio
import contextlib
import re
import signal
import threading
import weakref
from collections import Counter
from collections.abc import Coroutine
from urllib.parse import parse_qs

from classroom.recent import ENDED, class_version
from classroom.store import CODE_ALPHABET, CODE_LENGTH, process_store
from serving.seat import seat_from_cookie_header, seat_student

# A request that names the version its page was drawn at (`?seen=V`) is held until the class's version differs, at
# most HOLD_SECONDS (HAProxy's `timeout server` is 60 s, ingress-nginx's read timeout 7200 s), so a student's browser
# asks once per change of her class or per HOLD_SECONDS, not once a second; a change reaches her as soon as this
# process sees it: at once after a write through this process (ClassStore.changed forgets the kept read and wakes the
# class's checker), within about 2 × CHECK_SECONDS of a write through another replica (the checker reads the class
# when its kept read is older than CHECK_SECONDS, so that the other replica's students do not wait out
# SHARED_SECONDS + CHECK_SECONDS with an idle core). Held requests are bounded per process
# (MAX_HELD; each holds a connection, beside its websocket, against HAProxy's maxconn 1000 a replica): past it one is
# answered at once, and the browser asks again a second later, as without holding. A held request ends early when its
# browser goes away (it is no longer held against MAX_HELD) and when the server is told to stop (SIGTERM, SIGINT:
# uvicorn waits for every open request before it stops, so a held one would keep a replica up to HOLD_SECONDS longer
# while its students could already be asking another).
HOLD_SECONDS = 20.0
CHECK_SECONDS = 0.2  # how often a process looks at the classes it holds requests for (a dict lookup; a read of the
# class, one connection and 3 indexed queries, at most once per class and CHECK_SECONDS)
MAX_HELD = 600
VERSION_PATH = re.compile(r"(?:/[^/]+)*/_lab/class/([^/]{1,16})/version")
CODE = re.compile(f"[{CODE_ALPHABET}]{{{CODE_LENGTH}}}")


FOLLOWERS_KEPT = 20_000  # (class, seat) pairs this process found in the store: their next asks need no read


class _Followers:
    """The seats this process knows follow a class (ClassStore.follows said so): a seat never leaves a class it
    joined, and an ended class answers "ended" anyway, so a yes is kept (cleared when FOLLOWERS_KEPT are kept) and a
    joined student's asks cost no read; a no is asked again (she may join a moment later)."""

    def __init__(self):
        self.known: set[tuple[str, str]] = set()

    async def __call__(self, code: str, seat: str) -> bool:
        if (code, seat) in self.known:
            return True
        if not await asyncio.to_thread(process_store().follows, code, seat_student(seat), seat):
            return False
        if len(self.known) >= FOLLOWERS_KEPT:
            self.known.clear()
        self.known.add((code, seat))
        return True


follows = _Followers()


def version_url(code: str) -> str:
    """The route's address relative to a page of the lab (what a student's browser fetches)."""
    return f"_lab/class/{code}/version"


async def current_version(code: str, max_age: float | None = None) -> str:
    """The class's version now: the kept read when fresh (younger than max_age, when given), else a read in a worker
    thread."""
    store = process_store()
    fresh, session = store.recent.kept(code, max_age)
    if not fresh:
        session = await asyncio.to_thread(store.shared_session, code, max_age)
    return class_version(session)


class _HeldRequests:
    """The requests one event loop holds: per class, one task that checks its version every CHECK_SECONDS while a
    request waits (a read of the class at most CHECK_SECONDS old: another replica's write is seen within about that),
    and at once when this process writes the class (a teacher's Reveal here); it wakes them all when it changes."""

    def __init__(self):
        self.waiting: Counter[str] = Counter()  # class code -> requests held now
        self.changed: dict[str, asyncio.Event] = {}  # class code -> set when its version next changes
        self.checkers: dict[str, asyncio.Task] = {}
        self.written: dict[str, asyncio.Event] = {}  # class code -> set when this process wrote it (check now)
        self.released = asyncio.Event()  # set when the server is stopping: every held request is answered at once
        if _stopping.is_set():
            self.released.set()

    def wake(self, code: str) -> None:
        """This process wrote class `code` (on the loop: _listen): its checker looks at once, not at its next tick."""
        written = self.written.get(code)
        if written is not None:
            written.set()

    @property
    def held(self) -> int:
        return sum(self.waiting.values())

    async def until_changed(self, code: str, seen: str, hold: float, gone: Coroutine | None = None) -> str:
        """The class's version once it differs from `seen`, or after `hold` seconds (or at once when too many
        requests are held already, or the server is stopping) the version then. `gone`: done when the browser that
        asked went away (the request then ends, answered to no one)."""
        version = await current_version(code)
        if version != seen or self.held >= MAX_HELD or self.released.is_set():
            if gone is not None:
                gone.close()
            return version
        changed = self.changed.setdefault(code, asyncio.Event())
        self.waiting[code] += 1
        if code not in self.checkers:
            self.checkers[code] = asyncio.create_task(self._check(code, version))
        ends = [asyncio.ensure_future(changed.wait()), asyncio.ensure_future(self.released.wait())]
        if gone is not None:
            ends.append(asyncio.ensure_future(gone))
        try:
            await asyncio.wait(ends, timeout=hold, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for end in ends:
                end.cancel()
            self.waiting[code] -= 1
            if not self.waiting[code]:
                del self.waiting[code]
        return await current_version(code)

    async def _check(self, code: str, version: str) -> None:
        written = self.written.setdefault(code, asyncio.Event())
        try:
            while self.waiting.get(code):
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(written.wait(), CHECK_SECONDS)
                written.clear()
                now = await current_version(code, CHECK_SECONDS)
                if now != version:
                    version = now
                    self.changed.pop(code, asyncio.Event()).set()  # wakes every request held on the old version
        finally:
            self.checkers.pop(code, None)
            self.written.pop(code, None)
            if not self.waiting.get(code):
                self.changed.pop(code, None)


_held_by_loop: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # event loop -> its _HeldRequests
_stopping = threading.Event()  # set once the server was told to stop (release_held_requests_on_stop)


def release_held_requests_on_stop() -> None:
    """For an ASGI lifespan's start, in the server's main thread: when the server is told to stop (SIGTERM, SIGINT),
    every held request is answered at once and no new one is held, before the server's own handler (uvicorn's, which
    then waits for the open requests) runs. Elsewhere than the main thread nothing is installed (signals are the
    main thread's) and held requests end within HOLD_SECONDS as before."""
    if threading.current_thread() is not threading.main_thread():
        return
    for number in (signal.SIGTERM, signal.SIGINT):
        signal.signal(number, _releasing(signal.getsignal(number)))


def _releasing(previous):
    def handler(number, frame):
        _stopping.set()
        for loop, held in list(_held_by_loop.items()):
            with contextlib.suppress(RuntimeError):  # a loop closed meanwhile holds nothing
                loop.call_soon_threadsafe(held.released.set)
        if callable(previous):
            previous(number, frame)
        else:  # the default action (or none, as before): put it back and let the signal take it
            signal.signal(number, previous if previous is not None else signal.SIG_DFL)
            signal.raise_signal(number)
    return handler


def held_requests() -> _HeldRequests:
    loop = asyncio.get_running_loop()
    held = _held_by_loop.get(loop)
    if held is None:
        held = _held_by_loop[loop] = _HeldRequests()
        _listen(held, loop)
    return held


def _listen(held: _HeldRequests, loop: asyncio.AbstractEventLoop) -> None:
    """Wake held's checker of a class as soon as this process writes it (classroom/recent.RecentSessions.forget, in
    the writing script's thread): a Reveal reaches this replica's students without waiting for the next check. Held
    weakly: the listener stops itself once the loop is gone or closed."""
    held_ref, loop_ref = weakref.ref(held), weakref.ref(loop)

    def written(code: str) -> None:
        current_loop, current_held = loop_ref(), held_ref()
        try:
            if current_loop is None or current_held is None or current_loop.is_closed():
                raise RuntimeError("its event loop is gone")
            current_loop.call_soon_threadsafe(current_held.wake, code)
        except RuntimeError:  # closed, or closing meanwhile
            stop()

    stop = process_store().recent.listen(written)


async def _browser_gone(receive) -> None:
    """Done when the request's browser has gone away (ASGI's http.disconnect; the GET's empty body read first)."""
    while (await receive())["type"] != "http.disconnect":
        pass


async def _respond(send, status: int, body: bytes) -> None:
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"text/plain; charset=utf-8"), (b"cache-control", b"no-store"),
                            (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})


class ClassVersionMiddleware:
    """Pure ASGI: answers GET .../_lab/class/<CODE>/version itself; every other request passes to the app."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        match = VERSION_PATH.fullmatch(scope.get("path", "")) if scope["type"] == "http" else None
        if match is None:
            await self.app(scope, receive, send)
            return
        if scope.get("method") not in ("GET", "HEAD"):
            await _respond(send, 405, b"GET only\n")
            return
        cookie = b"; ".join(value for name, value in scope.get("headers", []) if name == b"cookie")
        seat = seat_from_cookie_header(cookie.decode("latin-1"))
        if seat is None:
            await _respond(send, 403, b"no seat\n")
            return
        code = match.group(1)
        if not CODE.fullmatch(code):
            await _respond(send, 404, b"no such class\n")
            return
        if not await follows(code, seat):  # not her class, or no class: the same answer, at once
            await _respond(send, 200, ENDED.encode())
            return
        seen = parse_qs(scope.get("query_string", b"").decode("latin-1")).get("seen", [""])[0][:64]
        version = (await held_requests().until_changed(code, seen, HOLD_SECONDS, _browser_gone(receive))) if seen \
            else await current_version(code)
        await _respond(send, 200, version.encode())

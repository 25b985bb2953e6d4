"""A class's version for students' browsers: `GET <base>/_lab/class/<CODE>/version` answers, as plain text, an
opaque version of what a student's page follows (classroom/recent.class_version: the stop, the revealed questions,
the peer-instruction phases, the lesson; "ended" for a class that is not live), without a script run.

Why: every student's page in a class used to rerun a fragment every 2-3 s to ask its class whether anything had
changed (ui/lessons/live_question.py, ui/lessons/bar._class_poll): 150 script runs a second per replica for 300
students, each 5-12 ms of the replica's one core for the script and the messages it sends, almost always to redraw
what was already there. Now her page holds a small component (ui/lessons/class_watch.py) that fetches this version
every second and reruns her fragment only when it differs from the version the page was drawn at: once per change
of her class, not once per tick. An answer here is a dict lookup on the server's event loop (the class as read at
most classroom/recent.SHARED_SECONDS ago, shared with every session of this process); a read of the database, when
the kept one is older, runs in a worker thread.

Who may ask: a browser with a seat cookie (serving/seat.py: every page of the lab sets one), else 403. The version
is a keyed hash (a random key per process), so it tells nothing but "changed" to whoever knows a class's code, which
the join link already tells; a code that is not one (wrong length or letters) is 404 before any read. The path ends
in `/_lab/class/<CODE>/version` under whatever prefix (server.baseUrlPath, an ingress's path): the browser asks it
relative to its page, as Streamlit's own front end asks its routes.
"""
from __future__ import annotations

import asyncio
import re

from classroom.recent import class_version
from classroom.store import CODE_ALPHABET, CODE_LENGTH, process_store
from serving.seat import seat_from_cookie_header

VERSION_PATH = re.compile(r"(?:/[^/]+)*/_lab/class/([^/]{1,16})/version")
CODE = re.compile(f"[{CODE_ALPHABET}]{{{CODE_LENGTH}}}")


def version_url(code: str) -> str:
    """The route's address relative to a page of the lab (what a student's browser fetches)."""
    return f"_lab/class/{code}/version"


async def current_version(code: str) -> str:
    """The class's version now: the kept read when fresh (no wait), else a read in a worker thread."""
    store = process_store()
    fresh, session = store.recent.kept(code)
    if not fresh:
        session = await asyncio.to_thread(store.shared_session, code)
    return class_version(session)


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
        if seat_from_cookie_header(cookie.decode("latin-1")) is None:
            await _respond(send, 403, b"no seat\n")
            return
        code = match.group(1)
        if not CODE.fullmatch(code):
            await _respond(send, 404, b"no such class\n")
            return
        await _respond(send, 200, (await current_version(code)).encode())

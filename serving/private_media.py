"""Private downloads: the class report's files are served to the teacher's browser only.

Streamlit serves every st.download_button file at `/media/<id>.<ext>` to any client that asks, with no cookie: the
id is an unkeyed hash of the file's bytes, so a file anyone can rebuild (a small class's counts) can be found by
anyone, and a link copied from the teacher's browser opens anywhere. The class report's files are the teacher's
(ui/lessons/report.py): their download names say so (`private_file_name`: class-<CODE>-report.csv or .html), the
page registers each file's bytes with the seat of the browser that built it (`keep_private`), and this middleware,
in front of Streamlit's app (asgi.py), answers a request for such a file with 403 unless it carries one of the seat
cookies (serving/seat.py) its bytes were registered with. A private file that was never registered (or was forgotten:
at most MAX_FILES are kept, the oldest dropped) is served to nobody: the teacher builds the report again. Every other
media file (images, a student's own downloads) passes untouched.

The registry is per process, as Streamlit's media files are: serve.py's HAProxy keeps a browser on its replica.
Plain `streamlit run app.py` runs no middleware: it has no seat, so it cannot tell the teacher's browser either.
"""
from __future__ import annotations

import collections
import hashlib
import re
import threading
from collections.abc import Callable
from typing import Any

from serving.seat import seat_from_cookie_header

PRIVATE_NAME = re.compile(r"class-[A-Z0-9]{6}-report\.(csv|html)")
MEDIA_PATH = re.compile(r"/media/([0-9a-f]{1,128})(?:\.[A-Za-z0-9]{1,16})?")  # Streamlit's file id, its extension
MAX_FILES = 1024  # registered files per process (a few per click of a teacher); the oldest forgotten first

_owners: collections.OrderedDict[str, frozenset[str]] = collections.OrderedDict()  # sha256 of bytes -> seat hashes
_lock = threading.Lock()


def private_file_name(code: str, extension: str) -> str:
    """The download name of a class's report file; a file so named is served to its registered seats only."""
    name = f"class-{code}-report.{extension}"
    if not PRIVATE_NAME.fullmatch(name):
        raise ValueError(name)
    return name


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _seat_key(seat: str) -> str:
    return hashlib.sha256(f"media:{seat}".encode()).hexdigest()


def keep_private(data: bytes, seat: str | None) -> bytes:
    """Register `data` (a file about to be given to st.download_button under a private name) as the file of the
    browser with this seat cookie; -> data. Without a seat nobody is registered: the file is served to nobody."""
    if seat:
        key = _digest(data)
        with _lock:
            _owners[key] = _owners.get(key, frozenset()) | {_seat_key(seat)}
            _owners.move_to_end(key)
            while len(_owners) > MAX_FILES:
                _owners.popitem(last=False)
    return data


def may_fetch(data: bytes, seat: str | None) -> bool:
    """Whether the browser with this seat (None: no valid seat cookie) may fetch the private file `data`."""
    if not seat:
        return False
    with _lock:
        owners = _owners.get(_digest(data), frozenset())
    return _seat_key(seat) in owners


def streamlit_media_file(file_id: str) -> Any:
    """Streamlit's stored media file of this id (content, mimetype, kind, filename), or None."""
    from streamlit.runtime import Runtime

    if not Runtime.exists():
        return None
    manager = Runtime.instance().media_file_mgr
    return manager.read_file(file_id) if manager.can_read_files else None


class PrivateMediaMiddleware:
    """Pure ASGI: a GET or HEAD of `/media/<id>` whose file has a private download name gets 403 unless the request's
    seat cookie is registered for the file's bytes. `lookup`: file id -> the stored file (Streamlit's by default)."""

    def __init__(self, app, lookup: Callable[[str], Any] = streamlit_media_file):
        self.app = app
        self.lookup = lookup

    def _refused(self, scope) -> bool:
        if scope["type"] != "http":
            return False
        match = MEDIA_PATH.search(scope.get("path", ""))
        if match is None or match.end() != len(scope["path"]):
            return False
        file = self.lookup(match.group(1))
        if file is None or not PRIVATE_NAME.fullmatch(getattr(file, "filename", None) or ""):
            return False
        header = b"; ".join(value for name, value in scope.get("headers", ()) if name == b"cookie")
        return not may_fetch(file.content, seat_from_cookie_header(header.decode("latin-1")))

    async def __call__(self, scope, receive, send):
        if not self._refused(scope):
            await self.app(scope, receive, send)
            return
        body = b"403 Forbidden\n"
        await send({"type": "http.response.start", "status": 403,
                    "headers": [(b"content-type", b"text/plain; charset=utf-8"),
                                (b"content-length", str(len(body)).encode()), (b"cache-control", b"no-store")]})
        await send({"type": "http.response.body", "body": body})

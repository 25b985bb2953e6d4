"""Private downloads: the class report's and gradebook's files are served to the teacher's browser only.

Streamlit serves every st.download_button file at `/media/<id>.<ext>` to any client that asks, with no cookie: the
id is an unkeyed hash of the file's bytes, so a file anyone can rebuild (a small class's counts) can be found by
anyone, and a link copied from the teacher's browser opens anywhere. The class report's files are the teacher's
(ui/live_class/report.py, gradebook.py): their download names say so (`private_file_name`: class-<CODE>-report.csv or
.html, class-<CODE>-gradebook.csv, -answers.csv, -summary.csv), the page registers each file's bytes with the seat of
the browser that built it (`keep_private`), and this middleware, in front of Streamlit's app (asgi.py), answers a request for such a file with 403 unless it carries one of the seat
cookies (serving/seat.py) its bytes were registered with. A private file that was never registered (or was forgotten:
at most MAX_FILES are kept, the oldest dropped) is served to nobody: the teacher builds the report again. Every other
media file (images, a student's own downloads) passes untouched.

The registry is per process, as Streamlit's media files are: serve.py's HAProxy keeps a browser on its replica.
Plain `streamlit run app.py` runs no middleware: it has no seat, so it cannot tell the teacher's browser either.
"""
from __future__ import annotations

import collections
import hashlib
import os
import re
import threading
from collections.abc import Callable
from typing import Any

from serving.internals import media_file
from serving.seat import seat_from_cookie_header

PRIVATE_NAME = re.compile(r"class-[A-Z0-9]{6}-(report|gradebook|answers|summary)\.(csv|html)")
# Streamlit's media route is `media/{file_id:path}` after its base path: every request path with "/media/" in it is
# read the way Streamlit reads it (media_file_id), whatever follows the id.
MEDIA_PREFIX = re.compile(r"/media/")
MAX_FILES = 1024  # registered files per process (a few per click of a teacher); the oldest forgotten first

_owners: collections.OrderedDict[str, frozenset[str]] = collections.OrderedDict()  # sha256 of bytes -> seat hashes
_lock = threading.Lock()


def private_file_name(code: str, extension: str, kind: str = "report") -> str:
    """The download name of a class's report or gradebook file (`kind`: report, gradebook, answers, summary); a file
    so named is served to its registered seats only."""
    name = f"class-{code}-{kind}.{extension}"
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
    return media_file(file_id)


def media_file_ids(path: str) -> set[str]:
    """The file ids Streamlit could serve at this (decoded) request path: for each "/media/" in it (the base path, if
    any, comes before one of them), what follows read as Streamlit's MemoryMediaFileStorage.get_file reads its name,
    os.path.splitext(name)[0]. So `<id>.csv`, `<id>.`, `<id>.-` and `<id>.anything` all name `<id>`; a query string
    is not in the path, and percent-escapes are decoded by the server before either reads it."""
    return {os.path.splitext(path[match.end():])[0] for match in MEDIA_PREFIX.finditer(path)}


class PrivateMediaMiddleware:
    """Pure ASGI: a GET or HEAD of `/media/<id>` whose file has a private download name gets 403 unless the request's
    seat cookie is registered for the file's bytes. `lookup`: file id -> the stored file (Streamlit's by default)."""

    def __init__(self, app, lookup: Callable[[str], Any] = streamlit_media_file):
        self.app = app
        self.lookup = lookup

    def _refused(self, scope) -> bool:
        if scope["type"] != "http":
            return False
        files = [self.lookup(file_id) for file_id in media_file_ids(scope.get("path", ""))]
        private = [file for file in files
                   if file is not None and PRIVATE_NAME.fullmatch(getattr(file, "filename", None) or "")]
        if not private:
            return False
        header = b"; ".join(value for name, value in scope.get("headers", ()) if name == b"cookie")
        seat = seat_from_cookie_header(header.decode("latin-1"))
        return not all(may_fetch(file.content, seat) for file in private)

    async def __call__(self, scope, receive, send):
        if not self._refused(scope):
            await self.app(scope, receive, send)
            return
        body = b"403 Forbidden\n"
        await send({"type": "http.response.start", "status": 403,
                    "headers": [(b"content-type", b"text/plain; charset=utf-8"),
                                (b"content-length", str(len(body)).encode()), (b"cache-control", b"no-store")]})
        await send({"type": "http.response.body", "body": body})

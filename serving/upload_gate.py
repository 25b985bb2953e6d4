"""Streamlit's upload route, bounded: only ids the server issued, only for a session whose page shows the uploader,
at most so many bytes and files per session and per process, and freed when the session's websocket closes.

Streamlit's own PUT /_stcore/upload_file/<session id>/<file id> takes any file id for any live session with its XSRF
token, whether or not the page has an uploader, and holds every file in memory until the session ends (a session
outlives its websocket for minutes, waiting for a reconnect). This ASGI middleware (asgi.py) decides each PUT from
its headers alone, before Streamlit reads the body:

- 403 when the operator turned uploads off (ATTENTION_LAB_UPLOADS=off or the settings file: operator_allows_uploads),
  when the session's last run of the train page did not draw the uploader (ui/train/upload_policy.py opens and
  closes the route for its session), when the class that page run named has uploads off now (the teacher's switch,
  read from the class store at each PUT), or when the file id is not one the server gave this session. Ids are
  read from the file_urls_response ForwardMsgs that Streamlit sends on the session's websocket (the answer to the
  front end's file_urls_request); Streamlit has no public hook for them.
- 411 without a Content-Length (a chunked body could not be bounded before it is read), 413 when the body is over one
  file's limit or would put the session over its bytes or files, 503 when it would put the process over its bytes.
- When the websocket closes, the session's files are removed from Streamlit's upload manager and its ids forgotten.

Counted bytes are request bodies (a little more than the files); a file replaced under the same id counts once.
The limits (UploadLimits) come from the environment; deploy/README.md documents them.
"""
from __future__ import annotations

import collections
import os
import re
import threading
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field

import anyio

from model import local_models
from serving.internals import ForwardMsg, uploaded_file_manager

ENV_VAR = "ATTENTION_LAB_UPLOADS"
ON_WORDS = frozenset({"on", "1", "true", "yes", "enabled"})
STREAM_PATH = "/_stcore/stream"
UPLOAD_ROUTE = re.compile(r"/_stcore/upload_file/([^/]+)/([^/]+)$")
ISSUED_PER_SESSION = 16  # the newest ids given to a session are kept; a front end uploads at once what it asked for
MULTIPART_OVERHEAD = 64 * 1024  # the form's boundary and part headers around the one file
FILE_BYTES = 64 * 2**20  # Streamlit's server.maxUploadSize (.streamlit/config.toml) and the checkpoint limit
MAX_UPLOAD_BODY = FILE_BYTES + MULTIPART_OVERHEAD  # also HAProxy's and the ingress's limit on a request body


def _configured_in_file() -> bool | None:
    """[uploads] enabled from .streamlit/attention_lab.toml; None when the file does not say."""
    try:
        text = local_models.CONFIG_FILE.read_text(encoding="utf-8")
        enabled = tomllib.loads(text).get("uploads", {}).get("enabled")
    except (OSError, tomllib.TOMLDecodeError, AttributeError):  # AttributeError: [uploads] is not a table
        return None
    if enabled is None or isinstance(enabled, bool):
        return enabled
    return False  # enabled = "no" or 0: the operator meant to say something, and only true opens uploads


def operator_allows_uploads() -> bool:
    """True unless the operator turned uploads off (environment, then settings file). Read at each call, so a
    setting changed in the file takes effect at the next page run or upload."""
    configured = os.environ.get(ENV_VAR, "").strip().lower()
    if configured:
        # Any value but an "on" word is off: an operator who set the variable meant to control uploads, and a
        # typo ("of") must not leave them open.
        return configured in ON_WORDS
    return _configured_in_file() is not False


def _mib_from_env(name: str, default: int) -> int:
    try:
        return max(0, int(os.environ.get(name, default))) * 2**20
    except ValueError:
        return default * 2**20


@dataclass(frozen=True)
class UploadLimits:
    file_bytes: int = FILE_BYTES
    session_bytes: int = 130 * 2**20  # a checkpoint's weights at the file limit and its JSON, twice over
    session_files: int = 4  # a weights file and its JSON, and a second pair while the first is still listed
    process_bytes: int = 256 * 2**20

    @classmethod
    def from_environment(cls) -> UploadLimits:
        default = cls()
        return cls(file_bytes=default.file_bytes,
                   session_bytes=_mib_from_env("ATTENTION_LAB_UPLOAD_SESSION_MB", default.session_bytes // 2**20),
                   session_files=int(os.environ.get("ATTENTION_LAB_UPLOAD_SESSION_FILES", default.session_files)),
                   process_bytes=_mib_from_env("ATTENTION_LAB_UPLOAD_PROCESS_MB", default.process_bytes // 2**20))


@dataclass
class _Session:
    may_upload: Callable[[], bool] | None = None  # set by the page that draws the uploader; None: route closed
    issued: collections.OrderedDict = field(default_factory=collections.OrderedDict)  # file id -> None, newest last
    held: dict[str, int] = field(default_factory=dict)  # file id -> bytes Streamlit holds for it
    in_flight: dict[str, int] = field(default_factory=dict)  # file id -> bytes of a PUT being read now


class UploadGate:
    """Which sessions may upload, the ids they were given, and what they hold. Thread-safe: the page opens and
    closes a session's route from its script thread, the middleware reads it on the event loop."""

    def __init__(self, limits: UploadLimits | None = None):
        self.limits = limits or UploadLimits.from_environment()
        self._sessions: dict[str, _Session] = {}
        self._lock = threading.Lock()

    # ---- the page's side
    def open_for(self, session_id: str, may_upload: Callable[[], bool]) -> None:
        """The session's page draws the uploader; `may_upload()` is asked again at each PUT (the teacher's switch)."""
        with self._lock:
            self._sessions.setdefault(session_id, _Session()).may_upload = may_upload

    def close_for(self, session_id: str) -> None:
        with self._lock:
            session = self._sessions.get(session_id)
            if session is not None:
                session.may_upload = None

    # ---- the server's side
    def issued(self, session_id: str, file_id: str) -> None:
        with self._lock:
            issued = self._sessions.setdefault(session_id, _Session()).issued
            issued[file_id] = None
            while len(issued) > ISSUED_PER_SESSION:
                issued.popitem(last=False)

    def held_bytes(self) -> int:
        with self._lock:
            return sum(sum(s.held.values()) + sum(s.in_flight.values()) for s in self._sessions.values())

    def refusal(self, session_id: str, file_id: str, length: int | None) -> tuple[int, str] | None:
        """(status, reason) if this PUT must be refused from its headers, else None (then reserve() it)."""
        if not operator_allows_uploads():
            return 403, "Uploads are off on this server."
        with self._lock:
            session = self._sessions.get(session_id)
            if session is None or session.may_upload is None:
                return 403, "This session has no uploader."
            if file_id not in session.issued:
                return 403, "This file id was not issued to this session."
            if length is None:
                return 411, "An upload needs a Content-Length."
            limits = self.limits
            if length > limits.file_bytes + MULTIPART_OVERHEAD:
                return 413, "The file is over the limit."
            others = {**session.held, **session.in_flight}
            others.pop(file_id, None)  # a file sent again under its id replaces itself
            if len(others) + 1 > limits.session_files or sum(others.values()) + length > limits.session_bytes:
                return 413, "This session holds as many uploads as it may."
            total = sum(sum(s.held.values()) + sum(s.in_flight.values()) for s in self._sessions.values())
            if total - session.held.get(file_id, 0) + length > limits.process_bytes:
                return 503, "The server holds as many uploads as it may; try again later."
        return None

    def may_upload(self, session_id: str) -> bool:
        with self._lock:
            session = self._sessions.get(session_id)
            check = session.may_upload if session else None
        return check is not None and check()

    def reserve(self, session_id: str, file_id: str, length: int) -> None:
        with self._lock:
            self._sessions.setdefault(session_id, _Session()).in_flight[file_id] = length

    def finish(self, session_id: str, file_id: str, stored: bool) -> None:
        with self._lock:
            session = self._sessions.get(session_id)
            if session is None:
                return
            length = session.in_flight.pop(file_id, 0)
            if stored:
                session.held[file_id] = length

    def removed(self, session_id: str, file_id: str) -> None:
        with self._lock:
            session = self._sessions.get(session_id)
            if session is not None:
                session.held.pop(file_id, None)
                session.issued.pop(file_id, None)

    def forget(self, session_id: str) -> None:
        with self._lock:
            self._sessions.pop(session_id, None)


GATE = UploadGate()  # the process's gate: the page (ui/train/upload_policy.py) and asgi.py's middleware share it


def _streamlit_upload_manager():
    return uploaded_file_manager()


def _session_ids(frame: bytes) -> tuple[str | None, list[tuple[str, str]]]:
    """From an outgoing ForwardMsg: the session id it names (new_session) and the (session, file) ids it issues."""
    message = ForwardMsg()
    message.ParseFromString(frame)
    kind = message.WhichOneof("type")
    if kind == "new_session":
        return message.new_session.initialize.session_id or None, []
    if kind == "file_urls_response":
        issued = [match.groups() for urls in message.file_urls_response.file_urls
                  if (match := UPLOAD_ROUTE.search(urls.upload_url))]
        return None, issued
    return None, []


async def _refuse(send, status: int, reason: str) -> None:
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"text/plain; charset=utf-8"), (b"connection", b"close")]})
    await send({"type": "http.response.body", "body": reason.encode() + b"\n"})


class UploadGateMiddleware:
    """Pure ASGI: reads issued ids from the websocket, decides each upload PUT before its body, frees at close."""

    def __init__(self, app, gate: UploadGate | None = None, upload_manager: Callable[[], object] | None = None):
        self.app = app
        self.gate = gate or GATE
        self.upload_manager = upload_manager or _streamlit_upload_manager

    async def __call__(self, scope, receive, send):
        path = scope.get("path", "")
        if scope["type"] == "websocket" and path.endswith(STREAM_PATH):
            await self._stream(scope, receive, send)
            return
        route = UPLOAD_ROUTE.search(path) if scope["type"] == "http" else None
        if route is None or scope["method"] not in ("PUT", "DELETE"):
            await self.app(scope, receive, send)
            return
        session_id, file_id = route.groups()
        if scope["method"] == "DELETE":
            status = await self._status_of(scope, receive, send)
            if 200 <= status < 300:
                self.gate.removed(session_id, file_id)
            return
        await self._put(scope, receive, send, session_id, file_id)

    async def _put(self, scope, receive, send, session_id: str, file_id: str) -> None:
        headers = dict(scope.get("headers", ()))
        length = headers.get(b"content-length")
        length = int(length) if length is not None and length.isdigit() and b"transfer-encoding" not in headers \
            else None
        refusal = self.gate.refusal(session_id, file_id, length)
        if refusal is None and not await anyio.to_thread.run_sync(self.gate.may_upload, session_id):
            refusal = 403, "Uploads are off for this session's class."  # the class store may block: not on the loop
        if refusal is not None:
            await _refuse(send, *refusal)
            return
        self.gate.reserve(session_id, file_id, length)
        status = 500
        try:
            status = await self._status_of(scope, receive, send)
        finally:
            self.gate.finish(session_id, file_id, stored=200 <= status < 300)

    async def _status_of(self, scope, receive, send) -> int:
        status = 500

        async def send_noting_status(message):
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        await self.app(scope, receive, send_noting_status)
        return status

    async def _stream(self, scope, receive, send) -> None:
        sessions: set[str] = set()

        async def send_noting_ids(message):
            frame = message.get("bytes") if message["type"] == "websocket.send" else None
            # Parse only what can name a session: until this connection's session is known, and any message that
            # mentions the upload route (a file_urls_response); a chart's large delta is passed without parsing.
            if frame is not None and (not sessions or b"upload_file/" in frame):
                try:
                    session_id, issued = _session_ids(frame)
                except Exception:  # not a ForwardMsg we can read: nothing to note
                    session_id, issued = None, []
                if session_id:
                    sessions.add(session_id)
                for issued_session, file_id in issued:
                    sessions.add(issued_session)
                    self.gate.issued(issued_session, file_id)
            await send(message)

        try:
            await self.app(scope, receive, send_noting_ids)
        finally:
            manager = self.upload_manager()
            for session_id in sessions:
                if manager is not None:
                    manager.remove_session_files(session_id)
                self.gate.forget(session_id)

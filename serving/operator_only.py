"""What only the operator may do, closed to every browser: Streamlit's developer messages and its metrics.

Streamlit's websocket takes a few BackMsgs meant for the developer at her own machine: `clear_cache` empties every
st.cache_data and st.cache_resource of the process (every student's cached models and charts: each page then rebuilds
them), `set_run_on_save`, `load_git_info` (runs git), and the debug_* pair. Any client can send them, so this ASGI
middleware (asgi.py puts it first) reads each frame a browser sends on /_stcore/stream and passes on only the kinds a
student's page needs (STUDENT_BACKMSGS); anything else is dropped there and never reaches Streamlit. It is an
allow-list: a kind a new Streamlit adds stays closed until it is named here (tests/test_gateway.py names every kind).
A frame over Streamlit's own cap on what a browser sends (server.maxWidgetStateSize, 2 MB in .streamlit/config.toml)
is passed on unparsed: Streamlit closes the connection on it (1009) without parsing it, and so does this (issue 53: a
190 MiB frame parsed here first took 507 MB for a moment). server.maxMessageSize caps a frame before it is read whole.

`/_stcore/metrics` (cache names and sizes, sessions, upload bytes) and `/_stcore/script-health-check` answer only
the operator: a request from a loopback address that came through no proxy (no X-Forwarded-For, Forwarded or
X-Real-IP header: HAProxy and ingress-nginx always add X-Forwarded-For), or one that carries
`Authorization: Bearer <token>` with the token of the environment variable ATTENTION_LAB_OPERATOR_TOKEN (for a
Prometheus scraping through the proxy). Everyone else gets 403 before Streamlit sees the request.
"""
from __future__ import annotations

import hmac
import ipaddress
import logging
import os

import streamlit as st

from serving.internals import BackMsg

OPERATOR_TOKEN_ENV = "ATTENTION_LAB_OPERATOR_TOKEN"
STREAM_PATH = "/_stcore/stream"
OPERATOR_PATHS = ("/_stcore/metrics", "/_stcore/script-health-check")
# What a student's page sends: runs (widgets, page changes), stopping its own run, asking where to upload a file,
# the keep-alive, and a data frame's chunks. Everything else in BackMsg's oneof is the developer's.
STUDENT_BACKMSGS = frozenset({"rerun_script", "stop_script", "file_urls_request", "app_heartbeat",
                              "backend_operation_request"})
PROXY_HEADERS = (b"x-forwarded-for", b"forwarded", b"x-real-ip")

_LOGGER = logging.getLogger(__name__)


def largest_student_frame() -> int:
    """Bytes: the largest frame Streamlit takes from a browser (server.maxWidgetStateSize, in MB)."""
    return int(st.get_option("server.maxWidgetStateSize") * 1_000_000)


def backmsg_kind(frame: bytes) -> str | None:
    """The kind of BackMsg a websocket frame holds (what Streamlit will act on), or None if it is not one."""
    message = BackMsg()
    try:
        message.ParseFromString(frame)
    except Exception:  # Streamlit closes the connection on a frame it cannot parse; let it say so
        return None
    return message.WhichOneof("type")


def is_operator(scope) -> bool:
    """A loopback client that came through no proxy, or one with the operator token."""
    headers = scope.get("headers", ())
    token = os.environ.get(OPERATOR_TOKEN_ENV, "")
    if token:
        expected = f"Bearer {token}".encode()
        if any(name == b"authorization" and hmac.compare_digest(value, expected) for name, value in headers):
            return True
    if any(name in PROXY_HEADERS for name, _ in headers):
        return False
    client = scope.get("client")
    try:
        return client is not None and ipaddress.ip_address(client[0]).is_loopback
    except ValueError:  # a unix socket or a test client's made-up host name
        return False


class OperatorOnlyMiddleware:
    """Pure ASGI: drops developer BackMsgs from every websocket, refuses the operator's routes to others."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        path = scope.get("path", "")
        if scope["type"] == "websocket" and path.endswith(STREAM_PATH):
            await self.app(scope, self._filtered(receive), send)
        elif scope["type"] == "http" and path.rstrip("/").endswith(OPERATOR_PATHS) and not is_operator(scope):
            await send({"type": "http.response.start", "status": 403,
                        "headers": [(b"content-type", b"text/plain; charset=utf-8")]})
            await send({"type": "http.response.body", "body": b"For the operator only.\n"})
        else:
            await self.app(scope, receive, send)

    @staticmethod
    def _filtered(receive):
        dropped, largest = 0, largest_student_frame()

        async def receive_student_messages():
            nonlocal dropped
            while True:
                message = await receive()
                frame = message.get("bytes") if message["type"] == "websocket.receive" else None
                if frame is None or len(frame) > largest:
                    return message  # connect, disconnect, text frames and oversized ones: Streamlit refuses them
                kind = backmsg_kind(frame)
                if kind is None or kind in STUDENT_BACKMSGS:
                    return message
                dropped += 1
                if dropped == 1:  # once per connection: a flood must not fill the log
                    _LOGGER.warning("Dropped a %s message from a browser: only the operator may send it", kind)

        return receive_student_messages

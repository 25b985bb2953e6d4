"""The seat cookie: one random id per browser, set by the server, so a class knows a student (and the teacher's
browser) again after a reload, a new tab or a replica's death.

Streamlit keeps no state across a reload (each page load is a new session), and its script cannot set a cookie; the
server can. This ASGI middleware (asgi.py puts it in front of Streamlit's own app) adds `attention_lab_seat` to the
first HTML page a browser gets without a valid one: 32 random hex digits, HttpOnly (page scripts cannot read or copy
it), SameSite=Lax, for 12 hours (a school day), and Secure when the page came over HTTPS (serve.py --tls-cert, or an
ingress with TLS). The browser then sends it with the websocket, where the app reads it
with st.context.cookies (ui/seat.browser_seat). It identifies, it does not authenticate: a student who clears
cookies or opens a private window is a new, anonymous student (docs/security.md says so). serve.py's
replicas need no shared secret for it: any replica reads the same value, and the class store keys answers by it.
"""
from __future__ import annotations

import hashlib
import re
import secrets
from http.cookies import SimpleCookie

SEAT_COOKIE = "attention_lab_seat"
SEAT_PATTERN = re.compile(r"[0-9a-f]{32}")
SEAT_SECONDS = 12 * 3600


def valid_seat(value: str | None) -> str | None:
    """The seat if `value` is one this server could have set, else None (a forged or broken cookie is no seat)."""
    return value if value is not None and SEAT_PATTERN.fullmatch(value) else None


def seat_student(seat: str) -> str:
    """The anonymous student id a seat is known by in the class store (seats and answers): a hash, so the seat itself
    is never stored. The one derivation: the pages (ui/lesson_bar/bar.student_id) and the class-version route use it."""
    return hashlib.sha256(f"student:{seat}".encode()).hexdigest()[:24]


def seat_from_cookie_header(header: str) -> str | None:
    try:
        morsel = SimpleCookie(header).get(SEAT_COOKIE)
    except Exception:  # http.cookies raises CookieError (and others) on a malformed header: then there is no seat
        return None
    return valid_seat(morsel.value if morsel else None)


def set_cookie_header(seat: str, secure: bool = False) -> bytes:
    """`secure`: the page came over HTTPS, so the browser must never send the seat over plain HTTP."""
    attributes = "; Secure" if secure else ""
    return f"{SEAT_COOKIE}={seat}; Path=/; Max-Age={SEAT_SECONDS}; HttpOnly; SameSite=Lax{attributes}".encode()


def came_over_https(scope) -> bool:
    """The request reached the server over HTTPS: directly, or through a proxy the server trusts. uvicorn (which
    Streamlit runs) rewrites the scheme from X-Forwarded-Proto only when the peer is in FORWARDED_ALLOW_IPS (by
    default 127.0.0.1, where serve.py's HAProxy connects from, and which sets that header on every request)."""
    return scope.get("scheme") in ("https", "wss")


class SeatCookieMiddleware:
    """Pure ASGI: HTTP responses of type text/html to a request without a valid seat get a Set-Cookie with a new one.
    Websockets, static files and health checks pass untouched (only a page load needs it, and setting it on
    parallel asset responses would race)."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        header = b"; ".join(value for name, value in scope.get("headers", ()) if name == b"cookie")
        if seat_from_cookie_header(header.decode("latin-1")):
            await self.app(scope, receive, send)
            return

        async def send_with_seat(message):
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", ()))
                content_type = next((value for name, value in headers if name.lower() == b"content-type"), b"")
                if content_type.startswith(b"text/html"):
                    message = {**message, "headers": [*headers, (b"set-cookie", set_cookie_header(
                        secrets.token_hex(16), secure=came_over_https(scope)))]}
            await send(message)

        await self.app(scope, receive, send_with_seat)

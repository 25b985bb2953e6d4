"""Caps on the websockets one browser and one address hold open on a replica (issue 53 item 1).

A Streamlit page holds one websocket per tab for as long as the tab is open. One cookie jar from one address opened
about 1,000 idle websockets per replica in 40 s, sending nothing: that filled HAProxy's 1,000 connections a replica,
and every student pinned to it got a 503. Here, in front of Streamlit's app (asgi.py), a websocket handshake is
refused (closed before it is accepted: the client sees HTTP 403) past:
- SOCKETS_PER_SEAT open websockets of one seat cookie (serving/seat.py: a student's tabs), except the seat that
  started a live class (its laptop, its projector, its phone: the teacher is never refused);
- SOCKETS_PER_ADDRESS of one client address (a school behind one NAT: 300 students with two tabs each), of which
  SEATLESS_PER_ADDRESS without a seat cookie (a browser that refuses cookies still opens the lab; a script that drops
  its cookies to dodge the seat's cap meets this one). The loopback address is not capped: there every client shares
  it (`make run` on the teacher's machine, serve.py's HAProxy without a forwarded header), as ui/live_class/classroom's
  guessing limit does.
And a websocket that sends nothing within FIRST_MESSAGE_SECONDS of its handshake is closed: Streamlit's front end
sends its first message (the page's run) at once, so an idle one only holds a connection and its memory.

Counts are per process (one replica); HAProxy carries the seat's cap in front of every replica
(deploy/haproxy.cfg.template), and the ingress its per-address one (deploy/kubernetes/ingress.yaml). The address is
the one uvicorn reports: the real one behind a proxy it trusts (FORWARDED_ALLOW_IPS: serve.py's HAProxy, the ingress).
"""
from __future__ import annotations

import asyncio
import sys
import time
from collections import Counter

from serving.seat import seat_from_cookie_header

SOCKETS_PER_SEAT = 16  # a student's tabs (each page holds one)
SOCKETS_PER_ADDRESS = 800  # a school's NAT: 300 students, two tabs each, and room
SEATLESS_PER_ADDRESS = 32  # … of them without a seat cookie
FIRST_MESSAGE_SECONDS = 30.0  # from the handshake to the socket's first message
TEACHER_SEAT_SECONDS = 60.0  # how long "this seat started a live class" is kept before it is asked again
LOOPBACK = frozenset({"127.0.0.1", "::1", "localhost", None})
REFUSED_CLOSE_CODE = 1008  # policy violation: a handshake closed before it is accepted is answered 403


def _cookie_header(scope) -> str:
    return b"; ".join(value for name, value in scope.get("headers", ()) if name == b"cookie").decode("latin-1")


def _default_is_teacher(seat: str) -> bool:
    """The seat started a class that is still live (ClassStore.class_of_seat): read from the class store."""
    from classroom.store import process_store

    return process_store().class_of_seat(seat) is not None


class SocketCapMiddleware:
    """Pure ASGI: websockets counted per seat and per address while they are open; a handshake past a cap is closed
    unaccepted; a socket silent for FIRST_MESSAGE_SECONDS after its handshake is ended. Everything else passes."""

    def __init__(self, app, is_teacher=_default_is_teacher, first_message_seconds: float = FIRST_MESSAGE_SECONDS):
        self.app = app
        self.is_teacher = is_teacher  # (seat) -> bool, blocking: called in a worker thread, only past a seat's cap
        self.first_message_seconds = first_message_seconds
        self.per_seat: Counter[str] = Counter()
        self.per_address: Counter[str] = Counter()
        self.seatless: Counter[str] = Counter()
        self.teachers: dict[str, tuple[bool, float]] = {}  # seat -> (started a live class, when that was read)
        self.refused: Counter[str] = Counter()  # why -> how many, since the process started
        self._said: dict[str, float] = {}  # why -> when it was last printed

    async def __call__(self, scope, receive, send):
        if scope["type"] != "websocket":
            await self.app(scope, receive, send)
            return
        seat = seat_from_cookie_header(_cookie_header(scope))
        client = scope.get("client")
        address = None if not client or client[0] in LOOPBACK else client[0]
        why = await self._refusal(seat, address)
        if why is not None:
            self._refuse(why)
            message = await receive()  # websocket.connect: the handshake, answered with a close (HTTP 403)
            if message["type"] == "websocket.connect":
                await send({"type": "websocket.close", "code": REFUSED_CLOSE_CODE})
            return
        self._count(seat, address, +1)
        try:
            await self.app(scope, self._first_message_deadline(receive), send)
        finally:
            self._count(seat, address, -1)

    async def _refusal(self, seat: str | None, address: str | None) -> str | None:
        """Why this handshake is refused, or None."""
        if seat is not None and self.per_seat[seat] >= SOCKETS_PER_SEAT and not await self._teacher(seat):
            return f"a seat holds {SOCKETS_PER_SEAT} websockets"
        if address is not None:
            if self.per_address[address] >= SOCKETS_PER_ADDRESS and not (seat and await self._teacher(seat)):
                return f"an address holds {SOCKETS_PER_ADDRESS} websockets"
            if seat is None and self.seatless[address] >= SEATLESS_PER_ADDRESS:
                return f"an address holds {SEATLESS_PER_ADDRESS} websockets without a seat cookie"
        return None

    async def _teacher(self, seat: str) -> bool:
        known = self.teachers.get(seat)
        now = time.monotonic()
        if known is None or now - known[1] > TEACHER_SEAT_SECONDS:
            try:
                teaches = await asyncio.to_thread(self.is_teacher, seat)
            except Exception:  # the store unreachable: the cap holds (a refused tab retries)
                teaches = False
            known = (teaches, now)
            self.teachers[seat] = known
            if len(self.teachers) > 10_000:  # forged seats must not grow it without end: the oldest half goes
                for old in sorted(self.teachers, key=lambda s: self.teachers[s][1])[:5_000]:
                    del self.teachers[old]
        return known[0]

    def _count(self, seat: str | None, address: str | None, step: int) -> None:
        for counter, key in ((self.per_seat, seat), (self.per_address, address),
                             (self.seatless, address if seat is None else None)):
            if key is None:
                continue
            counter[key] += step
            if counter[key] <= 0:
                del counter[key]

    def _refuse(self, why: str) -> None:
        self.refused[why] += 1
        now = time.monotonic()
        if now - self._said.get(why, -60.0) >= 60.0:  # once a minute per reason: a flood does not flood the log
            self._said[why] = now
            print(f"websocket refused: {why} ({self.refused[why]} so far)", file=sys.stderr, flush=True)

    def _first_message_deadline(self, receive):
        """receive, except that the socket's first message must come within first_message_seconds of the handshake:
        past it the app is told the client left (it ends the session; the server closes the socket)."""
        deadline = time.monotonic() + self.first_message_seconds
        heard = False

        async def receive_by_deadline():
            nonlocal heard
            if heard:
                return await receive()
            try:
                message = await asyncio.wait_for(receive(), max(deadline - time.monotonic(), 0.001))
            except TimeoutError:
                return {"type": "websocket.disconnect", "code": REFUSED_CLOSE_CODE}
            if message["type"] == "websocket.receive":
                heard = True
            return message
        return receive_by_deadline

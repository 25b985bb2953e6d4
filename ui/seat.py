"""Who this browser is, as the server can tell: its seat cookie (serving/seat.py), the address it connects from, this
session's id; and the class store every class of this process lives in (classroom.store.process_store). A student's
turn in the queues (ui/analysis_queue.py), the seats per address and the guessing limits all start here."""
from __future__ import annotations

import secrets

import streamlit as st

from classroom.store import ClassStore, process_store
from serving.seat import SEAT_COOKIE, valid_seat
from ui.session import lab_session

LOOPBACK = {"local", "127.0.0.1", "::1"}  # the server's own machine: benches, or a proxy that passes no address

def class_store() -> ClassStore:
    """The store of $ATTENTION_LAB_DATABASE_URL or the data folder's SQLite file, one per process
    (classroom.store.process_store). A plain dict, not st.cache_resource: a class poll asks for it every time, and the
    cache's key hashing would be a large share of a poll's CPU."""
    return process_store()


def browser_seat() -> str | None:
    """This browser's seat cookie (serving/seat.py, set by asgi.py), or None (plain `streamlit run app.py`, AppTest)."""
    try:
        return valid_seat(st.context.cookies.get(SEAT_COOKIE))
    except Exception:  # no client context (a script run outside a browser session): no seat
        return None


def client_address() -> str:
    """Where this session connects from: the address uvicorn resolved (it takes X-Forwarded-For only from the
    proxies in $FORWARDED_ALLOW_IPS, default loopback: deploy/README.md), or for a loopback peer the last entry of
    X-Forwarded-For (serve.py's HAProxy replaces whatever the client sent: deploy/haproxy.cfg.template)."""
    address = st.context.ip_address  # None for a loopback peer
    if not isinstance(address, str):  # (AppTest's runtime answers with a stand-in object: no address)
        forwarded = st.context.headers.get("X-Forwarded-For")
        return forwarded.split(",")[-1].strip() if isinstance(forwarded, str) and forwarded else "local"
    return address


def seat_address() -> str | None:
    """The address a new seat is counted against (ClassStore.join's per-address limit); None on the server's own
    machine, where every client shares one address and says nothing about who it is."""
    address = client_address()
    return None if address in LOOPBACK else address


def session_id() -> str:
    seat = lab_session().seat
    if seat.session_id is None:
        seat.session_id = secrets.token_hex(12)
    return seat.session_id

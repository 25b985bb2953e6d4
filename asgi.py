"""The server: Streamlit's own ASGI app for app.py, with the seat cookie in front (serving/seat.py).

`streamlit run asgi.py` (what `make run`, serve.py and the tests run) serves exactly app.py, plus one HttpOnly cookie
per browser so a live class knows a student and its teacher again after a reload or a replica's death. Plain
`streamlit run app.py` still works; without the cookie a reload makes a student new and the teacher takes her class
back with the teacher password. At start it prints where the teacher password is (classroom/teacher_password.py).
Under serve.py (ATTENTION_LAB_LIVENESS_PORT set) it also answers HAProxy's health check on that port from its own
thread (serving/liveness.py), so a burst of script runs cannot get this replica marked down. The HTML of a page that
draws Plotly charts names plotly.js for the browser to fetch and compile while the tab starts (serving/plotly_preload.py).
In front of everything: Streamlit's developer messages (clear_cache, ...) dropped and its metrics for the operator only
(serving/operator_only.py), and its upload route bounded to issued ids, caps and the uploads switches
(serving/upload_gate.py).
The class report's downloads are served to the teacher's browser only (serving/private_media.py).
The websockets one browser (its seat) and one address hold open are capped, and a silent one is closed
(serving/socket_caps.py).
A class's version, which every student's page asks every second instead of rerunning a fragment, is answered
before anything else, with no script run (serving/class_version.py).
The GIL is handed between threads every millisecond, not every 5 (GIL_SWITCH_SECONDS, below).
`/_stcore/metrics` counts the app's result store beside Streamlit's caches (serving/result_metrics.py).
Unless ATTENTION_LAB_WARMUP=0 (serve.py's replicas, which it warms itself; the tests), the server warms itself in the
background from its first second: every shipped model and every lesson stop opened once (serving/warmup.py), while
Home says it is warming up.
"""
import contextlib
import sys

import streamlit as st
from starlette.middleware import Middleware

from classroom.teacher_password import announce_teacher_password
from serving.class_version import ClassVersionMiddleware, release_held_requests_on_stop
from serving.liveness import liveness_from_environment
from serving.operator_only import OperatorOnlyMiddleware
from serving.plotly_preload import PlotlyPreloadMiddleware
from serving.private_media import PrivateMediaMiddleware
from serving.result_metrics import register_result_metrics
from serving.seat import SeatCookieMiddleware
from serving.socket_caps import SocketCapMiddleware
from serving.upload_gate import UploadGateMiddleware
from serving.warmup import start_self_warm_up
from serving.internals import build_session_theme_once
from ui.page_list import PLOTLY_PAGES


@contextlib.asynccontextmanager
async def _lifespan(_app):
    announce_teacher_password()
    register_result_metrics()
    release_held_requests_on_stop()  # a stop is not held up by students' class watches (serving/class_version.py)
    start_self_warm_up()  # a thread: it waits for this server to answer, then warms it (off under serve.py)
    async with liveness_from_environment():
        yield


# First to last on a request: a class's version answered (the most frequent request in a class, and the cheapest),
# a browser's and an address's websockets capped, operator-only messages and routes closed, uploads bounded, the seat cookie, the preload, the report's downloads for
# the teacher's browser only.
MIDDLEWARE = [
    Middleware(ClassVersionMiddleware),
    Middleware(SocketCapMiddleware),
    Middleware(OperatorOnlyMiddleware),
    Middleware(UploadGateMiddleware),
    Middleware(SeatCookieMiddleware),
    Middleware(PlotlyPreloadMiddleware, pages=PLOTLY_PAGES),
    Middleware(PrivateMediaMiddleware),
]
# The event loop (every browser's messages, the class watch's answers) shares the GIL with the script runs. At a Reveal a
# replica starts 150 fragment runs at once: at Python's default switch interval (5 ms) the loop, which gives up the GIL
# at every socket write and select, waits up to 5 ms behind a run to take it back at each of those (the convoy
# effect), so the runs' starts and their messages trickle out. At 1 ms the same work reaches the class sooner
# (bench/README.md, "300 students answering"); the CPU-bound parts (torch) release the GIL and do not care.
GIL_SWITCH_SECONDS = 0.001
sys.setswitchinterval(GIL_SWITCH_SECONDS)
build_session_theme_once()  # every run's new_session theme built once, not walked six times a run (serving/internals.py)
app = st.App("app.py", middleware=MIDDLEWARE, lifespan=_lifespan)

"""The gateway in front of Streamlit (asgi.py's middleware): developer messages dropped, metrics for the operator
only (serving/operator_only.py), and the upload route bounded (serving/upload_gate.py). Pure ASGI tests with a
recording app behind, and one real Streamlit app (tests/data/gateway_app.py) over starlette's TestClient."""
from __future__ import annotations

from pathlib import Path

import pytest
import streamlit as st
from starlette.middleware import Middleware
from starlette.testclient import TestClient
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

from serving import operator_only, socket_caps
from serving.operator_only import STUDENT_BACKMSGS, OperatorOnlyMiddleware
from serving.seat import SeatCookieMiddleware
from serving.socket_caps import SocketCapMiddleware
from serving.upload_gate import ENV_VAR, UploadGate, UploadGateMiddleware, UploadLimits
from tests.conftest import run_in_own_loop

MiB = 2**20
# Every kind of BackMsg the installed Streamlit knows, and who may send it. A kind a new Streamlit adds fails here
# until it is put on one side (the middleware drops it meanwhile: an allow-list).
OPERATOR_BACKMSGS = {"clear_cache", "set_run_on_save", "load_git_info", "debug_disconnect_websocket",
                     "debug_shutdown_runtime"}


def test_every_backmsg_kind_is_either_a_students_or_the_operators():
    kinds = {field.name for field in BackMsg.DESCRIPTOR.oneofs_by_name["type"].fields}
    assert kinds == STUDENT_BACKMSGS | OPERATOR_BACKMSGS
    assert not STUDENT_BACKMSGS & OPERATOR_BACKMSGS


# ---- pure ASGI: what reaches the app behind

def _frame(**kind) -> bytes:
    message = BackMsg(**kind)
    return message.SerializeToString()


def _run_websocket(middleware_class, frames: list[bytes], inner_sends: list[bytes] = (), **options):
    """Frames a client sends through the middleware; returns what the app behind received."""
    received = []

    async def app(scope, receive, send):
        for frame in inner_sends:
            await send({"type": "websocket.send", "bytes": frame})
        while (message := await receive())["type"] != "websocket.disconnect":
            received.append(message["bytes"])

    incoming = [{"type": "websocket.receive", "bytes": frame} for frame in frames]
    incoming.append({"type": "websocket.disconnect", "code": 1000})

    async def receive():
        return incoming.pop(0)

    async def send(message):
        pass

    scope = {"type": "websocket", "path": "/_stcore/stream", "headers": []}
    run_in_own_loop(middleware_class(app, **options)(scope, receive, send))
    return received


def test_developer_messages_never_reach_streamlit():
    rerun = _frame(rerun_script={"query_string": ""})
    heartbeat = _frame(app_heartbeat=True)
    dropped = [_frame(clear_cache=True), _frame(set_run_on_save=True), _frame(load_git_info=True),
               _frame(debug_shutdown_runtime=True), _frame(debug_disconnect_websocket=True)]
    assert _run_websocket(OperatorOnlyMiddleware, [rerun, *dropped, heartbeat]) == [rerun, heartbeat]


def _http(middleware, method: str, path: str, headers=(), body_chunks=(b"",), client=("127.0.0.1", 5000)):
    """One HTTP request through `middleware`; returns (status, body read by the app behind, bytes the app read)."""
    state = {"read": 0, "called": False}

    async def app(scope, receive, send):
        state["called"] = True
        while True:
            message = await receive()
            state["read"] += len(message.get("body", b""))
            if not message.get("more_body"):
                break
        await send({"type": "http.response.start", "status": 204, "headers": []})
        await send({"type": "http.response.body", "body": b""})

    chunks = list(body_chunks)
    responses = []

    async def receive():
        chunk = chunks.pop(0)
        return {"type": "http.request", "body": chunk, "more_body": bool(chunks)}

    async def send(message):
        responses.append(message)

    scope = {"type": "http", "method": method, "path": path, "client": client,
             "headers": [(name.lower().encode(), value.encode()) for name, value in headers]}
    run_in_own_loop(middleware(app)(scope, receive, send))
    return responses[0]["status"], state["called"], state["read"]


def test_metrics_answer_only_the_operator(monkeypatch):
    monkeypatch.delenv(operator_only.OPERATOR_TOKEN_ENV, raising=False)
    assert _http(OperatorOnlyMiddleware, "GET", "/_stcore/metrics")[:2] == (204, True)  # the machine's console
    for headers, client in ((), ("10.0.0.7", 5000)),  (([("X-Forwarded-For", "10.0.0.7")], ("127.0.0.1", 5000))):
        assert _http(OperatorOnlyMiddleware, "GET", "/_stcore/metrics", headers, client=client)[:2] == (403, False)
    through_proxy = [("X-Forwarded-For", "10.0.0.7"), ("Authorization", "Bearer s3cret")]
    assert _http(OperatorOnlyMiddleware, "GET", "/_stcore/metrics", through_proxy)[0] == 403  # no token set
    monkeypatch.setenv(operator_only.OPERATOR_TOKEN_ENV, "s3cret")
    assert _http(OperatorOnlyMiddleware, "GET", "/_stcore/metrics", through_proxy)[0] == 204
    wrong = [("X-Forwarded-For", "10.0.0.7"), ("Authorization", "Bearer guess")]
    assert _http(OperatorOnlyMiddleware, "GET", "/_stcore/metrics", wrong)[0] == 403
    assert _http(OperatorOnlyMiddleware, "GET", "/", [("X-Forwarded-For", "10.0.0.7")])[0] == 204  # pages: everyone


def _issue(gate: UploadGate, session: str, file_id: str) -> None:
    """As the middleware does on reading a file_urls_response (the real app's test below reads a real one)."""
    gate.issued(session, file_id)


def _put(gate: UploadGate, session: str, file_id: str, size: int, chunked: bool = False):
    headers = [("Transfer-Encoding", "chunked")] if chunked else [("Content-Length", str(size))]
    chunks = [b"x" * (size // 4)] * 4
    return _http(lambda app: UploadGateMiddleware(app, gate=gate, upload_manager=lambda: None), "PUT",
                 f"/_stcore/upload_file/{session}/{file_id}", headers, chunks)


@pytest.fixture
def uploads_on(monkeypatch):
    monkeypatch.setenv(ENV_VAR, "on")


def test_uploads_are_refused_before_their_body_is_read(uploads_on, monkeypatch):
    gate = UploadGate(UploadLimits(file_bytes=8 * MiB, session_bytes=12 * MiB, session_files=3,
                                   process_bytes=20 * MiB))
    # No page drew the uploader for this session: refused, though the id was issued (a file_urls_request without a
    # widget gets ids from Streamlit).
    _issue(gate, "s1", "f1")
    assert _put(gate, "s1", "f1", 4 * MiB) == (403, False, 0)
    gate.open_for("s1", lambda: True)
    assert _put(gate, "s1", "any-id", 4 * MiB) == (403, False, 0)  # an id the server never issued
    assert _put(gate, "s1", "f1", 4 * MiB) == (204, True, 4 * MiB)  # issued, and the page shows the uploader
    assert _put(gate, "s1", "f1", 4 * MiB)[0] == 204  # sent again under its id: replaces, counts once
    _issue(gate, "s1", "f2")
    assert _put(gate, "s1", "f2", 9 * MiB) == (413, False, 0)  # over one file's limit
    assert _put(gate, "s1", "f2", 2 * MiB, chunked=True) == (411, False, 0)  # unbounded before reading
    assert _put(gate, "s1", "f2", 8 * MiB + 1) == (413, False, 0)  # 4 + 8 MiB: over the session's 12 MiB
    assert _put(gate, "s1", "f2", 6 * MiB)[0] == 204
    _issue(gate, "s1", "f3")
    _issue(gate, "s1", "f4")
    assert _put(gate, "s1", "f3", 1024)[0] == 204
    assert _put(gate, "s1", "f4", 1024) == (413, False, 0)  # a fourth file
    # Another session fills the process: 10 MiB held, 10 more fit the 20 MiB, 11 do not.
    for file_id in ("g1", "g2"):
        _issue(gate, "s2", file_id)
    gate.open_for("s2", lambda: True)
    assert _put(gate, "s2", "g1", 8 * MiB)[0] == 204
    assert _put(gate, "s2", "g2", 3 * MiB) == (503, False, 0)
    # The operator turns uploads off, or the class does (the page's check says no): closed before the body.
    monkeypatch.setenv(ENV_VAR, "off")
    assert _put(gate, "s2", "g1", 1024) == (403, False, 0)
    monkeypatch.setenv(ENV_VAR, "on")
    gate.open_for("s2", lambda: False)
    assert _put(gate, "s2", "g1", 1024) == (403, False, 0)


def test_the_teachers_switch_closes_the_route_of_her_students(uploads_on, monkeypatch, tmp_path):
    """The route asks the class store at each PUT (ui/train/upload_policy.class_allows_uploads, what the page opens
    the route with), so a student whose page drew the uploader is refused once the teacher turns uploads off."""
    import functools

    from classroom.store import DATA_ENV, DATABASE_URL_ENV
    from ui.seat import class_store
    from ui.train.upload_policy import class_allows_uploads

    monkeypatch.setenv(DATA_ENV, str(tmp_path))
    monkeypatch.delenv(DATABASE_URL_ENV, raising=False)
    teacher = class_store().create_class("intro")
    code = teacher.code
    gate = UploadGate(UploadLimits())
    gate.issued("s1", "f1")
    gate.open_for("s1", functools.partial(class_allows_uploads, code))
    assert _put(gate, "s1", "f1", 1024)[0] == 204
    teacher.set_uploads(False)
    assert _put(gate, "s1", "f1", 1024) == (403, False, 0)
    teacher.set_uploads(True)
    assert _put(gate, "s1", "f1", 1024)[0] == 204


def test_a_closed_websocket_frees_its_sessions_uploads(uploads_on):
    removed = []

    class Manager:
        def remove_session_files(self, session_id):
            removed.append(session_id)

    gate = UploadGate(UploadLimits(process_bytes=20 * MiB))
    gate.open_for("s1", lambda: True)
    response = ForwardMsg()
    urls = response.file_urls_response.file_urls.add()
    urls.file_id, urls.upload_url = "f1", "/_stcore/upload_file/s1/f1"
    new_session = ForwardMsg()
    new_session.new_session.initialize.session_id = "s1"
    gate.issued("s1", "f1")
    assert _put(gate, "s1", "f1", 5 * MiB)[0] == 204
    assert gate.held_bytes() == 5 * MiB
    _run_websocket(UploadGateMiddleware, [], inner_sends=[new_session.SerializeToString()], gate=gate,
                   upload_manager=Manager)
    assert removed == ["s1"] and gate.held_bytes() == 0
    assert _put(gate, "s1", "f1", 1024)[0] == 403  # its ids and its open route went with it


# ---- a real Streamlit app behind the gateway

APP = Path(__file__).parent / "data" / "gateway_app.py"


def _receive_until(ws, kind: str) -> list[ForwardMsg]:
    messages = []
    while True:
        message = ForwardMsg()
        message.ParseFromString(ws.receive_bytes())
        messages.append(message)
        if message.WhichOneof("type") == kind:
            return messages


@pytest.fixture(scope="module")
def streamlit_app():
    """One st.App per process (Streamlit's runtime is a singleton), with asgi.py's gateway in front."""
    gate = UploadGate(UploadLimits(file_bytes=MiB, session_bytes=2 * MiB, session_files=2, process_bytes=4 * MiB))
    app = st.App(str(APP), middleware=[Middleware(OperatorOnlyMiddleware), Middleware(UploadGateMiddleware, gate=gate)])
    with TestClient(app, base_url="http://127.0.0.1") as client:
        assert client.get("/_stcore/health").status_code == 200  # Streamlit sets the XSRF cookie there
        yield client, gate


def _stamp(ws) -> str:
    """Run the script and return the stamp it shows (its cached value)."""
    ws.send_bytes(_frame(rerun_script={"query_string": ""}))
    bodies = [m.delta.new_element.markdown.body for m in _receive_until(ws, "script_finished")
              if m.WhichOneof("type") == "delta"]
    return next(body for body in bodies if body.startswith("stamp "))


def test_clear_cache_from_a_student_changes_nothing(streamlit_app, monkeypatch):
    client, _ = streamlit_app
    monkeypatch.setenv(operator_only.OPERATOR_TOKEN_ENV, "test-operator")
    assert client.get("/_stcore/metrics").status_code == 403  # a test client is no loopback console
    assert client.get("/_stcore/metrics", headers={"Authorization": "Bearer test-operator"}).status_code == 200

    def stamps_around_clear_cache() -> tuple[str, str]:
        with client.websocket_connect("/_stcore/stream", subprotocols=["streamlit"]) as ws:
            before = _stamp(ws)
            for _ in range(5):
                ws.send_bytes(_frame(clear_cache=True))
            return before, _stamp(ws)

    before, after = stamps_around_clear_cache()
    assert after == before
    # The control: let clear_cache through, and the same messages empty the cache.
    monkeypatch.setattr(operator_only, "STUDENT_BACKMSGS", STUDENT_BACKMSGS | {"clear_cache"})
    before, after = stamps_around_clear_cache()
    assert after != before


def test_streamlit_upload_route_takes_only_what_the_gate_allows(streamlit_app, uploads_on):
    client, gate = streamlit_app
    xsrf = {"X-Xsrftoken": client.cookies["_streamlit_xsrf"]}
    with client.websocket_connect("/_stcore/stream", subprotocols=["streamlit"]) as ws:
        ws.send_bytes(_frame(rerun_script={"query_string": ""}))
        session_id = _receive_until(ws, "new_session")[-1].new_session.initialize.session_id
        _receive_until(ws, "script_finished")
        ws.send_bytes(_frame(file_urls_request={"request_id": "r1", "file_names": ["a.json"],
                                                "session_id": session_id}))
        issued = _receive_until(ws, "file_urls_response")[-1].file_urls_response.file_urls[0].file_id
        files = {"file": ("a.json", b"{}" * 1000, "application/json")}
        url = f"/_stcore/upload_file/{session_id}/{issued}"
        assert client.put(url, files=files, headers=xsrf).status_code == 403  # no page opened the route
        gate.open_for(session_id, lambda: True)
        assert client.put(f"/_stcore/upload_file/{session_id}/made-up", files=files, headers=xsrf).status_code == 403
        assert client.put(url, files=files, headers=xsrf).status_code == 204
        manager = st.runtime.get_instance().uploaded_file_mgr
        assert [f.file_id for f in manager.get_files(session_id, [issued])] == [issued]
        big = {"file": ("b.json", b"x" * (MiB + MULTIPART_SLACK), "application/json")}
        assert client.put(url, files=big, headers=xsrf).status_code == 413
    assert manager.get_files(session_id, [issued]) == []  # freed when the websocket closed
    assert gate.held_bytes() == 0


MULTIPART_SLACK = 128 * 1024


# ---- the seat cookie over HTTPS

def _seat_cookie(scheme: str, headers=(), client=("127.0.0.1", 5000), trusted="127.0.0.1") -> str:
    """The Set-Cookie of a first page load, behind uvicorn's proxy-header handling as `streamlit run` has it."""
    from uvicorn.middleware.proxy_headers import ProxyHeadersMiddleware

    async def page(scope, receive, send):
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/html")]})
        await send({"type": "http.response.body", "body": b"<html></html>"})

    sent = []

    async def receive():
        return {"type": "http.request", "body": b""}

    async def send(message):
        sent.append(message)

    scope = {"type": "http", "method": "GET", "path": "/", "scheme": scheme, "client": client,
             "headers": [(name.encode(), value.encode()) for name, value in headers]}
    run_in_own_loop(ProxyHeadersMiddleware(SeatCookieMiddleware(page), trusted_hosts=trusted)(scope, receive, send))
    return dict(sent[0]["headers"])[b"set-cookie"].decode()


def test_the_seat_cookie_is_secure_over_https_only():
    assert "; Secure" in _seat_cookie("https")  # TLS at the server itself
    assert "; Secure" not in _seat_cookie("http")
    # Behind serve.py's HAProxy (a loopback peer, trusted) with TLS, and without: it says which in X-Forwarded-Proto.
    assert "; Secure" in _seat_cookie("http", [("x-forwarded-proto", "https"), ("x-forwarded-for", "10.0.0.7")])
    assert "; Secure" not in _seat_cookie("http", [("x-forwarded-proto", "http"), ("x-forwarded-for", "10.0.0.7")])
    # A client that claims HTTPS itself is not believed (its cookie would be dropped on the plain-HTTP site).
    assert "; Secure" not in _seat_cookie("http", [("x-forwarded-proto", "https")], client=("10.0.0.7", 5000))


# ---- websockets per seat and per address (serving/socket_caps.py)

def _sockets_through(middleware: SocketCapMiddleware, handshakes: list[tuple[str | None, str]], *, silent=(),
                     first_message_seconds: float = 5.0):
    """Opens one websocket per (seat, client address) through `middleware`, all held open at once; then closes them.
    -> [True for an accepted one, False for a refused one], and which of the `silent` ones (indices: they send nothing)
    the app behind was told had left."""
    import asyncio

    middleware.first_message_seconds = first_message_seconds

    async def run():
        release = asyncio.Event()
        outcomes, ended = {}, set()

        async def app(scope, receive, send):
            assert (await receive())["type"] == "websocket.connect"
            await send({"type": "websocket.accept"})
            index, heard = scope["index"], False
            outcomes[index] = True
            while (await receive())["type"] != "websocket.disconnect":
                heard = True
            if not heard:
                ended.add(index)

        middleware.app = app

        async def one(index: int, seat: str | None, address: str):
            messages = [{"type": "websocket.connect"}]
            if index not in silent:
                messages.append({"type": "websocket.receive", "bytes": b"x"})  # the page's run, at once

            async def receive():
                if messages:
                    return messages.pop(0)
                if index in silent:
                    await asyncio.sleep(3600)  # never a word
                await release.wait()
                return {"type": "websocket.disconnect", "code": 1000}  # the tab closed

            async def send(message):
                if message["type"] == "websocket.close" and index not in outcomes:
                    outcomes[index] = False  # closed before it was accepted: HTTP 403

            headers = [(b"cookie", f"attention_lab_seat={seat}".encode())] if seat else []
            scope = {"type": "websocket", "path": "/_stcore/stream", "headers": headers, "client": (address, 50000),
                     "index": index}
            await middleware(scope, receive, send)

        tasks = [asyncio.ensure_future(one(i, seat, address)) for i, (seat, address) in enumerate(handshakes)]
        while len(outcomes) < len(handshakes):
            await asyncio.sleep(0.001)
        if silent:
            await asyncio.sleep(first_message_seconds + 0.1)
        release.set()
        await asyncio.wait_for(asyncio.gather(*tasks), 10)
        return [outcomes[i] for i in range(len(handshakes))], ended

    return run_in_own_loop(run())


def test_a_seat_and_an_address_hold_a_bounded_number_of_websockets_and_the_teacher_is_never_refused(monkeypatch):
    """Issue 53 item 1: one cookie jar opened about 1,000 idle websockets a replica and locked the class out."""
    student, other, teacher = "a" * 32, "b" * 32, "c" * 32
    middleware = SocketCapMiddleware(None, is_teacher=lambda seat: seat == teacher)
    per_seat = socket_caps.SOCKETS_PER_SEAT
    opened, _ = _sockets_through(middleware, [(student, "10.0.0.1")] * (per_seat + 5) + [(other, "10.0.0.1")] +
                                 [(teacher, "10.0.0.1")] * (per_seat + 5) + [(student, "127.0.0.1")])
    assert opened[:per_seat] == [True] * per_seat and opened[per_seat:per_seat + 5] == [False] * 5
    assert opened[per_seat + 5] is True  # another student at the same address
    assert opened[per_seat + 6:-1] == [True] * (per_seat + 5)  # the teacher's seat: her projector, laptop, phone
    assert opened[-1] is False  # the seat's cap holds on the loopback address too
    assert middleware.per_seat == {} and middleware.per_address == {}  # every count given back when they closed
    opened, _ = _sockets_through(middleware, [(student, "10.0.0.1")] * per_seat)
    assert all(opened)  # closed sockets free their places
    # Without a seat cookie: SEATLESS_PER_ADDRESS an address, none of them counted on loopback
    seatless = socket_caps.SEATLESS_PER_ADDRESS
    opened, _ = _sockets_through(middleware, [(None, "10.0.0.2")] * (seatless + 3) + [(None, "127.0.0.1")] * 40)
    assert opened == [True] * seatless + [False] * 3 + [True] * 40
    # An address's cap: a school behind one NAT fills it only with SOCKETS_PER_ADDRESS tabs; the teacher still gets in
    monkeypatch.setattr(socket_caps, "SOCKETS_PER_ADDRESS", 10)
    seats = [(f"{i:032x}", "10.0.0.3") for i in range(12)] + [(teacher, "10.0.0.3")]
    opened, _ = _sockets_through(middleware, seats)
    assert opened == [True] * 10 + [False] * 2 + [True]
    assert middleware.refused and all(count > 0 for count in middleware.refused.values())


def test_a_websocket_that_says_nothing_after_its_handshake_is_ended():
    middleware = SocketCapMiddleware(None, is_teacher=lambda seat: False)
    opened, ended = _sockets_through(middleware, [("d" * 32, "10.0.0.4")] * 3, silent={0, 2},
                                     first_message_seconds=0.2)
    assert opened == [True, True, True] and ended == {0, 2}  # the talking one goes on


def test_a_frame_over_streamlits_cap_is_passed_on_unparsed(monkeypatch):
    """Issue 53 item 3: a 190 MiB frame was parsed here before Streamlit refused it (507 MB for a moment). A frame over
    server.maxWidgetStateSize goes to Streamlit unread (it closes the connection with 1009); smaller ones are read."""
    parsed = []
    monkeypatch.setattr(operator_only, "backmsg_kind", lambda frame: parsed.append(len(frame)) or "rerun_script")
    largest = operator_only.largest_student_frame()
    assert largest == 2_000_000  # .streamlit/config.toml: a page's widget values are a few KB
    small, big = _frame(rerun_script={"query_string": ""}), b"\x00" * (largest + 1)
    assert _run_websocket(OperatorOnlyMiddleware, [small, big]) == [small, big]
    assert parsed == [len(small)]
    assert st.get_option("server.maxMessageSize") == 64  # a frame past it is refused from its header

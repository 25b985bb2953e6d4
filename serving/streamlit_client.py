"""A Streamlit browser without the front end: HTTP GETs, the websocket and the BackMsg/ForwardMsg protobufs.

It talks to a `streamlit run` server (or a proxy in front of several) the way the front end does:

* it fetches the page, `/_stcore/health` (which sets the `_streamlit_xsrf` cookie) and `/_stcore/host-config`,
  keeping every cookie it is given (HAProxy's sticky-session cookie too), then opens `/_stcore/stream` with the
  subprotocols ["streamlit", <xsrf token>] and those cookies;
* a rerun is a BackMsg `rerun_script` (ClientState) carrying the widget states of every widget the last run drew
  (ids, option labels and defaults are read from the element protos the server sent; `set_value` from the server
  overrides the client's value, as in the front end), the current page's `page_script_hash`, the URL's query
  string (as the server last set it), the ForwardMsg hashes the client has cached (`ref_hash` replies are resolved
  from that cache) and a ContextInfo;
* the first rerun names the page by URL path (`page_name="attention"`, as when the browser opens /attention);
  a page change sends the target's `page_script_hash` (from the Navigation message) with only the entry script's
  (sidebar) widget states, as the front end's onPageChange does;
* widget ids are never computed here: a widget is found by the user key embedded in its id
  (`$$ID-<hash>-<key>`); a selectbox is sent as `string_value` = the option's label, a text input as
  `string_value`, a segmented control / multiselect as `string_array_value`, a slider as `double_array_value`,
  a checkbox/toggle as `bool_value`;
* a button is found by its label and clicked with a one-off `trigger_value`;
* a widget drawn inside `st.fragment` reruns only that fragment (`ClientState.fragment_id`), as the browser asks.

A run ends at `script_finished`; it has problems when the script did not finish successfully, drew an `exception`
element or an `st.error` alert, or the server answered page_not_found. serve.py warms each replica with it;
bench/classroom_students.py builds simulated students on it, bench/class_answers.py a class.
"""
from __future__ import annotations

import asyncio
import time
import urllib.error
import urllib.request
from collections import defaultdict
from dataclasses import dataclass
from urllib.parse import urlsplit

from websockets.asyncio.client import connect as ws_connect  # a dependency of streamlit
from websockets.exceptions import ConnectionClosed

from serving.internals import (Alert, BackendOperationRequest, BackMsg, ClientState, ContextInfo,
                               DeferredFileRequestPayload, ForwardMsg, WidgetState)
from serving.widget_states import WIDGET_KINDS, default_widget_state, user_key  # noqa: F401 (user_key: the benches)

FINISHED_OK = {ForwardMsg.FINISHED_SUCCESSFULLY, ForwardMsg.FINISHED_FRAGMENT_RUN_SUCCESSFULLY}
XSRF_COOKIE = "_streamlit_xsrf"
USER_AGENT = "Mozilla/5.0 (attention-lab serving/streamlit_client.py)"

_OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # never a proxy from the environment


def http_get(url: str, cookie: str | None = None, timeout: float = 30.0) -> tuple[int, dict[str, list[str]]]:
    """(status, lower-cased headers with every value); status 0 when the server could not be reached."""
    assert url.startswith("http://"), url
    request = urllib.request.Request(url, headers={"Cookie": cookie} if cookie else {})
    try:
        with _OPENER.open(request, timeout=timeout) as response:
            response.read()
            return response.status, _headers(response.headers)
    except urllib.error.HTTPError as error:  # an answer all the same (404, 503, ...)
        return error.code, _headers(error.headers)
    except OSError:
        return 0, {}


def _headers(message) -> dict[str, list[str]]:
    headers: dict[str, list[str]] = defaultdict(list)
    for key, value in message.items():
        headers[key.lower()].append(value)
    return headers


@dataclass
class RunOutcome:
    """How one script run ended: seconds from sending the BackMsg to `script_finished`, and what went wrong."""
    seconds: float
    problems: list[str]

    @property
    def ok(self) -> bool:
        return not self.problems


class StreamlitClient:
    """One browser tab's session: `await connect()`, then `open_page`, `change_page`, `set_*` + `rerun`."""

    def __init__(self, base_url: str, cookies: dict[str, str] | None = None):
        self.base_url = base_url.rstrip("/")
        self.cookies: dict[str, str] = dict(cookies or {})  # name -> value: the browser's cookie jar
        self.ws = None
        self.events: asyncio.Queue = asyncio.Queue()
        self.closed: str | None = None
        self.widgets: dict[str, WidgetState] = {}
        self.meta: dict[str, tuple[str, object, str]] = {}  # id -> (kind, proto, active_script_hash)
        self.cache: dict[str, list] = {}  # ForwardMsg hash -> [message, run count at last use]
        self.run_count = 0
        self.fragment_of: dict[str, str] = {}  # widget id -> id of the st.fragment that drew it ("" = none)
        self.fragment_runs = 0
        self.max_cache_age = 2
        self.main_hash = ""
        self.page_hash = ""
        self.page_path = ""
        self.query_string = ""  # as the server last set it (st.query_params), like the address bar
        self.pages: dict[str, str] = {}  # url path -> page_script_hash
        self.run_widgets: dict[str, tuple[str, object, str]] = {}
        self.run_errors: list[str] = []
        self.run_texts: list[str] = []  # markdown/alert bodies of the last run, for checks that read the page
        self.notes: list[tuple[float, str]] = []  # (received, alert body or "progress: text") of every run, for a bench to read
        self.bytes_in = 0
        self.session_id = ""  # the server's id of this session (a backend operation names it)
        self.operations: dict[str, asyncio.Future] = {}  # request id -> the server's backend operation response
        self._reader_task: asyncio.Task | None = None

    # ---- connection
    def cookie_header(self) -> str | None:
        return "; ".join(f"{k}={v}" for k, v in self.cookies.items()) or None

    def _keep_cookies(self, headers: dict[str, list[str]]) -> None:
        for cookie in headers.get("set-cookie", []):
            name, _, rest = cookie.partition("=")
            self.cookies[name.strip()] = rest.split(";", 1)[0].strip().strip('"')

    async def _get(self, path: str, timeout: float) -> int:
        status, headers = await asyncio.to_thread(http_get, f"{self.base_url}{path}", self.cookie_header(), timeout)
        self._keep_cookies(headers)
        return status

    async def connect(self, first_path: str = "", timeout: float = 60.0) -> float:
        """The browser's requests before the websocket, then the websocket; returns the seconds it took."""
        start = time.perf_counter()
        for path in (f"/{first_path}", "/_stcore/health"):
            status = await self._get(path, timeout)
            if status != 200:
                raise ConnectionError(f"GET {path} -> {status or 'no answer'}")
        await self._get("/_stcore/host-config", timeout)
        xsrf = self.cookies.get(XSRF_COOKIE)
        split = urlsplit(self.base_url)
        self.ws = await ws_connect(f"ws://{split.netloc}{split.path}/_stcore/stream",
                                   subprotocols=["streamlit", xsrf or "PLACEHOLDER_AUTH_TOKEN"], origin=self.base_url,
                                   additional_headers={"Cookie": self.cookie_header()} if self.cookies else None,
                                   proxy=None, max_size=None, open_timeout=timeout, ping_interval=None,
                                   user_agent_header=USER_AGENT)
        if self.ws.subprotocol != "streamlit":
            raise ConnectionError(f"server chose subprotocol {self.ws.subprotocol!r}")
        self.closed = None
        self._reader_task = asyncio.create_task(self._reader())
        return time.perf_counter() - start

    async def close(self) -> None:
        if self.ws is not None:
            try:
                await asyncio.wait_for(self.ws.close(), 5)
            except Exception:
                pass
        if self._reader_task is not None:
            self._reader_task.cancel()

    async def _reader(self) -> None:
        try:
            async for data in self.ws:
                self.bytes_in += len(data)
                message = ForwardMsg()
                message.ParseFromString(data)
                self._handle(message, time.perf_counter())
        except ConnectionClosed as closed:
            self.closed = f"websocket closed ({closed})"
        except Exception as error:  # a message we could not handle: fail loudly, never hang
            self.closed = f"reader error: {type(error).__name__}: {error}"
        else:
            self.closed = "websocket closed by the server"
        self.events.put_nowait(("closed", time.perf_counter(), None, [self.closed]))

    def _handle(self, message: ForwardMsg, received: float) -> None:
        kind = message.WhichOneof("type")
        if kind == "ref_hash":  # the server trusts our cache: replay the cached message with the new metadata
            entry = self.cache.get(message.ref_hash)
            if entry is None:
                self.run_errors.append(f"ref_hash {message.ref_hash} not in the client cache")
                return
            entry[1] = self.run_count
            full = ForwardMsg()
            full.CopyFrom(entry[0])
            full.metadata.CopyFrom(message.metadata)
            message, kind = full, full.WhichOneof("type")
        elif message.metadata.cacheable and message.hash:
            self.cache[message.hash] = [message, self.run_count]

        if kind == "new_session":
            session = message.new_session
            self.session_id = session.initialize.session_id or self.session_id
            self.main_hash = session.main_script_hash
            self.max_cache_age = session.config.max_cached_message_age or self.max_cache_age
            if message.metadata.run.fragment_ids:  # a fragment rerun: widgets outside the fragment stay as drawn
                self.fragment_runs += 1
                self.run_errors = []
            else:
                self.run_widgets, self.run_errors, self.run_texts = {}, [], []
        elif kind == "navigation":
            self.pages = {p.url_pathname: p.page_script_hash for p in message.navigation.app_pages}
            self.page_hash = message.navigation.page_script_hash
        elif kind == "page_info_changed":
            self.query_string = message.page_info_changed.query_string
        elif kind == "page_not_found":
            self.run_errors.append(f"page_not_found {message.page_not_found.page_name!r}")
        elif kind == "delta" and message.delta.WhichOneof("type") == "new_element":
            element = message.delta.new_element
            element_kind = element.WhichOneof("type")
            if element_kind == "exception":
                self.run_errors.append(f"exception {element.exception.type}: {element.exception.message[:300]}")
            elif element_kind == "alert":
                self.run_texts.append(element.alert.body)
                self.notes.append((received, element.alert.body))
                if element.alert.format == Alert.ERROR:
                    self.run_errors.append(f"st.error: {element.alert.body[:300]}")
            elif element_kind == "markdown":
                self.run_texts.append(element.markdown.body)
            elif element_kind == "progress":
                self.notes.append((received, "progress: " + element.progress.text))
            elif element_kind in WIDGET_KINDS:
                proto = getattr(element, element_kind)
                self.run_widgets[proto.id] = (element_kind, proto, message.metadata.active_script_hash)
                self.fragment_of[proto.id] = message.delta.fragment_id
        elif kind == "delta" and message.delta.WhichOneof("type") == "add_block":
            block = message.delta.add_block
            if block.WhichOneof("type") == "expandable" and block.expandable.id:  # an expander with a state (a key)
                self.run_widgets[block.expandable.id] = ("expandable", block.expandable,
                                                         message.metadata.active_script_hash)
                self.fragment_of[block.expandable.id] = message.delta.fragment_id
        elif kind == "backend_operation_response":
            waiting = self.operations.pop(message.backend_operation_response.request_id, None)
            if waiting is not None and not waiting.done():
                waiting.set_result(message.backend_operation_response)
        elif kind == "script_finished":
            status = message.script_finished
            if status in FINISHED_OK:
                self._widgets_after_run()
            self.run_count += 1
            self.cache = {h: e for h, e in self.cache.items() if self.run_count - e[1] <= self.max_cache_age}
            self.events.put_nowait(("finished", received, status, list(self.run_errors)))

    def _widgets_after_run(self) -> None:
        """Keep the client's value of every widget drawn again, take the server's on set_value, drop the rest."""
        widgets: dict[str, WidgetState] = {}
        for widget_id, (kind, proto, _) in self.run_widgets.items():
            if widget_id in self.widgets and not getattr(proto, "set_value", False):
                widgets[widget_id] = self.widgets[widget_id]
            else:
                state = default_widget_state(kind, proto)
                if state is not None:
                    widgets[widget_id] = state
        self.widgets, self.meta = widgets, dict(self.run_widgets)

    # ---- widgets
    def find(self, key: str) -> tuple[str, object] | None:
        """(widget id, element proto) of the widget with this user key drawn by the last run, or None."""
        for widget_id, (_, proto, _) in self.meta.items():
            if user_key(widget_id) == key and widget_id in self.widgets:
                return widget_id, proto
        return None

    def fragment_id(self, key: str) -> str:
        found = self.find(key)
        return self.fragment_of.get(found[0], "") if found else ""

    def set_text(self, key: str, text: str) -> str | None:
        """Type into a text input; returns a problem or None."""
        found = self.find(key)
        if found is None:
            return f"widget {key!r} not drawn"
        self.widgets[found[0]].string_value = text
        return None

    def set_number(self, key: str, value: int) -> str | None:
        """Set an integer number input; returns a problem or None."""
        found = self.find(key)
        if found is None:
            return f"widget {key!r} not drawn"
        self.widgets[found[0]].int_value = int(value)
        return None

    def text_of(self, key: str) -> str | None:
        found = self.find(key)
        return None if found is None else self.widgets[found[0]].string_value

    def choose_option(self, key: str, choose) -> str | None:
        """Pick a selectbox option: `choose(options other than the current one)` or a label; returns a problem."""
        found = self.find(key)
        if found is None:
            return f"widget {key!r} not drawn"
        widget_id, proto = found
        current = self.widgets[widget_id].string_value
        if isinstance(choose, str):
            if choose not in proto.options:
                return f"widget {key!r}: no option {choose!r} ({list(proto.options)})"
            value = choose
        else:
            options = [o for o in proto.options if o != current]
            if not options:
                return f"widget {key!r}: no other option ({list(proto.options)})"
            value = choose(options)
        self.widgets[widget_id].string_value = value
        return None

    # ---- runs
    def back_msg(self, page_hash: str, page_name: str = "", only_entry_widgets: bool = False,
                 fragment_id: str = "", query_string: str | None = None) -> bytes:
        context = ContextInfo(timezone="UTC", timezone_offset=0, locale="en-US", is_embedded=False,
                              url=f"{self.base_url}/{self.page_path}", color_scheme="light")
        state = ClientState(query_string=self.query_string if query_string is None else query_string,
                            page_script_hash=page_hash, page_name=page_name, context_info=context,
                            fragment_id=fragment_id)
        for widget_id, widget in self.widgets.items():
            if not only_entry_widgets or self.meta[widget_id][2] == self.main_hash:
                state.widget_states.widgets.append(widget)
        state.cached_message_hashes.extend(self.cache)
        return BackMsg(rerun_script=state).SerializeToString()

    def open_page_msg(self, path: str, query_string: str = "") -> bytes:
        """The first run of a session on /path?query (a fresh tab, or the front end after a reconnect)."""
        self.page_path, self.query_string = path, query_string
        return self.back_msg("", path)

    def change_page_msg(self, path: str) -> bytes | None:
        """A click on a navigation link; None when the navigation has no such page."""
        if path not in self.pages:
            return None
        self.page_path = path
        return self.back_msg(self.pages[path], only_entry_widgets=True, query_string="")

    def widget_rerun_msg(self, fragment_id: str = "") -> bytes:
        return self.back_msg(self.page_hash, fragment_id=fragment_id)

    def button_id(self, label: str) -> str | None:
        """Id of the button (st.button, form submit button) with this label drawn by the last run, or None."""
        for widget_id, (kind, proto, _) in self.meta.items():
            if kind == "button" and proto.label == label:
                return widget_id
        return None

    def click_msg(self, widget_id: str, fragment_id: str = "") -> bytes:
        """A click on a button: the rerun carries its trigger_value once, beside the other widgets' states (the
        trigger is not kept: the next rerun must not press the button again)."""
        self.widgets[widget_id] = WidgetState(id=widget_id, trigger_value=True)
        try:
            return self.widget_rerun_msg(fragment_id)
        finally:
            del self.widgets[widget_id]

    def open_expander_msg(self, widget_id: str) -> bytes:
        """A click that opens an expander with a state (st.expander(key=..., on_change="rerun")): its rerun."""
        self.widgets[widget_id] = WidgetState(id=widget_id, bool_value=True)
        return self.widget_rerun_msg(self.fragment_of.get(widget_id, ""))

    async def deferred_file_url(self, file_id: str, timeout: float) -> str:
        """What a click on a deferred st.download_button (data=a callable) asks: the server runs the callable and
        answers the file's URL, which the browser then fetches. Raises RuntimeError when the server refused."""
        request_id = f"bench-{len(self.operations)}-{time.perf_counter_ns()}"
        answer = asyncio.get_running_loop().create_future()
        self.operations[request_id] = answer
        await self.ws.send(BackMsg(backend_operation_request=BackendOperationRequest(
            request_id=request_id, session_id=self.session_id, deferred_file=DeferredFileRequestPayload(file_id=file_id))).SerializeToString())
        response = await asyncio.wait_for(answer, timeout)
        if response.error_msg or not response.deferred_file.url:
            raise RuntimeError(f"deferred file {file_id}: {response.error_msg or 'no URL'}")
        return response.deferred_file.url

    async def rerun(self, payload: bytes, timeout: float, expected_page: str | None = None) -> RunOutcome:
        """Send one rerun and wait for its `script_finished` (skipping runs ended early for a newer rerun).

        Raises ConnectionError when the websocket closes and TimeoutError after `timeout` seconds.
        """
        while not self.events.empty():  # nothing should be pending; never let a stale event end this run
            self.events.get_nowait()
        if self.closed:
            raise ConnectionError(self.closed)
        sent = time.perf_counter()
        try:
            await self.ws.send(payload)
        except ConnectionClosed as closed:
            raise ConnectionError(f"websocket closed ({closed})") from closed
        deadline = sent + timeout
        while True:
            try:
                event, received, status, errors = await asyncio.wait_for(
                    self.events.get(), max(0.0, deadline - time.perf_counter()))
            except TimeoutError:
                raise TimeoutError(f"no script_finished within {timeout:.0f} s") from None
            if event == "closed":
                raise ConnectionError(errors[0])
            if status != ForwardMsg.FINISHED_EARLY_FOR_RERUN:
                break
        problems = list(errors)
        if status not in FINISHED_OK:
            problems.append(f"script_finished status {ForwardMsg.ScriptFinishedStatus.Name(status)}")
        if expected_page is not None and self.page_hash != self.pages.get(expected_page):
            problems.append(f"expected page {expected_page!r}, got page hash {self.page_hash!r}")
        return RunOutcome(received - sent, problems)

"""Uploads and clear_cache, replayed against a local `streamlit run asgi.py`: a student's 60 MB uploads and a
stream of clear_cache messages, with what the gateway refused and the server's memory.

    python bench/adversary_gateway.py [--port 0] [--mb 60] [--puts 10] [--clears 25] [--loads 25] [--only-loads]

One server on a free loopback port (its own data folder), one student session on the train page (its uploader is
drawn, so its route is open) and one bystander on /attention:
* `unissued`: --puts PUTs of --mb MB to /_stcore/upload_file/<session>/<made-up id> (an ungated server stores them all);
* `issued`: the same with ids the server issued to the session (file_urls_request for --puts names): the session's
  cap (130 MiB, 4 files) lets through what fits;
* `after the websocket closed`: what the server still holds then;
* `clear_cache`: --clears messages at 5 a second while the bystander reruns /attention; its median run time before,
  during and after, and Streamlit's cache misses meanwhile (0: no cache was emptied; an emptied cache makes the
  bystander's next run miss).
* `loads` (`--loads N`, alone with `--only-loads`): a valid checkpoint of about 42 MB (the shipped reverse transformer's
  vocabulary, 2 layers of width 512) uploaded once through the gate, then N clicks on "Load these files": the
  server's RSS before and after (each click used to add another model, issue 53: the session holds one copy now).
Each row gives the HTTP statuses, the bytes the server accepted, the server's RSS and the bytes its upload manager
holds (/_stcore/metrics: the bench runs on the server's machine, so it is the operator). Bounded: every step has a
count and a timeout, and the server is stopped at the end.
"""
from __future__ import annotations

import argparse
import asyncio
import http.client
import os
import secrets
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from streamlit.proto.BackMsg_pb2 import BackMsg  # noqa: E402
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg  # noqa: E402

from serving.streamlit_client import StreamlitClient, http_get, user_key  # noqa: E402
from serving.warmup import WARMUP_ENV  # noqa: E402

MB = 10**6


class SessionClient(StreamlitClient):
    """The protocol client, also noting its session id and the upload ids the server issues to it."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.session_id = ""
        self.issued: list[str] = []

    def _handle(self, message: ForwardMsg, received: float) -> None:
        kind = message.WhichOneof("type")
        if kind == "new_session":
            self.session_id = message.new_session.initialize.session_id
        elif kind == "file_urls_response":
            self.issued += [urls.file_id for urls in message.file_urls_response.file_urls]
        super()._handle(message, received)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def put(port: int, session: str, file_id: str, body: bytes, xsrf: str, cookies: str,
        filename: str = "x.safetensors") -> str:
    """One upload PUT as the front end sends it; the status, or how the connection ended if none came back."""
    boundary = secrets.token_hex(8)
    head = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"{filename}\"\r\n"
            "Content-Type: application/octet-stream\r\n\r\n").encode()
    tail = f"\r\n--{boundary}--\r\n".encode()
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    try:
        connection.putrequest("PUT", f"/_stcore/upload_file/{session}/{file_id}")
        for name, value in (("Content-Type", f"multipart/form-data; boundary={boundary}"),
                            ("Content-Length", str(len(head) + len(body) + len(tail))), ("X-Xsrftoken", xsrf),
                            ("Cookie", cookies), ("Origin", f"http://127.0.0.1:{port}")):
            connection.putheader(name, value)
        connection.endheaders()
        try:
            connection.send(head)
            view = memoryview(body)
            for start in range(0, len(body), 1 << 20):
                connection.send(view[start:start + (1 << 20)])
            connection.send(tail)
        except OSError:  # refused before the body: the server answered and closed while we were still sending
            pass
        try:
            return str(connection.getresponse().status)
        except (OSError, http.client.HTTPException) as error:
            return type(error).__name__
    finally:
        connection.close()


def metrics(port: int) -> str:
    """/_stcore/metrics (this bench is the operator: loopback, no proxy)."""
    import urllib.request

    with urllib.request.build_opener(urllib.request.ProxyHandler({})).open(
            f"http://127.0.0.1:{port}/_stcore/metrics", timeout=30) as response:
        return response.read().decode()


def uploads_held(port: int) -> int:
    """Bytes in Streamlit's upload manager. Streamlit computes this family at most every 5 s: wait that out."""
    time.sleep(5.5)
    return sum(int(float(line.rsplit(" ", 1)[1])) for line in metrics(port).splitlines()
               if line.startswith("cache_memory_bytes") and "UploadedFileManager" in line)


def cache_misses(port: int) -> int:
    """Streamlit's cache misses so far, all caches: an emptied cache makes the next page run miss again."""
    return sum(int(float(line.rsplit(" ", 1)[1])) for line in metrics(port).splitlines()
               if line.startswith("cache_lookups_total") and 'result="miss"' in line)


def big_checkpoint() -> tuple[bytes, bytes]:
    """(weights, JSON) of a valid reverse transformer of about 42 MB: the shipped one's vocabulary, 2 layers of width
    512 (untrained: the load is what costs, not what it learned)."""
    from dataclasses import replace

    from model.checkpoint import build_model, checkpoint_bytes, load_checkpoint
    from ui.models import CHECKPOINT_DIR

    shipped = load_checkpoint(CHECKPOINT_DIR / "transformer_reverse")
    config = replace(shipped.config, num_layers=2, d_model=512, num_heads=8, d_ff=1024)
    return checkpoint_bytes(build_model(config), config, shipped.src_vocab, shipped.tgt_vocab, "reverse")


async def _loads(port: int, pid: int, loads: int) -> dict:
    """One student uploads a checkpoint once and clicks "Load these files" `loads` times."""
    from streamlit.proto.Common_pb2 import FileUploaderState, FileURLs, UploadedFileInfo
    from streamlit.proto.WidgetStates_pb2 import WidgetState

    student = SessionClient(f"http://127.0.0.1:{port}")
    await student.connect("train")
    assert (await student.rerun(student.open_page_msg("train"), 300)).ok
    cookies, xsrf = student.cookie_header() or "", student.cookies.get("_streamlit_xsrf", "")
    files = dict(zip(("big.safetensors", "big.json"), await asyncio.to_thread(big_checkpoint)))
    await student.ws.send(BackMsg(file_urls_request={"request_id": "r1", "file_names": list(files),
                                                     "session_id": student.session_id}).SerializeToString())
    for _ in range(100):
        if len(student.issued) >= len(files):
            break
        await asyncio.sleep(0.1)
    infos = []
    for file_id, (name, body) in zip(student.issued, files.items()):
        status = await asyncio.to_thread(put, port, student.session_id, file_id, body, xsrf, cookies, name)
        assert status == "204", (name, status)
        infos.append(UploadedFileInfo(file_id=file_id, name=name, size=len(body), file_urls=FileURLs(
            file_id=file_id, upload_url=f"/_stcore/upload_file/{student.session_id}/{file_id}",
            delete_url=f"/_stcore/upload_file/{student.session_id}/{file_id}")))
    uploader = next((widget_id for widget_id in student.meta if user_key(widget_id) == "upload_files"), None)
    assert uploader is not None, "the train page drew no uploader"  # (it has no value yet: find() skips it)
    student.widgets[uploader] = WidgetState(id=uploader, file_uploader_state_value=FileUploaderState(
        uploaded_file_info=infos))
    assert (await student.rerun(student.widget_rerun_msg(), 120)).ok
    before, started, clicks = rss_mib(pid), time.perf_counter(), []
    for _ in range(loads):
        button = student.button_id("Load these files")
        assert button is not None, "no Load button"
        outcome = await student.rerun(student.click_msg(button), 120)
        assert outcome.ok, outcome.problems
        clicks.append(outcome.seconds)
    after = rss_mib(pid)
    await student.close()
    return {"step": f"{loads} loads of one {len(files['big.safetensors']) / MB:.0f} MB checkpoint", "requests": loads,
            "statuses": {}, "accepted_MB": round(sum(map(len, files.values())) / MB),
            "seconds": round(time.perf_counter() - started, 1), "server_RSS_MiB": f"{before:.0f} -> {after:.0f}",
            "click_s": f"first {clicks[0]:.2f}, median {statistics.median(clicks):.2f}" if clicks else ""}


async def _attack(port: int, pid: int, mb: int, puts: int, clears: int) -> list[dict]:
    base = f"http://127.0.0.1:{port}"
    rows = []
    student = SessionClient(base)
    await student.connect("train")
    outcome = await student.rerun(student.open_page_msg("train"), 300)
    assert outcome.ok, outcome.problems
    cookies, xsrf = student.cookie_header() or "", student.cookies.get("_streamlit_xsrf", "")
    body = os.urandom(mb * MB)

    def upload_row(step: str, ids: list[str]) -> dict:
        started = time.perf_counter()
        statuses = [put(port, student.session_id, file_id, body, xsrf, cookies) for file_id in ids]
        return {"step": step, "requests": len(ids), "statuses": dict(Counter(statuses)),
                "accepted_MB": statuses.count("204") * mb, "seconds": round(time.perf_counter() - started, 1),
                "server_RSS_MiB": round(rss_mib(pid)), "held_MB": round(uploads_held(port) / MB)}

    rows.append(await asyncio.to_thread(upload_row, "unissued ids", [secrets.token_hex(16) for _ in range(puts)]))
    request = BackMsg(file_urls_request={"request_id": "r1", "file_names": [f"f{i}" for i in range(puts)],
                                         "session_id": student.session_id})
    await student.ws.send(request.SerializeToString())
    for _ in range(100):
        if len(student.issued) >= puts:
            break
        await asyncio.sleep(0.1)
    rows.append(await asyncio.to_thread(upload_row, "issued ids", student.issued[:puts]))
    await student.close()
    await asyncio.sleep(1)
    rows.append({"step": "after the websocket closed", "requests": 0, "statuses": {}, "accepted_MB": 0,
                 "seconds": 1, "server_RSS_MiB": round(rss_mib(pid)), "held_MB": round(uploads_held(port) / MB)})

    # clear_cache, 5 a second, while a bystander reruns /attention.
    bystander = SessionClient(base)
    await bystander.connect("attention")
    assert (await bystander.rerun(bystander.open_page_msg("attention"), 300)).ok

    async def bystander_runs(count: int) -> list[float]:
        times = []
        for _ in range(count):
            outcome = await bystander.rerun(bystander.widget_rerun_msg(), 120)
            times.append(outcome.seconds)
        return times

    quiet = await bystander_runs(5)
    attacker = SessionClient(base)
    await attacker.connect("attention")
    await attacker.rerun(attacker.open_page_msg("attention"), 300)
    clear = BackMsg(clear_cache=True).SerializeToString()

    async def flood():
        for _ in range(clears):
            await attacker.ws.send(clear)
            await asyncio.sleep(0.2)

    misses = await asyncio.to_thread(cache_misses, port)
    flooding = asyncio.create_task(flood())
    loud = await bystander_runs(5)
    await flooding
    loud += await bystander_runs(1)  # one run after the last clear_cache: an emptied cache shows here
    misses = await asyncio.to_thread(cache_misses, port) - misses
    after = await bystander_runs(5)
    rows.append({"step": f"{clears} clear_cache at 5/s", "requests": clears, "statuses": {},
                 "accepted_MB": 0, "seconds": round(sum(loud), 2), "server_RSS_MiB": round(rss_mib(pid)),
                 "held_MB": round(uploads_held(port) / MB),
                 "bystander_median_s": f"{statistics.median(quiet):.3f} before, {statistics.median(loud):.3f} during, "
                                       f"{statistics.median(after):.3f} after",
                 "cache_misses_during": misses})
    await attacker.close()
    await bystander.close()
    return rows


def run(port: int = 0, mb: int = 60, puts: int = 10, clears: int = 25, loads: int = 25,
        only_loads: bool = False) -> list[dict]:
    port = port or free_port()
    with tempfile.TemporaryDirectory() as data:
        env = {**os.environ, "ATTENTION_LAB_DATA": data, "ATTENTION_LAB_UPLOADS": "on", WARMUP_ENV: "0"}
        server = subprocess.Popen([sys.executable, "-m", "streamlit", "run", "asgi.py", "--server.headless", "true",
                                   "--server.address", "127.0.0.1", "--server.port", str(port),
                                   "--browser.gatherUsageStats", "false"], cwd=ROOT, env=env,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        try:
            deadline = time.monotonic() + 120
            while http_get(f"http://127.0.0.1:{port}/_stcore/health", timeout=2)[0] != 200:
                if server.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("the server did not start")
                time.sleep(0.5)
            rows = [] if only_loads else asyncio.run(_attack(port, server.pid, mb, puts, clears))
            return rows + ([asyncio.run(_loads(port, server.pid, loads))] if loads else [])
        finally:
            server.terminate()
            try:
                server.wait(10)
            except subprocess.TimeoutExpired:
                server.kill()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--mb", type=int, default=60)
    parser.add_argument("--puts", type=int, default=10)
    parser.add_argument("--clears", type=int, default=25)
    parser.add_argument("--loads", type=int, default=25, help="clicks on Load these files (0: none)")
    parser.add_argument("--only-loads", action="store_true", help="only the loads step")
    args = parser.parse_args(argv)
    rows = run(args.port, args.mb, args.puts, args.clears, args.loads, args.only_loads)
    columns = list(dict.fromkeys(key for row in rows for key in row))
    print("| " + " | ".join(columns) + " |")
    print("|" + "---|" * len(columns))
    for row in rows:
        print("| " + " | ".join(str(row.get(column, "")) for column in columns) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())

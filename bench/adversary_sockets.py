"""Idle websockets from one browser, and large values in a text box, replayed against a local server (issue 53 items 1
and 3).

    python bench/adversary_sockets.py [--sockets 1100] [--hold 40] [--big-values 40] [--value-mib 22]

1. One cookie jar opens --sockets websockets as fast as it can and sends nothing; then a newcomer opens Home.
2. --big-values sessions each open /attention and send its sentence box a value of --value-mib MiB, every session
   kept open: the server's RSS before and after, and how many sessions the server closed. Against the lab and against
   the same lab with Streamlit's own caps (STREAMLIT_SERVER_MAX_WIDGET_STATE_SIZE=25, _MAX_MESSAGE_SIZE=200: what
   .streamlit/config.toml set before).

Two servers of this checkout, one after the other, each on a free loopback port with its own data folder: `streamlit
run asgi.py` (the lab as `make run` and serve.py serve it: serving/socket_caps.py in front) and `streamlit run app.py`
(the same app with no gateway: the obvious alternative, and how the lab was served before the caps). Each row: how
many of the flood's handshakes were accepted and refused, the server's RSS before and after, how many of the accepted
ones are still open --hold seconds later (a silent socket is closed after FIRST_MESSAGE_SECONDS), and the newcomer's
time to her first page (her own browser: another seat). Behind serve.py's HAProxy the accepted count is what matters:
a replica takes 1,000 connections at once (deploy/haproxy.cfg.template), so a flood of them kept every student pinned
to it out. Bounded: --sockets handshakes, each with a 10 s timeout, and both servers stopped at the end.
"""
from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from websockets.asyncio.client import connect as ws_connect  # noqa: E402

from serving.local_server import free_port, start_streamlit, started  # noqa: E402
from serving.socket_caps import FIRST_MESSAGE_SECONDS, SOCKETS_PER_SEAT  # noqa: E402
from serving.streamlit_client import StreamlitClient  # noqa: E402
from serving.warmup import WARMUP_ENV  # noqa: E402


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


async def flood(url: str, count: int) -> tuple[list, int, float]:
    """One cookie jar's `count` websockets, none of them saying a word -> (the open ones, refused, seconds)."""
    jar = StreamlitClient(url)
    await jar.connect("")  # the page load that gives the browser its seat cookie, and its own websocket
    await jar.close()
    stream = url.replace("http://", "ws://") + "/_stcore/stream"
    headers = {"Cookie": jar.cookie_header()} if jar.cookie_header() else None

    async def one():
        try:
            return await ws_connect(stream, subprotocols=["streamlit"], origin=url, additional_headers=headers,
                                    proxy=None, open_timeout=10, ping_interval=None)
        except Exception:  # refused (HTTP 403 or 429), or no answer within 10 s
            return None
    start = time.perf_counter()
    sockets = []
    for first in range(0, count, 50):  # 50 handshakes in flight at a time
        sockets += await asyncio.gather(*(one() for _ in range(first, min(count, first + 50))))
    opened = [s for s in sockets if s is not None]
    return opened, count - len(opened), time.perf_counter() - start


async def newcomer(url: str) -> float:
    """Another browser opening Home: seconds from its first GET to its page's run finished."""
    start = time.perf_counter()
    client = StreamlitClient(url)
    await client.connect("")
    outcome = await client.rerun(client.open_page_msg(""), 120)
    await client.close()
    if not outcome.ok:
        raise RuntimeError(f"the newcomer's page: {outcome.problems}")
    return time.perf_counter() - start


async def still_open(sockets: list) -> int:
    alive = 0
    for socket in sockets:
        try:
            await asyncio.wait_for(socket.ping(), 2)
            alive += 1
        except Exception:
            pass
    return alive


async def big_values(url: str, sessions: int, mib: int, pid: int) -> dict:
    """`sessions` sessions, each sending its sentence box `mib` MiB once, all kept open."""
    value, clients, sent = "x" * (mib * 2**20), [], 0
    before = rss_mib(pid)
    peak = before
    for _ in range(sessions):
        client = StreamlitClient(url)
        await client.connect("attention")
        outcome = await client.rerun(client.open_page_msg("attention"), 120, "attention")
        if not outcome.ok or client.set_text("sentence", value) is not None:
            raise RuntimeError(f"the attention page: {outcome.problems}")
        try:
            await client.ws.send(client.widget_rerun_msg())
            sent += 1
        except Exception:
            pass
        await asyncio.sleep(0.5)  # the server reads and keeps (or refuses) it
        peak = max(peak, rss_mib(pid))
        clients.append(client)
    await asyncio.sleep(3)
    after = rss_mib(pid)
    closed = sum(1 for client in clients if client.closed)
    for client in clients:
        await client.close()
    return {"sent": sent, "closed": closed, "rss": f"{before:.0f} → {after:.0f} MiB (peak {peak:.0f})"}


def run_one(script: str, count: int, hold: float, env_extra: dict | None = None, values: tuple | None = None) -> dict:
    with tempfile.TemporaryDirectory() as data:
        env = {**os.environ, WARMUP_ENV: "0", "ATTENTION_LAB_DATA": data, **(env_extra or {})}
        port = free_port()
        folder = ROOT
        if script == "app.py":  # the same app without the gateway: a folder whose asgi.py is absent
            folder = Path(data) / "plain"
            folder.mkdir()
            for entry in ROOT.iterdir():
                if entry.name not in ("asgi.py", ".git"):
                    (folder / entry.name).symlink_to(entry)
        process = start_streamlit(folder, port, env)
        try:
            url = started(process, port, timeout=120)

            async def scenario():
                if values is not None:
                    return await big_values(url, *values, process.pid)
                before = rss_mib(process.pid)
                first = await newcomer(url)  # the server's first page (imports) is not the flood's doing
                opened, refused, took = await flood(url, count)
                during = rss_mib(process.pid)
                late = await newcomer(url)
                await asyncio.sleep(max(0.0, hold - took))
                alive = await still_open(opened)
                for socket in opened:
                    await socket.close()
                return {"server": f"`streamlit run {script}`", "accepted": len(opened), "refused": refused,
                        "seconds": took, "rss": f"{before:.0f} → {during:.0f} MiB", "newcomer": late,
                        "newcomer_before": first, "alive": alive}
            return asyncio.run(scenario())
        finally:
            process.terminate()
            process.wait(timeout=30)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sockets", type=int, default=1100)
    parser.add_argument("--hold", type=float, default=FIRST_MESSAGE_SECONDS + 10)
    parser.add_argument("--big-values", type=int, default=40)
    parser.add_argument("--value-mib", type=int, default=22)
    args = parser.parse_args()
    print(f"load average at start: {Path('/proc/loadavg').read_text().strip()}")
    print(f"\n{args.sockets} idle websockets from one browser (cap {SOCKETS_PER_SEAT} a seat; a silent one closed "
          f"after {FIRST_MESSAGE_SECONDS:.0f} s), then a newcomer opens Home:\n")
    print("| server | accepted | refused | flood took | server RSS | still open after "
          f"{args.hold:.0f} s | newcomer's Home (before the flood → during) |")
    print("|---|---|---|---|---|---|---|")
    for script in ("asgi.py", "app.py"):
        row = run_one(script, args.sockets, args.hold)
        print(f"| {row['server']} | {row['accepted']} | {row['refused']} | {row['seconds']:.1f} s | {row['rss']} | "
              f"{row['alive']} | {row['newcomer_before']:.2f} s → {row['newcomer']:.2f} s |")
    print(f"\n{args.big_values} sessions each sending {args.value_mib} MiB in the sentence box, all kept open:\n")
    print("| server | sent | sessions the server closed | server RSS |")
    print("|---|---|---|---|")
    streamlit_caps = {"STREAMLIT_SERVER_MAX_WIDGET_STATE_SIZE": "25", "STREAMLIT_SERVER_MAX_MESSAGE_SIZE": "200"}
    for label, extra in (("the lab (2 MB a frame, 64 MB a message)", None),
                         ("Streamlit's caps (25 MB, 200 MB: the config before)", streamlit_caps)):
        row = run_one("asgi.py", 0, 0, extra, (args.big_values, args.value_mib))
        print(f"| {label} | {row['sent']} | {row['closed']} | {row['rss']} |")
    print(f"\nload average at end: {Path('/proc/loadavg').read_text().strip()}")


if __name__ == "__main__":
    main()

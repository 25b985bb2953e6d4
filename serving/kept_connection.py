"""A browser's kept HTTP/1.1 connection for the protocol client (serving/streamlit_client.py): the benches' students
ask their class's version over it (bench/class_answers.py), as a browser reuses its connection to the server."""
from __future__ import annotations

import asyncio
import contextlib
from urllib.parse import urlsplit


class KeptConnection:
    """A browser's keep-alive HTTP/1.1 connection to the server, for the small GETs its page makes again and again (a
    class watch's version): a browser reuses its connection, and a new TCP connection per request would measure the
    client's connects rather than the route. `get` -> (status, body); status 0 when the server could not be reached."""

    def __init__(self, base_url: str):
        parts = urlsplit(base_url)
        assert parts.scheme == "http", base_url
        self.host, self.port = parts.hostname or "127.0.0.1", parts.port or 80
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def close(self) -> None:
        writer, self.reader, self.writer = self.writer, None, None
        if writer is not None:
            writer.close()
            with contextlib.suppress(OSError):
                await writer.wait_closed()

    async def get(self, path: str, cookie: str | None, timeout: float = 10.0) -> tuple[int, str]:
        request = (f"GET {path} HTTP/1.1\r\nHost: {self.host}:{self.port}\r\n"
                   + (f"Cookie: {cookie}\r\n" if cookie else "") + "\r\n").encode("latin-1")
        for attempt in range(2):  # the server may have closed an idle kept connection: one new connection then
            try:
                return await asyncio.wait_for(self._exchange(request), timeout)
            except (OSError, asyncio.IncompleteReadError, ValueError):
                await self.close()
                if attempt:
                    return 0, ""
            except TimeoutError:
                await self.close()
                return 0, ""
        return 0, ""

    async def _exchange(self, request: bytes) -> tuple[int, str]:
        if self.writer is None:
            self.reader, self.writer = await asyncio.open_connection(self.host, self.port)
        self.writer.write(request)
        await self.writer.drain()
        status_line = (await self.reader.readline()).split()
        if len(status_line) < 2:  # the server closed the kept connection (its keep-alive ran out): ask on a new one
            raise ConnectionResetError("connection closed before a status line")
        status = int(status_line[1])
        length, close = 0, False
        while (line := await self.reader.readline()) not in (b"\r\n", b"\n", b""):
            name, _, value = line.decode("latin-1").partition(":")
            name, value = name.strip().lower(), value.strip()
            if name == "content-length":
                length = int(value)
            elif name == "connection" and value.lower() == "close":
                close = True
        body = await self.reader.readexactly(length) if length else b""
        if close:
            await self.close()
        return status, body.decode("utf-8", "replace")

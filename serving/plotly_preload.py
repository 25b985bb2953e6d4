"""plotly.js fetched and evaluated while a new tab starts, on the pages that draw Plotly charts.

Streamlit's front end imports its Plotly chunk (`static/js/PlotlyChart.<hash>.js`, 4.7 MB of JavaScript) only when a
tab's first Plotly chart arrives, after the websocket has connected and the page's first run has sent its elements.
ui/plotly_loader.preload_plotly moves that import to the run's first element; this moves it earlier still, to the page
load itself. The HTML of a Plotly page's address gets a `<link rel="modulepreload">` of the chunk (fetched from the head
on) and a module script that imports it once the document is parsed, so the browser evaluates plotly.js (one long task)
while it waits for the websocket and the page's first run, instead of after the first elements arrive: the first
elements come a little later and the chart sooner, and the chart is what such a page is opened for. A modulepreload
alone (fetched and compiled, not evaluated) would not do: evaluating is the cost.

Pure ASGI, in front of Streamlit's app (asgi.py). Only a GET for the address of a page in ui.page_list.PLOTLY_PAGES is
touched; its request goes on without Accept-Encoding so that Streamlit sends its 5 kB HTML uncompressed, which this
middleware can edit. Static files, the websocket, health checks and every other address pass untouched. The link holds
only the chunk's file name read from Streamlit's own files (no request data); another Streamlit build without that
chunk: nothing is added.
"""
from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from pathlib import Path

import streamlit

CHUNK_PATTERN = re.compile(r"PlotlyChart\.[\w-]+\.js")


@functools.cache
def plotly_chunk() -> str | None:
    """The file name of Streamlit's front-end chunk that holds plotly.js (hashed per release), or None."""
    folder = Path(streamlit.__file__).parent / "static" / "static" / "js"
    found = sorted(path.name for path in folder.glob("PlotlyChart.*.js"))
    return found[0] if len(found) == 1 and CHUNK_PATTERN.fullmatch(found[0]) else None


def preload_link(chunk: str) -> bytes:
    # Relative, like the front end's own links in index.html: it resolves under server.baseUrlPath too. The link
    # fetches the chunk from the head on; the module script imports it once the document is parsed (module scripts
    # run in order, after the front end's own index module has started it), and leaves the promise where
    # ui/plotly_loader.preload_plotly's element looks before importing it again.
    return (f'<link rel="modulepreload" crossorigin href="./static/js/{chunk}">'
            f'<script type="module">window.__plotlyPreload = window.__plotlyPreload'
            f' || import("./static/js/{chunk}").catch(() => null);</script>').encode()


def with_preload(html: bytes, chunk: str) -> bytes:
    """html with the chunk's modulepreload and import before </head>; unchanged when it has no </head> or has them."""
    link = preload_link(chunk)
    if link in html or b"</head>" not in html:
        return html
    return html.replace(b"</head>", link + b"\n</head>", 1)


class PlotlyPreloadMiddleware:
    """Adds the plotly.js modulepreload and import to the HTML of the pages named in `pages` (their url paths: the
    app's list, ui.page_list.PLOTLY_PAGES, which asgi.py passes)."""

    def __init__(self, app, pages: Iterable[str]):
        self.app = app
        self.pages = frozenset(pages)  # url paths; asgi.py passes ui.page_list.PLOTLY_PAGES

    def _page_load(self, scope) -> bool:
        if scope["type"] != "http" or scope.get("method") != "GET":
            return False
        return scope.get("path", "").rstrip("/").rsplit("/", 1)[-1] in self.pages

    async def __call__(self, scope, receive, send):
        chunk = plotly_chunk()
        if chunk is None or not self._page_load(scope):
            await self.app(scope, receive, send)
            return
        headers = [(name, value) for name, value in scope.get("headers", ()) if name.lower() != b"accept-encoding"]
        start: dict | None = None
        body = bytearray()

        async def send_with_preload(message):
            nonlocal start
            if message["type"] == "http.response.start":
                content_type = next((value for name, value in message.get("headers", ())
                                     if name.lower() == b"content-type"), b"")
                if not content_type.startswith(b"text/html"):
                    start = None
                    await send(message)
                    return
                start = message  # held back until the body is whole: its Content-Length changes
                return
            if start is None:
                await send(message)
                return
            body.extend(message.get("body", b""))
            if message.get("more_body", False):
                return
            page = with_preload(bytes(body), chunk)
            response_headers = [(name, value) for name, value in start.get("headers", ())
                                if name.lower() != b"content-length"]
            response_headers.append((b"content-length", str(len(page)).encode()))
            await send({**start, "headers": response_headers})
            await send({"type": "http.response.body", "body": page, "more_body": False})

        await self.app({**scope, "headers": headers}, receive, send_with_preload)

"""serving/plotly_preload.py: the HTML of a Plotly page's address names Streamlit's plotly.js chunk in a
modulepreload; every other response passes untouched (other pages, static files, non-GET, non-HTML), and a gzipped
page is asked for uncompressed so that the link can be added."""
import gzip

import pytest
from starlette.applications import Starlette
from starlette.middleware.gzip import GZipMiddleware
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route
from starlette.testclient import TestClient

from serving.plotly_preload import PlotlyPreloadMiddleware, plotly_chunk, preload_link, with_preload
from ui.page_list import PLOTLY_PAGES

# Long enough for GZipMiddleware (minimum_size 500) to compress it, like Streamlit's own 5 kB index.html.
INDEX = ("<!DOCTYPE html><html><head><title>Streamlit</title>"
         + "<link rel='modulepreload' crossorigin href='./static/js/x.js'>" * 12 + "</head><body></body></html>")


def _index(request):
    return HTMLResponse(INDEX)


def _json(request):
    return JSONResponse({"ok": True, "padding": "x" * 1000})


def _static(request):
    return Response("console.log(1)" * 100, media_type="text/javascript")


def _client(pages=("attention", "decoding")) -> TestClient:
    app = Starlette(routes=[Route("/_stcore/health", _json), Route("/static/js/a.js", _static),
                            Route("/{path:path}", _index, methods=["GET", "POST", "HEAD"])])
    return TestClient(PlotlyPreloadMiddleware(GZipMiddleware(app, minimum_size=500), pages=pages))


@pytest.fixture(scope="module")
def chunk() -> str:
    name = plotly_chunk()
    assert name is not None, "Streamlit's plotly.js chunk is not where the middleware looks for it"
    return name


def test_streamlit_has_one_plotly_chunk(chunk):
    assert chunk.startswith("PlotlyChart.") and chunk.endswith(".js")


def test_a_plotly_page_names_the_chunk_once_before_head_ends(chunk):
    client = _client()
    for path in ("/attention", "/attention/", "/decoding", "/lab/attention"):
        response = client.get(path + "?lesson=intro&stop=17", headers={"accept-encoding": "gzip"})
        assert response.status_code == 200
        assert "content-encoding" not in response.headers  # asked for plain, so it could be edited
        html = response.content
        assert html.count(preload_link(chunk)) == 1
        assert html.index(preload_link(chunk)) < html.index(b"</head>")
        assert int(response.headers["content-length"]) == len(html)
        assert html.replace(preload_link(chunk) + b"\n", b"") == INDEX.encode()  # nothing else changed


def test_other_addresses_pass_untouched():
    client = _client()
    home = client.get("/", headers={"accept-encoding": "gzip"})
    assert home.headers.get("content-encoding") == "gzip"  # Home draws no Plotly: not touched
    assert b"PlotlyChart" not in home.content
    assert b"PlotlyChart" not in client.get("/teacher").content
    assert b"PlotlyChart" not in client.get("/attentionx").content
    assert client.get("/static/js/a.js").text == "console.log(1)" * 100
    assert client.get("/_stcore/health").json()["ok"] is True
    assert b"PlotlyChart" not in client.post("/attention").content
    assert client.head("/attention").status_code == 200


def test_the_server_names_the_app_list_of_plotly_pages():
    import asgi

    preload = [entry for entry in asgi.MIDDLEWARE if entry.cls is PlotlyPreloadMiddleware]
    assert len(preload) == 1 and preload[0].kwargs["pages"] == PLOTLY_PAGES
    assert "attention" in PLOTLY_PAGES and "home" not in PLOTLY_PAGES and "teacher" not in PLOTLY_PAGES


def test_with_preload_is_idempotent_and_needs_a_head(chunk):
    once = with_preload(INDEX.encode(), chunk)
    assert with_preload(once, chunk) == once
    assert with_preload(b"<html><body>no head</body></html>", chunk) == b"<html><body>no head</body></html>"
    assert gzip.decompress(gzip.compress(once)) == once

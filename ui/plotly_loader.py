"""The hidden element of a run that starts the browser loading plotly.js: with the run's first element on a page
that draws Plotly charts (preload_plotly), or once the browser is idle on one that draws none
(preload_plotly_when_idle). serving/plotly_preload.py starts it earlier still, from the page's HTML."""
from __future__ import annotations

import json

import streamlit as st

from serving.plotly_preload import plotly_chunk

PLOTLY_PRELOAD = "plotly_preload"  # key of preload_plotly's hidden container
PLOTLY_WHEN_IDLE = "plotly_when_idle"  # key of preload_plotly_when_idle's hidden container


def preload_plotly(page_draws_plotly: bool) -> None:
    """At the top of every run (one hidden container, so the page's elements keep their places); on a page that
    draws a Plotly chart the browser starts loading plotly.js now.

    Streamlit's front end imports its Plotly chunk (4.7 MB of JavaScript) only when the first Plotly chart of a tab
    arrives, late in a page's first run; fetching and evaluating it then comes after the run has ended, the largest
    part of a new tab's wait for its first chart. Imported here, with the run's first element, it loads
    while the server still runs the page; the chart's own import then finds it loaded (one module, one URL). The
    element is hidden (its container's CSS), so it moves nothing; the script holds only the chunk's file name, read
    from Streamlit's own files (no user text). Another Streamlit build without that chunk: nothing is preloaded.
    """
    place = st.container(key=PLOTLY_PRELOAD)
    if page_draws_plotly:
        _plotly_import(place, "now")


def preload_plotly_when_idle(page_draws_plotly: bool) -> None:
    """Last in a run of a page that draws no Plotly chart (Home): once that page is drawn and the browser has
    nothing else to do, plotly.js is evaluated for the page that comes next. Home's buttons open a lesson at a stop
    with charts in the same tab: without this the click waited for plotly.js's evaluation (a long task of about
    0.6 s on a laptop's core) before its first chart; the page itself is drawn before it starts. Hidden, like
    preload_plotly's element."""
    place = st.container(key=PLOTLY_WHEN_IDLE)
    if not page_draws_plotly:
        _plotly_import(place, "idle")


def _plotly_import(place, when: str) -> None:
    """The hidden script in `place` that imports Streamlit's Plotly chunk once per tab (window.__plotlyPreload, the
    promise serving/plotly_preload's module script may have set already): at once, or (`when="idle"`) a second
    later, at the browser's next idle time."""
    chunk = plotly_chunk()
    if chunk is None:
        return
    load = ("const load = () => { window.__plotlyPreload = window.__plotlyPreload"
            f" || import(new URL({json.dumps(chunk)}, main.src).href).catch(() => null); }};")
    # idle: a second after the page's last element (its run's end is drawn by then), at the browser's next idle
    # time; evaluating plotly.js is one long task, which must not hold back the page's own last changes
    start = ("load();" if when == "now" else
             "setTimeout(() => (window.requestIdleCallback ? window.requestIdleCallback(load, {timeout: 2000})"
             " : load()), 1000);")
    script = ("(() => { if (window.__plotlyPreload) return;"
              " const main = document.querySelector('script[src*=\"static/js/index.\"]'); if (!main) return;"
              f" {load} {start} }})();")
    key = PLOTLY_PRELOAD if when == "now" else PLOTLY_WHEN_IDLE
    # hidden with its layout wrapper too: the wrapper alone, empty, still takes a gap of the column
    hide = f".stApp .st-key-{key}, .stApp [data-testid='stLayoutWrapper']:has(> .st-key-{key})"
    place.html(f"<style>{hide} {{display: none !important}}</style><script>{script}</script>",
               width="content", unsafe_allow_javascript=True)

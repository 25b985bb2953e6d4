"""How things are shown to this user: language, presenter mode, chart export. One chart function for every page.

Per-user choices live in this user's session (ui/session.py; and the URL, see ui/share.py), so one student switching
to Korean or to presenter mode changes nothing for anyone else.
"""
from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable, Hashable, Mapping

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

import i18n
from i18n import tr
from i18n.particles import attach_particles
from serving.plotly_preload import plotly_chunk
from serving.internals import figure_from_own_dict, in_script_run
from runtime.result_cache import memoized
from ui.session import WidgetKey, lab_session
from ui.text import escape_markdown
from viz.encoder import LABEL_FONT, PROJECTED_LABEL_FONT, thin_tick_labels
from viz.chart_data import carry_data, chart_data
from viz.export import chart_csv
from viz.summary import chart_summary
from viz.words import Words
from viz.presentation import (COLUMN_TITLE_WIDTH, PAGE_TITLE_WIDTH, PROJECTED_PAGE_TITLE_WIDTH, TITLE_WIDTH, fit_title,
                               for_projection)

LANGUAGE, PRESENTER, IMAGE_FORMAT = "lang", "presenter", "image_format"  # widget keys (the first two: specs)
# read here below the specs (ui/specs/common.py's LANGUAGE_SPEC and PRESENTER_SPEC, which import this module)
_LANGUAGE, _PRESENTER, IMAGE_FORMAT_WIDGET = WidgetKey(LANGUAGE), WidgetKey(PRESENTER), WidgetKey(IMAGE_FORMAT)
CHART_WORDS = "chart_words_"  # key prefix of the container of a chart's words (CSS class st-key-chart_words_<key>)
IMAGE_FORMATS = ("png", "svg")
PLOTLY_PRELOAD = "plotly_preload"  # key of preload_plotly's hidden container
PLOTLY_WHEN_IDLE = "plotly_when_idle"  # key of preload_plotly_when_idle's hidden container
# px a chart gets: the page's width, or a column's (most columns are half the page; another passes its own width to
# show_chart), in a 1280 px wide window with the sidebar open. Only the thinning of token labels reads them, and a smaller guess
# than the real width only labels fewer tokens: with the sidebar closed or projected the charts are wider.
PAGE_WIDTH, COLUMN_WIDTH = 820, 400
# Projected, the sidebar starts collapsed (ui/run.py): the page gains the sidebar's 300 px
PROJECTED_PAGE_WIDTH, PROJECTED_COLUMN_WIDTH = PAGE_WIDTH + 300, COLUMN_WIDTH + 150


# A phone (a student's, in class): the page is about 360 px wide and stacks columns, so every chart gets about this
PHONE_WIDTH = 340
PHONE_TITLE_WIDTH = COLUMN_TITLE_WIDTH * PHONE_WIDTH // COLUMN_WIDTH  # display columns of a title: 44


def is_phone(headers: Mapping[str, str]) -> bool:
    """Whether a browser's request headers say it is a phone: "Mobi" in its User-Agent (the rule MDN gives for
    phones, tablets left out) or the client hint Sec-CH-UA-Mobile: ?1 (sent where the page is a secure context)."""
    return "Mobi" in headers.get("User-Agent", "") or headers.get("Sec-CH-UA-Mobile", "") == "?1"


def on_phone() -> bool:
    """Whether this session's browser is a phone (is_phone of the headers that opened its session)."""
    return in_script_run() and is_phone(st.context.headers)


def page_width() -> int:
    """px of the page's width a full-width chart gets (see PAGE_WIDTH): wider projected, the sidebar folded; a
    phone's narrow screen (PHONE_WIDTH)."""
    if presenting():
        return PROJECTED_PAGE_WIDTH
    return PHONE_WIDTH if on_phone() else PAGE_WIDTH


def _session_language() -> str:
    """The language of the browser session this thread is drawing for; English outside a session."""
    if not in_script_run():
        return i18n.DEFAULT_LANGUAGE
    return _LANGUAGE.get(i18n.DEFAULT_LANGUAGE)


def use_session_language() -> None:
    """Make tr() read this browser session's language: called first in every run (ui/run.run_app), never as a side
    effect of importing this module. A fragment's own rerun (ui/share.view_fragment) follows a full run of its session
    in the same process, so the provider is in place; it reads the session's language at each call."""
    i18n.set_language_provider(_session_language)


def words_for(*tables: str) -> Words:
    """The words of the i18n tables a chart family reads ("positional", "llm_explain", ...), in this reader's language,
    for a viz/ builder's `words`: what tr() would say for each of their keys."""
    return _words(i18n.current_language(), tables)


@functools.cache
def _words(language: str, tables: tuple[str, ...]) -> Words:
    english, own = i18n.strings(i18n.DEFAULT_LANGUAGE), i18n.strings(language)
    prefixes = tuple(f"{table}." for table in tables)
    templates = {key: own.get(key, template) for key, template in english.items() if key.startswith(prefixes)}
    if language == "ko":
        return Words(language, tables, templates, finish=attach_particles)
    return Words(language, tables, templates)


def document_language() -> None:
    """Set the page's <html lang> to the interface language, so that a screen reader reads Korean as Korean.

    Streamlit serves its page as lang="en" and offers no setting for it: a script (st.html runs it in the page
    itself, not in an iframe) sets it on every run; it runs again when the language, hence its text, changes. Only a
    language code of i18n.LANGUAGES goes into the script, never user text.
    """
    language = i18n.current_language()
    code = language if language in i18n.LANGUAGES else i18n.DEFAULT_LANGUAGE
    st.html(f"<script>document.documentElement.lang = {json.dumps(code)};</script>", width="content",
            unsafe_allow_javascript=True)


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


def presenting() -> bool:
    """Presenter mode: large text, colour-blind-safe scales, fewer controls (no downloads, fewer knobs)."""
    return bool(_PRESENTER.get(False))


def page_title(title: str) -> None:
    """The page's title, left out under a lesson stop's bar, which names the view (its stop title), in presenter mode
    and wherever the stop shows a section of the page first (ui/lesson_bar/bar decides): at 1280×720 the bar and a
    repeated title pushed the chart the stop is about below the fold."""
    if not lab_session().lesson.titled_by_lesson:
        st.title(title)


def explanation(title: str | None = None):
    """Where a page's opening explanation goes: the page itself, or, in presenter mode, a folded section ("How to
    read these maps" unless `title` says otherwise), so that the main chart starts above the fold of a 1280×720
    projector (the teacher explains). Folded too while a lesson stop shows a section of the page first
    (ui/page_sections.py): the stop's text explains, and the section's chart starts above the fold. A stop projected
    puts it in the sidebar: the stop's text is the explanation, and the 66 px of a folded section on the page were
    what kept several stops' charts under the fold (tests/test_browser_projected_stops.py)."""
    if projected_stop():
        return st.sidebar.expander(title or tr("lecture.how_to_read"), icon=":material/help:")
    return st.expander(title or tr("lecture.how_to_read")) if explanations_folded() else st.container()


def projected_stop() -> bool:
    """A lesson stop on its own page, projected: the page puts the chart the stop is about first, its controls and
    asides after it (the stop's bar already says what is shown)."""
    return presenting() and lab_session().lesson.titled_by_lesson


def chart_first(where=None):
    """-> (chart, controls) containers in `where` (default: the page), in the order they are shown: the chart above
    its controls for a projected stop, below them otherwise. The page draws the controls first in its code either way
    (their values pick the chart); only where they appear changes."""
    where = where or st
    first, second = where.container(), where.container()
    return (first, second) if projected_stop() else (second, first)


def explanations_folded() -> bool:
    """Whether explanations give way to the charts (explanation() folds them): projected, or under a lesson stop
    that shows a section of the page first."""
    return presenting() or bool(lab_session().lesson.stop_section)


def strongest_shade() -> str:
    """How the largest weight looks in the colour scale in use, for explanations: dark in Blues (the default),
    bright yellow in Cividis (presenter mode, viz/presentation.py)."""
    return tr("lecture.shade_bright" if presenting() else "lecture.shade_dark")


WORDS = "_attention_lab_words"  # a shared figure's words (viz/summary.py) by title override, computed once each
SHARED_KEY = "_attention_lab_shared_key"  # a shared figure's (key, language): what its shown copies are cached by


@memoized
def _shared_chart(key: tuple, language: str, _build: Callable[[], go.Figure]) -> go.Figure:
    """A figure and its words, built once per key and language, the same object for every session (kept in the
    replica's byte-bounded store, runtime/result_cache.py: a 512-token map's figure weighs megabytes).

    The figure itself, not a copy: rebuilding a figure from its dict on every run would be the largest part of the
    app's own work in a class. Its hundreds of gc-tracked objects cost nothing per run, since Streamlit does not
    collect garbage after every run (.streamlit/config.toml: runner.postScriptGC = false).
    """
    # `language` is part of the key, and build() and the summary run under it: the words a builder is given
    # (words_for, viz/words.py) are that language's, so a Korean figure is never served to an English session.
    with i18n.using_language(language):
        figure = _build()
        setattr(figure, WORDS, {None: chart_summary(chart_data(figure), words=words_for("display"))})
    setattr(figure, SHARED_KEY, (key, language))
    return figure


def shared_figure(key: tuple[Hashable, ...], build: Callable[[], go.Figure]) -> go.Figure:
    """build() once per key and language for all sessions; afterwards the same figure.

    Read-only: every session draws this very object, so change a copy (copy_of_own_figure) and never the figure;
    show_chart only reads it. The key must name everything the figure depends on besides the language (chart name,
    sizes, model id, text, arrays as bytes).
    """
    return _shared_chart(key, i18n.current_language(), build)


@functools.lru_cache(maxsize=256)
def _escaped(summary: str) -> str:
    """escape_markdown(summary), once per text: a shared chart's words are the same for its whole class (after a Reveal
    every student's run shows them), and escaping a long summary each run was a tenth of such a run's chart."""
    return escape_markdown(summary)


def chart_words(fig: go.Figure, title: str | None = None) -> str:
    """The words of the chart's data (viz.summary.chart_summary), under `title` if given: a shared figure's words are
    computed once for the class (two sessions computing the same words at once both store the same text)."""
    known = getattr(fig, WORDS, None)
    if known is None:
        return chart_summary(chart_data(fig), title, words=words_for("display"))
    if title not in known:
        known[title] = chart_summary(chart_data(fig), title, words=words_for("display"))
    return known[title]


def _as_shown(fig: go.Figure, presenter: bool, in_column: bool, width: int) -> go.Figure:
    """fig as show_chart draws it: projected (larger text, colour-blind-safe scales) or its title wrapped to its
    width, its token labels thinned to those that fit (fig itself when nothing changes; else a copy)."""
    # A title longer than its chart is wide is wrapped (a column is half the page or less): plotly clips it.
    if presenter:
        shown = for_projection(fig, TITLE_WIDTH if in_column else PROJECTED_PAGE_TITLE_WIDTH)
    else:  # a phone's chart (width PHONE_WIDTH) wraps its title at its own width, column or not
        title_width = PHONE_TITLE_WIDTH if width <= PHONE_WIDTH else COLUMN_TITLE_WIDTH if in_column else PAGE_TITLE_WIDTH
        shown = fit_title(fig, title_width, copy=copy_of_own_figure, chart_px=width)
    return thin_tick_labels(shown, width, PROJECTED_LABEL_FONT if presenter else LABEL_FONT,
                            copy=copy_of_own_figure if shown is fig else lambda own: own)  # fig is shared: copied


class _SharedShown(go.Figure):
    """A shared figure as shown (_shown_shared): read-only and the same object for every session, so the dict that
    st.plotly_chart serialises (Figure.to_dict, a deep copy of every trace at every call) is made once. After a
    Reveal every student's question redraws the stop's chart at each tick of her poll (ui/live_class/live_question.py)."""

    def to_dict(self) -> dict:
        kept = getattr(self, "_lab_dict", None)
        if kept is None:
            kept = self._lab_dict = super().to_dict()
        return kept  # read by its readers only (st.plotly_chart's JSON), like the figure itself


@memoized
def _shown_shared(shared: tuple, presenter: bool, in_column: bool, width: int, _fig: go.Figure) -> go.Figure:
    """A shared figure (shared_figure: its key and language) as show_chart draws it, made once per process and way
    of showing it, the same object for every session (read-only, like the shared figure). Kept in the replica's
    byte-bounded store beside the figure it copies; the key names everything the result depends on."""
    return carry_data(_fig, figure_from_own_dict(_as_shown(_fig, presenter, in_column, width).to_dict(), _SharedShown))


def copy_of_own_figure(fig: go.Figure) -> go.Figure:
    """A copy of a figure plotly built and validated (every figure the pages show), without validating it again, and
    holding the same data (viz/chart_data.py: a figure rebuilt from its dict would have none)."""
    return carry_data(fig, figure_from_own_dict(fig.to_dict()))


def _file_stem(name: str) -> str:
    return "attention-lab_" + (re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip("-") or "chart")


def show_chart(fig: go.Figure, name: str, *, key: str | None = None, where=None,
               table: pd.DataFrame | Callable[[], pd.DataFrame] | None = None,
               on_select: Callable[[], None] | None = None, summary: str | None = None,
               width: int | None = None, offer_csv: bool = True) -> None:
    """Draw a plotly figure the same way everywhere.

    name: what the chart is, for file names ("attention_cross_L1_H2" -> attention-lab_attention_cross_L1_H2.svg).
    where: a column or container (default: the page). table: the numbers offered as CSV when the chart's own data
    (viz.export.chart_table of the ChartData its builder attached) are not the right ones. The camera button saves
    PNG or SVG (sidebar setting); a CSV button offers the numbers, built only when clicked. Presenter mode enlarges
    text and swaps in colour-blind-safe scales, and hides the download button. on_select: a callback run when a point
    is clicked (the selection is then the value of WidgetKey(key)). Under the chart, in every mode, the chart in
    words (viz/summary.py: computed from the chart's data, the arrays it draws), for screen readers and for anyone who
    cannot tell its colours apart; `summary` replaces them (the lines view: the words of the map it redraws, masked
    cells left out).
    width: the px the chart gets (default PAGE_WIDTH, or COLUMN_WIDTH in a column; page_width() for a `where` that
    spans the page, whose title then wraps at the page's width, not a column's): a long text's token labels are
    thinned to every k-th one where they would overlap, by their measured widths (viz.encoder.thin_tick_labels;
    hover and CSV name every token). offer_csv=False: no CSV button (where the same chart is offered whole nearby).
    """
    presenter = presenting()
    in_column = where is not None and (width is None or width < page_width())  # a `where` across the page is none
    where = where or st
    key = key or name
    phone = not presenter and on_phone()  # a phone stacks columns: every chart is the screen's width
    width = PHONE_WIDTH if phone else width or (
        (PROJECTED_COLUMN_WIDTH if presenter else COLUMN_WIDTH) if in_column else page_width())
    shared = getattr(fig, SHARED_KEY, None)
    if shared is None:
        shown = _as_shown(fig, presenter, in_column, width)
    else:  # every session at a stop draws the same chart: made ready once per process (a class after a Reveal)
        shown = _shown_shared(shared, presenter, in_column, width, fig)
    image_format = IMAGE_FORMAT_WIDGET.get(IMAGE_FORMATS[0])
    config = {"displaylogo": False,
              "toImageButtonOptions": {"format": image_format, "filename": _file_stem(name), "scale": 2}}
    if phone:  # on a touch screen plotly's tool bar stays over the title; a student's phone needs neither
        config["displayModeBar"] = False
    if on_select is None:
        where.plotly_chart(shown, key=key, config=config)
    else:
        where.plotly_chart(shown, key=key, config=config, on_select=on_select, selection_mode="points")
    summary = chart_words(fig) if summary is None else summary
    if summary:  # token text is user text: escaped, never markdown
        # Projected, the words are for screen readers only (ui/sidebar.py hides CHART_WORDS containers from the eye):
        # the room reads the chart, and the projected page keeps its text to the stop's.
        where.container(key=f"{CHART_WORDS}{key}").caption(_escaped(summary))
    if presenter or not offer_csv:
        return

    language = i18n.current_language()
    # the builder outlives the run in the session: it holds the chart's data only when the CSV is the chart's own (a
    # shared figure's data the result store has let go would otherwise stay, per session, outside its budget)
    own = chart_data(fig) if table is None else None

    def csv() -> bytes:  # runs when clicked, outside the script run: keep the language of who clicked
        with i18n.using_language(language):
            frame = table() if callable(table) else table
            return chart_csv(own) if frame is None else frame.to_csv(index=frame.index.name is not None).encode(
                "utf-8-sig")

    where.download_button(tr("display.csv"), data=csv, file_name=_file_stem(name) + ".csv", mime="text/csv",
                          key=f"csv_{key}", on_click="ignore", icon=":material/download:", type="tertiary",
                          help=tr("display.csv_help"))


def folded_section(title: str, key: str, icon: str | None = None, expanded: bool = False):
    """A folded section whose content is built only while it is open: -> (container, is_open). `expanded`: open
    when first drawn.

    A page's secondary charts sit in these. Streamlit runs the body of a plain expander on every run, open or not,
    so a folded chart still cost the server its figure and its serialisation for every student; an expander with a
    key and on_change="rerun" tracks its state (public API), and the page draws the content only when it is open.
    """
    section = st.expander(title, expanded=expanded, icon=icon, key=key, on_change="rerun")
    return section, bool(section.open)

"""One chart function for every page (show_chart: the figure as shown, its words, its PNG/SVG and CSV), the figures
shared by every session (shared_figure), a chart's words (chart_words), and the folded section a page's secondary
charts sit in (folded_section)."""
from __future__ import annotations

import functools
import re
from collections.abc import Callable, Hashable

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

import i18n
from i18n import tr
from serving.internals import figure_from_own_dict
from runtime.result_cache import memoized
from ui.language import words_for
from ui.presenter import presenting
from ui.screen import COLUMN_WIDTH, PHONE_TITLE_WIDTH, PHONE_WIDTH, PROJECTED_COLUMN_WIDTH, on_phone, page_width
from ui.session import WidgetKey
from ui.text import escape_markdown
from viz.encoder import LABEL_FONT, PROJECTED_LABEL_FONT, thin_tick_labels
from viz.chart_data import carry_data, chart_data
from viz.export import chart_csv
from viz.summary import chart_summary
from viz.presentation import (COLUMN_TITLE_WIDTH, PAGE_TITLE_WIDTH, PROJECTED_PAGE_TITLE_WIDTH, TITLE_WIDTH, fit_title,
                               for_projection)

IMAGE_FORMAT = "image_format"  # widget key of the sidebar's image format, which the camera button saves
IMAGE_FORMAT_WIDGET = WidgetKey(IMAGE_FORMAT)
CHART_WORDS = "chart_words_"  # key prefix of the container of a chart's words (CSS class st-key-chart_words_<key>)
IMAGE_FORMATS = ("png", "svg")

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

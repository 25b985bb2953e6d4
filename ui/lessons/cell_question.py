"""A cell question's widget (issue 55): the stop's map with its weights hidden, a tap picks a cell (or, where the
question names a query row, that row's key), the token lists beside it do the same from the keyboard, then Answer.

The map is its measure's (classroom/measures/cell_maps.py), read from the server's result store, so the widget, the
right cells and the cells the store takes (Expected.cells.answers) are one map. A tap is kept as the token lists'
values (a callback that runs before they are drawn), so the lists show every pick, whichever way it was made. The
lists and Answer are a form (a pick there sends nothing until Answer); the map is outside it: a chart's selection
cannot live in a form (a tap reruns the question's fragment). The run that sends the answer draws no map (its
confirmation replaces the question); where the store refuses the answer, the caller draws it again (map_again).
"""
from __future__ import annotations

from functools import partial

import streamlit as st

from classroom.lessons import Stop
from classroom.measures import CellMap, MeasureError, cell_answer
from i18n import tr
from ui.charts import copy_of_own_figure, shared_figure, show_chart
from ui.language import words_for
from ui.lessons.measured import computed_answer, worded
from ui.presenter import presenting
from ui.session import WidgetKey
from ui.text import escape_markdown
from viz.cells import cell_picker, tapped_cell, with_pick


def stop_cells(stop: Stop) -> CellMap:
    """The map of the stop's cell question, with its row named; MeasureError when it cannot be measured."""
    cells = computed_answer(stop).cells
    if cells is None:
        raise MeasureError(f"{stop.question.compute}: no map")
    return cells


def _picks(key: str) -> tuple[WidgetKey, WidgetKey, WidgetKey]:
    """The widget keys of the map, its query list and its key list."""
    return WidgetKey(f"{key}_map"), WidgetKey(f"{key}_query"), WidgetKey(f"{key}_key")


def _tapped(key: str) -> None:
    """A tap on the map (its invisible targets, viz.cells.cell_picker) sets the token lists to its cell."""
    chart, query, column = _picks(key)
    cells = [cell for cell in map(tapped_cell, chart.get().selection.points) if cell is not None]
    if cells:
        query.set(cells[0][0])
        column.set(cells[0][1])


def _names(tokens: tuple[str, ...]) -> list[str]:
    """Each token as a list shows it: its text, with its position where the same text comes twice ("the (5)")."""
    return [escape_markdown(token if tokens.count(token) == 1 else f"{token} ({index + 1})")
            for index, token in enumerate(tokens)]


def _shown_map(cells: CellMap, key: str, where=None) -> None:
    """The map to tap with the student's pick marked (the token lists' values), and its words."""
    chart, query, column = _picks(key)
    picked_row = query.get() if cells.row is None else cells.row
    chosen = None if picked_row is None or column.get() is None else (picked_row, column.get())
    # one figure per map, row and pick for every session (read-only, like the map): neither a page nor a tap of a
    # class at the stop builds one per student, and each pick is a copy of the map without one
    key_of = ("cell_picker", cells.rows, cells.columns, cells.row)
    fig = shared_figure(key_of, lambda: cell_picker(list(cells.rows), list(cells.columns), cells.row, None,
                                                    tr("lessons.cell_map_title"), words=words_for("attention")))
    if chosen is not None:
        fig = shared_figure((*key_of, chosen), partial(with_pick, fig, chosen, copy=copy_of_own_figure))
    size = {"rows": len(cells.rows), "columns": len(cells.columns)}
    words = tr("lessons.cell_words", **size) if cells.row is None else tr(
        "lessons.cell_words_row", row=cells.rows[cells.row], **size)
    show_chart(fig, "cell_question", key=chart.key, on_select=partial(_tapped, key), summary=words, offer_csv=False,
               where=where)


def ask_cell(stop: Stop, key: str, prompt: str, submit: str | None = None) -> str | None:
    """Draw the cell question; -> the canonical answer ("query,key", 1-based) when the student sends it in this run,
    in a run that leaves the map out (the answer's confirmation replaces the question: map_again where it does not)."""
    try:
        cells = stop_cells(stop)
    except MeasureError as error:
        st.warning(tr("lessons.no_answer", line=stop.line or "?", reason=worded(error)))
        return None
    _, query, column = _picks(key)
    rows, columns = _names(cells.rows), _names(cells.columns)
    st.markdown(f"**{prompt}**")
    row = None if cells.row is None else escape_markdown(cells.rows[cells.row])
    st.caption(tr("lessons.cell_help") if row is None else tr("lessons.cell_help_row", row=row))
    picked_row = query.get() if cells.row is None else cells.row
    chosen = None if picked_row is None or column.get() is None else (picked_row, column.get())
    # projected, the token lists and Answer beside the map: on a 1280×720 screen they stay on the first screen, and
    # the answer leaves the page where the stop's chart starts (under the map, Answer would scroll the page down)
    beside = st.columns([3, 2]) if presenting() else None
    map_at = st.container() if beside is None else beside[0]  # above the form, drawn after it: see below
    # The lists and Answer are one form: a pick in a list costs no run, so a keyboard answer is one run of the page
    # (a class of 300 answering within seconds sends 300 runs, not 600: bench/README.md). A tap is a run of its own
    # (a chart's selection cannot live in a form) that sets the lists.
    with st.container() if beside is None else beside[1], st.form(f"{key}_form", border=False):
        if cells.row is None:
            st.pills(tr("lessons.cell_query"), range(len(rows)), key=query.key, format_func=rows.__getitem__)
        st.pills(tr("lessons.cell_key") if row is None else tr("lessons.cell_key_row", row=row), range(len(columns)),
                 key=column.key, format_func=columns.__getitem__)
        if chosen is not None:  # a tap's cell, or the lists' at the last Answer
            st.caption(tr("lessons.cell_chosen", cell=escape_markdown(cells.label(cell_answer(*chosen)) or "")))
        sent = st.form_submit_button(submit or tr("lessons.submit"), type="primary", key=f"{key}_submit")
    if sent:
        if chosen is not None:  # the map is not drawn: the confirmation that follows replaces the question (a class
            return cell_answer(*chosen)  # of 300 answering at once: a map less per answer, its run a text's)
        st.warning(tr("lessons.pick_first"))
    _shown_map(cells, key, map_at)
    return None


def map_again(stop: Stop, key: str) -> None:
    """The map to tap under the form, in a run whose answer the store refused (ask_cell left the map out of it)."""
    try:
        _shown_map(stop_cells(stop), key)
    except MeasureError:
        return  # ask_cell said it

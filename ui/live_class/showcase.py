"""Anonymous student work on the projector (issue 55, part 4): in her private view the teacher picks one answer of the
class's stop (an approved text, a tapped cell, or a view a student sent to an "explain with a view" question) and
projects it; the projected page, and each student's screen, show it without a name or seat label; one click takes it
down. The store keeps it and decides what may go up (classroom/showcase.py): this draws what it says.

What is shown of a student's work is never markup: a text by its visible text (no bidi control or zero-width
character), escaped and isolated from the words around it; a cell as its tokens; a view as its page and values in
words, escaped, with a button that opens it: the link checked again (ui/lessons/view_question.openable_link), relative
to this app, in the reader's language (projected: in presenter mode). The picker lists answers, never students.
"""
from __future__ import annotations

import hashlib

import streamlit as st

from classroom.lessons import Stop
from classroom.measures import MeasureError, cell_of
from classroom.records import ClassSession, Results
from classroom.showcase import Projected
from classroom.teacher import ClassTeacher
from classroom.text_answers import APPROVED, visible_text
from i18n import tr
from ui.charts import show_chart
from ui.language import words_for
from ui.lessons.catalogue import known_pages, lessons
from ui.lessons.cell_question import stop_cells
from ui.lessons.questions import stop_answer_label
from ui.lessons.view_question import app_views, openable_link, sent_view_words
from ui.live_class.classroom import class_lesson
from ui.live_class.refusals import teacher_action
from ui.presenter import presenting
from ui.seat import class_store
from ui.text import escape_markdown, isolated_markdown
from viz.cells import cell_picker

PICKED_ANSWERS = 30  # answers her picker lists (most students first): a class's distinct taps or views


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]  # a widget key of safe characters for any answer


def _words(stop: Stop | None, kind: str, shown: str) -> str:
    """An answer as a line of Markdown: escaped, a text isolated, a cell as its tokens, a view as its page and values."""
    if kind == "text":
        return isolated_markdown(visible_text(shown))
    if kind == "view":
        return escape_markdown(sent_view_words(shown))
    return escape_markdown(stop_answer_label(stop, shown) if stop is not None and stop.question else shown)


def _item_stop(session: ClassSession, item: Projected) -> Stop | None:
    """The stop of the class's lesson that the projected item answers (None: the lesson does not read, or has no such
    stop with a question)."""
    lesson = class_lesson(session, lessons()[0], known_pages())[0]
    return next((s for s in lesson.stops if s.number == item.stop and s.question), None) if lesson else None


def projected_item(code: str, session: ClassSession | None, stop: Stop | None = None,
                   teacher: ClassTeacher | None = None) -> Projected | None:
    """The item projected in class `code` (read only when the class says one is up: `session.projected`), drawn for
    the room; `teacher`: her screen, with "Take down". `stop`: the stop it answers, where the caller has it (without
    it, a student's page away from the live question, the class's lesson gives it: a cell reads as its tokens, as her
    own answer does). -> the item drawn (None: nothing)."""
    item = class_store().projected(code) if session is not None and session.projected is not None else None
    if item is None:
        return None
    if stop is None and item.kind == "cell":
        stop = _item_stop(session, item)
    with st.container(border=True, key="projected_item"):
        st.markdown(f"**{tr('showcase.title')}** · {tr(f'showcase.kind_{item.kind}')}")
        # large, for the back row; a heading without its anchor link (the words are escaped Markdown)
        st.subheader(_words(stop, item.kind, item.shown), anchor=False)
        if item.kind == "view" and (href := openable_link(item.shown, presenter=teacher is not None and presenting())):
            st.link_button(tr("showcase.open_view"), href, icon=":material/open_in_new:",
                           help=tr("showcase.open_view_help"))
        if item.kind == "cell" and teacher is not None and stop is not None:  # the room: where she tapped
            _tapped_map(stop, item.shown)
        if teacher is not None:
            st.button(tr("showcase.take_down"), key="showcase_take_down", icon=":material/hide_image:",
                      on_click=teacher_action, args=(teacher.take_down,))
    return item


def _tapped_map(stop: Stop, cell: str) -> None:
    """The stop's map as the students tapped it (its weights hidden: a student's tap, not the answer), her cell dark."""
    try:
        cells = stop_cells(stop)
    except MeasureError:
        return  # the tap's tokens above say it
    picked = cell_of(cell)
    if picked is None or picked[0] >= len(cells.rows) or picked[1] >= len(cells.columns):
        return
    fig = cell_picker(list(cells.rows), list(cells.columns), cells.row, picked, tr("showcase.tap_title"),
                      words=words_for("attention"))
    show_chart(fig, "projected_tap", key="projected_tap", offer_csv=False,
               summary=tr("showcase.tap_words", cell=cells.label(cell) or cell))


def _candidates(teacher: ClassTeacher, stop: Stop, qid: str) -> list[tuple[str, str, int]]:
    """What she may project of the stop's question: (item, shown, students), most students first. A text: the groups
    she approved (the store refuses any other); a cell or a view: the distinct answers given."""
    kind = stop.question.kind
    if kind == "text":
        return [(g.key, g.shown, g.students) for g in teacher.text_groups(qid) if g.state == APPROVED]
    counts = teacher.results(qid).counts
    return [(answer, answer, n) for answer, n in sorted(counts.items(), key=lambda a: (-a[1], a[0]))]


def showcase_picker(teacher: ClassTeacher, stop: Stop, qid: str, session: ClassSession) -> None:
    """Her private view: the answers she may project, each with "Project" (the one up is marked); drawn at the page's
    full run, outside the read-outs that refresh themselves (a click there could be lost to their rerun)."""
    kind = stop.question.kind
    if kind not in ("text", "cell", "view"):
        return
    up = class_store().projected(teacher.code) if session.projected is not None else None
    candidates = _candidates(teacher, stop, qid)
    with st.expander(tr("showcase.pick_title", count=len(candidates)), icon=":material/co_present:", expanded=True):
        st.caption(tr("showcase.pick_help_text" if kind == "text" else "showcase.pick_help"))
        for item, shown, students in candidates[:PICKED_ANSWERS]:
            on = up is not None and up.question == qid and (up.shown == shown if kind == "text" else up.shown == item)
            words, button = st.columns([4, 1], vertical_alignment="center")
            words.markdown(f"{_words(stop, kind, shown)} · {tr('showcase.students', count=students)}")
            button.button(tr("showcase.on_now") if on else tr("showcase.project"), key=f"showcase_{_digest(item)}",
                          disabled=on, on_click=teacher_action, args=(teacher.project, qid, kind, item),
                          kwargs={"views": app_views()})
        if len(candidates) > PICKED_ANSWERS:
            st.caption(tr("showcase.more", count=len(candidates) - PICKED_ANSWERS))
        if not candidates:
            st.caption(tr("showcase.nothing_yet"))


def view_results(results: Results, seen: int | None) -> None:
    """A view question's read-out (the teacher page's live fragment): how many sent a view; a new one reruns her
    private view's page so that her picker lists it (`seen`: the count it was drawn with)."""
    if seen is not None and results.answered != seen:
        st.rerun(scope="app")
    st.metric(tr("class_teacher.answered"), results.answered)
    st.caption(tr("showcase.views_room"))

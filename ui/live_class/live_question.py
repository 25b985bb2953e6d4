"""A student's question in a live class: her form, its confirmation and, at the teacher's Reveal, right or wrong with
the stop's chart under it, all in one fragment of their own, which is also her class poll while she is at the stop.

Why one fragment: after a Reveal each student's page used to rerun whole (st.rerun(scope="app")), 150 whole pages
per replica at once (the sidebar, the menu, every section of the stop's page), each far dearer than the one chart
the question was about. Here the question's own rerun (by her class watch, ui/live_class/class_watch.py, when the
class's version changed; no run while nothing changes) sees the class's new phase and redraws only itself: a peer-instruction phase (discussion, round 2) and the Reveal, where it draws the
stop's section alone (ui.widget_spec.PageSection.alone; for a cell question without one, the map it asked about, one
figure for the class: ui/live_class/cell_results.revealed_map; the whole page when the section has none, as before). The
rest of the page comes with the student's next whole run: her "Show the whole page", the teacher's next move or a
reload (a text question draws no chart at the Reveal: nothing on a page answers a student's own words, so the page
waits for her click). When the class moves to another stop or lesson, or ends, the whole app reruns (ui/lesson_bar/bar._follow_class
opens the new stop). A head question keeps the old way (polls_itself). Every class rule stays in the store
(ClassStore.answer: one answer, at the class's stop, none taken as right after the Reveal); this fragment only draws
what the store says.
"""
from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from functools import partial

import streamlit as st

from classroom.lessons import Stop
from classroom.recent import Seen, seen_of
from classroom.store import ClassSession, phase_in
from i18n import tr
from ui.errors import lab_fragment
from ui.live_class.cell_results import revealed_map
from ui.live_class.class_watch import watch_class
from ui.live_class.peer_groups import class_line
from ui.seat import class_store
from ui.live_class.peer_student import class_question
from ui.live_class.showcase import projected_item
from ui.lessons.questions import Expected
from ui.page_sections import section_alone
from runtime.page_slots import live_slot, page_slot
from ui.session import lab_session

__all__ = ["LiveQuestion", "Scope", "live_question", "poll_scope", "polls_itself", "seen_of"]


class Scope(Enum):
    """What a student's class poll reruns after reading the class from the store."""
    NOTHING = "nothing"  # nothing changed: the poll's run redraws what it drew
    FRAGMENT = "fragment"  # a question's phase or its reveal: the live question redraws itself
    APP = "app"  # the class moved to another stop or lesson, or ended: the whole page follows it


def poll_scope(seen: Seen | None, session: ClassSession | None) -> Scope:
    """The rerun a change of the class calls for, from what the page last saw (seen_of) and the class now."""
    if session is None or seen is None:
        return Scope.APP
    now = seen_of(session)
    if (now.stop, now.lesson) != (seen.stop, seen.lesson):
        return Scope.APP
    return Scope.NOTHING if now == seen else Scope.FRAGMENT


def polls_itself(stop: Stop) -> bool:
    """Whether a stop's question is a live question. A head question's grid (a button per head: 72 for MiniLM) would
    be drawn again at every poll of every student still choosing, several times a short question's cost: it keeps
    its own form fragment and the class poll, and the Reveal reruns the whole page, as before."""
    return stop.question is not None and stop.question.kind != "head"


@dataclass(frozen=True)
class LiveQuestion:
    """The question of the stop a student in a class has open: the stop, the question's id, its widget key, the
    expected answer; `page_below`: the whole run that drew this fragment showed the stop's page under the bar (the
    question was revealed then), so the fragment draws no chart of its own."""
    stop: Stop
    qid: str
    key: str
    expected: Expected | None
    page_below: bool


@lab_fragment()
def live_question(asked: LiveQuestion) -> None:
    """The student's question as her class's phase for it says, then (revealed, with no page under the bar) the stop's
    chart; and the class poll's line. Rerun by her class watch (the class changed), by her answer, or by "Show the
    whole page". In line for the process's live-question slots (runtime/page_slots.live_slot): at a Reveal a replica's
    whole class reruns it in the same moment."""
    with live_slot():
        _draw_live_question(asked)


def _draw_live_question(asked: LiveQuestion) -> None:
    seat = lab_session().seat
    session = class_store().shared_session(seat.code) if seat.code else None  # one read a process and half second
    if poll_scope(seat.seen, session) is Scope.APP:
        st.rerun(scope="app")
    seat.seen = seen_of(session)
    stop, qid = asked.stop, asked.qid
    phase = phase_in(session.phases, qid, "peer" if stop.question.peer else "one")
    shown = class_question(stop, qid, asked.key, seat.code, seat.student_id, asked.expected, phase,
                           qid in session.revealed)
    if shown and not asked.page_below:
        if stop.question.kind == "text":  # no chart answers a student's own words: the page waits for her click
            _whole_page_button()
        else:
            revealed_section(stop, asked.expected)
    projected_item(seat.code, session, stop)  # a student's work the teacher projects, without a name
    watch_class(seat.code, session, key="class_watch", line=class_line(seat.code))


def revealed_section(stop: Stop, expected: Expected | None = None) -> None:
    """Under the revealed answer: the stop's section alone (its chart), then the way to the whole page; a cell
    question's stop without one draws the map the question asked about (its measure's, the page's own map), with
    its right cells; any other stop whose section needs its page around it (or that names none) reruns the whole
    page instead."""
    draw = section_alone(stop.page, stop.section)
    if draw is None and stop.question.kind == "cell" and expected is not None and expected.cells is not None:
        draw = partial(revealed_map, expected)  # one figure for the class, not 150 whole pages per replica
    if draw is None:
        st.rerun(scope="app")
    # in line for the process's page slot (runtime/page_slots.py): at a Reveal 150 students' fragments per replica reach
    # here within a second; drawn one after another at full speed, the charts arrive in turn instead of all at the
    # end of 150 runs sharing the GIL (which also starves the event loop that sends them); right or wrong, above, is
    # not held back
    with st.container(key="revealed_section"), page_slot():
        draw()
    _whole_page_button()


def _whole_page_button() -> None:
    if st.button(tr("lessons.whole_page"), key="revealed_whole_page", type="tertiary", icon=":material/expand_more:"):
        st.rerun(scope="app")

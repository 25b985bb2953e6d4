"""Peers paired by disagreement on screen: the teacher's controls in a peer-instruction discussion (pair or group in
threes the students whose round-1 answers differ, form the groups again, turn them off), a student's line that says
whom she talks with, and her seat's label in her class line ("you are K4") throughout the class.

The groups are the store's (classroom/teacher.ClassTeacher.group; classroom/grouping.py forms them), so every replica
and reload shows the same ones, and a new grouping changes the class's version: each student's question reruns and
shows it (ui/live_class/live_question.py). A student learns whom to talk with by seat labels, never an answer. The
projected page says how many groups there are; how many have a right answer (a share right in disguise) is said
only where answers are (ui/lessons/questions.answer_shown): her private view, or after the Reveal.
"""
from __future__ import annotations

import streamlit as st

from classroom.grouping import SIZES, GroupingSummary
from classroom.partners import partners, seat_label_of
from classroom.records import QuestionPhase
from classroom.teacher import ClassTeacher
from i18n import tr
from ui.lessons.questions import answer_shown
from ui.live_class.private_view import is_private
from ui.live_class.refusals import teacher_action
from ui.seat import class_store
from ui.session import WidgetKey, lab_session


def _size_widget(qid: str) -> WidgetKey:
    return WidgetKey(f"peer_group_size_{qid}")  # pairs or threes


def class_line(code: str) -> str:
    """A student's class line: the class, and her seat's label once she has one ("you are K4"); a self-paced class
    (homework) says she goes at her own pace, not the teacher's."""
    label = lab_session().seat.label
    session = class_store().shared_session(code)
    area = "homework" if session is not None and session.self_paced else "lessons"
    return tr(f"{area}.in_class_as", code=code, seat=label) if label else tr(f"{area}.in_class", code=code)


def label_list(labels: tuple[str, ...]) -> str:
    """Seat labels as the sentence lists them: 'B7 and M2', 'B7, M2 and K4'."""
    if len(labels) < 2:
        return "".join(labels)
    return tr("peer.names_and", a=", ".join(labels[:-1]), b=labels[-1])


def talk_line(code: str, student: str, qid: str) -> None:
    """During a discussion with groups: whom this student talks with (their labels), or that she joins any group
    (she did not vote in round 1, so she is in none)."""
    seat = lab_session().seat
    if seat.label is None:
        seat.label = seat_label_of(class_store(), code, student)
    others = partners(class_store(), code, student, qid)
    seat_words = tr("peer.you_are", seat=seat.label) if seat.label else ""
    if others:
        st.info(f"{seat_words}{tr('peer.talk_with', names=label_list(others))}", icon=":material/forum:")
    else:
        st.info(f"{seat_words}{tr('peer.no_group')}", icon=":material/forum:")


def group_controls(teacher: ClassTeacher, qid: str, phase: QuestionPhase, revealed: bool) -> None:
    """The teacher's grouping during a discussion: pairs or threes and the button that forms them; once formed, how
    many groups (and, where answers are shown, how many have a right answer), again, and off."""
    with st.container(border=True, key="peer_groups"):
        if not phase.group_size:
            kinds = {size: tr(f"peer.group_kind_{size}") for size in SIZES}
            st.segmented_control(tr("peer.group_size"), SIZES, default=SIZES[0], format_func=kinds.get,
                                 key=_size_widget(qid).key)
            st.button(tr("peer.pair"), key="peer_pair", icon=":material/diversity_3:", help=tr("peer.pair_help"),
                      on_click=_group, args=(teacher, qid))
            return
        summary = teacher.grouping(qid)
        if summary is not None:
            st.markdown(made_line(summary))
            if answer_shown(revealed, is_private()) and summary.groups:
                st.caption(right_line(summary))
        again, off = st.columns(2)
        again.button(tr("peer.regroup"), key="peer_regroup", on_click=teacher_action,
                     args=(teacher.group, qid, phase.group_size))
        off.button(tr("peer.ungroup"), key="peer_ungroup", on_click=teacher_action, args=(teacher.ungroup, qid))


def _group(teacher: ClassTeacher, qid: str) -> None:
    """Her click: groups of the size chosen (read now; a second click on a segment deselects it: pairs then)."""
    size = _size_widget(qid).get()
    teacher_action(teacher.group, qid, size if size in SIZES else SIZES[0])


def made_line(summary: GroupingSummary) -> str:
    """The groups as the room may see them: how many, of what size, from how many votes; nothing of right or wrong."""
    if not summary.groups:
        return tr("peer.groups_none", voters=summary.voters)
    return tr("peer.groups_made", groups=summary.groups, kind=tr(f"peer.group_kind_{summary.size}"),
              voters=summary.voters)


def right_line(summary: GroupingSummary) -> str:
    """How many groups have a right answer in them; when there were fewer right answers than groups, that they were
    spread one to a group."""
    if summary.enough_right:
        return tr("peer.groups_right", with_right=summary.with_right, groups=summary.groups)
    return tr("peer.groups_few_right", right=summary.right, groups=summary.groups, with_right=summary.with_right)

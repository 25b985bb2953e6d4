"""Who joined the teacher's class, beside her answers: how many have a seat, the latest joins, the joins that wait
for her (the class is full), the class size and her buttons that let them in (ClassStore.join, ClassTeacher.admit)."""
from __future__ import annotations

import time

import streamlit as st

from classroom.records import Seats
from classroom.teacher import MAX_CLASS_SIZE, ClassTeacher
from i18n import tr
from ui.errors import lab_fragment
from ui.live_class.refusals import TEACHER, said, teacher_action

JOINS_SECONDS = 2  # the joins refresh this often


def seat_controls(teacher: ClassTeacher, seats: Seats) -> None:
    """The class size, and letting in the joins that wait (drawn at the page's full run: see
    ui/live_class/teacher._panel on clicks)."""
    with st.popover(tr("class_teacher.set_size"), icon=":material/groups:"):
        size = st.number_input(tr("class_teacher.class_size"), min_value=1, max_value=MAX_CLASS_SIZE,
                               value=seats.size, step=1, key=f"class_size_{seats.size}",
                               help=tr("class_teacher.class_size_help"))
        if int(size) != seats.size:
            teacher.set_class_size(int(size))
            st.rerun()
    if seats.waiting:
        oldest = seats.waiting[0][0]
        st.button(tr("class_teacher.admit_all", count=len(seats.waiting)), key="class_admit_all", type="primary",
                  help=tr("class_teacher.admit_help"), on_click=teacher_action, args=(teacher.admit,))
        st.button(tr("class_teacher.admit_oldest"), key="class_admit_oldest", help=tr("class_teacher.admit_help"),
                  on_click=teacher_action, args=(teacher.admit, [oldest]))


@lab_fragment(run_every=JOINS_SECONDS)
def live_joins(teacher: ClassTeacher, waiting_drawn: int) -> None:
    """The joins, refreshed by themselves beside the results (a fragment of their own)."""
    with said(TEACHER):
        _joins(teacher, waiting_drawn)


def _joins(teacher: ClassTeacher, waiting_drawn: int) -> None:
    """Joins as they come (in the live read-outs): how many students have a seat, the latest joins, and those who
    wait (a change in who waits reruns the page, so the buttons that let them in follow)."""
    seats = teacher.seats()
    if len(seats.waiting) != waiting_drawn:
        st.rerun(scope="app")
    now = time.time()
    st.metric(tr("class_teacher.joined"), tr("class_teacher.joined_value", joined=seats.admitted, size=seats.size))
    if seats.recent:
        latest = ", ".join(tr("class_teacher.join_ago", seconds=max(0, int(now - joined)))
                           for _, joined, _ in seats.recent[:3])
        st.caption(tr("class_teacher.recent_joins", count=seats.last_minute, latest=latest))
    if seats.waiting:
        st.warning(tr("class_teacher.waiting_joins", count=len(seats.waiting),
                      oldest=tr("class_teacher.join_ago", seconds=max(0, int(now - seats.waiting[0][1])))))

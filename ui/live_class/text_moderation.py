"""A text question (kind = "text") on the teacher's screens: the students' texts grouped (classroom/text_answers.py),
moderated in her private view before the room reads any of them.

The projected page shows how many answered and, once revealed (ui/lessons/questions.answer_shown), the share right
where the lesson accepts answers, and the groups she approved, as bars and as a list with counts: it reads them with
ClassStore.approved_texts, the store's one read for the room, which returns nothing before the Reveal and nothing
she has not approved. Her private view (ui/live_class/private_view.py) lists every group with its count, its state
and the word lists that flag it, with Approve and Hide for each and "Approve all not flagged"; those controls are
drawn at the page's full run, outside the read-outs that refresh themselves (a click there could be lost to their
rerun), and the read-outs rerun the page when a new text arrives. A student's text is shown by its visible text
(no bidi control or zero-width character), escaped, and isolated from the words around it (FSI … PDI), so a
right-to-left answer cannot reorder the count beside it.
"""
from __future__ import annotations

import hashlib

import pandas as pd
import streamlit as st

from classroom.teacher import ClassTeacher
from classroom.records import Results
from classroom.text_answers import APPROVED, HIDDEN, WAITING, TextGroup
from i18n import tr
from ui.lessons.questions import answer_shown
from ui.live_class.refusals import teacher_action
from ui.seat import class_store
from ui.text import isolated_markdown, markdown_table
from viz.classroom import answer_chart, readable

LISTED_GROUPS = 60  # her list: waiting groups first, most students first (the bulk approval covers those not listed)
CHARTED_GROUPS = 15  # the bars: the groups most students gave


def _rows(groups: list[TextGroup], judged: bool) -> pd.DataFrame:
    shown = groups[:CHARTED_GROUPS]
    return pd.DataFrame({"answer": [g.shown for g in shown], "students": [g.students for g in shown],
                         "right": [g.right if judged else None for g in shown]})


def _bars(groups: list[TextGroup], judged: bool, key: str) -> None:
    chart = answer_chart(_rows(groups, judged), tr("class_teacher.chart_students"), tr("class_teacher.chart_right"),
                         tr("class_teacher.chart_wrong"))
    st.altair_chart(readable(chart), key=key)


def text_results(teacher: ClassTeacher, qid: str, results: Results, revealed: bool, private: bool,
                 right_answer: str | None = None, texts_seen: int | None = None) -> None:
    """The read-outs of a text question (the teacher page's live fragment): the counts; on her private screen every
    group's bars, on the room's the approved groups once revealed. `right_answer`: the accepted answers' line;
    `texts_seen`: the answers her moderation list was drawn with (another count reruns the page: it lists the new)."""
    if texts_seen is not None and results.answered != texts_seen:
        st.rerun(scope="app")
    judged = answer_shown(revealed, private)
    if right_answer and answer_shown(revealed):  # her private view has it in its notes
        st.caption(right_answer)
    columns = st.columns(3)
    columns[0].metric(tr("class_teacher.answered"), results.answered)
    if results.correct is not None:  # the lesson accepts answers: a share right, as for every kind, after the Reveal
        share = f"{results.correct / results.answered:.0%}" if judged and results.answered else "–"
        columns[1].metric(tr("class_teacher.correct"), share, help=None if judged else tr("class_teacher.after_reveal"))
    if private:
        groups = teacher.text_groups(qid)
        columns[2].metric(tr("class_teacher.text_waiting"), sum(g.state == WAITING for g in groups))
        if groups:
            _bars(groups, judged, "text_all_groups")
        else:
            st.caption(tr("class_teacher.waiting"))
        return
    if not answer_shown(revealed):
        st.caption(tr("class_teacher.text_hidden_room"))
        return
    approved = class_store().approved_texts(teacher.code, qid)  # the room's one read: approved, revealed
    columns[2].metric(tr("class_teacher.text_approved"), len(approved))
    st.markdown(f"**{tr('class_teacher.text_room_title')}**")
    if not approved:
        st.caption(tr("class_teacher.text_room_none"))
        return
    _bars(approved, judged, "text_approved_groups")
    st.markdown(markdown_table([{tr("class_teacher.text_col_text"): g.shown,
                                 tr("class_teacher.text_col_students"): g.students} for g in approved]))


def top_approved(code: str, qid: str) -> str | None:
    """The approved text most students gave (the earlier questions' table), None before the Reveal or approval."""
    approved = class_store().approved_texts(code, qid)
    return approved[0].shown if approved else None


def _widget(group: TextGroup) -> str:
    return hashlib.sha256(group.key.encode("utf-8")).hexdigest()[:16]  # a key of safe characters for any text


def moderation_list(teacher: ClassTeacher, qid: str) -> None:
    """Her private view's list: every group with its count and state, Approve and Hide each, and the bulk approval
    of every waiting group no word list flags. Drawn at the page's full run (the controls stay put)."""
    groups = teacher.text_groups(qid)
    waiting = [g for g in groups if g.state == WAITING]
    st.markdown(f"**{tr('class_teacher.text_list_title')}**")
    bulk = sum(not g.flags for g in waiting)
    st.button(tr("class_teacher.text_approve_all", count=bulk), key="text_approve_all", disabled=not bulk,
              help=tr("class_teacher.text_approve_all_help"), icon=":material/done_all:", on_click=teacher_action,
              args=(teacher.approve_texts, qid))
    listed = sorted(groups, key=lambda g: (g.state != WAITING, not g.flags, -g.students, g.key))[:LISTED_GROUPS]
    for group in listed:
        digest = _widget(group)
        with st.container(border=True, key=f"text_group_{digest}"):
            words, approve, hide = st.columns([3, 1, 1], vertical_alignment="center")  # room for "Approve"
            words.markdown(f"**{isolated_markdown(group.shown)}** · {group.students} · "
                           f"{tr(f'class_teacher.text_state_{group.state}')}")
            if group.flags:
                words.caption(tr("class_teacher.text_flagged", languages=", ".join(group.flags)))
            if len(group.spellings) > 1:
                words.caption(tr("class_teacher.text_spellings",
                                 spellings=" | ".join(isolated_markdown(s) for s in group.spellings[1:6])))
            approve.button(tr("class_teacher.text_approve"), key=f"text_approve_{digest}",
                           disabled=group.state == APPROVED, on_click=teacher_action,
                           args=(teacher.approve_texts, qid, [group.key]))
            hide.button(tr("class_teacher.text_hide"), key=f"text_hide_{digest}", disabled=group.state == HIDDEN,
                        on_click=teacher_action, args=(teacher.hide_texts, qid, [group.key]))
    if len(groups) > len(listed):
        st.caption(tr("class_teacher.text_more", count=len(groups) - len(listed)))

"""The teacher's (projected) screen for a peer-instruction question: round 1 alone with its distribution hidden from
the room until she shows it, the rule of thumb on round 1's share right (Crouch & Mazur 2001), a discussion with her
countdown, round 2, then both rounds side by side, the share right before and after and the switch matrix.
Before Reveal nothing on the projected screen gives the answer away (neutral bars, no share right, no rule of thumb on
it): the answer, the rule of thumb, the shares and the matrix are in her private view (ui/live_class/private_view.py), by
the one rule of ui/lessons/questions.answer_shown."""
from __future__ import annotations

import pandas as pd
import streamlit as st

from classroom.lessons import Stop
from classroom.peer import rule_of_thumb
from classroom.records import QuestionPhase, Results, Switches
from classroom.teacher import ClassTeacher
from i18n import tr
from ui.lessons.questions import Expected, answer_shown, stop_answer_label
from ui.live_class.peer_groups import group_controls
from ui.live_class.peer_student import check_id, countdown
from ui.live_class.refusals import teacher_action
from ui.session import WidgetKey
from viz.class_report import two_rounds_chart
from viz.classroom import answer_chart, readable

DEFAULT_DISCUSSION_SECONDS = 120
MODES = ("one", "peer")


def _mode_widget(qid: str) -> WidgetKey:
    return WidgetKey(f"peer_mode_{qid}")  # one round or peer instruction


def _shown_widget(qid: str) -> WidgetKey:
    return WidgetKey(f"peer_shown_{qid}")  # round 1's answers shown to the class during round 2


def _seconds_widget(qid: str) -> WidgetKey:
    return WidgetKey(f"peer_seconds_{qid}")  # the discussion's countdown


def mode_picker(teacher: ClassTeacher, qid: str, phase: QuestionPhase) -> None:
    """One round or peer instruction, chosen while round 1 is open (the lesson's `peer` gives the default)."""
    labels = {"one": tr("peer.mode_one"), "peer": tr("peer.mode_peer")}
    st.segmented_control(tr("peer.mode"), MODES, default=phase.mode, format_func=labels.get, key=_mode_widget(qid).key,
                         disabled=phase.phase != "round1", on_change=_set_mode, args=(teacher, qid))


def _set_mode(teacher: ClassTeacher, qid: str) -> None:
    mode = _mode_widget(qid).get()
    if mode in MODES:  # a second click on the chosen segment deselects it: keep the mode then
        teacher_action(teacher.set_phase, qid, mode, "round1")


def share(results: Results) -> float | None:
    return results.correct / results.answered if results.answered and results.correct is not None else None


def answer_rows(stop: Stop, results: Results, revealed: bool) -> pd.DataFrame:
    """One row per answer given: its label, how many gave it, and (once revealed) the judgement stored with it, the
    same one "% right" counts (Results.right). Numbers in numeric order (8, 12, 16), not as text."""
    answers = sorted(results.counts, key=_numeric_first)
    return pd.DataFrame({
        "answer": [stop_answer_label(stop, a) for a in answers],
        "students": [results.counts[a] for a in answers],
        "right": [results.right.get(a) if revealed else None for a in answers]})


def _numeric_first(answer: str) -> tuple:
    try:
        return (0, float(answer), answer)
    except ValueError:
        return (1, 0.0, answer)


def _chart(stop: Stop, results: Results, revealed: bool, key: str) -> None:
    if results.answered:
        chart = answer_chart(answer_rows(stop, results, revealed), tr("class_teacher.chart_students"),
                             tr("class_teacher.chart_right"), tr("class_teacher.chart_wrong"))
        st.altair_chart(readable(chart), key=key)
    else:
        st.caption(tr("class_teacher.waiting"))


def rule_line(results: Results) -> str | None:
    """The rule of thumb for round 1's result, in words ('42% right alone: … discuss'), or None (nothing graded)."""
    value = share(results)
    if value is None:
        return None
    return tr(f"peer.rule_{rule_of_thumb(value)}", share=f"{value:.0%}")


def switch_table(switches: Switches) -> pd.DataFrame:
    """The switch matrix as a 2×2 table of counts: rows round 1 (right, wrong), columns round 2 (right, wrong)."""
    right, wrong = tr("peer.switch_right"), tr("peer.switch_wrong")
    return pd.DataFrame({f"{tr('peer.switch_to')}: {right}": [switches.right_right, switches.wrong_right],
                         f"{tr('peer.switch_to')}: {wrong}": [switches.right_wrong, switches.wrong_wrong]},
                        index=[f"{tr('peer.switch_from')}: {right}", f"{tr('peer.switch_from')}: {wrong}"])


def _shares_and_switches(first: Results, second: Results, switches: Switches) -> None:
    before, after = share(first), share(second)
    left, right = st.columns(2)
    left.metric(tr("peer.before"), "–" if before is None else f"{before:.0%}")
    right.metric(tr("peer.after"), "–" if after is None else f"{after:.0%}",
                 delta=None if before is None or after is None else f"{(after - before) * 100:+.0f} pp")
    st.markdown(f"**{tr('peer.switch_title')}**")
    st.table(switch_table(switches))


def peer_results(teacher: ClassTeacher, stop: Stop, qid: str, phase: QuestionPhase, expected: Expected | None,
                 revealed: bool, right_answer: str | None, private: bool = False) -> None:
    """The read-outs of a peer-instruction question on the teacher's screen (the live fragment's part); her controls
    are peer_controls, drawn outside that fragment."""
    first, second = teacher.results(qid, round=1), teacher.results(qid, round=2)
    switches = teacher.switches(qid)
    if not revealed and private:  # what only her private view shows: round 1's rule of thumb, the shares, the matrix
        with st.container(border=True):
            if rule := rule_line(first):  # a share right: with round 1's bars it would point at the right one
                st.markdown(rule)
                st.caption(tr("peer.rule_source"))
            if phase.phase == "round2":
                _shares_and_switches(first, second, switches)
    elif right_answer and answer_shown(revealed):
        st.caption(right_answer)
    if phase.phase == "round1" and not revealed:
        st.metric(tr("class_teacher.answered"), first.answered)
        if phase.shown:
            _chart(stop, first, False, "peer_round1")
        else:
            st.caption(tr("peer.round_one_hidden", answered=first.answered))
        return
    if phase.phase == "discussion" and not revealed:  # the room reads it: in groups, each screen names whom to seek
        st.info(tr("peer.discussion_in_groups" if phase.group_size else "peer.discussion"), icon=":material/forum:")
        if phase.discussion_ends is not None:
            countdown(phase.discussion_ends)
        return
    # Round 2 (or revealed): both rounds side by side, per answer; right/wrong said only after the reveal.
    left, right = st.columns(2)
    left.metric(f"{tr('peer.round_one')}: {tr('class_teacher.answered')}", first.answered)
    right.metric(f"{tr('peer.round_two')}: {tr('class_teacher.answered')}", second.answered)
    if first.answered or second.answered:
        rows = pd.concat([answer_rows(stop, results, revealed).assign(round=name) for results, name in
                          ((first, tr("peer.round_one")), (second, tr("peer.round_two")))], ignore_index=True)
        chart = two_rounds_chart(rows, tr("class_teacher.chart_students"), tr("class_teacher.chart_right"),
                                 tr("class_teacher.chart_wrong"))
        st.altair_chart(readable(chart), key="peer_two_rounds")
    else:
        st.caption(tr("class_teacher.waiting"))
    if answer_shown(revealed):
        _shares_and_switches(first, second, switches)


def peer_controls(teacher: ClassTeacher, qid: str, phase: QuestionPhase, revealed: bool) -> None:
    """The teacher's controls of a peer-instruction question, for its phase: show round 1 and start the discussion,
    open round 2, reveal. Drawn at the page's full run, never inside the self-refreshing read-outs (a click there
    could be lost to their rerun)."""
    if revealed:
        st.success(tr("class_teacher.revealed"))
    elif phase.phase == "round1":
        st.toggle(tr("peer.show_round_one"), value=phase.shown, key=_shown_widget(qid).key,
                  help=tr("peer.show_round_one_help"), on_change=_set_shown, args=(teacher, qid, phase))
        st.number_input(tr("peer.discussion_seconds"), min_value=10, max_value=1800,
                        value=DEFAULT_DISCUSSION_SECONDS, step=10, key=_seconds_widget(qid).key)
        st.button(tr("peer.start_discussion"), key="peer_discuss", type="primary",
                  on_click=_start_discussion, args=(teacher, qid, phase.shown))
    elif phase.phase == "discussion":
        group_controls(teacher, qid, phase, revealed)
        st.button(tr("peer.open_round_two"), key="peer_round2", type="primary",
                  on_click=teacher_action, args=(teacher.set_phase, qid, "peer", "round2"),
                  kwargs={"shown": phase.shown})
    else:
        st.button(tr("class_teacher.reveal"), key="class_reveal", on_click=teacher_action, args=(teacher.reveal, qid))


def _start_discussion(teacher: ClassTeacher, qid: str, shown: bool) -> None:
    """Round 1 closes; the countdown the teacher set (read now: a value typed just before the click counts)."""
    seconds = float(_seconds_widget(qid).get() or DEFAULT_DISCUSSION_SECONDS)
    teacher_action(teacher.set_phase, qid, "peer", "discussion", discussion_seconds=seconds, shown=shown)


def _set_shown(teacher: ClassTeacher, qid: str, phase: QuestionPhase) -> None:
    teacher_action(teacher.set_phase, qid, "peer", phase.phase, shown=bool(_shown_widget(qid).get()))


def check_count(teacher: ClassTeacher, stop: Stop) -> None:
    """At the first or last stop: how many check answers arrived (the class report compares them)."""
    ids = {check_id(teacher.lesson, check) for check in stop.checks}
    rows = [row for row in teacher.answer_rows() if row.question in ids and not row.late]
    st.caption(tr("peer.checks_answered", answered=len(rows), students=len({row.student for row in rows})))

"""The teacher's table of the class's earlier questions (under the stop's own results): per question before this
stop, how many answered, the share right once revealed, and the most common answer (a text question's: the approved
text most students gave, as the room may read it)."""
from __future__ import annotations

import pandas as pd
import streamlit as st

from classroom.lessons import Lesson, localized, question_id
from classroom.teacher import ClassTeacher
from i18n import current_language, tr
from ui.lessons.questions import stop_answer_label
from ui.live_class.text_moderation import top_approved


def earlier_questions(teacher: ClassTeacher, lesson: Lesson, number: int, revealed: frozenset[str]) -> None:
    """Every question of the stops before this one: how many answered, the share right (once revealed), the most
    common answer."""
    rows = []
    language = current_language()
    for stop in lesson.stops[: number - 1]:
        if stop.question is None:
            continue
        qid = question_id(lesson.id, stop)
        results = teacher.results(qid)
        if not results.answered:
            continue
        top = (top_approved(teacher.code, qid) if stop.question.kind == "text"  # the room reads approved texts only
               else None if stop.question.kind == "view"  # a student's view reaches the room only when she projects it
               else stop_answer_label(stop, max(results.counts, key=results.counts.get)))
        rows.append({tr("class_teacher.table_stop"): stop.number,
                     tr("class_teacher.table_question"): localized(stop.question.prompt, language),
                     tr("class_teacher.answered"): results.answered,
                     tr("class_teacher.correct"): None if results.correct is None
                     or qid not in revealed else f"{results.correct / results.answered:.0%}",
                     tr("class_teacher.table_top"): top})
    if rows:
        with st.expander(tr("class_teacher.earlier", count=len(rows))):
            st.dataframe(pd.DataFrame(rows), hide_index=True)  # cells are plain text

"""What of the page this run draws waits for a question's time (classroom/answers_ahead.py decides; this asks it with
this session's lesson, answers and classes, and says so where a whole page waits). Set by the lesson bar on every
run (ui/lesson_bar/bar.lesson_bar) before the page draws."""
from __future__ import annotations

import streamlit as st

from classroom.answers_ahead import WHOLE_PAGE, held_back
from classroom.lessons import OWN_WORK_KINDS, Lesson
from i18n import tr
from ui.lessons.catalogue import known_pages, lessons
from ui.live_class.classroom import running_lesson, teacher_class
from ui.live_class.homework import paced_class
from ui.seat import class_store
from ui.session import lab_session


def held_back_here(page: str, lesson: Lesson | None, number: int | None) -> dict[str | None, int]:
    """The sections of `page` (or the whole page: WHOLE_PAGE) that answer a question before its time, for this
    session (classroom/answers_ahead.py): her lesson's later stops; the stop of her class and of every live class on
    this server, and the stops after it (`number`: the open stop of `lesson`). The teacher's own screens hold
    nothing back (her private view shows it all)."""
    all_lessons = lessons()[0]
    if not any(stop.page == page and stop.question is not None and stop.question.kind not in OWN_WORK_KINDS
               for one in all_lessons.values() for stop in one.stops) and all(
            one.version in (None, 1) for one in all_lessons.values()):
        # no question is asked about this page (a text question's answer is on none), and no teacher's saved lesson
        # has an earlier version a class may still run on (one saved again): no read of the store
        return {}
    position, seat = lab_session().lesson, lab_session().seat
    # each class on the lesson it runs on: a teacher's saved lesson at the version the class started on
    running = [] if teacher_class() else [
        (running_lesson(live.lesson, live.source, all_lessons, known_pages())[0], live.stop, live.revealed)
        for live in class_store().live_positions() if live.lesson in all_lessons]
    classes = [(one, stop, revealed) for one, stop, revealed in running
               if one is not None and 1 <= stop <= len(one.stops)]
    seen = seat.seen if seat.code else None
    # her class as she last followed it (the same class, read once); in a self-paced class she is a student alone
    # (her answers open her stops: ui/live_class/homework.py), and her class holds nothing back for anyone
    if seen is not None and seen.lesson in all_lessons and paced_class() is None:
        classes.append((all_lessons[seen.lesson], seen.stop, seen.revealed))
    return held_back(page, lesson, number, position.answers, classes)


def page_not_held(held: dict[str | None, int]) -> bool:
    """False, with the reason, where the class's stop is on this page and not revealed yet (its whole page answers
    it): the page opens at the stop, by the bar's link, or here after the teacher's Reveal."""
    if WHOLE_PAGE not in held:
        return True
    st.info(tr("lessons.page_held", stop=held[WHOLE_PAGE]), icon=":material/hourglass_top:")
    return False

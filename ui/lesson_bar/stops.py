"""Opening a lesson stop: its place in the lesson, the class's stop when the teacher moves it, the stop's view (one
resolution for every path: ui.view.resolve_view) and the page it asks for. ui/lesson_bar/bar.py calls it from Next,
Previous, a link, Back and Forward and the class's move; a student in a class never opens a stop after the class's."""
from __future__ import annotations

import re
from collections.abc import Mapping, MutableMapping

from classroom.lessons import Lesson, Stop
from i18n import tr
from ui.live_class.classroom import teacher_class
from ui.live_class.homework import next_stop, own_stop
from ui.seat import class_store
from ui.live_class.refusals import teacher_action
from ui.page_sections import open_stop_section
from ui.session import lab_session
from ui.share import open_view
from ui.state import DEFAULT_MODEL
from ui.view import Source


def go_to(lesson: Lesson, number: int, move_class: bool = True, link: Mapping[str, str] | None = None,
          source: Source = Source.STOP) -> None:
    """Open stop `number` of the lesson: apply its view state and ask for its page.

    Runs before any widget of the run is drawn (in lesson_bar, or as a button's callback); lesson_bar then
    switches to the stop's page. link: the address this run opened (a shared link, a reload, Back or Forward).
    source: what opened it (ui.view.Source): the stop's own controls, a link, or the teacher's move.
    """
    if move_class:  # her Next in a self-paced class moves her own seat first (the store says whether it may)
        next_stop(lesson, number)
    number = max(1, min(number, len(lesson.stops), furthest_stop(lesson) or number))
    stop = lesson.stops[number - 1]
    position = lab_session().lesson
    position.lesson_id, position.stop = lesson.id, number
    lab_session().address.extra = url_extra()
    teacher = teacher_class()
    if move_class and teacher and teacher.lesson == lesson.id and not getattr(teacher.session(), "self_paced", False):
        teacher_action(teacher.move, number)  # the teacher's Next moves the class (homework has no class stop)
    if stop.problem:
        position.problem = stop.problem
        return
    bad = open_stop_view(lesson, stop, link, source=source)
    open_stop_section(stop.page, stop.section)
    # A lesson file's value that does not fit is its author's to fix: the teacher's screen says so (she opened the
    # stop); a student the teacher moved there sees the stop without it (ui.view: only a link says what did not fit).
    shown = bad and source is not Source.TEACHER
    position.problem = tr("lessons.stale_state", names=", ".join(bad)) if shown else None
    position.switch_to = stop.page


def open_stop_view(lesson: Lesson, stop: Stop, link: Mapping[str, str] | None = None,
                   state: MutableMapping | None = None, source: Source = Source.STOP) -> list[str]:
    """The stop's view, the same whether it is reached by Next, Previous, its link, the teacher's move or Back: the
    values the stop names, then (when `link` is the address of this very stop) the link's own, then the model's
    defaults for the rest (ui.share.open_view); -> the stop's names that do not fit.

    A stop is written for a model: the default one unless it names another (a teacher who had picked the real
    encoder before opening the lesson still gets the translation model the stop's kinds and heads belong to)."""
    keep = ()
    if link and link.get("lesson") == lesson.id and stop_number(link.get("stop")) == stop.number:
        keep = tuple(link)  # read into the state already (ui.share.restore_from_url): a head the link names stands
    return open_view(stop.page, {"model": DEFAULT_MODEL, **stop.state}, keep, state, source)


def furthest_stop(lesson: Lesson) -> int | None:
    """A student in a class on this lesson may look back, not ahead: the class's stop (asked now, not what the poll
    last saw), or in a self-paced class her own, the last one she may open; None for anyone else (outside a class,
    the teacher, another lesson)."""
    code = lab_session().seat.code
    if not code:
        return None
    if (own := own_stop(lesson)) is not None:
        return own
    session = class_store().session(code)
    return session.stop if session is not None and session.lesson == lesson.id else None


def url_extra() -> dict[str, str]:
    extra = {}
    position, seat = lab_session().lesson, lab_session().seat
    if position.lesson_id:
        extra = {"lesson": position.lesson_id, "stop": str(position.stop)}
    code = seat.code or seat.waiting_for  # a waiting join's reload asks again
    if code:
        extra["class"] = code
    return extra


def leave() -> None:
    session = lab_session()
    session.lesson.lesson_id = session.lesson.stop = session.lesson.problem = None
    session.seat.code = session.seat.seen = session.seat.waiting_for = None
    session.address.extra = {}


def stop_number(text: str | None) -> int:
    """A link's ?stop= (ASCII digits only: '²'.isdigit() is true), or 0."""
    return int(text) if text is not None and re.fullmatch(r"[0-9]{1,4}", text) else 0

"""Which parts of a page answer a question before its time (issue 51): a lesson stop is about one section of its page
(`section`), and a page shows all its sections, so the page of one stop answered the stops after it on the same page
(the answer lesson's logit-lens stop drew the patching map, the strongest head and the attribution bars of stops 2-4).

The rule, one pure function, asked by the lesson bar on every run (ui/lesson_bar/bar.py) and obeyed by every page with
sections (ui/page_sections.py):
- a student alone in a lesson, at stop n: the section of each later stop m > n on the same page, whose question she
  has not answered, is held back until she answers it at its stop;
- a live class on this server at stop s: the section of each stop m >= s on that page whose question is not revealed
  is held back on every page of the lab, for her and for any session outside the class (a plain /llm_answer opened
  in a new tab or a private window reads the lesson's own prompts); where the class's stop names no section, its
  whole page is held back off its stop. Her own answers alone open nothing a class has not revealed.
The open stop's own section is never held: its question already hides the page until it is answered or revealed. A
text question (kind = "text") holds nothing back: its answers are the students' own words, which no page shows; nor
does a view question (kind = "view"), whose answer is a view the student sets herself.
-> {section id, or None for the whole page: the number of the stop whose question it answers}."""
from __future__ import annotations

from collections.abc import Collection

from classroom.lessons import OWN_WORK_KINDS, Lesson, question_id

WHOLE_PAGE = None  # the key of a held-back page that has no sections to hold


ClassAt = tuple[Lesson, int, Collection[str]]  # a live class: its lesson, its stop, its revealed questions


def held_back(page: str, lesson: Lesson | None, stop: int | None, answered: Collection[str],
              classes: Collection[ClassAt] = ()) -> dict[str | None, int]:
    """What of `page` waits for a later question: `lesson`/`stop` the lesson open in this browser (if any), `answered`
    her own answers alone; `classes`: her class, and every other live class on this server (a new tab or a private
    window is a session outside her class; solo_question holds a class's stop back the same way)."""
    open_section = None
    if lesson is not None and stop is not None:
        open_stop = lesson.stops[stop - 1]
        open_section = open_stop.section if open_stop.page == page else None
    held: dict[str | None, int] = {}

    def hold(key: str | None, number: int) -> None:
        if key is WHOLE_PAGE or key != open_section:
            held.setdefault(key, number)  # the earliest stop it answers

    for class_lesson, class_stop, revealed in classes:
        on_class_stop = lesson is not None and lesson.id == class_lesson.id and stop == class_stop
        for later in class_lesson.stops[class_stop - 1:]:
            if (later.page != page or later.question is None or later.question.kind in OWN_WORK_KINDS
                    or question_id(class_lesson.id, later) in revealed):
                continue
            if later.section is not None:
                hold(later.section, later.number)
            elif later.number == class_stop and not on_class_stop:
                hold(WHOLE_PAGE, later.number)
    if lesson is not None and stop is not None:
        for later in lesson.stops[stop:]:
            if (later.page == page and later.question is not None and later.section is not None
                    and later.question.kind not in OWN_WORK_KINDS and question_id(lesson.id, later) not in answered):
                hold(later.section, later.number)
    return held

"""The class store's refusals (classroom/errors.py) as the messages a user reads: the one place that maps an error to
its words. A student and the teacher read different words for the same refusal (her class ended, his answer came too
late), and a join says "busy" its own way; everything else is shared.
"""
from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import streamlit as st

from classroom.errors import (AnsweredAlready, ClassElsewhere, ClassEnded, ClassStoreError, NoSuchAnswer, NoSuchClass,
                              NotAdmitted, NotAnsweredYet, NotApproved, NotAView, NotOpenYet, NotReached, NotTheTeacher,
                              OffTheMap, PastDeadline, RoundOneOpen, StoreBusy, TextEmpty, TextTooLong, TooManyTries)
from i18n import tr
from runtime.page_slots import teacher_acts

Messages = Mapping[type[ClassStoreError], str]  # error type -> i18n key (the nearest class in the error's MRO wins)

ANSWER: Messages = {  # a student's answer
    StoreBusy: "lessons.busy",
    ClassElsewhere: "lessons.not_class_stop",  # {stop}: the class's, {here}: the caller's
    NotAdmitted: "lessons.not_admitted",
    NoSuchClass: "lessons.class_ended",
    AnsweredAlready: "lessons.answered_already",
    NotOpenYet: "lessons.round_not_open",
    OffTheMap: "lessons.off_the_map",
    NotTheTeacher: "class_teacher.not_teacher",
    RoundOneOpen: "peer.groups_round_one_open",  # the teacher's (discussion groups), said the same to anyone
    TooManyTries: "lessons.too_many_tries",  # {seconds}
    TextEmpty: "lessons.text_empty",
    TextTooLong: "lessons.text_long",  # {typed_chars}, {typed_bytes}, {chars}, {bytes}
    NotAView: "showcase.not_a_view",  # {reason}
    NotApproved: "showcase.not_approved",  # the teacher's (the projector), said the same to anyone
    NoSuchAnswer: "showcase.no_such_answer",
    PastDeadline: "homework.refused_past_deadline",  # {deadline} (a self-paced class: classroom/self_paced.py)
    NotReached: "homework.refused_not_reached",  # {stop}: hers
    NotAnsweredYet: "homework.refused_not_answered",  # {stop}: hers
}
JOIN: Messages = {**ANSWER, StoreBusy: "lessons.busy_join", NoSuchClass: "lessons.bad_code"}
TEACHER: Messages = {**ANSWER, StoreBusy: "class_teacher.busy", ClassEnded: "class_teacher.expired",
                     NoSuchClass: "class_teacher.no_such_class"}


def message(error: ClassStoreError, messages: Messages = ANSWER, **values: Any) -> str:
    """The words for `error` (its class's code, the class's stop and what the error names filled in, with
    `values`)."""
    key = next(messages[kind] for kind in type(error).__mro__ if kind in messages)
    return tr(key, code=error.code, stop=getattr(error, "stop", ""), **{**error.values(), **values})


@dataclass
class Outcome:
    """What a `said` block ended with: the store's refusal, or None when it went through."""
    refused: ClassStoreError | None = None


@contextlib.contextmanager
def said(messages: Messages = ANSWER, **values: Any) -> Iterator[Outcome]:
    """Run a block of store calls; a refusal is said as a warning on the page (the block stops there, the page goes
    on) and kept in the outcome."""
    outcome = Outcome()
    try:
        yield outcome
    except ClassStoreError as error:
        outcome.refused = error
        st.warning(message(error, messages, **values))


def teacher_action(action: Callable[..., Any], *args: Any, **kwargs: Any) -> None:
    """A teacher's click (a widget's on_click/on_change): the handle's method, its refusal said on the page. Her run
    then goes before the students' runs her change causes in this process (runtime/page_slots.teacher_acts)."""
    teacher_acts()
    with said(TEACHER):
        action(*args, **kwargs)

"""This user's session: the one module of ui/, app_pages/ and app.py that names Streamlit's session state.

Two kinds of per-user state live there, and this module owns both:

- the session object (LabSession, under one key): what this user has that is not a view. The lesson position and
  its answers, a student's class seat, the teacher's class, the training job and the models trained or uploaded, the
  address bookkeeping of ui/share.py, notices waiting for the next run. Typed, one field each, created on first use
  (lab_session()).
- the widgets' values: Streamlit keeps a keyed widget's value in the session state under its key, so that mapping is
  the view's store. Only the specs (ui/widget_spec.py: WidgetSpec.get/set) and the view's resolution (ui/share.py:
  links, lesson stops, keeping values across runs) take the mapping itself (widget_values()); a widget outside links
  reads and writes its value through its WidgetKey. Nothing else reads a widget's key.

tests/test_session_module.py keeps it so: no other module of ui/, app_pages/ or app.py names the session state.
"""
from __future__ import annotations

from collections.abc import Collection, MutableMapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import streamlit as st

if TYPE_CHECKING:
    from classroom.lesson_draft import Draft
    from classroom.lessons import Lesson
    from classroom.recent import Seen
    from classroom.saved_lessons import LessonAuthor
    from model.checkpoint import LoadedModel
    from model.kv_cache import GenerationTrace
    from runtime.training_jobs import TrainingJob

@dataclass(frozen=True)
class OpenLesson:
    """A lesson asked for at a stop, opened at the start of the next run (the sidebar's widgets are drawn by then)."""
    lesson_id: str
    stop: int


@dataclass(frozen=True)
class JoinClass:
    """A class code typed in the sidebar, joined at the start of the next run."""
    code: str


SESSION_KEY = "_lab_session"  # the session object's one key (a leading "_": no widget's, and never a link's)


@dataclass(frozen=True)
class TeacherHandle:
    """The class this session teaches. The token is the teacher's proof to the store; it never leaves this session."""
    code: str
    token: str
    lesson: str  # the lesson id the class runs on


@dataclass
class AddressState:
    """What ui/share.py keeps between runs to mirror the view in the address bar and read Back, Forward and links."""
    restored: bool = False  # the session's first link has been read
    kept: dict[str, Any] = field(default_factory=dict)  # {widget key: value}: the specs' values while not drawn
    written: dict[str, str] | None = None  # the query string write_to_url left in the address bar last run
    written_page: str | None = None  # the page whose address write_to_url wrote last
    link_run: dict[str, str] | None = None  # the query string this full run opened as a link, else None
    link_drawn_by: str | None = None  # the page whose fragment drew the sidebar's link in this full run
    extra: dict[str, str] = field(default_factory=dict)  # {name: text} other parts keep in the address (lesson, stop)
    notice: list[str] = field(default_factory=list)  # a link's names whose values did not fit, said once
    transits: list[tuple[str, dict]] = field(default_factory=list)  # [(page, query)]: entries switch_page left


@dataclass
class LessonState:
    """The open lesson and this user's way through it (ui/lesson_bar/bar.py), and the flags its stop sets each run."""
    lesson_id: str | None = None  # the open lesson, or None
    stop: int | None = None  # its stop, 1-based
    answers: dict[str, str] = field(default_factory=dict)  # {question id: canonical answer} (round 1, solo)
    second_answers: dict[str, str] = field(default_factory=dict)  # {question id: canonical round-2 answer}
    check_answers: dict[str, str] = field(default_factory=dict)  # {check question id: canonical answer}
    problem: str | None = None  # what did not fit when the current stop was opened
    url_read: bool = False  # the session's first address has been read for its lesson and class
    switch_to: str | None = None  # the page go_to asked for
    pending: OpenLesson | JoinClass | None = None  # asked for in the sidebar (or on the Teacher page): next run
    # set by the lesson bar on every run, read by the other rooms (ui/presenter.py, ui/page_sections.py, ui/llm):
    titled_by_lesson: bool = False  # the lesson bar names the view shown (the page's title is left out)
    stop_section: str | None = None  # the section of the page the open stop shows first
    stop_asks: bool = False  # the open stop, on its page, asks its own question (the page asks none of its own)
    # {section of this page, or None for the whole page: the stop whose question it answers}, held back until then
    held_sections: dict[str | None, int] = field(default_factory=dict)


@dataclass
class ClassSeat:
    """A student's side of a live class, and this session's guessing of codes and passwords."""
    code: str | None = None  # the class this student is in
    student_id: str | None = None  # the anonymous id this student answers under
    label: str | None = None  # her seat's short name in the room, 'K4' (classroom/grouping.seat_label)
    seen: Seen | None = None  # the class as her page last followed it (classroom/recent.seen_of)
    waiting_for: str | None = None  # the class whose teacher has been asked to admit this student (it was full)
    guess_limited: bool = False  # this run refused a class code for too many wrong ones
    notice: str | None = None  # what the lesson bar says once on the next run (a bad code, the class ended...)
    session_id: str | None = None  # a random id for this session: its guesses are counted even without a seat


@dataclass
class TeacherState:
    """The teacher's side: her class, the class she ended."""
    handle: TeacherHandle | None = None  # the class this session teaches
    seat_checked: bool = False  # this session has asked the store whether its browser started a class
    ended: TeacherHandle | None = None  # the class this session ended (its report stays readable)
    ended_lesson: Lesson | None = None  # the lesson that class ran on (a saved lesson: its version, not a later one)


@dataclass
class BuilderState:
    """A teacher's own lesson while she builds it (ui/lesson_builder/): her key to save lessons, her draft."""
    author: LessonAuthor | None = None  # signed in to save lessons (classroom/saved_lessons.py); the store checks it
    draft: Draft | None = None  # the lesson being built: kept here until she saves it
    said: tuple[str, str] | None = None  # ("success" | "error", text) of her last add or save, said once
    seat_checked: bool = False  # her browser's kept sign-in looked up (ui/lesson_builder/kept.py): once a session
    kept: str | None = None  # the digest of the draft the store keeps for her browser


@dataclass
class TrainingState:
    """The Train page's job and the models this user trained or uploaded (never shared with other users)."""
    job: TrainingJob | None = None  # this session's training, running or done
    lost: str | None = None  # the model id of a training this tab's address names but this session does not hold
    user_models: dict[str, LoadedModel] = field(default_factory=dict)  # {model id: model} trained or uploaded here
    # {sha256 of an upload's two files: its model id in user_models}, oldest first (ui/train/view.load_upload: the same
    # files load once, and at most MAX_UPLOADED_MODELS uploads are held)
    uploads: dict[str, str] = field(default_factory=dict)
    upload_message: tuple[str, str] | None = None  # ("error" | "success", text) of the last upload, said once


@dataclass
class InputState:
    """The chosen model and sentence's bookkeeping, beside their widgets (the MODEL and SENTENCE specs)."""
    sentence_task: str | None = None  # the task the sentence belongs to (a model of another task gets an example)
    model_error: str | None = None  # why the model chosen last could not be opened
    importance_asked: set[str] = field(default_factory=set)  # models whose head importance this user asked for


@dataclass
class ExplorerState:
    """The attention and LLM pages' own bookkeeping (not in links)."""
    grid_page_for: int | None = None  # the selected layer the all-heads grid's page of layers last followed
    trace: GenerationTrace | None = None  # this session's generation on the LLM page
    kv_revealed: bool = False  # the LLM page's KV-cache question has been answered (its answer is shown)
    # the answer page's patching inputs (clean, corrupted, answer, wrong or None) its Run button was last pressed on:
    # both sweeps are shown while the fields keep them, and run again only by another press (ui/llm/answer.py)
    patching_asked: tuple[str, str, str, str | None] | None = None
    patching_stop: tuple[str | None, int | None] | None = None  # the lesson stop about patching open last run


@dataclass
class LabSession:
    """Everything this user has that is not a view, in one typed object under one session key."""
    address: AddressState = field(default_factory=AddressState)
    lesson: LessonState = field(default_factory=LessonState)
    seat: ClassSeat = field(default_factory=ClassSeat)
    teacher: TeacherState = field(default_factory=TeacherState)
    builder: BuilderState = field(default_factory=BuilderState)
    training: TrainingState = field(default_factory=TrainingState)
    input: InputState = field(default_factory=InputState)
    explorer: ExplorerState = field(default_factory=ExplorerState)


def lab_session() -> LabSession:
    """This user's session object, created on first use."""
    session = st.session_state.get(SESSION_KEY)
    if session is None:
        session = st.session_state[SESSION_KEY] = LabSession()
    return session


def widget_values() -> MutableMapping[str, Any]:
    """The widgets' values by key: for the specs (ui/widget_spec.py) and the view's resolution (ui/share.py,
    ui/view.py) only; a page asks a spec (its value, its choices, whether it is drawn), never this mapping."""
    return st.session_state


def set_option_values_again(skipped: Collection[str]) -> None:
    """Set every option widget's value again, to the same value, whichever page drew it: a selectbox or multiselect
    keeps, in the browser, the label it showed for its value, and Streamlit sends a new label only when the value is
    set through the session state (after a language switch). Option values are strings or lists of plain values;
    `skipped` (free text, the language itself) and private keys are left as they are."""
    values = st.session_state
    for key, value in list(values.items()):
        if key in skipped or str(key).startswith("_"):
            continue
        # Lists of plain values only: an upload's list of files cannot be set (Streamlit refuses when drawing it).
        if isinstance(value, str) or (isinstance(value, list) and value and all(
                isinstance(item, (str, int, float, tuple)) for item in value)):
            values[key] = value


@dataclass(frozen=True)
class WidgetKey:
    """A widget that is in no link (a page's own switch, a form field read in its callback): its key, declared once,
    and its value in this session."""
    key: str

    def get(self, default: Any = None) -> Any:
        return st.session_state.get(self.key, default)

    def set(self, value: Any) -> None:
        st.session_state[self.key] = value

    def setdefault(self, value: Any) -> Any:
        return st.session_state.setdefault(self.key, value)

    def is_set(self) -> bool:
        return self.key in st.session_state

    def forget(self) -> None:
        st.session_state.pop(self.key, None)

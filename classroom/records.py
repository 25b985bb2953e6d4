"""The values the class store returns (classroom/store.py, classroom/teacher.py): plain frozen dataclasses, no SQL."""
from __future__ import annotations

from dataclasses import dataclass, field

MODES = ("one", "peer")
PHASES = ("round1", "discussion", "round2")


@dataclass(frozen=True)
class QuestionPhase:
    """Where a question of the class stands: its mode ('one' or 'peer'), its phase ('round1', 'discussion',
    'round2'), when the discussion's countdown ends (unix seconds, None before), whether round 1's distribution is
    shown to the room, and the discussion groups formed by disagreement: their size (2 pairs, 3 threes; 0 none) and
    the seed they were formed with (each grouping a new one, so a student's page sees a new grouping as a change). A
    question with no row is a one-round question in round 1 (as before peer instruction)."""
    question: str
    mode: str = "one"
    phase: str = "round1"
    discussion_ends: float | None = None
    shown: bool = False
    group_size: int = 0
    group_seed: int | None = None

    @property
    def open_round(self) -> int | None:
        """The round a student's answer goes to now: 1, 2, or None during the discussion."""
        return {"round1": 1, "round2": 2}.get(self.phase)


def phase_in(phases: frozenset[QuestionPhase], question: str, default_mode: str = "one") -> QuestionPhase:
    return next((p for p in phases if p.question == question), QuestionPhase(question, default_mode))


@dataclass(frozen=True)
class Switches:
    """Peer instruction's switch matrix: students who answered both rounds (before the reveal), counted by whether
    each answer was right. `right_right` + `wrong_right` + `right_wrong` + `wrong_wrong` = `both`."""
    right_right: int
    wrong_right: int
    right_wrong: int
    wrong_wrong: int

    @property
    def both(self) -> int:
        return self.right_right + self.wrong_right + self.right_wrong + self.wrong_wrong


@dataclass(frozen=True)
class AnswerRow:
    """One stored answer, as the class report reads it (the student is the anonymous id, never a name)."""
    question: str
    student: str
    round: int
    answer: str
    correct: bool | None
    late: bool


@dataclass(frozen=True)
class ReportAnswers:
    """The answers of one class as they were when the teacher asked for her report (ClassStore.report_answers)."""
    rows: list[AnswerRow]
    revealed: frozenset[str]  # questions the teacher had revealed
    ended: bool  # the class had ended (or expired)
    at: float  # unix seconds of the read
    grouped: frozenset[str] = frozenset()  # questions whose discussion had groups formed by disagreement
    approved_texts: tuple[tuple[str, str, str], ...] = ()  # text answers' approved groups: (question, key, text shown)
    projections: tuple[tuple[str, str, float, float | None], ...] = ()  # (question, kind, from, until): no names
    self_paced: bool = False  # a self-paced class: each student read right or wrong as she answered (no Reveal)


@dataclass(frozen=True)
class ClassSession:
    code: str
    lesson: str
    stop: int
    expires: float
    revealed: frozenset[str]
    lesson_source: str | None = None
    uploads: bool = True
    phases: frozenset[QuestionPhase] = frozenset()  # questions the teacher set a mode or phase for
    projected: float | None = None  # when the item on its projector went up (classroom/showcase.py); None: nothing
    deadline: float | None = None  # a self-paced class (classroom/self_paced.py): its deadline, unix seconds

    @property
    def self_paced(self) -> bool:
        """Homework: each seat keeps its own stop, right or wrong is read at once, there is no Reveal."""
        return self.deadline is not None

    def phase_of(self, question: str, default_mode: str = "one") -> QuestionPhase:
        """The question's phase; one the teacher has not touched is in round 1 of `default_mode` (the lesson's)."""
        return phase_in(self.phases, question, default_mode)


@dataclass(frozen=True)
class Seats:
    """Who joined a class, for its teacher: the class size, how many seats are admitted, the waiting joins (student
    id, unix seconds joined; oldest first), the newest joins (student id, joined, admitted; newest first) and how many
    joined in the last minute."""
    size: int
    admitted: int
    waiting: tuple[tuple[str, float], ...]
    recent: tuple[tuple[str, float, bool], ...]
    last_minute: int = 0


@dataclass(frozen=True)
class Results:
    """Answers to one question given before its reveal: {answer: count}, how many students answered, how many were
    right (None if unknown); `late`: how many answered after the reveal (not in the counts, never right)."""
    counts: dict[str, int]
    answered: int
    correct: int | None
    late: int = 0
    # {answer: the judgement stored with it}: True right, False wrong, None not graded (the expected answer was not
    # known when it was given). What the teacher's coloured bars show, so that they and `correct` ("% right") are
    # one judgement, the one made when the answer was stored (ClassStore.answer), never a second one made later.
    right: dict[str, bool | None] = field(default_factory=dict)


"""The class report, pure Python: from the stored answers of one class (classroom/records.AnswerRow) and its lesson,
per question both rounds, the switch matrix, the misconceptions picked and a cell question's taps per cell; per check question the share right before
and after among the students who answered both, and the normalized gain ⟨g⟩ (Hake 1998); the same for the lecture.

Only counted answers enter: late ones (after their round closed or the reveal) and ungraded ones are left out, as on
the teacher's screen. Students are the store's anonymous ids; the report names nobody. The teacher projects her page,
so the report holds nothing of a question the class may still answer (`reportable`): a stop's question once she has
revealed it, the check questions (never revealed: the post-test asks them again) once the class has ended.

The lecture's gain pools every (student, check question) pair answered before and after: pre and post are the shares
right over those pairs, ⟨g⟩ = (post − pre) / (1 − pre), and `students` counts the students with at least one pair.
"""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from classroom.lessons import (CHECK_WHEN, Lesson, Question, Text, check_question_id, misconception_of,
                               question_id)
from classroom.peer import normalized_gain
from classroom.records import AnswerRow, ReportAnswers, Switches


@dataclass(frozen=True)
class RoundStats:
    answered: int
    right: int | None  # None: nothing graded

    @property
    def share(self) -> float | None:
        return None if self.right is None or not self.answered else self.right / self.answered


@dataclass(frozen=True)
class MisconceptionPick:
    question_id: str
    prompt: Text
    answer: str  # the canonical wrong answer that names it
    idea: Text
    when: str  # "round 1", "round 2", "pre", "post" (as stored: 1, 2, pre, post)
    picks: int
    answered: int

    @property
    def rate(self) -> float:
        return self.picks / self.answered if self.answered else 0.0


@dataclass(frozen=True)
class CellTaps:
    """A cell question's taps on one cell in one round (the cell as stored: 1-based "query,key")."""
    round: int
    cell: str
    taps: int
    right: bool | None  # the judgement stored with it (None: not graded)


@dataclass(frozen=True)
class QuestionReport:
    question_id: str
    stop: int
    prompt: Text
    first: RoundStats
    second: RoundStats | None  # None: one round (no round-2 answer)
    switches: Switches
    taps: tuple[CellTaps, ...] = ()  # a cell question's taps per cell and round, most tapped first


@dataclass(frozen=True)
class CheckGain:
    check_id: str
    prompt: Text
    pre: float | None  # share right before, over the students who answered both
    post: float | None
    students: int  # who answered both (graded)
    gain: float | None  # Hake's ⟨g⟩; None without a pair or when everyone was right before


@dataclass(frozen=True)
class ClassReport:
    questions: list[QuestionReport]
    checks: list[CheckGain]
    lecture: CheckGain  # all check questions pooled (check_id "lecture")
    misconceptions: list[MisconceptionPick]  # most picked first


def is_check_question(question_id: str) -> bool:
    """'intro:pre:scale' (classroom/lessons.check_question_id) is a check question; 'intro:3' a stop's own."""
    parts = question_id.split(":")
    return len(parts) == 3 and parts[1] in CHECK_WHEN


def reportable(read: ReportAnswers) -> list[AnswerRow]:
    """The answers a report may show: those of revealed questions, and the check questions' once the class ended.
    Round-1 shares and misconception picks of a question not yet revealed would name right and wrong options on
    the projector while the class still answers it."""
    return [row for row in read.rows if row.question in read.revealed
            or (read.ended and is_check_question(row.question))]


def _counted(rows: list[AnswerRow]) -> list[AnswerRow]:
    return [row for row in rows if not row.late]


def _stats(rows: list[AnswerRow]) -> RoundStats:
    graded = [row.correct for row in rows if row.correct is not None]
    return RoundStats(len(rows), sum(graded) if graded else None)


def _switches(first: list[AnswerRow], second: list[AnswerRow]) -> Switches:
    before = {row.student: row.correct for row in first if row.correct is not None}
    cells = defaultdict(int)
    for row in second:
        if row.correct is not None and row.student in before:
            cells[(before[row.student], row.correct)] += 1
    return Switches(cells[(True, True)], cells[(False, True)], cells[(True, False)], cells[(False, False)])


def _taps(round: int, rows: list[AnswerRow]) -> list[CellTaps]:
    counts, right = defaultdict(int), {}
    for row in rows:
        counts[row.answer] += 1
        right[row.answer] = row.correct
    return [CellTaps(round, cell, counts[cell], right[cell]) for cell in sorted(counts, key=lambda c: (-counts[c], c))]


def _picks(question: Question, qid: str, when: str, rows: list[AnswerRow]) -> list[MisconceptionPick]:
    counts = defaultdict(int)
    for row in rows:
        key = misconception_of(question, row.answer)
        if key is not None:
            counts[key] += 1
    return [MisconceptionPick(qid, question.prompt, key, idea, when, counts[key], len(rows))
            for key, idea in question.misconceptions.items()] if rows else []


def _gain(check_id: str, prompt: Text, pairs: list[tuple[str, bool, bool]]) -> CheckGain:
    """pairs: (student, right before, right after)."""
    if not pairs:
        return CheckGain(check_id, prompt, None, None, 0, None)
    pre = sum(before for _, before, _ in pairs) / len(pairs)
    post = sum(after for _, _, after in pairs) / len(pairs)
    return CheckGain(check_id, prompt, pre, post, len({student for student, _, _ in pairs}),
                     normalized_gain(pre, post))


def build_report(lesson: Lesson, rows: list[AnswerRow]) -> ClassReport:
    """The report of one class of `lesson` from its answers (ClassTeacher.answer_rows)."""
    by_id: dict[tuple[str, int], list[AnswerRow]] = defaultdict(list)
    for row in _counted(rows):
        by_id[(row.question, row.round)].append(row)
    questions, picks = [], []
    for stop in lesson.stops:
        if stop.question is None:
            continue
        qid = question_id(lesson.id, stop)
        first, second = by_id.get((qid, 1), []), by_id.get((qid, 2), [])
        if not first and not second:
            continue
        taps = tuple(_taps(1, first) + _taps(2, second)) if stop.question.kind == "cell" else ()
        questions.append(QuestionReport(qid, stop.number, stop.question.prompt, _stats(first),
                                        _stats(second) if second else None, _switches(first, second), taps))
        picks += _picks(stop.question, qid, "1", first) + _picks(stop.question, qid, "2", second)
    checks, pooled = [], []
    first_checks = {c.id: c for c in lesson.stops[0].checks if c.when == "pre"} if lesson.stops else {}
    last_checks = {c.id: c for c in lesson.stops[-1].checks if c.when == "post"} if lesson.stops else {}
    for check_id, pre_check in first_checks.items():
        pre_id, post_id = (check_question_id(lesson.id, when, check_id) for when in ("pre", "post"))
        pre_rows, post_rows = by_id.get((pre_id, 1), []), by_id.get((post_id, 1), [])
        picks += _picks(pre_check.question, pre_id, "pre", pre_rows)
        if check_id in last_checks:
            picks += _picks(last_checks[check_id].question, post_id, "post", post_rows)
        before = {row.student: row.correct for row in pre_rows if row.correct is not None}
        pairs = [(row.student, before[row.student], row.correct) for row in post_rows
                 if row.correct is not None and row.student in before]
        checks.append(_gain(check_id, pre_check.question.prompt, pairs))
        pooled += pairs
    lecture = _gain("lecture", {"en": "lecture"}, pooled)
    picks.sort(key=lambda p: (-p.rate, p.question_id, p.when))
    return ClassReport(questions, checks, lecture, [p for p in picks if p.picks])

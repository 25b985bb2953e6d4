"""The class report, pure Python: from the stored answers of one class (classroom/records.AnswerRow) and its lesson,
per question both rounds, the switch matrix, the misconceptions picked and a cell question's taps per cell; per check question the share right before
and after among the students who answered both, and the normalized gain ⟨g⟩ (Hake 1998); the same for the lecture.

Only counted answers enter: late ones (after their round closed or the reveal) and ungraded ones are left out, as on
the teacher's screen. Students are the store's anonymous ids; the report names nobody. The teacher projects her page,
so the report holds nothing of a question the class may still answer (`reportable`): a stop's question once she has
revealed it, the check questions (never revealed: the post-test asks them again) once the class has ended.

A text question (kind = "text") reports its answers, its share right where the lesson accepts answers, and the
groups of texts the teacher approved with how many students gave each (classroom/text_answers.py): never a text she
did not approve, which may be abuse she kept off the projector. What she projected (classroom/showcase.py) is
listed by its kind and time: never which answer it was, nor whose.

The lecture's gain pools every (student, check question) pair answered before and after: pre and post are the shares
right over those pairs, ⟨g⟩ = (post − pre) / (1 − pre), and `students` counts the students with at least one pair.
The same pooling, over the (student, question) pairs answered in both rounds of peer instruction, compares the
discussions in groups formed by disagreement (classroom/grouping.py) with those among neighbours, where both occur.
"""
from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection
from dataclasses import dataclass, field

from classroom.lessons import (CHECK_WHEN, Lesson, Question, Text, check_question_id, misconception_of,
                               question_id)
from classroom.peer import normalized_gain
from classroom.records import AnswerRow, ReportAnswers, Switches
from classroom.text_answers import APPROVED, group_texts


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
    grouped: bool = False  # its discussion had groups formed by disagreement
    texts: tuple[tuple[str, int], ...] = ()  # a text question's approved groups: (text shown, students), most first
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
class DiscussionGain:
    """Round 1 to round 2, pooled over the peer-instruction questions discussed in groups formed by disagreement
    (`grouped`) or not: how many questions, the shares right before and after over the (student, question) pairs
    graded in both rounds, how many pairs, Hake's ⟨g⟩ (None without a pair or when every pair was right before)."""
    grouped: bool
    questions: int
    pre: float | None
    post: float | None
    pairs: int
    gain: float | None


@dataclass(frozen=True)
class Projection:
    """One item the teacher projected (classroom/showcase.py): its question and stop, its kind, from when and for how
    long (None: still up). Which answer it was, and whose, is not in the report."""
    question_id: str
    stop: int | None
    prompt: Text
    kind: str
    at: float
    seconds: float | None


@dataclass(frozen=True)
class ClassReport:
    questions: list[QuestionReport]
    checks: list[CheckGain]
    lecture: CheckGain  # all check questions pooled (check_id "lecture")
    misconceptions: list[MisconceptionPick]  # most picked first
    discussions: list[DiscussionGain] = field(default_factory=list)  # in groups, then among neighbours: as occurred
    projected: list[Projection] = field(default_factory=list)  # what went on the projector, oldest first


def is_check_question(question_id: str) -> bool:
    """'intro:pre:scale' (classroom/lessons.check_question_id) is a check question; 'intro:3' a stop's own."""
    parts = question_id.split(":")
    return len(parts) == 3 and parts[1] in CHECK_WHEN


def reportable(read: ReportAnswers) -> list[AnswerRow]:
    """The answers a report may show: those of revealed questions, and the check questions' once the class ended.
    Round-1 shares and misconception picks of a question not yet revealed would name right and wrong options on
    the projector while the class still answers it. A self-paced class has no Reveal: each student read right or
    wrong as she answered, and its report is on the teacher's own screen, so every answer is in it."""
    return [row for row in read.rows if read.self_paced or row.question in read.revealed
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


def discussion_gains(questions: list[QuestionReport]) -> list[DiscussionGain]:
    """The questions answered in two rounds, pooled by whether their discussion was in groups: grouped first, each
    kind that occurred."""
    gains = []
    for grouped in (True, False):
        these = [q for q in questions if q.second is not None and q.grouped == grouped]
        if not these:
            continue
        cells = [q.switches for q in these]
        pairs = sum(c.both for c in cells)
        pre = sum(c.right_right + c.right_wrong for c in cells) / pairs if pairs else None
        post = sum(c.right_right + c.wrong_right for c in cells) / pairs if pairs else None
        gains.append(DiscussionGain(grouped, len(these), pre, post, pairs,
                                    None if pre is None else normalized_gain(pre, post)))
    return gains


def _approved(rows: list[AnswerRow], approved: dict[str, tuple[str, str]]) -> tuple[tuple[str, int], ...]:
    groups = group_texts([(row.answer, row.correct) for row in rows], approved)
    return tuple((g.shown, g.students) for g in groups if g.state == APPROVED)


def build_report(lesson: Lesson, rows: list[AnswerRow], *, grouped: Collection[str] = frozenset(),
                 approved_texts: tuple[tuple[str, str, str], ...] = (),
                 projections: tuple[tuple[str, str, float, float | None], ...] = ()) -> ClassReport:
    """The report of one class of `lesson` from its answers (ClassTeacher.answer_rows); `grouped`: the questions
    whose discussion had groups formed by disagreement (ReportAnswers.grouped); `approved_texts`: the text groups
    its teacher approved (ReportAnswers.approved_texts: question, key, text shown); `projections`: what she projected
    (ReportAnswers.projections: question, kind, from, until)."""
    decided: dict[str, dict[str, tuple[str, str]]] = defaultdict(dict)
    for question, key, shown in approved_texts:
        decided[question][key] = (APPROVED, shown)
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
        texts = _approved(first, decided[qid]) if stop.question.kind == "text" else ()
        taps = tuple(_taps(1, first) + _taps(2, second)) if stop.question.kind == "cell" else ()
        questions.append(QuestionReport(qid, stop.number, stop.question.prompt, _stats(first),
                                        _stats(second) if second else None, _switches(first, second),
                                        qid in grouped, texts, taps))
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
    stops = {question_id(lesson.id, stop): stop for stop in lesson.stops}
    projected = [Projection(qid, stops[qid].number if qid in stops else None,
                            stops[qid].question.prompt if qid in stops and stops[qid].question else {"en": qid}, kind,
                            at, None if until is None else until - at) for qid, kind, at, until in projections]
    return ClassReport(questions, checks, lecture, [p for p in picks if p.picks], discussion_gains(questions),
                       projected)

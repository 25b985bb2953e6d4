"""Peers paired by disagreement, pure Python: the discussion groups of a peer-instruction question and the short seat
labels students find each other by.

After round 1, a discussion needs students who answered differently (Crouch & Mazur 2001: each tries to convince
the other), and a group with a right answer in it has someone to argue for it (Learning Catalytics forms "groups of
three, with at least one correct answer in each"). `form_groups` makes such groups from the round-1 votes: every
voter in exactly one group of `size` (a leftover joins a group: size + 1), members with different answers in as many
groups as the answers allow, a right answer in as many groups as there are right answers to go round, and the same
groups for the same votes and seed. The store (classroom/teacher.ClassTeacher.group) feeds it the counted votes and
keeps what it returns; classroom/partners.py reads a student's group back.

How: the votes are sorted into blocks of one answer each, the most common answer's block first and the right answers'
blocks next to each other, then dealt round the groups like cards (position p to group p mod g). A block of g or fewer
gives each group at most one member; a longer most common block holds every group's first member; either way a group
of one answer can only be of the most common answer. The last g positions are each a different group's last member,
so min(g, voters outside that block) groups get someone else: as many as any grouping can (each group of two answers
holds one of them). The right answers lie in one run of positions: they reach min(g, right answers) groups, every
group when there are as many as groups.
"""
from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

SIZES = (2, 3)  # pairs, or groups of three
# Letters and digits nobody reads as another when they are spoken or shown across a room: no I/1, O/0, B/8, S/5,
# Z/2, G/6, Q, D, U/V.
LABEL_LETTERS = "ACEFHJKLMNPRTWXY"
LABEL_DIGITS = "23456789"


def seat_label(number: int) -> str:
    """The short name of a class's `number`-th seat (0-based, in the order they joined): 'A2', 'C2', ..., 'Y9', then
    three characters ('A22', ...) past the first 128, and so on. Different numbers give different labels."""
    if number < 0:
        raise ValueError(f"seat number {number!r}")
    letter, rest = LABEL_LETTERS[number % len(LABEL_LETTERS)], number // len(LABEL_LETTERS)
    digits, tier = 1, len(LABEL_DIGITS)  # labels of `digits` digits: len(LABEL_LETTERS) * tier of them
    while rest >= tier:
        rest -= tier
        digits, tier = digits + 1, tier * len(LABEL_DIGITS)
    shown = ""
    for _ in range(digits):
        rest, digit = divmod(rest, len(LABEL_DIGITS))
        shown = LABEL_DIGITS[digit] + shown
    return letter + shown


@dataclass(frozen=True)
class Vote:
    """A student's counted round-1 answer: `right` is False also where it was not graded."""
    student: str
    answer: str
    right: bool


def group_count(voters: int, size: int) -> int:
    """How many groups `voters` students make in groups of `size`, each of `size` or `size` + 1 (fewer voters than
    that: one group of them all; five in threes: a three and a pair, never one group of five)."""
    if size not in SIZES:
        raise ValueError(f"group size {size!r}")
    if voters < 2:
        return 0
    groups = voters // size
    if groups == 0 or voters - groups * size > groups:  # leftovers beyond one per group: one group more
        groups += 1
    return groups


def form_groups(votes: Sequence[Vote], size: int = 2, seed: int = 0) -> tuple[tuple[str, ...], ...]:
    """Round 1's votes -> the discussion groups (student ids), formed by disagreement (see the module). One voter, or
    none: no group. The result depends on the votes and the seed only (not on their order)."""
    if len({vote.student for vote in votes}) != len(votes):
        raise ValueError("one vote per student")
    count = group_count(len(votes), size)
    if not count:
        return ()
    rng = random.Random(seed)
    blocks: dict[str, list[Vote]] = defaultdict(list)
    for vote in sorted(votes, key=lambda v: v.student):
        blocks[vote.answer].append(vote)
    order = sorted(blocks)
    rng.shuffle(order)  # among answers given as often, which comes first is the seed's
    largest = max(order, key=lambda answer: len(blocks[answer]))
    rest = [answer for answer in order if answer != largest]
    right = [answer for answer in rest if any(vote.right for vote in blocks[answer])]
    dealt: list[Vote] = []
    for answer in [largest, *right, *(answer for answer in rest if answer not in right)]:
        block = blocks[answer]
        rng.shuffle(block)
        dealt += block
    groups: list[list[str]] = [[] for _ in range(count)]
    for position, vote in enumerate(dealt):
        groups[position % count].append(vote.student)
    rng.shuffle(groups)
    return tuple(tuple(group) for group in groups)


@dataclass(frozen=True)
class GroupingSummary:
    """A question's discussion groups as the teacher reads them: the group size asked for (2 or 3), how many groups,
    how many have a right answer in them, how many students voted in round 1 and how many of them were right."""
    size: int
    groups: int
    with_right: int
    voters: int
    right: int

    @property
    def enough_right(self) -> bool:
        """Whether there were right answers enough for one in each group."""
        return self.right >= self.groups


def summarise(size: int, groups: Sequence[Sequence[str]], votes: Sequence[Vote]) -> GroupingSummary:
    """The teacher's summary of `groups`, formed from `votes`."""
    right = {vote.student for vote in votes if vote.right}
    return GroupingSummary(size, len(groups), sum(1 for group in groups if right.intersection(group)), len(votes),
                           len(right))

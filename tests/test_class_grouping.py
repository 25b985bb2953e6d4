"""Discussion groups formed by disagreement (classroom/grouping.py), on any votes hypothesis draws: every voter in
exactly one group, groups of the size asked (a leftover makes one a size larger), students with different answers
together in as many groups as any grouping could manage, a right answer in as many groups as there are right answers
to go round, and the same groups for the same votes and seed. Seat labels are short, readable and each a class's own."""
import random
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from classroom.grouping import (LABEL_DIGITS, LABEL_LETTERS, Vote, form_groups, group_count, seat_label,
                                summarise)

ANSWERS = "12345"


@st.composite
def class_votes(draw):
    """Up to 40 round-1 votes over up to five answers, some of the answers right (none, one, or two: a number
    question with a tolerance takes several answers as right)."""
    answers = ANSWERS[:draw(st.integers(1, len(ANSWERS)))]
    right = set(draw(st.lists(st.sampled_from(answers), max_size=2)))
    given_answers = draw(st.lists(st.sampled_from(answers), max_size=40))
    return [Vote(f"s{i:02d}", answer, answer in right) for i, answer in enumerate(given_answers)]


def _expected_sizes(voters: int, size: int) -> set[int]:
    """The group sizes allowed: `size` or one more; too few voters for that (2 in threes, 5 in threes: a three and a
    pair, never a five) make smaller groups."""
    if size == 3 and voters in (2, 5):
        return {2, 3}
    return {size, size + 1}


@settings(max_examples=300, deadline=None)
@given(votes=class_votes(), size=st.sampled_from([2, 3]), seed=st.integers(0, 2 ** 31 - 1))
def test_groups_hold_every_voter_once_disagree_where_they_can_and_spread_the_right_answers(votes, size, seed):
    groups = form_groups(votes, size, seed)
    n = len(votes)
    if n < 2:
        assert groups == ()
        return
    members = [student for group in groups for student in group]
    assert sorted(members) == sorted(v.student for v in votes)  # every voter in exactly one group
    assert len(groups) == group_count(n, size)
    assert {len(group) for group in groups} <= _expected_sizes(n, size)
    answer = {v.student: v.answer for v in votes}
    right = {v.student for v in votes if v.right}
    count = len(groups)
    # A group of two answers needs someone outside the most common answer: no grouping has more such groups than
    # there are of them (or than groups). This one has as many, so every group disagrees whenever the answers allow.
    most = max(Counter(answer.values()).values())
    disagreeing = sum(1 for group in groups if len({answer[s] for s in group}) > 1)
    assert disagreeing == min(count, n - most)
    # A right answer in each group when there are enough; else each right answer in a group of its own
    with_right = sum(1 for group in groups if right.intersection(group))
    assert with_right == min(count, len(right))
    assert summarise(size, groups, votes).with_right == with_right
    # The same for the same votes and seed, in whatever order they come
    shuffled = list(votes)
    random.Random(seed).shuffle(shuffled)
    assert form_groups(shuffled, size, seed) == groups


def test_a_class_with_too_few_right_answers_spreads_them_and_says_so():
    votes = [Vote(f"s{i}", "2" if i < 2 else "1", i < 2) for i in range(12)]  # 2 right, 10 wrong: 6 pairs
    groups = form_groups(votes, 2, seed=3)
    summary = summarise(2, groups, votes)
    assert (summary.groups, summary.right, summary.with_right, summary.enough_right) == (6, 2, 2, False)
    assert summarise(2, form_groups(votes[:4], 2, 3), votes[:4]).enough_right  # 2 pairs, 2 right: one each
    assert form_groups(votes, 2, seed=3) == groups and form_groups(votes, 2, seed=4) != groups  # the seed decides


def test_group_sizes_and_refusals():
    assert [group_count(n, 2) for n in range(7)] == [0, 0, 1, 1, 2, 2, 3]  # 3: a pair and its leftover
    assert [group_count(n, 3) for n in range(9)] == [0, 0, 1, 1, 1, 2, 2, 2, 2]
    with pytest.raises(ValueError):
        form_groups([Vote("a", "1", True), Vote("b", "2", False)], size=4)
    with pytest.raises(ValueError):  # one vote per student
        form_groups([Vote("a", "1", True), Vote("a", "2", False)])


def test_seat_labels_are_short_readable_and_never_repeat():
    labels = [seat_label(number) for number in range(4000)]  # past the largest class size, waiting joins included
    assert labels[:3] == ["A2", "C2", "E2"] and len(set(labels)) == len(labels)
    assert all(len(label) == 2 for label in labels[:len(LABEL_LETTERS) * len(LABEL_DIGITS)])
    assert max(map(len, labels)) == 4
    readable = set(LABEL_LETTERS + LABEL_DIGITS)
    assert all(set(label) <= readable for label in labels)
    assert not readable & set("01IOBSZGQDUV")  # nothing read as another character across a room

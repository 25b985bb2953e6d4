"""What a student of a live class reads of the discussion groups (classroom/grouping.py): her seat's short label, the
name she goes by in the room, and the labels of the others in her group for a question, never their answers. The
teacher forms the groups and turns them off through her handle (classroom/teacher.ClassTeacher.group). Both reads are
by the class's code and her own id: another class's seats and groups are not in them."""
from __future__ import annotations

from classroom.teacher import HandleStore


def seat_label_of(store: HandleStore, code: str, student: str) -> str | None:
    """The label of this student's seat in class `code` ('K4'), None when she has no seat there."""
    with store.connect() as db:
        row = db.execute("SELECT label FROM seats WHERE code = ? AND student = ?", (code, student)).fetchone()
    return None if row is None else row[0]


def partners(store: HandleStore, code: str, student: str, question: str) -> tuple[str, ...]:
    """The labels of the others in this student's discussion group for `question`, in label order; empty when she is
    in no group (she did not vote in round 1, or the question has no groups): she joins any group."""
    with store.connect() as db:
        rows = db.execute(
            "SELECT seats.label FROM discussion_groups mine JOIN discussion_groups other ON other.code = mine.code "
            "AND other.question = mine.question AND other.grp = mine.grp AND other.student <> mine.student "
            "JOIN seats ON seats.code = other.code AND seats.student = other.student "
            "WHERE mine.code = ? AND mine.question = ? AND mine.student = ? ORDER BY seats.label",
            (code, question, student)).fetchall()
    return tuple(label for (label,) in rows if label)

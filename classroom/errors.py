"""What the class store says when it says no: one small hierarchy, raised by the store (classroom/store.py and its
teacher handle, classroom/teacher.py) and turned into messages in one place (ui/live_class/refusals.py).

Every one of them means nothing was written. A caller's slip (an answer with round 3, a question asked at another stop
than the one given, a class size out of range) is a ValueError instead: a bug, never something a user did.
"""
from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError


class ClassStoreError(Exception):
    """The store refused: nothing was written. `code`: the class it was about ('' when none)."""

    def __init__(self, code: str = "", detail: str = ""):
        super().__init__(detail or f"{type(self).__name__}: {code}")
        self.code = code

    def values(self) -> dict[str, object]:
        """What its message names besides the class's code (ui/live_class/refusals.message)."""
        return {}


class StoreBusy(ClassStoreError):
    """The database stayed locked (or out of reach) longer than the wait: the write did not happen (retry)."""

    def __init__(self, detail: str):
        super().__init__("", detail)


class NoSuchClass(ClassStoreError):
    """No live class has this code (never made, or deleted with its answers at the keep time)."""


class ClassEnded(NoSuchClass):
    """The class has ended (the teacher ended it, or it expired): no live class has this code any more."""


class NotTheTeacher(ClassStoreError):
    """The token is none of the class's teacher keys: no teacher operation."""


class NotAdmitted(ClassStoreError):
    """An answer from a student the class has not admitted (never joined, or waiting for the teacher)."""


class ClassElsewhere(ClassStoreError):
    """An answer to a stop the class is not on (ahead of it, or one it has left). `stop`: the stop the class is on."""

    def __init__(self, code: str, stop: int):
        super().__init__(code, f"the class is on stop {stop}")
        self.stop = stop


class AnsweredAlready(ClassStoreError):
    """This student has answered this question in this round: the first answer counts."""


class NotOpenYet(ClassStoreError):
    """A round-2 answer before the teacher opened round 2."""


class RoundOneOpen(ClassStoreError):
    """Discussion groups asked for while round 1 is open (or the question is not in peer instruction): groups are
    formed from round 1's votes once it has closed."""


class TooManyTries(ClassStoreError):
    """A seat sent more texts to its class than the store takes in a while (a flood of resubmits). `seconds`: how
    long until it may send again."""

    def __init__(self, code: str, seconds: int):
        super().__init__(code, f"wait {seconds} s")
        self.seconds = seconds

    def values(self) -> dict[str, object]:
        return {"seconds": self.seconds}


class TextEmpty(ClassStoreError):
    """A text answer with nothing to show (blank, or only invisible characters)."""


class TextTooLong(ClassStoreError):
    """A text answer over the limits: refused whole, never cut. `chars`, `bytes`: the text's; `limits`: the store's
    (classroom/text_answers.TEXT_CHARS, TEXT_BYTES)."""

    def __init__(self, code: str, chars: int, size: int, limits: tuple[int, int]):
        super().__init__(code, f"{chars} characters, {size} bytes")
        self.chars, self.bytes, self.limits = chars, size, limits

    def values(self) -> dict[str, object]:
        return {"typed_chars": self.chars, "typed_bytes": self.bytes, "chars": self.limits[0],
                "bytes": self.limits[1]}


class OffTheMap(ClassStoreError):
    """An answer the question does not take: a tap outside its map (or off the row it names), a forged cell."""


class NotApproved(ClassStoreError):
    """A text picked for the projector that the teacher has not approved (waiting) or has hidden: never projected."""


class NoSuchAnswer(ClassStoreError):
    """A cell or a view picked for the projector that no student of this class gave to this question (another
    class's answer, or a forged one)."""


class NotAView(ClassStoreError):
    """A view's link that is not a view of this app (classroom/showcase.view_link): too long, another site, a page it
    does not have or a parameter its page does not know. `reason`: which ('length', 'page', 'parameter', ...)."""

    def __init__(self, code: str, reason: str = "link"):
        super().__init__(code, f"not a view of this app: {reason}")
        self.reason = reason

    def values(self) -> dict[str, object]:
        return {"reason": self.reason}


class NotAnAuthor(ClassStoreError):
    """A lesson saved without a teacher's sign-in (no key, a wrong one, or one that has expired): nothing saved."""


class LessonRefused(ClassStoreError):
    """A teacher's lesson that the lesson validator (classroom/lessons.parse_lesson) or the builder's bounds refuse.
    `stop`: the 1-based stop (None: the lesson's own title or its list of stops); `field`: the field that does not
    fit ('title', 'text', 'page', 'section', 'state', 'question', 'claim', 'check', 'stop'); `reason`: the
    validator's words."""

    def __init__(self, stop: int | None, field: str, reason: str):
        super().__init__("", f"stop {stop}, {field}: {reason}" if stop else f"{field}: {reason}")
        self.stop, self.field, self.reason = stop, field, reason

    def values(self) -> dict[str, object]:
        return {"stop": self.stop or "", "field": self.field, "reason": self.reason}


class TooManyLessons(ClassStoreError):
    """The server keeps its most teachers' lessons already (classroom/saved_lessons.MAX_SAVED_LESSONS): a new one is
    refused (a new version of one kept is not)."""

    def __init__(self, limit: int):
        super().__init__("", f"at most {limit} lessons")
        self.limit = limit

    def values(self) -> dict[str, object]:
        return {"limit": self.limit}


class PastDeadline(ClassStoreError):
    """A self-paced class's deadline has passed (the server's clock): no answer, no move to another stop.
    `deadline`: unix seconds."""

    def __init__(self, code: str, deadline: float = 0.0):
        super().__init__(code, f"the deadline passed at {deadline}")
        self.deadline = deadline

    def values(self) -> dict[str, object]:
        return {"deadline": utc_minute(self.deadline)}


class NotReached(ClassStoreError):
    """A self-paced class: an answer to a stop past the student's own (or a move past the next one). `stop`: hers."""

    def __init__(self, code: str, stop: int = 1):
        super().__init__(code, f"her stop is {stop}")
        self.stop = stop


class NotAnsweredYet(ClassStoreError):
    """A self-paced class: Next while a question of her stop is not answered (each question is answered once, in
    order). `stop`: hers."""

    def __init__(self, code: str, stop: int = 1):
        super().__init__(code, f"stop {stop} has a question not answered")
        self.stop = stop


def utc_minute(seconds: float, zone: str | None = None) -> str:
    """Unix seconds -> '2026-12-01 18:00 UTC': a deadline as every screen says it (the server's clock, in UTC); with
    the reader's time zone (an IANA name, her browser's), that time first: '2026-12-02 03:00 Asia/Seoul (2026-12-01
    18:00 UTC)'. A zone unknown to this machine, or UTC itself, gives UTC alone."""
    utc = datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%d %H:%M UTC")
    try:
        local = datetime.fromtimestamp(seconds, ZoneInfo(zone)) if zone else None
    except (ValueError, ZoneInfoNotFoundError):  # a name the browser sent that tzdata lacks, or not a name at all
        local = None
    if local is None or local.utcoffset() == timedelta(0) and zone in ("UTC", "Etc/UTC", "GMT", "Etc/GMT"):
        return utc
    return f"{local.strftime('%Y-%m-%d %H:%M')} {zone} ({utc})"

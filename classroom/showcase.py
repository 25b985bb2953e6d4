"""Anonymous student work on the projector (issue 55, part 4), pure Python and SQL (no Streamlit): the teacher picks
one answer of her class's stop (an approved text, a tapped cell, or the link of a view a student sent to an "explain
with a view" question) and projects it without a name or seat label; one click takes it down.

The projected item lives in the store (table projected, one row per class: every replica and reload shows the same),
and only her handle sets or clears it (classroom/teacher.ClassTeacher.project, take_down: her token is checked first).
The store decides what may be projected, never the page that asks:
- a text only while its group is approved (table text_moderation): a hidden or waiting text is refused (NotApproved),
  hiding a projected text takes it down, and the room's read drops a text no longer approved;
- a cell or a view only when it is an answer a student of this class gave to this question (NoSuchAnswer: another
  class's answer, or one never given);
- only for the question of the stop the class is on (ClassElsewhere); moving the class leaves it behind (the read
  shows an item of the class's stop only).
What the room reads (`projected`) carries the kind, the answer and when it went up: never a student, seat or label.
Every projection is logged (table projections: question, kind, from and until) for the class report.

A view's link is validated here, server-side, before it is stored as an answer and again when projected: a page of
this app and only the link parameters that page knows, each value and the whole link bounded in length, kept as a
relative link ("attention?layer=2&head=4&v=2"): a host, a scheme, a path of folders, a fragment or another page's
parameter is refused (NotAView), so a projected link can only ever open a view of this app.
"""
from __future__ import annotations

import re
import time
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit

from classroom.database import Database
from classroom.errors import ClassElsewhere, NoSuchAnswer, NotAView, NotApproved
from classroom.text_answers import APPROVED, text_key

KINDS = ("text", "cell", "view")  # what may be projected: an approved text, a tapped cell, a view's link
VIEW_LINK_CHARS = 1000  # a view's link as stored (a sentence or a prompt in it: a few hundred characters)
VIEW_VALUE_CHARS = 600  # one parameter's value in it
VIEW_PARAMETERS = 20  # parameters in one link (a page has about a dozen)
SHARED_ONLY = ("lang", "presenter", "training")  # the reader's own (language, presenter mode) or her tab's: dropped
_PAGE = re.compile(r"[a-z][a-z0-9_]{0,40}")
_CELL = re.compile(r"[1-9]\d{0,4},[1-9]\d{0,4}")  # a cell answer: 1-based "query,key" (classroom/measures/cells.py)

Views = Mapping[str, Collection[str]]  # page (its url path) -> the link parameters it knows (ui/lessons/view_question)


def view_link(link: str, views: Views) -> str:
    """A view's link, relative as "Link to this view" makes it on the server (ui/lessons/view_question.current_link), ->
    its canonical form: the page and the parameters it knows, in the order sent, without the reader's language and
    presenter mode. Raises NotAView for anything else: too long, a scheme or a host (any address elsewhere, even one
    that names a page of ours), a page this app does not have, a path, a parameter its page does not know or twice,
    a value with a control character, a fragment."""
    if not isinstance(link, str) or not link or len(link) > VIEW_LINK_CHARS:
        raise NotAView("", "length")
    parts = urlsplit(link.strip())
    if parts.fragment:
        raise NotAView("", "fragment")
    if parts.scheme or parts.netloc or link.lstrip().startswith(("/", "\\")):  # a host: never a URL elsewhere
        raise NotAView("", "elsewhere")
    page = parts.path
    if not _PAGE.fullmatch(page) or page not in views:  # the page alone: no folders, no '..'
        raise NotAView("", "page")
    try:
        pairs = parse_qsl(parts.query, keep_blank_values=True, max_num_fields=VIEW_PARAMETERS)
    except ValueError:  # more parameters than any page has
        raise NotAView("", "parameter") from None
    names = [name for name, _ in pairs]
    if len(set(names)) != len(names):
        raise NotAView("", "repeated")
    known = views[page]
    kept = []
    for name, value in pairs:
        if name not in known:
            raise NotAView("", "parameter")
        if len(value) > VIEW_VALUE_CHARS or any(not ch.isprintable() for ch in value):  # a bidi control, a newline
            raise NotAView("", "value")
        if name not in SHARED_ONLY:
            kept.append((name, value))
    canonical = f"{page}?{urlencode(kept)}" if kept else page
    if len(canonical) > VIEW_LINK_CHARS:
        raise NotAView("", "length")
    return canonical


def view_parts(link: str) -> tuple[str, list[tuple[str, str]]]:
    """A canonical view link -> (its page, its parameters in order)."""
    page, _, query = link.partition("?")
    return page, parse_qsl(query, keep_blank_values=True)


@dataclass(frozen=True)
class Projected:
    """What the room reads of the projected item: the question and stop it answers, its kind (KINDS), the answer as
    the room shows it (a text as she approved it, a cell's "query,key", a view's canonical link) and when it went up.
    Nobody's name, seat or label: the store keeps none with it."""
    question: str
    stop: int
    kind: str
    shown: str
    at: float


def _class_stop(db: Database, code: str) -> tuple[str, int]:
    lesson, stop = db.execute("SELECT lesson, stop FROM classes WHERE code = ?", (code,)).fetchone()
    return lesson, stop


def project(db: Database, code: str, question: str, kind: str, item: str, now: float,
            views: Views | None = None) -> None:
    """Put `item` (a text's group key, a cell "query,key", a view's link) of `question` on the class's projector in
    place of any other; the caller (ClassTeacher.project) has checked the teacher's token, in this transaction.
    `views`: the app's pages and their parameters (a view is checked against them again). An item is of its kind's
    shape, whatever kind the question is: a student's text passed off as a cell or a view is refused, and a text the
    teacher hid is refused under any kind."""
    if kind not in KINDS:
        raise ValueError(f"kind {kind!r}")
    lesson, stop = _class_stop(db, code)
    if question != f"{lesson}:{stop}":  # a stop's own question is "<lesson>:<stop>" (classroom/lessons.question_id)
        raise ClassElsewhere(code, stop)
    moderated = db.execute("SELECT state FROM text_moderation WHERE code = ? AND question = ? AND text_key = ?",
                           (code, question, item if kind == "text" else text_key(item))).fetchone()
    if kind == "text" and (moderated is None or moderated[0] != APPROVED):
        raise NotApproved(code)
    if kind != "text":
        if moderated is not None and moderated[0] != APPROVED:
            raise NotApproved(code)
        if kind == "cell" and not _CELL.fullmatch(item):
            raise NoSuchAnswer(code)
        if kind == "view" and (views is None or view_link(item, views) != item):
            raise NotAView(code, "link")
        if db.execute("SELECT 1 FROM answers WHERE code = ? AND question = ? AND answer = ? LIMIT 1",
                      (code, question, item)).fetchone() is None:
            raise NoSuchAnswer(code)
    take_down(db, code, now)
    db.execute("INSERT INTO projected (code, question, stop, kind, item, at) VALUES (?, ?, ?, ?, ?, ?)",
               (code, question, stop, kind, item, now))
    db.execute("INSERT INTO projections (code, question, kind, shown_at) VALUES (?, ?, ?, ?)",
               (code, question, kind, now))


def take_down(db: Database, code: str, now: float, question: str | None = None, item: str | None = None) -> int:
    """Take the projected item down (`question` and `item`: only when it is that one, a text just hidden) -> 1 when
    one was up, else 0; its log row gets its end."""
    row = db.execute("SELECT question, item, at FROM projected WHERE code = ?", (code,)).fetchone()
    if row is None or (question is not None and (row[0], row[1]) != (question, item)):
        return 0
    db.execute("DELETE FROM projected WHERE code = ?", (code,))
    db.execute("UPDATE projections SET ended_at = ? WHERE code = ? AND shown_at = ? AND ended_at IS NULL",
               (now, code, row[2]))
    return 1


def read_projected(db: Database, code: str) -> Projected | None:
    """The item on the class's projector now: of the class's stop, a text only while still approved, with the text
    she approved."""
    row = db.execute(
        "SELECT p.question, p.stop, p.kind, CASE WHEN p.kind = 'text' THEN m.shown ELSE p.item END, p.at "
        "FROM projected p JOIN classes c ON c.code = p.code AND c.stop = p.stop "
        "LEFT JOIN text_moderation m ON m.code = p.code AND m.question = p.question AND m.text_key = p.item "
        "WHERE p.code = ? AND (p.kind <> 'text' OR m.state = ?)", (code, APPROVED)).fetchone()
    return None if row is None else Projected(*row)


def projection_log(db: Database, code: str) -> tuple[tuple[str, str, float, float | None], ...]:
    """Every projection of the class, oldest first: (question, kind, from, until; None while it is up)."""
    return tuple(tuple(row) for row in db.execute(
        "SELECT question, kind, shown_at, ended_at FROM projections WHERE code = ? ORDER BY shown_at", (code,)))


class Showcase:
    """The store's side (mixed into classroom/store.ClassStore): a student sends her view, the room reads the
    projected item."""

    def answer_view(self: Any, code: str, student: str, question: str, link: str, views: Views,
                    now: float | None = None, *, stop: int) -> str:
        """Store a student's view (an "explain with a view" question) -> its canonical link as stored; NotAView for a
        link that is not a view of this app (view_link), else ClassStore.answer's rules and refusals."""
        canonical = view_link(link, views)
        self.answer(code, student, question, canonical, None, now, stop=stop)
        return canonical

    def projected(self: Any, code: str) -> Projected | None:
        """The item the teacher projects in class `code` now (None: nothing, or the class is not live)."""
        now = time.time()
        with self.connect() as db:
            if db.execute("SELECT 1 FROM classes WHERE code = ? AND expires > ?", (code, now)).fetchone() is None:
                return None
            return read_projected(db, code)

"""A teacher's own lessons (issue 57): kept in the class database, so every replica of serve.py reads them (a
folder would be one replica's), each save a new version; who may save, and what a saved lesson may hold.

- Who: a teacher signed in, by the teacher password (classroom/teacher_password.py) or by the handle of the live class
  she teaches (ClassTeacher: she typed the password to start it). Signing in stores the sha256 of a random key (table
  lesson_authors, AUTHOR_HOURS); her session keeps the key (a LessonAuthor), and every save checks it here, in the
  store: a student's session has none, and a forged one is refused (NotAnAuthor), whatever the page shows.
- What: the same TOML the shipped lessons use, read by the same validator (classroom/lessons.parse_lesson). A stop the
  validator keeps with a problem is refused here, naming the stop and the field (LessonRefused), and so are a file it
  cannot read, fields no lesson has, and anything past the bounds: MAX_STOPS stops, MAX_TEXT_CHARS characters per text
  and language, MAX_TITLE_CHARS per title, prompt and option, MAX_SOURCE_BYTES in all, MAX_SAVED_LESSONS lessons per
  server. A lesson is data: the validator takes only the app's pages, their sections and parameters as text, and the
  measures of classroom/measures; nothing in it is run or opened.
- Versions: each save adds version n + 1 (table saved_lessons), the last MAX_VERSIONS kept. A class records the text
  of the version it started on (classes.lesson_source), so a later save never changes a class that is running
  (ui/live_class/classroom.class_lesson reads that text for a saved lesson). A saved lesson's id is never a lesson
  file's: a file's id is refused at save, and the catalogue lists the file where both exist.
"""
from __future__ import annotations

import hmac
import re
import secrets
import time
import tomllib
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field

from classroom.database import Database
from classroom.errors import LessonRefused, NotAnAuthor, TooManyLessons
from classroom.lesson_toml import write_toml
from classroom.lessons import Lesson, LessonFileError, localized, lessons_folder, parse_lesson
from classroom.store import ClassStore
from classroom.teacher import ClassTeacher, token_hash
from classroom.teacher_password import is_teacher_password

MAX_STOPS = 30
MAX_TEXT_CHARS = 2000  # a stop's text, per language
MAX_TITLE_CHARS = 200  # a lesson's or a stop's title, a question's prompt, an option, per language
MAX_STATE_CHARS = 600  # a state value (as a view's link: classroom/showcase.view_link)
MAX_SOURCE_BYTES = 100_000  # the whole TOML (the shipped 18-stop lesson is 28 kB)
MAX_SAVED_LESSONS = 50  # per server (every replica's database)
MAX_VERSIONS = 20  # kept per lesson (a class keeps its own copy of the version it runs on)
AUTHOR_HOURS = 12
PREVIEW_LESSON = "draft-preview"  # the id the builder previews a draft under (ui/lessons/catalogue); never saved
LESSON_FIELDS = ("title", "stop")
STOP_FIELDS = ("page", "title", "text", "section", "state", "question", "claim", "check")  # the validator's order
_LESSON_ID = re.compile(r"[a-z0-9][a-z0-9-]{0,39}")
# A Markdown image makes every student's browser fetch its address: a lesson loads nothing from elsewhere (the app
# sends no request off the server, docs/classroom.md), so a saved lesson's texts hold none.
_IMAGE = re.compile(r"!\[[^\]]*\]\s*[\(\[]")
_LOCK = "SELECT pg_advisory_xact_lock(hashtext('attention_lab.saved_lessons'))"


@dataclass(frozen=True)
class LessonAuthor:
    """A teacher signed in to save lessons: her key, kept in her session only (its sha256 in the store)."""
    token: str = field(repr=False)


@dataclass(frozen=True)
class SavedLesson:
    id: str
    version: int
    source: str  # its TOML
    saved: float  # unix seconds


def shipped_ids(folder=None) -> frozenset[str]:
    """The ids of the lesson files (a saved lesson never takes one)."""
    return frozenset(path.stem for path in (folder or lessons_folder()).glob("*.toml"))


def _problem_field(raw: Mapping, known_pages: Mapping[str, Collection[str]]) -> str:
    """The field of a stop that the validator keeps a problem for: the stop read alone with its fields added one at a
    time, in the validator's order; the first that brings a problem is it. A problem only the whole lesson shows (a
    question another stop gives away, a post check without its pre) is its question's or its check's."""
    partial: dict = {}
    for name in STOP_FIELDS:
        if name not in raw:
            continue
        partial[name] = raw[name]
        alone = parse_lesson("field", write_toml({"title": "field", "stop": [partial]}), known_pages)
        if alone.stops[0].problem:
            return name
    return "question" if "question" in raw else "check" if "check" in raw else "stop"


def _too_long(text: Mapping[str, str] | None, limit: int) -> bool:
    return any(len(value) > limit for value in (text or {}).values())


def _images(*texts: Mapping[str, str] | None) -> bool:
    return any(_IMAGE.search(value) for text in texts for value in (text or {}).values())


def _bounds(lesson: Lesson) -> None:
    """The builder's bounds on a lesson the validator read: LessonRefused naming the first stop and field past one
    (or holding an image)."""
    if len(lesson.stops) > MAX_STOPS:
        raise LessonRefused(None, "stop", f"at most {MAX_STOPS} stops ({len(lesson.stops)} given)")
    if _too_long(lesson.title, MAX_TITLE_CHARS):
        raise LessonRefused(None, "title", f"at most {MAX_TITLE_CHARS} characters")
    for stop in lesson.stops:
        if _too_long(stop.title, MAX_TITLE_CHARS):
            raise LessonRefused(stop.number, "title", f"at most {MAX_TITLE_CHARS} characters")
        if _too_long(stop.text, MAX_TEXT_CHARS):
            raise LessonRefused(stop.number, "text", f"at most {MAX_TEXT_CHARS} characters per language")
        for name, text in (("title", stop.title), ("text", stop.text)):
            if _images(text):
                raise LessonRefused(stop.number, name, "no images: a lesson loads nothing from elsewhere")
        if any(len(name) > 40 or len(value) > MAX_STATE_CHARS for name, value in stop.state.items()):
            raise LessonRefused(stop.number, "state", f"a value of at most {MAX_STATE_CHARS} characters")
        questions = [stop.question] if stop.question else []
        for question in questions + [check.question for check in stop.checks]:
            options = [{"": option} for texts in question.options.values() for option in texts]
            field = "question" if question in questions else "check"
            if _too_long(question.prompt, MAX_TITLE_CHARS) or any(_too_long(o, MAX_TITLE_CHARS) for o in options):
                raise LessonRefused(stop.number, field, f"a prompt or option of at most {MAX_TITLE_CHARS} characters")
            if _images(question.prompt, *options):
                raise LessonRefused(stop.number, field, "no images: a lesson loads nothing from elsewhere")


def checked_lesson(lesson_id: str, source: str, known_pages: Mapping[str, Collection[str]]) -> Lesson:
    """The lesson a teacher saves, read by the lessons' validator and held to the builder's bounds; LessonRefused
    (stop, field, reason) for the first thing that does not fit."""
    if len(source.encode("utf-8")) > MAX_SOURCE_BYTES:
        raise LessonRefused(None, "stop", f"at most {MAX_SOURCE_BYTES // 1000} kB of TOML")
    try:
        lesson = parse_lesson(lesson_id, source, known_pages)
    except LessonFileError as error:
        raise LessonRefused(None, "title" if "title" in error.reason else "stop", error.reason) from None
    if not any(text.strip() for text in lesson.title.values()):
        raise LessonRefused(None, "title", "a lesson needs a title")
    raw = tomllib.loads(source)  # it read above
    unknown = sorted(set(raw) - set(LESSON_FIELDS))
    if unknown:
        raise LessonRefused(None, unknown[0], "not a field of a lesson")
    for stop, raw_stop in zip(lesson.stops, raw["stop"]):
        unknown = sorted(set(raw_stop) - set(STOP_FIELDS))
        if unknown:
            raise LessonRefused(stop.number, unknown[0], "not a field of a stop")
        if stop.problem:
            raise LessonRefused(stop.number, _problem_field(raw_stop, known_pages), stop.problem)
    _bounds(lesson)
    return lesson


def new_lesson_id(title: str, taken: Collection[str]) -> str:
    """A new lesson's id from its English title ("My first lesson" -> "my-first-lesson"), one not taken."""
    slug = re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")[:30].strip("-") or "lesson"
    return next(candidate for candidate in (slug, *(f"{slug}-{n}" for n in range(2, 10_000)))
                if candidate not in taken and candidate != PREVIEW_LESSON)


class LessonShelf:
    """A teacher's lessons in one class store (ui/lessons/catalogue.shelf: one per process and store)."""

    def __init__(self, store: ClassStore, shipped: Collection[str] | None = None):
        """`shipped`: the lesson files' ids (default: the lessons folder's, read at each save)."""
        self.store = store
        self.shipped = None if shipped is None else frozenset(shipped)

    def _shipped(self) -> frozenset[str]:
        return shipped_ids() if self.shipped is None else self.shipped

    # ---- who may save
    def sign_in(self, password: str, now: float | None = None, seat: str | None = None) -> LessonAuthor:
        """The teacher password -> her key; NotAnAuthor for any other (the page limits guesses before asking).
        `seat`: her browser's seat cookie, which keeps her signed in there through a reload (author_of_seat)."""
        if not is_teacher_password(password):
            raise NotAnAuthor()
        return self._issue(now, seat)

    def author_of_class(self, teacher: ClassTeacher, now: float | None = None, seat: str | None = None) -> LessonAuthor:
        """The teacher of a live class (her handle, checked) -> her key; the handle's refusal otherwise."""
        teacher.check(now)
        return self._issue(now, seat)

    def author_of_seat(self, seat: str | None, now: float | None = None) -> LessonAuthor | None:
        """A new session in the browser of a teacher signed in there (its seat cookie, never sent to the page) -> a
        key of her own, until her sign-in's end; None for any other browser."""
        now = time.time() if now is None else now
        if not seat:
            return None
        with self.store.connect() as db:
            row = db.execute("SELECT MAX(expires) FROM lesson_authors WHERE seat_sha256 = ? AND expires > ?",
                             (token_hash(seat), now)).fetchone()
        return None if row is None or row[0] is None else self._issue(now, seat, until=row[0])

    def _issue(self, now: float | None, seat: str | None = None, until: float | None = None) -> LessonAuthor:
        now = time.time() if now is None else now
        token = secrets.token_urlsafe(24)
        with self.store.connect() as db:
            db.execute("DELETE FROM lesson_authors WHERE expires <= ?", (now,))
            db.execute("DELETE FROM lesson_drafts WHERE expires <= ?", (now,))
            db.execute("INSERT INTO lesson_authors (token_sha256, expires, seat_sha256) VALUES (?, ?, ?)",
                       (token_hash(token), until or now + AUTHOR_HOURS * 3600, token_hash(seat) if seat else None))
        return LessonAuthor(token)

    # ---- her draft, kept per browser while she is signed in there
    def keep_draft(self, author: LessonAuthor | None, seat: str | None, source: str, lesson_id: str | None = None,
                   version: int | None = None, now: float | None = None) -> bool:
        """Keep her draft for her browser (`seat`) until her sign-in ends -> whether it was kept (no seat, or a
        draft past MAX_SOURCE_BYTES: not kept, and nothing else changes). NotAnAuthor without a teacher's key."""
        now = time.time() if now is None else now
        if not seat or len(source.encode("utf-8")) > MAX_SOURCE_BYTES:
            return False
        with self.store.connect() as db:
            self._check(db, author, now)
            expires = db.execute("SELECT expires FROM lesson_authors WHERE token_sha256 = ?",
                                 (token_hash(author.token),)).fetchone()[0]
            db.execute("DELETE FROM lesson_drafts WHERE seat_sha256 = ?", (token_hash(seat),))
            db.execute("INSERT INTO lesson_drafts (seat_sha256, source, lesson, version, expires) VALUES (?, ?, ?, ?, ?)",
                       (token_hash(seat), source, lesson_id, version, expires))
        return True

    def draft_of_seat(self, seat: str | None, now: float | None = None) -> tuple[str, str | None, int | None] | None:
        """The draft kept for this browser, as (its TOML, the saved lesson it continues, that version), or None."""
        now = time.time() if now is None else now
        if not seat:
            return None
        with self.store.connect() as db:
            row = db.execute("SELECT source, lesson, version FROM lesson_drafts WHERE seat_sha256 = ? AND expires > ?",
                             (token_hash(seat), now)).fetchone()
        return None if row is None else (row[0], row[1], row[2])

    @staticmethod
    def _check(db: Database, author: LessonAuthor | None, now: float) -> None:
        hashed = token_hash(author.token if isinstance(author, LessonAuthor) and author.token else "")
        row = db.execute("SELECT token_sha256 FROM lesson_authors WHERE token_sha256 = ? AND expires > ?",
                         (hashed, now)).fetchone()
        if row is None or not hmac.compare_digest(row[0], hashed):
            raise NotAnAuthor()

    def is_author(self, author: LessonAuthor | None, now: float | None = None) -> bool:
        try:
            with self.store.connect() as db:
                self._check(db, author, time.time() if now is None else now)
        except NotAnAuthor:
            return False
        return True

    # ---- saving
    def save(self, author: LessonAuthor | None, source: str, known_pages: Mapping[str, Collection[str]],
             lesson_id: str | None = None, now: float | None = None) -> SavedLesson:
        """Store `source` as the next version of `lesson_id` (None: a new lesson, its id made from its title) ->
        what was stored. Refused, with nothing written: NotAnAuthor (no teacher's key), LessonRefused (the validator
        or the bounds, naming the stop and field; an id that is a lesson file's), TooManyLessons (a new lesson past
        MAX_SAVED_LESSONS)."""
        now = time.time() if now is None else now
        with self.store.connect() as db:  # who, before what: a student learns nothing of the validator here
            self._check(db, author, now)
        shipped = self._shipped()
        if lesson_id is not None and (lesson_id in shipped or lesson_id == PREVIEW_LESSON
                                      or not _LESSON_ID.fullmatch(lesson_id)):
            raise LessonRefused(None, "id", f"{lesson_id!r} is a lesson file's id or not one a saved lesson may have")
        lesson = checked_lesson(lesson_id or "new", source, known_pages)
        with self.store.connect() as db:
            db.execute("BEGIN IMMEDIATE")
            if db.postgres:
                db.execute(_LOCK)  # one save at a time numbers the versions
            self._check(db, author, now)
            saved = {row[0] for row in db.execute("SELECT DISTINCT lesson FROM saved_lessons")}
            if lesson_id is None or lesson_id not in saved:
                if len(saved) >= MAX_SAVED_LESSONS:
                    raise TooManyLessons(MAX_SAVED_LESSONS)
                lesson_id = lesson_id or new_lesson_id(localized(lesson.title, "en"), saved | shipped)
            version = (db.execute("SELECT MAX(version) FROM saved_lessons WHERE lesson = ?",
                                  (lesson_id,)).fetchone()[0] or 0) + 1
            db.execute("INSERT INTO saved_lessons (lesson, version, source, saved) VALUES (?, ?, ?, ?)",
                       (lesson_id, version, source, now))
            db.execute("DELETE FROM saved_lessons WHERE lesson = ? AND version <= ?", (lesson_id, version - MAX_VERSIONS))
            db.execute("COMMIT")
        return SavedLesson(lesson_id, version, source, now)

    def delete(self, author: LessonAuthor | None, lesson_id: str, now: float | None = None) -> int:
        """Remove every version of saved lesson `lesson_id` -> how many were removed (0: there was none). A class
        already running on it goes on with the text it started on (kept with the class), and so does its report.
        Refused, with nothing removed: NotAnAuthor (no teacher's key), LessonRefused (a lesson file's id)."""
        now = time.time() if now is None else now
        if lesson_id in self._shipped() or lesson_id == PREVIEW_LESSON:
            raise LessonRefused(None, "id", f"{lesson_id!r} is a lesson file's id: only a saved lesson is deleted here")
        with self.store.connect() as db:
            db.execute("BEGIN IMMEDIATE")
            self._check(db, author, now)
            removed = db.execute("DELETE FROM saved_lessons WHERE lesson = ?", (lesson_id,)).rowcount
            db.execute("COMMIT")
        return max(0, removed)

    # ---- reading (anyone: a saved lesson opens for every student, as a lesson file does)
    def versions(self) -> dict[str, int]:
        """{lesson id: its latest version}, by id; a lesson file's id left out (the file is the lesson)."""
        with self.store.connect() as db:
            rows = db.execute("SELECT lesson, MAX(version) FROM saved_lessons GROUP BY lesson ORDER BY lesson").fetchall()
        shipped = self._shipped()
        return {lesson: version for lesson, version in rows if lesson not in shipped}

    def lesson(self, lesson_id: str, version: int | None = None) -> SavedLesson | None:
        """One version of a saved lesson (None: its latest), or None when there is no such version."""
        with self.store.connect() as db:
            if version is None:
                row = db.execute("SELECT version, source, saved FROM saved_lessons WHERE lesson = ? "
                                 "ORDER BY version DESC LIMIT 1", (lesson_id,)).fetchone()
            else:
                row = db.execute("SELECT version, source, saved FROM saved_lessons WHERE lesson = ? AND version = ?",
                                 (lesson_id, version)).fetchone()
        return None if row is None else SavedLesson(lesson_id, row[0], row[1], row[2])

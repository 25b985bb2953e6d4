"""A teacher's own lessons (issue 57, part 1), below the pages: the TOML writer (round-trip through tomllib and
parse_lesson), the draft and the measures it offers, and the saved lessons in the class store (who may save, the
validator's refusals naming stop and field, versions, the bounds) on SQLite and PostgreSQL (`store_location`)."""
import dataclasses
import tomllib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from classroom.errors import LessonRefused, NotAnAuthor, NotTheTeacher, TooManyLessons
from classroom.lesson_draft import Draft, fitting_measures, fixed_question, measure_args, view_stop
from classroom.lesson_toml import write_toml
from classroom.lessons import LESSONS, load_lessons, parse_lesson
from classroom.measures import MEASURES
from classroom import saved_lessons
from classroom.saved_lessons import LessonAuthor, LessonShelf, checked_lesson
from classroom.store import ClassStore
from classroom.teacher_password import PASSWORD_ENV
from ui.lessons.catalogue import known_pages
from ui.lessons.view_question import app_views

T0 = 1_800_000_000.0  # a fixed clock for the sign-in tests

PAGES = known_pages()
SHIPPED = ("intro", "llm", "answer")


def _without_lines(lesson):
    return dataclasses.replace(lesson, stops=[dataclasses.replace(stop, line=None) for stop in lesson.stops])


@pytest.mark.parametrize("name", SHIPPED)
def test_the_writer_round_trips_every_shipped_lesson(name):
    source = (LESSONS / f"{name}.toml").read_text(encoding="utf-8")
    written = write_toml(tomllib.loads(source))
    assert tomllib.loads(written) == tomllib.loads(source)
    assert _without_lines(parse_lesson(name, written, PAGES)) == _without_lines(parse_lesson(name, source, PAGES))
    checked_lesson(f"{name}-copy", Draft.from_source(source).source(), PAGES)  # a teacher may start from it


_keys = st.text(min_size=1, max_size=8)
_scalars = (st.text(max_size=30) | st.integers(-10**6, 10**6) | st.booleans()
            | st.floats(allow_nan=False, allow_infinity=False))
_values = st.recursive(_scalars, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_keys, inner, max_size=3),
                       max_leaves=12)


@settings(max_examples=150, deadline=None)
@given(st.dictionaries(_keys, _values | st.lists(st.dictionaries(_keys, _values, min_size=1, max_size=3), min_size=1,
                                                  max_size=2), max_size=4))
def test_the_writer_round_trips_any_data_of_its_subset(data):
    """Texts with quotes, backslashes, control characters and newlines; nested tables and lists; arrays of tables."""
    assert tomllib.loads(write_toml(data)) == data


def test_a_draft_moves_removes_and_offers_only_the_measures_its_page_reads():
    draft = Draft({"en": "Mine"})
    for page in ("attention", "softmax_scaling", "positional"):
        draft.add(view_stop(page, {}, None, {"en": page}, {"en": "..."}))
    draft.move(2, -1)
    draft.move(0, -1)  # past the top: nothing moves
    assert [s["page"] for s in draft.stops] == ["attention", "positional", "softmax_scaling"]
    draft.remove(1)
    assert [s["page"] for s in draft.stops] == ["attention", "softmax_scaling"]
    steps = fitting_measures(None, app_views()["attention_steps"])
    assert "causal_visible_keys" in steps and "attention_cell" not in steps and "sink_share" not in steps
    assert set(fitting_measures("cell", app_views()["attention"])) == {"attention_cell"}
    assert "lens_commitment_band" in fitting_measures("choice", app_views()["llm_answer"])
    # an argument left blank takes the view's value of its name; a typed one is read as TOML, then checked
    visible = MEASURES["causal_visible_keys"]
    assert measure_args(visible, {"query": ""}, {"query": "3", "tokens": "5"}) == {"query": 3}
    assert measure_args(visible, {"query": "2"}, {"query": "3"}) == {"query": 2}
    with pytest.raises(ValueError, match="args.query"):
        measure_args(visible, {"query": "zero"}, {})


@pytest.fixture()
def shelf(store_location, monkeypatch):
    monkeypatch.setenv(PASSWORD_ENV, "the-teacher")
    store = ClassStore(store_location)
    yield LessonShelf(store, shipped=SHIPPED)
    store.close()


def _lesson(*stops, title="Three views") -> str:
    return Draft({"en": title, "ko": "세 화면"}, list(stops)).source()


GOOD = view_stop("softmax_scaling", {"dk": "64"}, "saturation", {"en": "Saturation"}, {"en": "Scale the scores."},
                 fixed_question("number", {"en": "How many?"}, answer=2.0, tolerance=0.5))
PLAIN = view_stop("positional", {"pe_len": "20"}, "curves", {"en": "Positions", "ko": "위치"}, {"en": "Waves."})


def test_only_a_signed_in_teacher_saves_and_each_save_is_a_new_version(shelf, store_location):
    for stranger in (None, LessonAuthor("forged"), LessonAuthor("")):
        with pytest.raises(NotAnAuthor):
            shelf.save(stranger, _lesson(GOOD), PAGES)
    with pytest.raises(NotAnAuthor):
        shelf.sign_in("a student's guess")
    assert shelf.versions() == {}  # nothing was written
    author = shelf.sign_in("the-teacher")
    first = shelf.save(author, _lesson(GOOD), PAGES)
    assert (first.id, first.version) == ("three-views", 1)
    second = shelf.save(author, _lesson(GOOD, PLAIN, title="Three views, longer"), PAGES, lesson_id=first.id)
    assert second.version == 2 and shelf.versions() == {"three-views": 2}
    other_replica = ClassStore(store_location)  # another replica's store on the same database reads it
    assert LessonShelf(other_replica, shipped=SHIPPED).lesson("three-views").source == second.source
    other_replica.close()
    assert shelf.lesson("three-views", 1).source == first.source and shelf.lesson("three-views").version == 2
    assert shelf.save(author, _lesson(GOOD), PAGES).id == "three-views-2"  # a new lesson of the same title
    with pytest.raises(NotAnAuthor):  # a key past its hours
        shelf.save(author, _lesson(GOOD), PAGES, now=first.saved + saved_lessons.AUTHOR_HOURS * 3600 + 1)
    with pytest.raises(LessonRefused) as refused:  # a lesson file's id is never a saved one's
        shelf.save(author, _lesson(GOOD), PAGES, lesson_id="intro")
    assert refused.value.field == "id"


def test_the_teacher_of_a_live_class_saves_without_typing_the_password_again(shelf):
    teacher = shelf.store.create_class("intro")
    assert shelf.save(shelf.author_of_class(teacher), _lesson(GOOD), PAGES).version == 1
    with pytest.raises(NotTheTeacher):
        shelf.author_of_class(shelf.store.teacher(teacher.code, "forged", "intro"))


@pytest.mark.parametrize(("bad", "stop", "field", "words"), [
    (dict(GOOD, section="nowhere"), 2, "section", "unknown section 'nowhere'"),
    (dict(GOOD, page="secrets"), 2, "page", "unknown page 'secrets'"),
    (dict(GOOD, question={"kind": "number", "prompt": "?", "compute": "no_such_measure"}), 2, "question",
     "compute 'no_such_measure'"),
    (dict(GOOD, question={"kind": "cell", "prompt": "?", "compute": "attention_cell", "top": 99}), 2, "question",
     "top must be"),
    (dict(GOOD, state={"dk": ["a", "list"]}), 2, "state", "state values"),
    (dict(GOOD, script="import os"), 2, "script", "not a field"),
    (dict(PLAIN, text={"en": "x" * (saved_lessons.MAX_TEXT_CHARS + 1)}), 2, "text", "at most"),
    (dict(PLAIN, text={"en": "See ![a tracker](https://example.com/pixel.png)"}), 2, "text", "no images"),
])
def test_a_bad_stop_is_refused_naming_its_stop_and_field_and_nothing_is_saved(shelf, bad, stop, field, words):
    author = shelf.sign_in("the-teacher")
    with pytest.raises(LessonRefused) as refused:
        shelf.save(author, _lesson(GOOD, bad), PAGES)
    assert (refused.value.stop, refused.value.field) == (stop, field) and words in refused.value.reason
    assert shelf.versions() == {}


def test_the_bounds_of_a_lesson_and_of_the_server(shelf, monkeypatch):
    author = shelf.sign_in("the-teacher")
    with pytest.raises(LessonRefused) as refused:
        checked_lesson("x", _lesson(*[PLAIN] * (saved_lessons.MAX_STOPS + 1)), PAGES)
    assert (refused.value.stop, refused.value.field) == (None, "stop")
    with pytest.raises(LessonRefused) as refused:
        checked_lesson("x", Draft({"en": " "}, [GOOD]).source(), PAGES)
    assert refused.value.field == "title"
    monkeypatch.setattr(saved_lessons, "MAX_SAVED_LESSONS", 2)
    kept = shelf.save(author, _lesson(GOOD, title="One"), PAGES)
    shelf.save(author, _lesson(GOOD, title="Two"), PAGES)
    with pytest.raises(TooManyLessons):
        shelf.save(author, _lesson(GOOD, title="Three"), PAGES)
    assert shelf.save(author, _lesson(GOOD, title="One again"), PAGES, lesson_id=kept.id).version == 2  # a version


def test_saved_lessons_join_the_files_without_shadowing_one(tmp_path):
    (tmp_path / "intro.toml").write_text((LESSONS / "intro.toml").read_text(encoding="utf-8"), encoding="utf-8")
    found, errors = load_lessons(PAGES, tmp_path, {"intro": (3, _lesson(GOOD, title="Not intro")),
                                                   "mine": (2, _lesson(GOOD, PLAIN))})
    assert list(found) == ["intro", "mine"] and not errors
    assert found["intro"].version is None and len(found["intro"].stops) > 2
    assert found["mine"].version == 2 and len(found["mine"].stops) == 2


def test_a_class_on_a_saved_lesson_keeps_the_version_it_started_on(shelf):
    """The class records the text of the version it starts on (the Teacher page's start form passes it); a later save
    changes what a new reader opens, never the running class (ui/live_class/classroom.class_lesson)."""
    from ui.live_class.classroom import class_lesson

    author = shelf.sign_in("the-teacher")
    first = shelf.save(author, _lesson(GOOD), PAGES)
    teacher = shelf.store.create_class(first.id, lesson_source=first.source)
    later = shelf.save(author, _lesson(PLAIN, GOOD, PLAIN), PAGES, lesson_id=first.id)
    found, _ = load_lessons(PAGES, LESSONS, {first.id: (later.version, later.source)})
    assert len(found[first.id].stops) == 3
    running, from_copy = class_lesson(teacher.session(), found, PAGES)
    assert [stop.page for stop in running.stops] == ["softmax_scaling"] and not from_copy


def test_only_a_signed_in_teacher_deletes_a_saved_lesson_and_a_class_on_it_goes_on(shelf):
    """Deleting frees the server's room for lessons (MAX_SAVED_LESSONS) and takes every version off the lists; a class
    running on the lesson keeps the text it started on, with nothing said about a broken file (it has none)."""
    from ui.live_class.classroom import class_lesson

    author = shelf.sign_in("the-teacher")
    first = shelf.save(author, _lesson(GOOD), PAGES)
    shelf.save(author, _lesson(GOOD, PLAIN), PAGES, lesson_id=first.id)
    teacher = shelf.store.create_class(first.id, lesson_source=first.source)
    for stranger in (None, LessonAuthor("forged")):
        with pytest.raises(NotAnAuthor):
            shelf.delete(stranger, first.id)
    with pytest.raises(LessonRefused):  # a lesson file is not deleted from the page
        shelf.delete(author, "intro")
    assert shelf.versions() == {first.id: 2}  # nothing was removed
    assert shelf.delete(author, first.id) == 2
    assert shelf.versions() == {} and shelf.lesson(first.id) is None and shelf.lesson(first.id, 1) is None
    assert shelf.delete(author, first.id) == 0  # twice: nothing more, no error
    found, _ = load_lessons(PAGES, LESSONS, {})
    running, from_copy = class_lesson(teacher.session(), found, PAGES)
    assert [stop.page for stop in running.stops] == ["softmax_scaling"] and not from_copy


def test_her_browser_keeps_her_signed_in_with_her_draft_until_her_sign_in_ends(shelf):
    """A reload is a new session: her browser's seat cookie finds her key and her draft again in the store (migration
    7); any other browser finds neither, a forged key keeps no draft, and both end with her sign-in."""
    seat, other = "seat-of-her-browser-0123456789abcdef", "seat-of-a-student-0123456789abcdefgh"
    author = shelf.sign_in("the-teacher", now=T0, seat=seat)
    draft = _lesson(GOOD, PLAIN)
    assert shelf.keep_draft(author, seat, draft, "three-views", 2, now=T0 + 1)
    with pytest.raises(NotAnAuthor):
        shelf.keep_draft(LessonAuthor("forged"), other, draft, now=T0 + 1)
    assert not shelf.keep_draft(author, seat, "x" * (saved_lessons.MAX_SOURCE_BYTES + 1), now=T0 + 2)  # kept as before
    again = shelf.author_of_seat(seat, now=T0 + 60)
    assert again is not None and again.token != author.token and shelf.is_author(again, now=T0 + 61)
    assert shelf.draft_of_seat(seat, now=T0 + 60) == (draft, "three-views", 2)
    assert shelf.author_of_seat(other, now=T0 + 60) is None and shelf.draft_of_seat(other, now=T0 + 60) is None
    assert shelf.author_of_seat(None) is None
    end = T0 + saved_lessons.AUTHOR_HOURS * 3600 + 1  # a reload keeps her sign-in's end, never extends it
    assert not shelf.is_author(again, now=end)
    assert shelf.author_of_seat(seat, now=end) is None and shelf.draft_of_seat(seat, now=end) is None

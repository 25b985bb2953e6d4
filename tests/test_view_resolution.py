"""A lesson stop's view is one value, whatever the path to it (issue 37): its link in a new session, Next from the
stop before, Previous from the stop after, the teacher's move from any other stop, and Back from the stop after onto
the address the stop wrote; in English and Korean, presenter mode on. No browser and no AppTest: the resolution
(ui.lessons.bar.open_stop_view) works on a plain mapping, and a page's drawing is modelled by what its widgets leave
in the state (every value of the page fitted or defaulted, as ui.widget_spec.prepare does), so a value one stop
leaves behind meets the next stop as it does in the app.

The view compared is every value the stop's page reads (its specs), the model and the sentence. A value the stop
does not name must be absent when the page draws (the page then opens it on the model's own default, e.g. the
encoder's sharpest word-to-word head), never left over from an earlier stop: the last stop of `intro`, reached by
Next, used to open all-MiniLM-L6-v2 on the toy model's cross-attention kind, head 1, with a warning."""
from __future__ import annotations

import pytest

from classroom.lessons import load_lessons
from ui.display import LANGUAGE, PRESENTER
from ui.lessons.bar import open_stop_view
from ui.lessons.catalogue import known_pages
from ui.share import _apply, _to_link, page_specs
from ui.specs.common import MODEL
from ui.state import example_sentences, get_model
from ui.widget_spec import SENTENCE

LESSONS = load_lessons(known_pages())[0]
CASES = [(lesson_id, language) for lesson_id in sorted(LESSONS) for language in ("en", "ko")]


def _view(stop, state: dict) -> dict:
    """What the stop's page draws from: its own values, the model and the sentence."""
    keys = [spec.key for spec in page_specs(stop.page)] + [MODEL.key]  # the sentence where the page reads it
    return {key: state[key] for key in keys if key in state}


def _draw(stop, state: dict) -> dict:
    """The page drawn: the sidebar's sentence (the model's first example when none is set) and every value of the
    page fitted into its bounds or defaulted (prepare). -> the address the page then writes (its values as link
    text, with the lesson's stop), which Back later opens."""
    if SENTENCE.key not in state:
        state[SENTENCE.key] = example_sentences(get_model(state[MODEL.key]).task)[0]
    for spec in page_specs(stop.page):
        value = spec.fitted(spec.current(state), state)
        if spec.allows(value, state):
            state[spec.key] = value
        else:  # nothing to offer (a GRU has no attention kinds): the page draws no such widget
            state.pop(spec.key, None)
    written = {spec.url: _to_link(spec, state[spec.key]) for spec in page_specs(stop.page)
               if state.get(spec.key) not in (None, "", [])}
    return {**written, MODEL.url: state[MODEL.key], "lang": state[LANGUAGE], "v": "2"}


def _drawn_view(stop, view: dict) -> dict:
    state = {LANGUAGE: "en", **view}
    _draw(stop, state)
    return _view(stop, state)


def _open(lesson, stop, state: dict, link: dict | None = None) -> tuple[dict, list[str]]:
    """One path's arrival: the link's values read first (restore_from_url), then the stop's view."""
    if link is not None:
        assert not _apply({name: text for name, text in link.items() if name not in ("lesson", "stop")},
                          one_based=True, state=state)
    bad = open_stop_view(lesson, stop, link, state)
    return _view(stop, state), bad


def _new_session(language: str) -> dict:
    return {LANGUAGE: language, PRESENTER: True}


def _by_link(lesson, stop, language: str) -> tuple[dict, list[str]]:
    link = {"lesson": lesson.id, "stop": str(stop.number), "lang": language, "presenter": "true"}
    return _open(lesson, stop, _new_session(language), link)


@pytest.mark.parametrize(("lesson_id", "language"), CASES)
def test_every_path_to_a_stop_resolves_the_same_view(lesson_id: str, language: str):
    lesson = LESSONS[lesson_id]
    stops = lesson.stops
    by_link = {stop.number: _by_link(lesson, stop, language) for stop in stops}
    for number, (_, bad) in by_link.items():
        assert not bad, f"stop {number} by its link: {bad} do not fit"

    def same(path: str, stop, arrived: tuple[dict, list[str]], drawn_only: bool = False) -> None:
        """The view resolved before the page draws is the link's (no value left over, none missing); Back opens an
        address that names every value the page drew, so there the drawn views are compared."""
        view, bad = arrived
        where = f"{path}, stop {stop.number} ({language})"
        assert not bad, f"{where}: {bad} do not fit"
        if not drawn_only:
            assert view == by_link[stop.number][0], where
        assert _drawn_view(stop, view) == _drawn_view(stop, by_link[stop.number][0]), where

    # Next through the whole lesson, keeping what each stop wrote (Back reopens it below)
    state, written = _new_session(language), {}
    for stop in stops:
        same("next", stop, _open(lesson, stop, state))
        written[stop.number] = {"lesson": lesson.id, "stop": str(stop.number), **_draw(stop, state)}
    # Previous from the last stop to the first
    state = _new_session(language)
    for stop in reversed(stops):
        same("previous", stop, _open(lesson, stop, state))
        _draw(stop, state)
    # The teacher's move from the first stop and from the last (she skipped ahead, or went back), and Back from the
    # stop after onto the address this stop wrote
    for stop in stops:
        for other, path in ((stops[0], "teacher's move"), (stops[-1], "teacher's move"), (_after(stops, stop), "Back")):
            if other is stop or other is None:
                continue
            state = _new_session(language)
            _open(lesson, other, state)
            _draw(other, state)
            if path == "Back":
                same(f"Back from stop {other.number}", stop, _open(lesson, stop, state, dict(written[stop.number])),
                     drawn_only=True)
            else:
                same(f"{path} from stop {other.number}", stop, _open(lesson, stop, state))


def _after(stops, stop):
    return stops[stop.number] if stop.number < len(stops) else None


def test_a_stop_forgets_the_values_of_an_earlier_stop_it_does_not_name():
    """The regression itself: intro's last stop (all-MiniLM-L6-v2, 'All heads', no kind, layer or head named)
    after the toy model's cross-attention stops opens without their kind or head, as its link does."""
    lesson = LESSONS["intro"]
    last = lesson.stops[-1]
    cross = next(stop for stop in lesson.stops if stop.state.get("kind") == "cross")
    state = _new_session("en")
    _open(lesson, cross, state)
    _draw(cross, state)
    assert state["attn_kind"] == "cross" and "head" not in last.state
    view, bad = _open(lesson, last, state)
    assert not bad
    assert "attn_kind" not in view and "attn_head" not in view and "attn_layer" not in view
    assert view[MODEL.key] == last.state["model"]

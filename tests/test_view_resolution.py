"""A lesson stop's view is one value, whatever the path to it (issue 37): its link in a new session, Next from the
stop before, Previous from the stop after, the teacher's move from any other stop, and Back from the stop after onto
the address the stop wrote; in English and Korean, presenter mode on. No browser and no AppTest: the resolution
(ui.view.resolve_view, through ui.lesson_bar.stops.open_stop_view) works on a plain mapping and returns a View, and a page's drawing is modelled by what its widgets leave
in the state (every value of the page fitted or defaulted, as ui.widget_spec.prepare does), so a value one stop
leaves behind meets the next stop as it does in the app.

The view compared is the typed View (ui.view.View): every value the stop's page reads (its specs), the model, the
language and presenter mode. A value the stop
does not name must be absent when the page draws (the page then opens it on the model's own default, e.g. the
encoder's sharpest word-to-word head), never left over from an earlier stop: the last stop of `intro`, reached by
Next, used to open all-MiniLM-L6-v2 on the toy model's cross-attention kind, head 1, with a warning."""
from __future__ import annotations

import pytest

from classroom.lessons import load_lessons
from ui.language import LANGUAGE
from ui.presenter import PRESENTER
from ui.lesson_bar.stops import open_stop_view
from ui.lessons.catalogue import known_pages
from ui.specs.common import MODEL
from ui.state import example_sentences, get_model
from ui.view import Source, View, install_view, link_text, link_values, page_specs, parse_named, resolve_view, view_in
from ui.widget_spec import SENTENCE

LESSONS = load_lessons(known_pages())[0]
CASES = [(lesson_id, language) for lesson_id in sorted(LESSONS) for language in ("en", "ko")]


def _view(stop, state: dict) -> View:
    """What the stop's page draws from."""
    return view_in(stop.page, state)


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
    written = {spec.url: link_text(spec, state[spec.key]) for spec in page_specs(stop.page)
               if state.get(spec.key) not in (None, "", [])}
    return {**written, MODEL.url: state[MODEL.key], "lang": state[LANGUAGE], "v": "2"}


def _drawn_view(stop, view: View) -> View:
    state = {}
    install_view(view, state)
    _draw(stop, state)
    return _view(stop, state)


def _open(lesson, stop, state: dict, link: dict | None = None,
          source: Source = Source.STOP) -> tuple[View, list[str]]:
    """One path's arrival: the link's values read first (restore_from_url), then the stop's view."""
    if link is not None:
        assert not parse_named({name: text for name, text in link.items() if name not in ("lesson", "stop")},
                               one_based=True, state=state)
    bad = open_stop_view(lesson, stop, link, state, source)
    return _view(stop, state), bad


def _new_session(language: str) -> dict:
    return {LANGUAGE: language, PRESENTER: True}


def _by_link(lesson, stop, language: str) -> tuple[dict, list[str]]:
    link = {"lesson": lesson.id, "stop": str(stop.number), "lang": language, "presenter": "true"}
    return _open(lesson, stop, _new_session(language), link, Source.LINK)  # as the lesson bar opens a stop's link


@pytest.mark.parametrize(("lesson_id", "language"), CASES)
def test_every_path_to_a_stop_resolves_the_same_view(lesson_id: str, language: str):
    lesson = LESSONS[lesson_id]
    stops = lesson.stops
    by_link = {stop.number: _by_link(lesson, stop, language) for stop in stops}
    for number, (_, bad) in by_link.items():
        assert not bad, f"stop {number} by its link: {bad} do not fit"

    def same(path: str, stop, arrived: tuple[View, list[str]], drawn_only: bool = False) -> None:
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
                same(f"Back from stop {other.number}", stop,
                     _open(lesson, stop, state, dict(written[stop.number]), Source.LINK), drawn_only=True)
            else:
                same(f"{path} from stop {other.number}", stop, _open(lesson, stop, state, source=Source.TEACHER))


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
    assert "kind" not in view.controls and "head" not in view.controls and "layer" not in view.controls
    assert view.model == last.state["model"]


@pytest.mark.parametrize(("lesson_id", "language"), CASES)
def test_a_views_own_link_opens_the_same_view(lesson_id: str, language: str):
    """View.query() is the link of the view: resolved in a new session (a link's page is its path), every stop's
    drawn view comes back equal, layer and head numbers counted from 1 in the link and from 0 in the View."""
    for stop in LESSONS[lesson_id].stops:
        state = _new_session(language)
        _open(LESSONS[lesson_id], stop, state)
        _draw(stop, state)
        drawn = _view(stop, state)
        named, one_based = link_values(drawn.query())
        again = resolve_view(stop.page, named, Source.LINK, {LANGUAGE: language}, one_based=one_based)
        assert not again.unfit, f"stop {stop.number}: {again.unfit}"
        assert again.view == drawn, f"stop {stop.number}"
        with pytest.raises(TypeError):
            drawn.controls["layer"] = 3  # a View is a value: nobody changes it in place


def test_only_a_link_says_on_screen_what_did_not_fit():
    """The same unfit values (a head past the model's last, a name of no page) from each source: all are dropped
    before anything is drawn, and only the link's resolution is to be said on screen."""
    named = {"model": "transformer_en-fr", "head": "99", "nonsense": "1", "layer": "1"}
    resolved = {source: resolve_view("attention", named, source, {LANGUAGE: "en"}) for source in Source}
    for source, resolution in resolved.items():
        assert set(resolution.unfit) == {"head", "nonsense"}, source
        assert "head" not in resolution.view.controls and resolution.view.controls["layer"] == 0, source
    assert [source for source, resolution in resolved.items() if resolution.say_on_screen] == [Source.LINK]


def test_a_stop_names_only_its_page_values_and_a_link_keeps_other_pages_values_for_them():
    """A lesson stop naming another page's value has it unfit; an old link naming one (addresses once carried
    every page's values) keeps it for that page, unannounced."""
    named = {"model": "transformer_en-fr", "step": "2"}  # the decoding page's step, on the attention page
    stop = resolve_view("attention", named, Source.STOP, {})
    link = resolve_view("attention", named, Source.LINK, {})
    assert stop.unfit == ("step",) and not stop.elsewhere
    assert not link.unfit and link.elsewhere and not link.say_on_screen

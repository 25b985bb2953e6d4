"""Every stop of the shipped lesson shows what it declares, whatever the path to it: by link, by Next from the stop
before, by Previous from the stop after, and as a student the teacher moves; in English and Korean. The walk by Next
is also the lesson as a student takes it: each question hides its page until answered, its computed answer counts as
right, and Leave at the end takes the lesson off the page. Every view
picker holds the stop's state in the browser too (tests/app_links.BrowserPickers: a value the server holds but did
not send is shown as the widget's default), and the attention chart's title names the stop's kind, layer and head."""
import pytest

from classroom.lessons import load_lessons
from classroom.store import ClassStore
from i18n import tr, using_language
from tests.app_links import BrowserPickers, assert_healthy, chart_titles, lab_session_of, open_from_link
from tests.test_lessons import _answer
from ui.attention.ids import attention_kind_label
from ui.lessons.catalogue import known_pages
from ui.lessons.questions import expected_answer
from ui.specs.common import MODEL
from ui.view import from_link_text, page_specs
from ui.specs import SPECS

LESSONS = load_lessons(known_pages())[0]
# Every path for the first lesson; the LLM lesson (its stops on the LLM pages, the positional page's RoPE section)
# by link and by Next and Previous (no teacher path: the class machinery is the same for every lesson file); the
# answer lesson by link and by Next. "next" opens each stop by its link too and compares the two (the browser's
# projected walk goes by Next alone).
PATHS = [("intro", path) for path in ("next", "previous", "teacher")] + [
    ("llm", path) for path in ("next", "previous")] + [("answer", "next"), ("choices", "next")]
VIEW_KEYS = {spec.key for spec in SPECS.values()}


def _expected_title(stop, language: str) -> str | None:
    """The attention chart's title the stop's state names (None: not an attention stop with a kind)."""
    state = stop.state
    if stop.page != "attention" or "kind" not in state:
        return None
    with using_language(language):
        kind = attention_kind_label(state["kind"])
        if state.get("view") == "Head":
            return tr("attention.head_title", kind=kind, layer=int(state["layer"]), head=int(state["head"]))
        return tr("attention.grid_title", kind=kind)


def _open_page(at, stop, lesson_id: str, language: str, walked: bool = False) -> None:
    """Answer the stop's question (the first option: any answer shows the page). On the walk by Next (`walked`): before
    the answer the stop is healthy, says nothing is stale or cannot be computed, names itself in the address and hides
    its page (predict first); in English it is answered with its computed answer, which counts as right."""
    answers = lab_session_of(at).lesson.answers
    where = f"stop {stop.number} ({language})"
    if walked:
        assert_healthy(at)
        assert at.query_params["stop"] in ([str(stop.number)], str(stop.number)), where
        assert not at.warning, (where, [w.value for w in at.warning])
    if stop.question and f"{lesson_id}:{stop.number}" not in answers:
        if walked and stop.question.kind != "view":  # a view question's page shows: she sets the view she sends
            charts = [c for c in at.get("plotly_chart") if c.key != f"q_{lesson_id}_{stop.number}_map"]  # a cell's map
            assert not at.title and not charts, f"{where}: the page is shown before the prediction"
        expected = expected_answer(stop)  # (None: an open text question, neither right nor wrong)
        pick = expected.shown if walked and language == "en" and expected is not None else None
        _answer(at, f"q_{lesson_id}_{stop.number}", stop.question.kind, pick)
        assert_healthy(at)
        if pick is not None:
            assert at.success, f"{where}: the computed answer {pick} was not counted right"
    if walked:  # the page is shown: its title, or, under a stop about one section, that section first
        shown = at.main.get_by_key(f"section_{stop.section}").children if stop.section else at.title
        assert shown, f"{where}: the page is not shown"


def _check(at, pickers: BrowserPickers, stop, language: str, path: str) -> None:
    assert_healthy(at)
    where = f"{path}, stop {stop.number} ({language})"
    assert f"{stop.number}" in at.markdown[0].value and stop.title[language] in at.markdown[0].value, where
    # no path to a shipped stop says a value does not fit (issue 37: intro's last stop by Next said "(kind)")
    with using_language(language):
        unfit = [tr("share.bad_link", names="")[:30], tr("lessons.stale_state", names="")[:30]]
    notices = [element.value for element in [*at.info, *at.warning]]
    assert not [text for text in notices if any(part in text for part in unfit)], f"{where}: {notices}"
    shown = pickers.shown(at)
    wrong = {key: pair for key, pair in shown.items() if key in VIEW_KEYS and pair[0] != pair[1]}
    assert not wrong, f"{where}: the browser shows (shown, held): {wrong}"
    for name, text in stop.state.items():
        spec = SPECS[name]
        expected = spec.convert(from_link_text(spec, text, one_based=True))  # lesson files count from 1
        assert at.session_state[spec.key] == expected, f"{where}: {name}"
    title = _expected_title(stop, language)
    if title is not None:
        assert title in chart_titles(at), f"{where}: {chart_titles(at)}"


def _arrive(at, pickers, stop, language, path, reveal=None, lesson_id="intro") -> tuple[dict, dict]:
    """-> the view the stop shows: the session's value of each picker its page reads and of the model, and the
    address (values of other pages the session keeps are not this stop's view)."""
    pickers.shown(at)  # the run that arrives (its page may wait for the answer)
    _open_page(at, stop, lesson_id, language, walked=path == "next")
    if reveal is not None and stop.question is not None:
        reveal(stop)  # in a class the page waits for the teacher's reveal (one round or peer instruction)
    _check(at, pickers, stop, language, path)
    keys = sorted({MODEL.key, *(spec.key for spec in page_specs(stop.page))})
    held = {key: at.session_state[key] for key in keys if key in at.session_state}
    return held, {name: at.query_params.get(name) for name in sorted(at.query_params)}


@pytest.mark.slow
@pytest.mark.parametrize("language", ["en", "ko"])
@pytest.mark.parametrize(("lesson_id", "path"), PATHS)
def test_every_stop_shows_its_declared_view_by_every_path(lesson_id, path, language, tmp_path, monkeypatch):
    monkeypatch.setenv("ATTENTION_LAB_DATA", str(tmp_path))
    stops = LESSONS[lesson_id].stops
    with using_language(language):  # AppTest formats widget options (format_func -> tr) in this thread
        by_link = {}
        if path == "next":  # each stop by its link, in a new session: what Next must show too
            for stop in stops:
                at, _ = open_from_link(None, {"lesson": lesson_id, "stop": str(stop.number), "lang": language})
                by_link[stop.number] = _arrive(at, BrowserPickers(), stop, language, "link", lesson_id=lesson_id)
        pickers = BrowserPickers()
        if path == "teacher":
            store = ClassStore()  # the app's store: the data folder set above
            teacher = store.create_class(lesson_id)
            code = teacher.code
            at, _ = open_from_link(None, {"class": code, "lang": language})
            order = stops
        else:
            order = stops if path == "next" else stops[::-1]
            at, _ = open_from_link(None, {"lesson": lesson_id, "stop": str(order[0].number), "lang": language})
        reveal = None
        if path == "teacher":
            def reveal(stop):
                teacher.reveal(f"{lesson_id}:{stop.number}")
                at.run()
        shown = {order[0].number: _arrive(at, pickers, order[0], language, path, reveal, lesson_id)}
        for stop in order[1:]:
            if path == "teacher":
                teacher.move(stop.number)
                at.run()
            else:
                at.button(key="lesson_next" if path == "next" else "lesson_previous").click().run()
            shown[stop.number] = _arrive(at, pickers, stop, language, path, reveal, lesson_id)
        # by Next, the view the stop's link opens: its declared values and the page's own defaults for the rest (the
        # encoder's sharpest head at intro's last stops), none left over from the stop before; the same address
        different = {number: (view, by_link[number]) for number, view in shown.items()
                     if number in by_link and view != by_link[number]}
        assert not different, f"stops whose view by Next (first) is not their link's: {different}"
        if path == "next":  # left from the last stop: no lesson in the address, no bar on the page
            lesson = LESSONS[lesson_id]
            at.button(key="lesson_leave").click().run()
            assert_healthy(at)
            assert "lesson" not in at.query_params
            assert not any(f" {len(stops)}" in m.value and lesson.title[language] in m.value for m in at.markdown)

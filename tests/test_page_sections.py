"""A lesson stop that names a section of its page opens on that section (shown first, the rest of the page below
it), by a link, by Next and Previous, in both languages; an unknown section is a problem of the stop."""
import pytest

from classroom.lessons import load_lessons, parse_lesson
from i18n import translate
from tests.app_links import assert_healthy, chart_titles, open_page
from ui.lessons.catalogue import known_pages
from ui.session import LabSession, LessonState
from ui.specs import SECTIONS

PAGES = known_pages()
STOP = '''
[[stop]]
page = "{page}"
text = "Look."
section = {section}
'''


def _stop(page: str, section: str):
    return parse_lesson("t", 'title = "t"\n' + STOP.format(page=page, section=section), PAGES).stops[0]


def test_a_stop_names_a_section_of_its_page_and_anything_else_is_a_problem():
    good = _stop("softmax_scaling", '"row"')
    assert good.section == "row" and good.problem is None
    unknown = _stop("softmax_scaling", '"rows"')
    assert unknown.problem == ("unknown section 'rows' of page 'softmax_scaling' "
                               "(sections: dot_products, saturation, row)") and unknown.section is None
    assert _stop("residual", '"chart"').problem == "unknown section 'chart' of page 'residual' (it has no sections)"
    assert "section must be" in _stop("compare", "2").problem
    lesson = load_lessons(PAGES)[0]["intro"]  # the shipped lesson's stops about a later part of their page
    assert {s.number: s.section for s in lesson.stops if s.section} == {
        1: "length", 2: "growing", 4: "steps", 5: "saturation", 6: "row", 7: "steps", 8: "multi_head", 13: "dials"}
    assert not any("scroll" in s.text["en"].lower() for s in lesson.stops)


def test_an_unknown_section_is_shown_at_its_stop_and_the_page_still_opens(tmp_path, monkeypatch):
    source = 'title = "t"\n' + STOP.format(page="softmax_scaling", section='"saturaton"')
    (tmp_path / "typo.toml").write_text(source, encoding="utf-8")
    monkeypatch.setenv("ATTENTION_LAB_LESSONS", str(tmp_path))
    at = open_page(None, {"lesson": "typo", "stop": "1"})
    assert "unknown section 'saturaton'" in " ".join(w.value for w in at.warning)
    assert "stop 1 of 1" in at.markdown[0].value


def _subheaders(at) -> list[str]:
    return [h.value for h in at.subheader]


@pytest.mark.parametrize("language", ["en", "ko"])
def test_a_stop_opens_on_its_section_and_previous_next_and_leave_move_it(language):
    def title(name):
        return translate(language, f"softmax_scaling.{name}_title")

    dot, saturation, row = title("dot"), title("saturation"), title("row")
    # stop 5 asks a question first: answered here, so its page is shown
    at = open_page(None, {"lesson": "intro", "stop": "6", "presenter": "true", "lang": language},
                   lab=LabSession(lesson=LessonState(answers={"intro:5": "0.73"})))
    # the stop's section alone (its 3 charts, not the page's 6), the rest of the page under it when asked
    assert _subheaders(at) == [row]
    assert chart_titles(at)[0] == translate(language, "softmax_scaling.row_chart", scale="1")
    assert at.metric[0].label == translate(language, "softmax_scaling.entropy")  # d_k from the view: 512, not drawn
    assert at.session_state["scaling_dk"] == 512
    rest = at.toggle(key="sections_rest_softmax_scaling_row")
    assert rest.label == translate(language, "page_sections.show_rest") and not rest.value
    rest.set_value(True).run()
    assert_healthy(at)
    assert _subheaders(at) == [row, dot, saturation]
    assert at.select_slider(key="scaling_dk").value == 512
    at.button(key="lesson_previous").click().run()
    assert_healthy(at)
    assert _subheaders(at) == [saturation]
    at.button(key="lesson_next").click().run()
    assert _subheaders(at) == [row]  # the toggle is per stop: the stop opens alone again
    at.button(key="lesson_leave").click().run()
    assert_healthy(at)
    assert _subheaders(at) == [dot, saturation, row]  # no lesson: the page in its own order
    assert at.title[0].value == translate(language, "softmax_scaling.title")


def test_a_stop_on_a_folded_section_opens_it_first():
    """Stop 13 is about the dials, which the positional page folds: the stop unfolds them and shows them first."""
    at = open_page(None, {"lesson": "intro", "stop": "13"},
                   lab=LabSession(lesson=LessonState(answers={"intro:13": "1"})))
    assert at.session_state["pe_open_dials"] is True
    assert chart_titles(at)[:2] == [translate("en", "positional.chart.dials_title", position=5),
                                    translate("en", "positional.matrix_chart", length=64, d_model=128)]


def test_a_compare_stop_opens_on_accuracy_by_length_projected_or_not():
    """Not projected either, the bar names the view and the page's introduction folds: the chart the stop is about
    starts on a 1280×720 screen under the bar (tests/test_browser_page_sections.py measures it projected)."""
    at = open_page(None, {"lesson": "intro", "stop": "1"}, lab=LabSession(lesson=LessonState(answers={"intro:1": "3"})))
    assert not at.title and [e.label for e in at.expander][:1] == ["How to read these maps"]
    assert _subheaders(at)[0] == "Accuracy against sentence length"
    assert chart_titles(at)[0] == translate("en", "compare.length_chart_title", metric="exact match")
    assert "The sidebar's sentence through the three models" in _subheaders(at)  # still on the page, below


@pytest.mark.parametrize("page_name", sorted(SECTIONS))
def test_every_declared_section_is_drawn_by_its_page(page_name):
    folded = {s.folded_key: True for s in SECTIONS[page_name] if s.folded_key}
    at = open_page(page_name, **folded)
    for section in SECTIONS[page_name]:
        assert len(at.main.get_by_key(f"section_{section.name}").children), f"{page_name}: {section.name} is empty"

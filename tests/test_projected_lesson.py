"""A lesson projected in presenter mode: the bar names the view once (no repeated page title), and chart titles
wrap to the width the chart gets (a full-width chart is not wrapped at a column's width)."""
import numpy as np

from classroom.lessons import load_lessons
from i18n import translate, using_language
from tests.app_links import chart_specs, go_to, lab_session_of, open_page
from ui.lessons.catalogue import known_pages
from viz.attention import head_grid
from viz.presentation import (BASE_FONT, MIN_PROJECTED_TEXT, PROJECTED_PAGE_TITLE_WIDTH, TITLE_WIDTH, _width,
                               for_projection)
from ui.language import words_for


def test_a_projected_stop_shows_its_title_and_text_and_not_the_page_title_again():
    lesson = load_lessons(known_pages())[0]["intro"]
    stop = lesson.stops[8]
    assert stop.page == "attention"
    for language in ("en", "ko"):
        at = open_page(None, {"lesson": "intro", "stop": "9", "presenter": "true", "lang": language})
        bar = at.markdown[0].value
        assert bar == translate(language, "projected_lesson.bar_title", stop=9, stops=len(lesson.stops),
                                title=stop.title[language])
        assert any(m.value.strip() == stop.text[language].strip() for m in at.markdown)  # the stop's whole text
        assert not at.title  # the bar names the view: no "Transformer attention" heading above the chart
        assert chart_specs(at), "the attention page is drawn under the bar"
    at = open_page(None, {"lesson": "intro", "stop": "9"})  # not projected: the page keeps its title
    assert at.title[0].value == "Transformer attention" and "Attention, from seq2seq" in at.markdown[0].value


def test_a_projected_page_away_from_its_stop_keeps_its_title():
    """The bar names the stop's page only: on another page (the teacher looked elsewhere) that page's title shows."""
    at = open_page(None, {"lesson": "intro", "stop": "9", "presenter": "true"})
    at.switch_page("app_pages/positional.py").run()
    assert at.title[0].value == "Positional encoding"


def test_projected_titles_wrap_at_the_width_of_the_page_or_of_a_column():
    title = "인코더 셀프 어텐션: 모든 층(행) × 헤드(열), 학습된 모델"  # 50 display columns
    assert TITLE_WIDTH < _width(title) <= PROJECTED_PAGE_TITLE_WIDTH
    grid = head_grid(np.random.default_rng(0).random((2, 4, 3, 3)), list("abc"), list("xyz"), title=title,
                     words=words_for("attention"))
    assert for_projection(grid, PROJECTED_PAGE_TITLE_WIDTH).layout.title.text == title  # across the page: one line
    in_column = for_projection(grid, TITLE_WIDTH).layout.title.text
    assert in_column.replace("<br>", " ") == title and in_column.count("<br>") == 1
    assert max(_width(line) for line in in_column.split("<br>")) <= TITLE_WIDTH


def test_the_projected_all_heads_grid_has_its_title_on_one_line():
    with using_language("ko"):
        at = open_page("attention", {"presenter": "true", "lang": "ko", "view": "All heads",
                                     "sentence": "the small cat eats the red apple", "kind": "encoder_self"})
    grid_title = chart_specs(at)[0]["layout"]["title"]["text"]
    assert "모든 층" in grid_title and "<br>" not in grid_title, grid_title


def test_a_projected_class_question_shows_no_answer_until_the_teacher_reveals_it(tmp_path, monkeypatch):
    """The teacher projects a question stop of a live class: the class reads the prompt; the model's answer is only in
    the teacher's private view (a second window, /teacher?private=true), and the page (whose chart answers the question)
    waits for her Reveal button."""
    monkeypatch.setenv("ATTENTION_LAB_DATA", str(tmp_path))
    monkeypatch.setenv("ATTENTION_LAB_TEACHER_PASSWORD", "s3cret")
    teacher = open_page("teacher", {"presenter": "true"})
    teacher.text_input(key="class_start_password").input("s3cret")
    next(b for b in teacher.form_submit_button if b.label == "Start a class").click().run()
    teacher.button(key="class_open_stop").click().run()  # stop 1 asks which model translates long sentences worst
    assert any("20 words or more" in m.value for m in teacher.markdown)
    assert not [c.value for c in teacher.caption if "The model's answer" in c.value] and not chart_specs(teacher)
    assert not teacher.get("popover")  # no peek on the projected screen: a mirrored laptop would show it to the room
    assert [b.proto.url for b in teacher.get("link_button")] == ["teacher?private=true"]  # her private window
    texts = lambda at: " ".join(str(e.value) for e in [*at.markdown, *at.caption])  # noqa: E731
    assert "GRU without attention" not in texts(teacher)
    private = open_page("teacher", {"private": "true"})  # a second window of her browser: the class taken back
    lab_session_of(private).teacher.handle = lab_session_of(teacher).teacher.handle  # (a browser: her seat cookie)
    private.run()
    assert "The model's answer: GRU without attention" in texts(private)
    assert any("Private view" in w.value for w in private.warning)
    teacher.button(key="stop_reveal").click().run()
    go_to(teacher, "compare")  # AppTest runs the page it opened again; the browser stays on the stop's page
    assert not teacher.title and chart_specs(teacher)  # revealed: the page is shown under the bar, without its title
    assert any("The model's answer: GRU without attention" in c.value for c in teacher.caption)


def test_projected_thumbnail_titles_grow_only_where_there_is_room():
    """The toy model's 2 × 4 grid gets projection-size thumbnail titles; the real encoder's 12 a row get the least
    projected size, 14 px, with their pattern label on a second line (at 18 px "L1 H10 · block" ran into its
    neighbours; at the grid's own 11 px the back row could not read them)."""
    def titles(layers, heads, labels=None):
        grid = head_grid(np.random.default_rng(0).random((layers, heads, 3, 3)), list("abc"), list("xyz"), title="t",
                         labels=labels, words=words_for("attention"))
        projected = for_projection(grid, PROJECTED_PAGE_TITLE_WIDTH)
        return projected.layout.annotations

    assert {annotation.font.size for annotation in titles(2, 4)} == {BASE_FONT}
    encoder = titles(6, 12, np.full((6, 12), "block", dtype=object))
    assert {annotation.font.size for annotation in encoder} == {MIN_PROJECTED_TEXT}
    assert encoder[9].text == "L1 H10<br>block"

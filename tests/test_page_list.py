"""The app's one list of pages (ui/page_list.PAGE_SECTIONS): what st.navigation serves, what the menu draws, what a
lesson stop may name and what the tests open are the same pages."""
from pathlib import Path

from classroom.lessons import parse_lesson
from tests.app_links import APP_PAGES, open_page
from ui.lessons.catalogue import known_pages
from ui.page_list import PAGE_NAMES

ROOT = Path(__file__).resolve().parents[1]


def test_every_page_script_is_in_the_list_and_every_listed_page_has_its_script():
    scripts = sorted(path.stem for path in (ROOT / "app_pages").glob("*.py"))
    assert sorted(PAGE_NAMES) == scripts  # no script the menu cannot reach, no menu entry without a script
    assert len(set(PAGE_NAMES)) == len(PAGE_NAMES)
    assert APP_PAGES == list(PAGE_NAMES) and APP_PAGES[0] == "home"
    assert list(known_pages()) == list(PAGE_NAMES)


def test_a_lesson_stop_may_name_only_a_listed_page():
    source = 'title = "t"\n[[stop]]\npage = "{page}"\ntext = "Look."\n'
    assert parse_lesson("ok", source.format(page="decoding"), known_pages()).stops[0].problem is None
    problem = parse_lesson("bad", source.format(page="pages_folder"), known_pages()).stops[0].problem
    assert "unknown page" in problem


def test_the_menu_links_every_listed_page_in_order_and_in_korean():
    for language, home_title in (("en", "Home"), ("ko", None)):
        at = open_page("home", lang=language)
        menu = [link.proto for link in at.sidebar.get("page_link")]
        assert [link.page for link in menu] == ["" if name == "home" else name for name in PAGE_NAMES]
        if home_title:
            assert menu[0].label == home_title
        else:
            assert all(any("\uac00" <= ch <= "\ud7a3" for ch in link.label) for link in menu), [l.label for l in menu]

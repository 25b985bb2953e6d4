"""Text from a link or a file name is shown as text: no link, image, autolink, HTML or shortcode is rendered from
it, and the page fetches nothing from outside the app (ui/text.escape_markdown; ui/lesson_bar/bar's notices)."""
import os
import re
import shutil
from pathlib import Path
from urllib.parse import urlencode, urlsplit

import pytest
from playwright.sync_api import expect

from classroom.lessons import LESSONS
from classroom.store import normalise_code
from tests.bad_inputs import load_bad_inputs
from tests.browser_steps import wait_run_over
from tests.conftest import streamlit_server
from ui.errors import GUARD_MESSAGE
from ui.page_list import PAGE_NAMES
from ui.specs import SPECS
from ui.text import escape_markdown

BAD_INPUTS = load_bad_inputs()
# What Streamlit's markdown (remark-gfm, remark-emoji, its icon and directive plugins) finds in a text node, that
# is, once the backslash escapes are read: autolink literals, e-mail addresses, :shortcodes: and :material/icons:.
AUTOLINK = re.compile(r"(?i)(https?://|www\.)[-.\w]|[-.\w+]+@[-\w]+(\.[-\w]+)+")
SHORTCODE = re.compile(r":[\w+-][\w+-]*:|:material/")


def as_text_node(markdown: str) -> str:
    """The text CommonMark reads from markdown that holds no markup: a backslash before punctuation is taken out."""
    return re.sub(r"\\([!-/:-@\[-`{-~])", r"\1", markdown)


def test_escaped_text_holds_no_autolink_shortcode_or_icon():
    cases = BAD_INPUTS + ["see http://evil.example", "HTTPS://evil.example", "WWW.evil.example", "a@evil.example",
                          ":smile:", ":material/home:", ":+1:", "www.www.evil.example", "<https://evil.example>"]
    for text in cases:
        escaped = escape_markdown(text)
        assert ":material/" not in escaped, escaped  # Streamlit rewrites this in the source, before parsing
        shown = as_text_node(escaped)
        assert not AUTOLINK.search(shown) and not SHORTCODE.search(shown), (text, escaped)
        assert shown.replace("\u034f", "") == "".join(ch if ch.isprintable() else " " for ch in text)


# ------------------------------------------------------------------------------ the browser: nothing leaves the app

SHARED_BAD_INPUTS = Path(__file__).resolve().parents[2] / "shared" / "bad_inputs.txt"  # ../shared, when there is one


def _hostile_inputs() -> list[str]:
    texts = list(BAD_INPUTS)
    if SHARED_BAD_INPUTS.is_file():
        lines = SHARED_BAD_INPUTS.read_text(encoding="utf-8").splitlines()
        texts += [line.encode("latin-1", "backslashreplace").decode("unicode_escape")
                  for line in lines if not line.startswith("#")]
    return list(dict.fromkeys(t for t in texts if t))  # one of each


def _file_name(text: str) -> str:
    """A lesson file named after the text, as a file system allows (no '/', no NUL, at most 200 bytes)."""
    name = text.replace("/", "_").replace("\x00", "_")
    while len(name.encode("utf-8")) > 200:
        name = name[:-1]
    return f"{name}.toml"


@pytest.fixture(scope="module")
def hostile_app_url(tmp_path_factory):
    """The app with a lessons folder holding the shipped lesson and a broken file named after every hostile text."""
    lessons = tmp_path_factory.mktemp("hostile_lessons")
    shutil.copy(LESSONS / "intro.toml", lessons / "intro.toml")
    for text in _hostile_inputs():
        (lessons / _file_name(text)).write_text("title = [", encoding="utf-8")
    env = {**os.environ, "ATTENTION_LAB_LESSONS": str(lessons),
           "ATTENTION_LAB_DATA": str(tmp_path_factory.mktemp("hostile_data"))}
    with streamlit_server(env=env) as url:
        yield url


LINK_VALUE_CHARS = 300  # each value cut to this: ~20 parameters of 3,000 characters pass the server's header limit


def _link(base: str, page: str, params: dict[str, str]) -> str:
    cut = {name: text[:LINK_VALUE_CHARS] for name, text in params.items()}
    return f"{base}/{'' if page == 'home' else page}?{urlencode(cut)}"


TABS = 2  # links open in two tabs at once: one tab's run on the server while the other's page loads and is read


def _hostile_links(base: str) -> list[tuple[str, str]]:
    """(text, link): each text on one page, the pages taken in turn, and for a third of the texts as the stop of a
    lesson that exists (never shown; a third keeps it short). One text as a class code: every hostile text reads as
    no code at all (normalise_code; tests/test_class_pages.py tries each as a code and holds this), so the page says
    the code is wrong and shows none of the text, the same for each; one link keeps that path in the browser."""
    links = []
    for number, text in enumerate(_hostile_inputs()):
        page_name = PAGE_NAMES[number % len(PAGE_NAMES)]
        params = {name: text for name, spec in SPECS.items() if not spec.pages or page_name in spec.pages}
        links.append((text, _link(base, page_name, {"lesson": text, "stop": text, "v": text, **params})))
        if number == 0:
            links.append((text, _link(base, "home", {"class": text})))
        if number % 3 == 0:
            links.append((text, _link(base, "home", {"lesson": "intro", "stop": text})))
    return links


def test_link_values_and_file_names_render_no_outside_link_and_fetch_nothing_outside(browser, hostile_app_url):
    """Every hostile text as the lesson name, the stop, the class code and every parameter a page reads (each text
    on one page, the pages taken in turn), and as lesson file names (listed in the sidebar of every page). Each link
    is a new page load of its own (a new session), read once its first run is over; TABS of them are under way at
    once, each tab's requests recorded apart."""
    origin = urlsplit(hostile_app_url)
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    tabs = []
    for _ in range(TABS):
        tab, requests = context.new_page(), []
        tab.set_default_timeout(30000)
        tab.on("request", lambda request, requests=requests: requests.append(request.url))
        tabs.append((tab, requests))
    texts, links, failures, opened = _hostile_inputs(), _hostile_links(hostile_app_url), [], 0
    waiting = iter(links)
    showing: dict[int, tuple[str, str]] = {}  # tab -> (text, link) loading in it

    def load(number: int) -> None:
        following = next(waiting, None)
        if following is not None:
            tabs[number][1].clear()
            tabs[number][0].goto(following[1])
            showing[number] = following

    try:
        for number in range(TABS):
            load(number)
        number = 0
        while showing:
            if number in showing:
                (page, requests), (text, link) = tabs[number], showing.pop(number)
                expect(page.get_by_test_id("stSidebar")).to_be_visible()
                wait_run_over(page)
                opened += 1
                outside = [url for url in requests if urlsplit(url).scheme in ("http", "https", "ws", "wss")
                           and urlsplit(url).netloc != origin.netloc]
                anchors = [href for href in page.eval_on_selector_all("a[href^=http]", "els => els.map(e => e.href)")
                           if urlsplit(href).netloc != origin.netloc]
                images = page.eval_on_selector_all("img[src^=http]", "els => els.map(e => e.src)")
                broken = page.get_by_test_id("stException").count() or GUARD_MESSAGE in page.inner_text("body")
                if outside or anchors or broken or [src for src in images if urlsplit(src).netloc != origin.netloc]:
                    failures.append((text[:40], link[len(hostile_app_url):][:60], outside[:3], anchors[:3], broken))
                load(number)
            number = (number + 1) % TABS
    finally:
        context.close()
    assert len(texts) >= 20 and opened == len(links) > len(texts)
    assert all(normalise_code(text) == "" for text in texts)  # why one class link stands for them all
    assert not failures, f"{len(failures)} of {opened} links: {failures}"

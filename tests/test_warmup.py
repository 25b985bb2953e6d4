"""The server's warm-up (serving/warmup.py): what it opens, who runs it, and Home's note while it runs."""
import os
import re
import shutil
import subprocess
import sys
import threading
import time
import urllib.request

import pytest

from classroom.lessons import LESSONS, LESSONS_ENV, load_lessons
from serving.warmup import WARMUP_ENV, _warming, lesson_stop_links, warm_links
from tests.app_links import open_page
from serving.local_server import free_port
from tests.conftest import ROOT, run_in_own_loop
from ui.page_list import PAGE_NAMES

WARMING_NOTE = "Getting ready: the lab is loading its models"


def test_the_warm_up_opens_every_stop_of_every_shipped_lesson_and_each_model_they_show():
    from ui.lessons.catalogue import known_pages
    from ui.state import model_ids

    lessons = load_lessons(known_pages())[0]
    links = warm_links(PAGE_NAMES)
    assert {"intro", "llm"} <= set(lessons)
    for lesson in lessons.values():
        for stop in lesson.stops:
            assert f"{stop.page}?lesson={lesson.id}&stop={stop.number}" in links, (lesson.id, stop.number)
            # the warm-up's pass over the sidebar's model choice loads every model a stop shows
            assert stop.state.get("model", "transformer_en-fr") in model_ids(), (lesson.id, stop.number)


def test_the_warm_up_opens_each_stop_as_students_and_the_projected_teacher_see_it_in_every_language():
    """A stop's figures are kept per language and sized apart when projected, and an answer stated in words per
    language: each of the four is a first click of its own unless the warm-up opens it (issue 38, a Korean class)."""
    from i18n import DEFAULT_LANGUAGE, LANGUAGES

    links = warm_links(PAGE_NAMES)
    assert len(links) == len(set(links))
    for stop in lesson_stop_links(PAGE_NAMES):
        for language in LANGUAGES:
            tail = "" if language == DEFAULT_LANGUAGE else f"&lang={language}"
            assert f"{stop}{tail}" in links and f"{stop}&presenter=true{tail}" in links, (stop, language)


def test_a_stop_added_to_a_lesson_file_is_warmed_too(tmp_path):
    source = (ROOT / "lessons" / "llm.toml").read_text(encoding="utf-8")
    (tmp_path / "llm.toml").write_text(source + '\n[[stop]]\npage = "decoding"\ntitle = "one more"\n',
                                       encoding="utf-8")
    links = lesson_stop_links(PAGE_NAMES, tmp_path)
    stops = len(load_lessons({"attention_steps": (), "llm": (), "positional": (), "llm_heads": ()},
                             ROOT / "lessons")[0]["llm"].stops)
    assert links[-1] == f"decoding?lesson=llm&stop={stops + 1}"
    assert len(links) == stops + 1


def test_serve_and_the_kubernetes_replica_start_their_replicas_without_their_own_warm_up():
    """They warm each replica from outside before students reach it: a second warm-up inside would run it twice."""
    from serve import Launcher

    assert Launcher(1, "127.0.0.1", free_port(), ROOT / "run").env[WARMUP_ENV] == "0"
    assert 'WARMUP_ENV: "0"' in (ROOT / "serving" / "replica.py").read_text()


def test_home_says_the_lab_is_warming_up_only_while_it_is(monkeypatch):
    try:
        _warming.set()
        at = open_page("home")
        assert any(WARMING_NOTE in note.value for note in at.info)
        ko = open_page("home", {"lang": "ko"})
        assert any("준비 중입니다" in note.value for note in ko.info)
    finally:
        _warming.clear()
    at.run()  # the note's fragment would ask again; a full run draws Home without it
    assert not any(WARMING_NOTE in note.value for note in at.info)
    assert not any(WARMING_NOTE in note.value for note in open_page("home").info)


def _computations(url: str) -> dict[str, int]:
    """Every cache miss the server has counted, by cache: Streamlit's caches (`cache_lookups_total`: a model loaded,
    a lesson file read) and the app's result store (`result_lookups_total`: an analysis, a figure), from
    /_stcore/metrics (this test's loopback address is the operator's); the store's hits too, under "hits"."""
    with urllib.request.urlopen(f"{url}/_stcore/metrics?families=cache_lookups&families=result_lookups",
                                timeout=30) as response:
        text = response.read().decode()
    counts = {}
    for family, labels, value in re.findall(r"^(cache_lookups|result_lookups)_total\{(.*)\} (\d+)$", text, re.M):
        if 'result="miss"' in labels:
            counts[f"{family}{{{labels}}}"] = int(value)
        elif family == "result_lookups" and 'result="hit"' in labels:
            counts["hits"] = int(value)
    return counts


@pytest.mark.slow
@pytest.mark.server
def test_streamlit_run_asgi_warms_itself_in_the_background_and_ends_warm(tmp_path):
    """`make run`'s server: it answers at once and Home says it is warming; it ends warm: Home's note gone, and the
    issue's slowest first click (the LLM lesson's stop 2, which loads SmolLM2 when cold: 11.6 s in issue 38, 31 s on
    this loaded 2-core VM) computes nothing in a new session: no cache of Streamlit's and no result of the app's store
    misses (the server's own counts, /_stcore/metrics), while the stop reads its results from the store.
    The lessons folder holds the LLM lesson alone: the warm-up's pass over every stop of every shipped lesson in both
    languages, students' and projected, is the list checked above, and each of those views opens without an error in
    test_lesson_paths (every stop, both languages) and the projected walks (every projected stop): here, the
    mechanism, at a third of the warm-up (124 links to 36)."""

    from serving.streamlit_client import StreamlitClient
    from serving.warmup import open_links, wait_healthy

    lessons = tmp_path / "lessons"
    lessons.mkdir()
    shutil.copy(LESSONS / "llm.toml", lessons / "llm.toml")
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    env = {**os.environ, WARMUP_ENV: "1", "ATTENTION_LAB_DATA": str(tmp_path), LESSONS_ENV: str(lessons),
           "PYTHONUNBUFFERED": "1"}
    server = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", "asgi.py", "--server.headless", "true", "--server.address",
         "127.0.0.1", "--server.port", str(port), "--browser.gatherUsageStats", "false"],
        cwd=ROOT, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    said: list[str] = []
    threading.Thread(target=lambda: [said.append(line) for line in server.stdout], daemon=True).start()

    async def home_text() -> str:
        client = StreamlitClient(url)
        try:
            await client.connect("", timeout=120)
            outcome = await client.rerun(client.open_page_msg(""), 120, "")
            assert outcome.ok, outcome.problems
            return " ".join(client.run_texts)
        finally:
            await client.close()

    try:
        assert wait_healthy(url, 120, lambda: server.poll() is None)
        assert WARMING_NOTE in run_in_own_loop(home_text())  # the server answers while it warms, and says so
        deadline = time.monotonic() + 900
        while not any(line.startswith(("Warm: ", "Warm-up stopped")) for line in said):
            assert time.monotonic() < deadline and server.poll() is None, "".join(said[-20:])
            time.sleep(0.5)
        assert any(line.startswith("Warm: ") for line in said), "".join(said[-20:])
        assert WARMING_NOTE not in run_in_own_loop(home_text())
        warm = _computations(url)
        assert warm['result_lookups{result="miss"}'] > 0 and any(count for name, count in warm.items()
                                                                  if name.startswith("cache_lookups"))
        run_in_own_loop(open_links(url, ["llm?lesson=llm&stop=2"]))
        after = _computations(url)
        assert {name: count for name, count in after.items() if name != "hits" and count != warm.get(name, 0)} == {}
        assert after["hits"] > warm["hits"]  # the stop read its analysis from the store
    finally:
        server.terminate()
        server.wait(timeout=30)


def test_a_replica_takes_students_after_the_first_views_and_warms_every_other_stop_right_after(monkeypatch):
    """Before ready: the pages, the models and the slowest first view; after: each remaining lesson stop once, so
    every stop is warmed and a restarted replica is back as soon as before (test_serve waits for it)."""
    from serving import warmup

    opened = []

    async def open_links(base_url, links, timeout=120.0):
        opened.extend(links)
        return [(link, 0.0) for link in links]

    async def served_page_names(base_url, timeout=120.0):  # what the server's navigation names: its pages
        return [name for name in PAGE_NAMES if name != "teacher"]

    monkeypatch.setattr(warmup, "open_links", open_links)
    monkeypatch.setattr(warmup, "served_page_names", served_page_names)
    monkeypatch.setenv(warmup.WARM_STOPS_ENV, "1")  # the suite turns it off for its servers (tests/conftest.py)
    warmup.warm_in_background("http://127.0.0.1:1", stream=open("/dev/null", "w")).join(30)
    assert set(opened) | set(warmup.BEFORE_READY_LINKS) == set(warmup.warm_links(PAGE_NAMES))
    assert not set(opened) & set(warmup.BEFORE_READY_LINKS) and len(opened) == len(set(opened))
    for launcher in ("serve.py", "serving/replica.py"):
        source = (ROOT / launcher).read_text()
        assert "links=BEFORE_READY_LINKS" in source and "warm_in_background(" in source


def test_a_launcher_told_to_leave_the_other_stops_cold_opens_none_and_says_so(monkeypatch):
    """ATTENTION_LAB_WARM_STOPS=0 (the test suite's serve.py and replicas): nothing opened after ready, one line said,
    and not a line that reads as a replica warm ("warm after", which test_serve counts)."""
    import io

    from serving import warmup

    opened, said = [], io.StringIO()

    async def open_links(base_url, links, timeout=120.0):
        opened.extend(links)
        return []

    monkeypatch.setattr(warmup, "open_links", open_links)
    monkeypatch.setenv(warmup.WARM_STOPS_ENV, "0")
    warmup.warm_in_background("http://127.0.0.1:1", stream=said).join(30)
    assert opened == [] and "left cold" in said.getvalue() and "warm after" not in said.getvalue()

"""Shared fixtures: a real `streamlit run asgi.py` server for the browser tests; the class store on both engines."""
import contextlib
import os
import tempfile
import shlex
import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCREENSHOTS = ROOT / "tests" / "screenshots"

# make test's closing table: seconds by file, tier and worker (and --suite-times: every test phase as JSON).
pytest_plugins = ("tests.suite_times",)


# A browser test that fails runs once more (pytest-rerunfailures). On CI's loaded 2-core machine two test files run at
# once, and about one browser test in 300 loses a race with Chromium or a Streamlit rerun (a click that lands while
# the page redraws). A test fails only when it fails twice in a row, so a real regression still fails, and pytest's
# summary line counts every rerun ("N rerun"), so a test that needed one is seen and its race can be fixed.
BROWSER_RERUNS = 1


def pytest_configure(config):
    """No server this test session starts warms itself (asgi.py's background warm-up, serving/warmup.py): each would
    spend a minute of CPU loading every model and opening every lesson stop. A test that wants it sets it in the
    server's env. Under xdist, each worker's torch gets its share of the cores."""
    from serving.warmup import WARM_STOPS_ENV, WARMUP_ENV

    os.environ[WARMUP_ENV] = "0"
    # Nor do serve.py's replicas open every other lesson stop once they are ready (test_serve's two, its restarted
    # one, the Kubernetes replica: 123 links each, in the background, taking the other worker's CPU): no test there
    # needs them; test_warmup tests that pass itself.
    os.environ[WARM_STOPS_ENV] = "0"
    # An xdist worker shares the machine's cores with the other workers: torch's default (a thread per core) in each
    # made two workers run four busy threads on CI's two cores. Each worker gets its share, and so do the servers and
    # scripts it starts (they inherit the variables; the app's pages already run on one thread, ui/models.py).
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "0"))
    if hasattr(config, "workerinput") and workers > 1:
        share = str(max(1, (os.cpu_count() or 1) // workers))
        for variable in ("OMP_NUM_THREADS", "MKL_NUM_THREADS"):
            os.environ.setdefault(variable, share)
        import torch

        torch.set_num_threads(int(os.environ["OMP_NUM_THREADS"]))
    # The class database and teacher password in a folder of this test session's own, never the clone's ./data: a
    # class a developer left running there (`make run`, a rehearsal) held its stop's answers back from the lesson
    # walks ("a class on this server is on this stop now"). A test that shares a folder with its servers sets its own.
    # Each xdist worker gets a folder of its own too (the controller's folder reaches the workers in their env): one
    # worker's class, started by a class test on its server, must not hold back a stop on the other worker's server.
    if "ATTENTION_LAB_DATA" not in os.environ or (hasattr(config, "workerinput")
                                                   and os.environ.get(MADE_DATA_ENV) == os.environ["ATTENTION_LAB_DATA"]):
        os.environ["ATTENTION_LAB_DATA"] = os.environ[MADE_DATA_ENV] = tempfile.mkdtemp(prefix=DATA_PREFIX)
        _made_here.append(os.environ[MADE_DATA_ENV])
    # What the first process to load SmolLM2 read from its GGUF file, kept for every other process of this run (the
    # workers, each server they start, serve.py's replicas) instead of each reading the file (bench/weights_kept.py).
    from model.gguf_weights import WEIGHTS_CACHE_ENV

    if not hasattr(config, "workerinput") and WEIGHTS_CACHE_ENV not in os.environ:
        os.environ[WEIGHTS_CACHE_ENV] = os.environ[MADE_WEIGHTS_ENV] = tempfile.mkdtemp(prefix="attention-lab-weights-")
    # Likewise the results one process computed (an analysis, a head's labels, a lesson measure; runtime/kept_results.py)
    # for the others: the two workers' AppTest runs and every server the run starts, which would each compute them
    # again. Tests of correctness compute from the models, never through this store.
    from runtime.kept_results import FOLDER_ENV

    if not hasattr(config, "workerinput") and FOLDER_ENV not in os.environ:
        os.environ[FOLDER_ENV] = os.environ[MADE_RESULTS_ENV] = tempfile.mkdtemp(prefix="attention-lab-results-")
    _scan_installed_components_once()


def pytest_unconfigure(config):
    """Each process removes the data folder it made (the controller's and each worker's); the controller the weights'
    and the kept results' folders, which every process of the run shared."""
    for made_data in _made_here:  # this process's own (a pytest a test starts inherits the variables, not this list)
        shutil.rmtree(made_data, ignore_errors=True)
    if not hasattr(config, "workerinput"):
        for made in (os.environ.get(MADE_WEIGHTS_ENV), os.environ.get(MADE_RESULTS_ENV)):
            if made:
                shutil.rmtree(made, ignore_errors=True)


MADE_WEIGHTS_ENV = "ATTENTION_LAB_TEST_WEIGHTS_MADE"  # the weights folder this test session made (removed at its end)
MADE_RESULTS_ENV = "ATTENTION_LAB_TEST_RESULTS_MADE"  # the kept results' folder it made (removed at its end)
DATA_PREFIX = "attention-lab-test-data-"
_made_here: list[str] = []  # the data folder this process made
MADE_DATA_ENV = "ATTENTION_LAB_TEST_DATA_MADE"  # the folder this test session made (not one a developer set)


def _scan_installed_components_once() -> None:
    """Every AppTest scans the installed distributions for Streamlit components (about 100 packages' metadata parsed,
    0.3-0.5 s each time on these 2 cores, once per AppTest instance: the suite makes well over a thousand). The
    installed packages do not change during a test session, so the scan's result is kept for the session. Streamlit
    has no public switch for this: its scanner is imported by name at each call (streamlit.components.v2.
    component_manager), so the module attribute is what to replace; if a Streamlit version moves it, nothing is
    replaced and AppTest scans as before."""
    import functools

    try:
        from streamlit.components.v2 import manifest_scanner
    except ImportError:
        return
    scan = getattr(manifest_scanner, "scan_component_manifests", None)
    if scan is not None and not hasattr(scan, "cache_info"):
        manifest_scanner.scan_component_manifests = functools.cache(scan)


# The longest test files, started first. `make test` hands whole files to its two workers (--dist loadfile) in
# collection order (--no-loadscope-reorder: without it pytest-xdist sorts the files by their number of tests, and this
# list only broke ties, so these started near the end and kept one worker busy for minutes after the other was done).
# Ordered by the slowest files of the last full run (bench/README.md, the `make test` row), then the files that start
# servers or hold many slow tests. `make test`'s closing table gives each file's seconds: keep this list to its top.
# Order only; a file not named keeps its place after these.
LONGEST_FILES = ("test_serve.py", "test_browser_projected_stops_llm.py", "test_browser_lessons.py",
                 "test_browser_pages_walk.py", "test_browser_projected_stops.py", "test_browser_peer.py",
                 "test_page_llm_answer.py", "test_browser.py", "test_browser_pages_walk_ko.py", "test_link_text.py",
                 "test_lesson_paths.py", "test_browser_homework.py", "test_class_store.py", "test_page_llm_heads.py",
                 "test_llm_attention_page.py", "test_browser_projected_stops_choices.py", "test_llm_page.py",
                 "test_browser_llm_answer.py", "test_page_head_finder.py", "test_shipped_models.py",
                 "test_browser_head_finder.py", "test_browser_llm.py", "test_browser_keyboard.py",
                 "test_browser_classroom.py", "test_browser_lecture.py", "test_browser_lecture2.py",
                 "test_question_rules.py", "test_lessons.py", "test_warmup.py")


def pytest_collection_modifyitems(items):
    """Mark every test that drives a real browser, so `-m "not browser"` skips it without a list to keep, and give
    it one rerun (BROWSER_RERUNS); then put the longest files first (LONGEST_FILES), each file's tests in their order."""
    from tests.suite_times import BROWSER_FIXTURES  # the browser tier's rule too (imported once pytest loaded it)

    rank = {name: place for place, name in enumerate(LONGEST_FILES)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))  # stable: the rest keep collection order
    for item in items:
        if BROWSER_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.browser)
            if item.get_closest_marker("flaky") is None:
                item.add_marker(pytest.mark.flaky(reruns=BROWSER_RERUNS, reruns_delay=2))


@pytest.fixture(autouse=True)
def _language_provider_restored():
    """Each test ends with the language provider it began with. An AppTest run installs its session's provider
    (ui/run.run_app: use_session_language), and a test that pins that provider to Korean left Korean behind for the
    next test in its worker: viz tests read "쿼리" where they expected "queries" (CI, 11 failures)."""
    import i18n

    provider = i18n._language_provider
    yield
    i18n.set_language_provider(provider)


@contextlib.contextmanager
def streamlit_server(folder: Path = ROOT, env: dict[str, str] | None = None):
    """`streamlit run asgi.py` (the app with its seat cookie, as `make run` serves it) in `folder`, or `app.py` in a
    folder without one (a toy app), on a free loopback port; yields its URL once /_stcore/health answers. It does not
    warm itself unless env sets ATTENTION_LAB_WARMUP (the benches that use it warm it with serving/warmup.py)."""
    from serving.local_server import free_port, start_streamlit, started
    from serving.warmup import WARMUP_ENV

    env = {WARMUP_ENV: "0", **(os.environ if env is None else env)}
    port = free_port()
    process = start_streamlit(folder, port, env)
    try:
        url = started(process, port, timeout=60)
    except RuntimeError as error:
        pytest.fail(str(error))
    try:
        yield url
    finally:
        process.terminate()
        process.wait(timeout=20)


@pytest.fixture()
def computed_here(monkeypatch):
    """The results store without its folder tier for this test: what it counts is what this process computes (a result
    another process of the run kept would be read, not computed; runtime/kept_results.py's own tests cover that)."""
    from runtime.kept_results import FOLDER_ENV

    monkeypatch.delenv(FOLDER_ENV, raising=False)


@pytest.fixture(scope="session")
def app_url():
    with streamlit_server() as url:
        yield url


@pytest.fixture(scope="session")
def postgres_dsn():
    """A PostgreSQL server of this test session (tests/postgres_server.py) -> the DSN of its admin database."""
    from tests.postgres_server import postgres_bin, postgres_server

    bin_folder = postgres_bin()
    if bin_folder is None:
        message = ("PostgreSQL is not installed: the class store's PostgreSQL tests need Debian's postgresql package "
                   "(scripts/system_packages.sh installs it)")
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    with postgres_server(bin_folder) as dsn:
        yield dsn


@pytest.fixture(params=["sqlite", "postgresql"])
def store_location(request, tmp_path):
    """Where a ClassStore lives, once per engine: a new SQLite file, or a new database on the session's PostgreSQL."""
    if request.param == "sqlite":
        yield str(tmp_path / "class.sqlite3")
        return
    from tests.postgres_server import fresh_database

    with fresh_database(request.getfixturevalue("postgres_dsn")) as dsn:
        yield dsn


@pytest.fixture(scope="session")
def browser():
    # Debian's headless shell (chromium-headless-shell, what Playwright itself runs headless) where installed: the
    # same Blink, without the full browser's UI layer, about a tenth less CPU a page load on these cores (most of the
    # browser tier's CPU is Chromium's); else the full browser, headless.
    # ATTENTION_LAB_TEST_CHROMIUM names another binary, ATTENTION_LAB_TEST_CHROMIUM_ARGS extra flags (bench/browser_cpu.py
    # compares them).
    chromium = (os.environ.get("ATTENTION_LAB_TEST_CHROMIUM") or shutil.which("chromium-headless-shell")
                or shutil.which("chromium") or shutil.which("chromium-browser"))
    if chromium is None:
        if os.environ.get("CI"):
            pytest.fail("Debian's chromium is not installed; .ci/run installs it with apt")
        pytest.skip("chromium not installed (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=chromium,
            args=["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                  "--disable-component-update", "--no-first-run", "--disable-sync",
                  *shlex.split(os.environ.get("ATTENTION_LAB_TEST_CHROMIUM_ARGS", ""))])
        yield browser
        browser.close()


@pytest.fixture()
def page(browser):
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    page.set_default_timeout(30000)
    yield page
    context.close()


def run_in_own_loop(coroutine):
    """asyncio.run in a thread of its own: Playwright's sync API (a browser test that ran before in this worker) keeps
    an event loop running in the main thread, where asyncio.run refuses to start another."""
    import asyncio
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coroutine).result()


@pytest.fixture(scope="session")
def reference():
    """transformers' LlamaForCausalLM on SmolLM2's shipped GGUF file (offline): the reference our Llama code, its
    logit lens and its patching are compared with (tests/test_llama.py, tests/test_logit_lens.py,
    tests/test_attribution.py). Loaded once per test worker (about 20 s; issue 52: it was loaded once per file), so a
    test that hooks into it removes its hooks in a `finally`."""
    import torch
    from transformers import LlamaForCausalLM

    from model.gguf_weights import SMOLLM2_FILE, smollm2_path

    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HF_HUB_OFFLINE", "1")
        model = LlamaForCausalLM.from_pretrained(str(smollm2_path().parent), gguf_file=SMOLLM2_FILE,
                                                 attn_implementation="eager", dtype=torch.float32)
    return model.eval()

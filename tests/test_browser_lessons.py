"""Real browsers in a live class: a student's answer is counted on the teacher's screen (a second browser
context), the teacher moves the class and the student's page follows, a student cannot reach the controls, and
two server processes on one database count every answer. The teacher reloads and has her class back; a student
reloads five times and is counted once; the projected Teacher page shows no answer before Reveal; a mischievous
student cannot get ahead of the class, answer twice or learn the answer before the Reveal (issue 36)."""
import re
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from classroom.store import DB_NAME, ClassStore
from tests.class_servers import serve as _serve, start_class as _start_class
from tests.conftest import SCREENSHOTS
from tests.browser_steps import no_exception, wait_idle
from tests.test_phone import IPHONE


@pytest.fixture(scope="module")
def class_data(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("class_data")


@pytest.fixture(scope="module")
def class_app_url(class_data):
    """A server of its own, with its class database in a fresh folder."""
    yield from _serve(class_data)


@pytest.fixture(scope="module")
def second_server_url(class_data, class_app_url):
    """Another server process on the same machine sharing that database (as serve.py's replicas do)."""
    yield from _serve(class_data)


def _next_stop_moves(teacher: Page, student: Page) -> None:
    """The teacher's Next stop: the student's page, whose class watch sees the class move, opens stop 2 by itself."""
    teacher.get_by_role("button", name="Next stop").click()
    expect(student.get_by_text("stop 2 of")).to_be_visible(timeout=15000)
    no_exception(student)


def _answered(teacher: Page):
    return teacher.get_by_test_id("stMetric").filter(has_text="Answered").get_by_test_id("stMetricValue")


def test_student_answer_counted_on_the_teacher_screen_and_the_class_follows(browser, class_app_url, class_data):
    teacher_context = browser.new_context(viewport={"width": 1280, "height": 720})
    student_context = browser.new_context(viewport={"width": 1280, "height": 720})
    try:
        teacher = teacher_context.new_page()
        code = _start_class(teacher, class_app_url, class_data)
        qr = teacher.get_by_test_id("stImage").locator("img")
        expect(qr).to_be_visible()  # the QR code of the join address
        expect(teacher.get_by_text(re.compile(rf"/\?class={code}"))).to_be_visible()
        expect(_answered(teacher)).to_have_text("0")
        teacher.screenshot(path=SCREENSHOTS / "class_teacher.png")

        student = student_context.new_page()
        student.goto(f"{class_app_url}/?class={code}")
        wait_idle(student)
        expect(student.get_by_text("stop 1 of")).to_be_visible()
        accuracy = student.get_by_role("heading", name="Accuracy against sentence length")  # the stop's section
        expect(accuracy).to_have_count(0)  # predict first
        student.get_by_test_id("stMain").get_by_text("GRU without attention (one context vector)").click()
        student.get_by_role("button", name="Answer").click()
        wait_idle(student)
        # In a class, right or wrong and the stop's chart wait for the teacher's Reveal (issue 36: nothing before it)
        expect(student.get_by_text(re.compile("^Your answer is taken: GRU without attention"))).to_be_visible()
        expect(accuracy).to_have_count(0)
        expect(student.get_by_text(re.compile("^Right:"))).to_have_count(0)
        student.screenshot(path=SCREENSHOTS / "class_student_answered.png")

        # The teacher's results refresh by themselves (st.fragment(run_every=2 s)): no click, no reload.
        expect(_answered(teacher)).to_have_text("1", timeout=15000)
        share = teacher.get_by_test_id("stMetric").filter(has_text="Share correct").get_by_test_id("stMetricValue")
        expect(share).to_have_text("–")  # before the reveal the share would give the answer away
        # One click: the button is drawn outside the results that rerun themselves every 2 s (ui/live_class/teacher._panel).
        teacher.get_by_role("button", name="Reveal the answer to everyone").click()
        expect(share).to_have_text("100%", timeout=15000)
        # the student's page, whose class watch sees the Reveal, shows the verdict and the chart by itself
        expect(student.get_by_text(re.compile("^Right:"))).to_be_visible(timeout=15000)
        expect(accuracy).to_be_visible()
        teacher.screenshot(path=SCREENSHOTS / "class_teacher_counted.png", full_page=True)

        _next_stop_moves(teacher, student)
        _a_cell_tapped_on_a_phone_and_the_taps_over_the_real_map(teacher, student, class_data, code)
        no_exception(teacher)
    finally:
        teacher_context.close()
        student_context.close()


CELL_STOP = 12  # intro: the decoding stop's cell question (tests/test_lessons.CELL_STOP)
# The page position of a cell (row, column, 0-based) of the map to tap, from plotly's own axes
CELL_AT = """([selector, row, column]) => { const gd = document.querySelector(selector);
  gd.scrollIntoView({block: 'center'});  // the point is in viewport pixels
  const layout = gd._fullLayout, box = gd.getBoundingClientRect();
  return [box.left + layout._size.l + layout.xaxis.l2p(column), box.top + layout._size.t + layout.yaxis.l2p(row)]; }"""


def _a_cell_tapped_on_a_phone_and_the_taps_over_the_real_map(teacher: Page, student: Page, data: Path, code: str):
    """Issue 55 on the same walk: the class moves to a cell question; on a 390 px screen the student taps a cell of
    the map (its weights hidden), sees her pick as tokens and answers; after the teacher's Reveal the teacher's screen
    draws the class's taps over the real map with the share right, and hers her verdict over the real map."""
    from classroom.database import DB_NAME
    from classroom.store import ClassStore

    store = ClassStore(data / DB_NAME)
    store.take_back(code).move(CELL_STOP)  # as her Next stop, clicked to it, would
    store.close()
    student.set_viewport_size({"width": 390, "height": 844})
    expect(student.get_by_text(f"stop {CELL_STOP} of")).to_be_visible(timeout=15000)
    selector = f".st-key-q_intro_{CELL_STOP}_map .js-plotly-plot"
    expect(student.locator(selector)).to_be_visible()
    wait_idle(student)
    x, y = student.evaluate(CELL_AT, [selector, 5, 1])  # on the marked row (step 6), the second English key
    student.mouse.move(x, y)  # the hover names the cell as tokens before the tap picks it
    expect(student.locator(f"{selector} .hoverlayer .hovertext")).to_contain_text("pomme → small")
    student.mouse.click(x, y)
    expect(student.get_by_text(re.compile(r"^Your pick: .+ → "))).to_be_visible(timeout=15000)
    student.screenshot(path=SCREENSHOTS / "class_cell_tapped_phone.png", full_page=True)
    student.get_by_role("button", name="Answer").click()
    expect(student.get_by_text(re.compile(r"^Your answer is taken: .+ → "))).to_be_visible(timeout=15000)
    teacher.get_by_role("button", name="Reveal the answer to everyone").click()
    taps = teacher.locator(".st-key-class_taps .js-plotly-plot")
    expect(taps).to_be_visible(timeout=15000)
    expect(taps).to_contain_text("taps over the real map")
    teacher.screenshot(path=SCREENSHOTS / "class_cell_taps_teacher.png", full_page=True)
    # her screen: her verdict over the real map (one figure for the class), drawn by her question alone
    revealed = student.locator(".st-key-cell_answer_map .js-plotly-plot")
    expect(revealed).to_contain_text("The real map", timeout=15000)
    expect(student.get_by_text(re.compile(r"^(Right|Your answer): .+ → "))).to_be_visible()
    student.screenshot(path=SCREENSHOTS / "class_cell_revealed_phone.png", full_page=True)
    no_exception(student)


def test_a_student_context_cannot_open_the_teacher_controls(browser, class_app_url, class_data):
    teacher_context = browser.new_context()
    student_context = browser.new_context()
    try:
        code = _start_class(teacher_context.new_page(), class_app_url, class_data)
        student = student_context.new_page()
        student.goto(f"{class_app_url}/teacher?class={code}")  # the code in the URL is no key to the controls
        wait_idle(student)
        expect(student.get_by_role("button", name="Reveal the answer to everyone")).to_have_count(0)
        expect(student.get_by_role("button", name="Next stop")).to_have_count(0)
        expect(student.get_by_test_id("stMetric")).to_have_count(0)
        expect(student.get_by_text("stop 1 of")).to_be_visible()  # the link made them a student of the class
        student.locator(".st-key-page_menu").get_by_role("link", name="Teacher").click()  # in the same session
        wait_idle(student)
        expect(student.get_by_text(f"This browser is a student in class {code}")).to_be_visible()
        expect(student.get_by_role("button", name="Start a class")).to_have_count(0)  # no class of her own either
        expect(student.get_by_role("button", name="Reveal the answer to everyone")).to_have_count(0)
        expect(student.get_by_role("button", name="Next stop")).to_have_count(0)
        expect(student.get_by_test_id("stMetric")).to_have_count(0)  # no class code, no results
        no_exception(student)
    finally:
        teacher_context.close()
        student_context.close()


def test_two_server_processes_share_the_class(browser, class_app_url, second_server_url, class_data):
    """The teacher is on one server, students on both: the teacher counts every answer."""
    contexts = [browser.new_context() for _ in range(3)]
    try:
        teacher = contexts[0].new_page()
        code = _start_class(teacher, class_app_url, class_data)
        for context, url in zip(contexts[1:], (class_app_url, second_server_url)):
            student = context.new_page()
            student.goto(f"{url}/?class={code}")
            wait_idle(student)
            student.get_by_test_id("stMain").get_by_text("Transformer", exact=True).click()
            student.get_by_role("button", name="Answer").click()
            wait_idle(student)
            expect(student.get_by_text(re.compile("^Your answer is taken: Transformer"))).to_be_visible()
        expect(_answered(teacher)).to_have_text("2", timeout=15000)
        no_exception(teacher)
    finally:
        for context in contexts:
            context.close()


def test_reloads_keep_the_teacher_in_control_and_count_a_student_once(browser, class_app_url, class_data):
    """The teacher reloads her page: her browser (its seat cookie) takes the class back by itself, and her next move
    reaches the student. The student reloads five times (and opens the join link again): one student, one answer,
    and their answer is shown again instead of the question."""
    teacher_context = browser.new_context(viewport={"width": 1280, "height": 720})
    student_context = browser.new_context(viewport={"width": 1280, "height": 720})
    try:
        teacher = teacher_context.new_page()
        code = _start_class(teacher, class_app_url, class_data)
        student = student_context.new_page()
        student.goto(f"{class_app_url}/?class={code}")
        wait_idle(student)
        student.get_by_test_id("stMain").get_by_text("GRU without attention (one context vector)").click()
        student.get_by_role("button", name="Answer").click()
        wait_idle(student)
        expect(_answered(teacher)).to_have_text("1", timeout=15000)
        for reload in range(5):
            if reload == 4:
                student.goto(f"{class_app_url}/?class={code}")  # the QR code scanned again
            else:
                student.reload()
            wait_idle(student)
            expect(student.get_by_text("stop 1 of")).to_be_visible()
            # their answer, not the question (its verdict waits for the Reveal)
            expect(student.get_by_text(re.compile("^Your answer is taken: GRU without attention"))).to_be_visible()
            expect(student.get_by_role("button", name="Answer")).to_have_count(0)
        teacher.reload()
        wait_idle(teacher)
        expect(teacher.get_by_test_id("stMetric").filter(has_text="Class code")
               .get_by_test_id("stMetricValue")).to_have_text(code)  # back in control, no password typed
        expect(_answered(teacher)).to_have_text("1")  # five reloads, one student
        teacher.screenshot(path=SCREENSHOTS / "class_teacher_after_reload.png")
        _next_stop_moves(teacher, student)
        no_exception(teacher)
    finally:
        teacher_context.close()
        student_context.close()


def test_the_projected_teacher_page_shows_no_answer_before_reveal(browser, class_app_url, class_data):
    """Presenter mode at 1280x720, two answers in: the counts in one neutral colour, no share right, no model's
    answer on screen; the answer appears only in the teacher's private view (a second window of her browser) and
    after Reveal. Then a text question answered on a phone: on the projector once approved and revealed."""
    contexts = [browser.new_context(viewport={"width": 1280, "height": 720}) for _ in range(3)]
    try:
        teacher = contexts[0].new_page()
        code = _start_class(teacher, class_app_url, class_data, "?presenter=true")  # (=1 is no switch value)
        for context, option in zip(contexts[1:], ("Transformer", "GRU without attention (one context vector)")):
            student = context.new_page()
            student.goto(f"{class_app_url}/?class={code}")
            wait_idle(student)
            student.get_by_test_id("stMain").get_by_text(option, exact=True).click()
            student.get_by_role("button", name="Answer").click()
            wait_idle(student)
        expect(_answered(teacher)).to_have_text("2", timeout=15000)
        wait_idle(teacher)
        main = teacher.get_by_test_id("stMain")
        expect(main.get_by_text("The model's answer")).to_have_count(0)
        expect(main.get_by_text(re.compile(r"^(right|wrong)$"))).to_have_count(0)  # no legend of verdicts
        share = teacher.get_by_test_id("stMetric").filter(has_text="Share correct").get_by_test_id("stMetricValue")
        expect(share).to_have_text("–")
        teacher.screenshot(path=SCREENSHOTS / "class_teacher_projected_before_reveal.png")
        chart = teacher.get_by_test_id("stVegaLiteChart").first.bounding_box()  # issue 38 item 4: on screen one
        assert chart is not None and chart["y"] + min(100, chart["height"]) <= 720, chart
        expect(teacher.get_by_role("button", name="Peek at the answer")).to_have_count(0)  # nothing to open here
        private = contexts[0].new_page()  # "Answer and notes": a second window of her browser, off the projector
        private.goto(f"{class_app_url}/teacher?private=true")
        wait_idle(private)
        expect(private.get_by_text("The model's answer: GRU without attention")).to_be_visible()
        expect(private.get_by_text(re.compile("^Private view: keep this screen off the projector"))).to_be_visible()
        expect(private.get_by_test_id("stMetric").filter(has_text="Share correct")
               .get_by_test_id("stMetricValue")).to_have_text("50%")  # her answers judged as they come
        private.screenshot(path=SCREENSHOTS / "class_teacher_private_view.png")
        private.close()
        expect(main.get_by_text("The model's answer")).to_have_count(0)  # the projected page still gives nothing
        teacher.get_by_role("button", name="Reveal the answer to everyone").click()
        expect(share).to_have_text("50%", timeout=15000)
        expect(teacher.get_by_role("button", name="Reveal the answer to everyone")).to_have_count(0)
        expect(main.get_by_text("The model's answer: GRU without attention")).to_be_visible()
        expect(main.get_by_text("✓ right", exact=True)).to_be_visible()  # now the bars say which is right
        wait_idle(teacher)
        teacher.screenshot(path=SCREENSHOTS / "class_teacher_projected_revealed.png")
        no_exception(teacher)

        # A text question (intro stop 16) answered on a phone: the projector shows the text only once she approved it
        # in her private view and revealed the question
        ClassStore(class_data / DB_NAME).take_back(code).move(16)  # her phone moves the class
        expect(main.get_by_text(re.compile("^The class is at stop 16 of"))).to_be_visible(timeout=15000)
        contexts.append(browser.new_context(viewport={"width": 390, "height": 844}, user_agent=IPHONE, is_mobile=True,
                                            has_touch=True))
        phone = contexts[-1].new_page()
        phone.goto(f"{class_app_url}/?class={code}")
        wait_idle(phone)
        phone.locator(".st-key-lesson_bar").get_by_role("textbox").fill("Relevant keys 🔑")
        phone.get_by_role("button", name="Answer").click()
        wait_idle(phone)
        # (her text in a bidi isolate of its own: ui/text.isolated_markdown)
        expect(phone.get_by_text(re.compile("^Your answer is taken: \u2068Relevant keys 🔑\u2069"))).to_be_visible()
        phone.screenshot(path=SCREENSHOTS / "class_text_phone.png")
        expect(_answered(teacher)).to_have_text("1", timeout=15000)
        expect(main.get_by_text("Relevant keys 🔑")).to_have_count(0)  # nothing before her approval
        private = contexts[0].new_page()
        private.goto(f"{class_app_url}/teacher?private=true")
        wait_idle(private)
        private.get_by_role("button", name="Approve all not flagged (1)").click()
        expect(private.get_by_role("button", name="Approve all not flagged (0)")).to_be_disabled(timeout=15000)
        private.screenshot(path=SCREENSHOTS / "class_text_moderation.png", full_page=True)
        private.close()
        expect(main.get_by_text("Relevant keys 🔑")).to_have_count(0)  # approved, not revealed
        teacher.get_by_role("button", name="Reveal the answer to everyone").click()
        expect(main.get_by_text("Relevant keys 🔑", exact=True).first).to_be_visible(timeout=15000)
        teacher.screenshot(path=SCREENSHOTS / "class_text_projected.png")
        no_exception(teacher)
        no_exception(phone)
    finally:
        for context in contexts:
            context.close()


def test_a_typo_saved_in_the_lesson_file_during_class_does_not_stop_it(browser, class_app_url, class_data):
    """The teacher saves a broken lesson file mid-class: her page says which line is wrong and keeps every control
    (the class runs on the copy taken at its start); her Next still moves the student; the fixed file is taken up."""
    lesson_file = class_data / "lessons" / "intro.toml"
    source = lesson_file.read_text(encoding="utf-8")
    teacher_context, student_context = browser.new_context(), browser.new_context()
    try:
        teacher = teacher_context.new_page()
        code = _start_class(teacher, class_app_url, class_data)
        student = student_context.new_page()
        student.goto(f"{class_app_url}/?class={code}")
        wait_idle(student)
        lesson_file.write_text(source.replace("[[stop]]", "[[stop]\n", 1), encoding="utf-8")
        teacher.reload()
        wait_idle(teacher)
        expect(teacher.get_by_text(re.compile("does not read now"))).to_be_visible()
        teacher.screenshot(path=SCREENSHOTS / "class_teacher_broken_lesson_file.png")
        _next_stop_moves(teacher, student)
        lesson_file.write_text(source, encoding="utf-8")
        teacher.reload()
        wait_idle(teacher)
        expect(teacher.get_by_text(re.compile("does not read now"))).to_have_count(0)
        expect(teacher.get_by_text("The class is at stop 2 of")).to_be_visible()
        no_exception(teacher)
    finally:
        lesson_file.write_text(source, encoding="utf-8")
        teacher_context.close()
        student_context.close()


def test_a_mischievous_student_cannot_get_ahead_answer_twice_or_learn_the_answer(browser, class_app_url, class_data):
    """Issue 36 in real browsers: a student edits the join link to a later stop, presses the disabled Next, answers,
    reloads and tries again; a private window opens the same stop outside the class and answers there; a third
    window opens the teacher's page with the class code. None of it moves her ahead, stores a second answer, shows
    the answer before the teacher's Reveal or reaches a teacher control; the teacher counts one answer."""
    teacher_context = browser.new_context(viewport={"width": 1280, "height": 720})
    student_context = browser.new_context(viewport={"width": 1000, "height": 900})
    private_context = browser.new_context(viewport={"width": 1000, "height": 900})
    try:
        teacher = teacher_context.new_page()
        code = _start_class(teacher, class_app_url, class_data)
        student = student_context.new_page()
        student.goto(f"{class_app_url}/?class={code}&lesson=intro&stop=3")  # the join link, edited to a later stop
        wait_idle(student)
        expect(student.get_by_text("stop 1 of")).to_be_visible()  # the class's stop, not the link's
        next_button = student.locator(".st-key-lesson_next button").first  # (a rerun may briefly hold two)
        expect(next_button).to_be_disabled()  # Next waits for the teacher
        next_button.click(force=True)  # pressed anyway: nothing moves
        wait_idle(student)
        expect(student.get_by_text("stop 1 of")).to_be_visible()

        main = student.get_by_test_id("stMain")
        main.get_by_text("Transformer", exact=True).click()
        main.get_by_role("button", name="Answer").click()
        wait_idle(student)
        expect(student.get_by_text(re.compile("^Your answer is taken: Transformer"))).to_be_visible()
        expect(student.get_by_text(re.compile("The model's answer"))).to_have_count(0)
        expect(main.get_by_role("button", name="Answer")).to_have_count(0)  # one answer: no second form
        student.reload()
        wait_idle(student)
        expect(main.get_by_role("button", name="Answer")).to_have_count(0)

        private = private_context.new_page()  # a private window: a new browser, outside the class
        private.goto(f"{class_app_url}/?lesson=intro&stop=1")
        wait_idle(private)
        private_main = private.get_by_test_id("stMain")
        private_main.get_by_text("Transformer", exact=True).click()
        private_main.get_by_role("button", name="Answer").click()
        wait_idle(private)
        expect(private.get_by_text(re.compile("A class on this server is on this stop now"))).to_be_visible()
        expect(private.get_by_text(re.compile("The model's answer"))).to_have_count(0)
        expect(private.get_by_role("heading", name="Accuracy against sentence length")).to_have_count(0)
        private.screenshot(path=SCREENSHOTS / "class_private_window_held_back.png")
        private.goto(f"{class_app_url}/teacher?class={code}")  # the code in the teacher's address
        wait_idle(private)
        expect(private.get_by_role("button", name="Reveal the answer to everyone")).to_have_count(0)
        expect(private.get_by_role("button", name="Next stop")).to_have_count(0)

        expect(_answered(teacher)).to_have_text("1", timeout=15000)  # her one answer; the private window's is not the class's
        teacher.get_by_role("button", name="Reveal the answer to everyone").click()
        expect(student.get_by_text(re.compile(
            r"^Your answer: Transformer\. The model's answer: GRU without attention"))).to_be_visible(timeout=15000)
        student.screenshot(path=SCREENSHOTS / "class_mischievous_student_after_reveal.png")
        for page in (teacher, student, private):
            no_exception(page)
    finally:
        for context in (teacher_context, student_context, private_context):
            context.close()

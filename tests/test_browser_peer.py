"""Peer instruction in real browsers: the teacher (a projector's 1280×720) and three students, each in a browser
context of her own (her own seat cookie): round 1 alone with its distribution hidden from the room until the teacher
shows it, a discussion with her countdown on every screen, round 2 with the same options, then both rounds side by
side, the shares before/after and the switch matrix after Reveal."""
import csv
import io
import re
import tempfile
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from i18n import translate
from tests.browser_steps import axe_violations, no_exception, wait_idle
from tests.conftest import SCREENSHOTS
from tests.class_servers import password as _password, serve as _serve, start_class as _start_class
from ui.live_class.class_watch import FALLBACK_SECONDS

RIGHT, WRONG = "GRU without attention (one context vector)", "Transformer"


@pytest.fixture(scope="module")
def peer_data(tmp_path_factory):
    return tmp_path_factory.mktemp("peer_data")


@pytest.fixture(scope="module")
def peer_url(peer_data):
    yield from _serve(peer_data)


def _vote(student: Page, option: str) -> None:
    """Pick the stop question's option and send its form (the first form of the stop; the check questions follow)."""
    main = student.get_by_test_id("stMain")
    main.get_by_text(option, exact=True).first.click()
    main.get_by_role("button", name="Answer").first.click()
    wait_idle(student)


def _click_once(page: Page, button: str, then) -> None:
    """Click a control of the teacher's panel once; what it opens shows. The controls are drawn outside the read-outs
    that rerun themselves every 2 s (ui/live_class/teacher._panel): one click is enough, never a second."""
    page.get_by_role("button", name=button).click()
    wait_idle(page)
    expect(then).to_be_visible(timeout=15000)


def _metric(page: Page, label: str):
    return page.get_by_test_id("stMetric").filter(has_text=label).get_by_test_id("stMetricValue").first


def test_two_rounds_with_the_teacher_and_three_students(browser, peer_url, peer_data):
    contexts = [browser.new_context(viewport={"width": 1280, "height": 720})] + [
        browser.new_context(viewport={"width": 1000, "height": 900}) for _ in range(3)]
    try:
        teacher = contexts[0].new_page()
        code = _start_class(teacher, peer_url, peer_data)
        teacher.get_by_test_id("stButtonGroup").get_by_text("Peer instruction (vote, discuss, vote again)").click()
        wait_idle(teacher)
        students = [context.new_page() for context in contexts[1:]]
        for student, option in zip(students, (RIGHT, WRONG, WRONG), strict=True):
            student.goto(f"{peer_url}/?class={code}")
            wait_idle(student)
            _vote(student, option)
            expect(student.get_by_text(re.compile(r"Wait: the class discusses next"))).to_be_visible()
            # no right or wrong before round 2, and the page (its chart gives the answer away) stays hidden
            expect(student.get_by_text(re.compile(r"^(Right|The model's answer)"))).to_have_count(0)
            expect(student.locator(".js-plotly-plot")).to_have_count(0)

        expect(_metric(teacher, "Answered")).to_have_text("3", timeout=15000)  # the live fragment refreshes itself
        expect(teacher.get_by_text(re.compile(r"hidden from the room until you show them: 3 answered"))).to_be_visible()
        expect(teacher.get_by_test_id("stVegaLiteChart")).to_have_count(0)  # no distribution on the projector
        teacher.screenshot(path=SCREENSHOTS / "peer_round1_hidden.png")
        assert not axe_violations(teacher)  # WCAG 2.1 AA: the mode control, the toggle, the countdown's screen
        teacher.get_by_text("Show round 1's answers to the room").click()
        expect(teacher.get_by_test_id("stVegaLiteChart")).to_have_count(1, timeout=15000)
        # neither the answer nor a share right on the projector before Reveal (tests/test_hidden_answers.py walks
        # every path in AppTest; this is the projected page as the room sees it)
        expect(teacher.get_by_text(re.compile(r"right alone|The model's answer"))).to_have_count(0)

        _click_once(teacher, "Close round 1, start the discussion",
                     teacher.get_by_text(re.compile(r"Discussion: \d:\d\d left")).first)
        for student in students:  # her class watch brings the discussion and its countdown
            expect(student.get_by_text(re.compile(r"Discuss with your neighbour"))).to_be_visible(timeout=30000)
            expect(student.get_by_text(re.compile(r"Discussion: \d:\d\d left")).first).to_be_visible()
            expect(student.get_by_test_id("stMain").get_by_text(RIGHT, exact=True)).to_have_count(0)  # no vote now
        # peers paired by disagreement: three different answers, one group; each student's screen names the others by
        # their seat labels (the order they joined), never an answer, within her watch's second
        assert not axe_violations(teacher)  # the groups' controls: pairs or threes, the button
        _click_once(teacher, "Pair students who disagree", teacher.get_by_text("Discussion groups: 1 (pairs)",
                                                                              exact=False))
        teacher.screenshot(path=SCREENSHOTS / "peer_groups_teacher.png")
        for student, me, others in zip(students, ("A2", "C2", "E2"), ("C2 and E2", "A2 and E2", "A2 and C2"),
                                       strict=True):
            line = translate("en", "peer.you_are", seat=me) + translate("en", "peer.talk_with", names=others)
            expect(student.get_by_test_id("stAlert").filter(has_text="Talk with")).to_contain_text(line, timeout=15000)
            expect(student.get_by_text(f", you are {me}:", exact=False)).to_be_visible()  # her class line
        # her countdown is counted by her browser (ui/live_class/countdown.js), not redrawn by the server
        clock = students[0].get_by_role("timer")
        before = clock.inner_text()
        students[0].wait_for_timeout(2100)
        assert clock.inner_text() != before and re.fullmatch(r"Discussion: \d:\d\d left", clock.inner_text())
        students[0].screenshot(path=SCREENSHOTS / "peer_student_discussion.png")
        assert not axe_violations(students[0])

        _click_once(teacher, "Open round 2", teacher.get_by_text(re.compile(r"Round 2 \(after the discussion\)")).first)
        for student, option in zip(students, (RIGHT, RIGHT, WRONG), strict=True):
            expect(student.get_by_text(re.compile(r"Round 2: answer again"))).to_be_visible(timeout=30000)
            expect(student.get_by_text(re.compile(r"Your first answer: "))).to_be_visible()
            _vote(student, option)
            expect(student.get_by_text(re.compile(r"Your second answer: "))).to_be_visible()

        expect(_metric(teacher, "Round 2 (after the discussion): Answered")).to_have_text("3", timeout=15000)
        expect(teacher.get_by_test_id("stVegaLiteChart")).to_have_count(1)  # both rounds side by side, per answer
        teacher.get_by_role("button", name="Reveal the answer to everyone").click()
        wait_idle(teacher)
        expect(_metric(teacher, "Right before")).to_have_text("33%")
        expect(_metric(teacher, "Right after")).to_have_text("67%")
        matrix = teacher.get_by_test_id("stTable").first
        expect(matrix).to_contain_text("Round 2: right")
        teacher.screenshot(path=SCREENSHOTS / "peer_after_reveal.png", full_page=True)
        # revealed: the student who changed her mind sees she is right now, her first answer beside it
        expect(students[1].get_by_text(re.compile(r"^Right"))).to_be_visible(timeout=15000)
        expect(students[1].get_by_text(re.compile(r"Your first answer was Transformer"))).to_be_visible()
        # her question's own run draws the stop's chart under her answer (accuracy by length), not a whole page
        live = students[1].locator(".st-key-revealed_section")
        expect(live.locator(".js-plotly-plot")).to_have_count(1, timeout=15000)
        expect(students[1].locator(".st-key-section_side_by_side")).to_have_count(0)
        students[1].screenshot(path=SCREENSHOTS / "peer_student_after_reveal.png", full_page=True)
        students[1].get_by_role("button", name="Show the whole page").click()  # then the rest of the stop's page
        expect(students[1].locator(".st-key-section_side_by_side")).to_have_count(1, timeout=30000)
        expect(students[1].locator(".st-key-section_length .js-plotly-plot")).to_have_count(1, timeout=30000)
        expect(live).to_have_count(0)  # the chart once, in the page
        for page in [teacher, *students]:
            no_exception(page)
        _report_downloads(browser, teacher, code)
    finally:
        for context in contexts:
            context.close()


def test_a_choice_not_yet_sent_survives_the_questions_fallback_polls(browser, peer_url, peer_data):
    """Where the class's version route cannot be asked (a proxy blocks it, or a server without it, `streamlit run
    app.py`, answers its index page: here the browser does both), the class watch reruns the question's fragment every
    FALLBACK_SECONDS (ui/live_class/class_watch.py) while a student still
    thinks: the option she picked and has not sent yet stays picked, and is the answer taken."""
    contexts = [browser.new_context(viewport={"width": 1280, "height": 720}),
                browser.new_context(viewport={"width": 400, "height": 800})]  # a phone
    try:
        code = _start_class(contexts[0].new_page(), peer_url, peer_data)
        student = contexts[1].new_page()
        asked: list[str] = []

        def blocked(route):  # refused, then answered as a server without the route does (its index page, 200)
            asked.append(route.request.url)
            if len(asked) == 1:
                route.abort()
            else:
                route.fulfill(status=200, content_type="text/html", body="<!doctype html><html></html>")

        student.route(re.compile(r"/_lab/class/[^/]+/version"), blocked)
        student.goto(f"{peer_url}/?class={code}")
        wait_idle(student)
        main = student.get_by_test_id("stMain")
        main.get_by_text(RIGHT, exact=True).first.click()
        student.wait_for_timeout(3 * FALLBACK_SECONDS * 1000)  # three of her question's fallback polls
        assert len(asked) >= 2, asked  # the watch asked, was refused, and polled on
        expect(main.get_by_role("radio", name=RIGHT).first).to_be_checked()
        main.get_by_role("button", name="Answer").first.click()
        wait_idle(student)
        expect(student.get_by_text(re.compile(r"Your answer is taken: GRU without attention"))).to_be_visible()
        no_exception(student)
    finally:
        for context in contexts:
            context.close()


def _report_downloads(browser, teacher: Page, code: str) -> None:
    """The class report: its charts on the page, its CSV, and its HTML file opened offline (plotly.js inside)."""
    teacher.get_by_text("Class report: what the class learned").click()  # opening it reads the store: no other click
    wait_idle(teacher)
    report = teacher.get_by_test_id("stExpanderDetails").filter(has_text="Anonymous: students are random ids")
    expect(report.locator(".js-plotly-plot").first).to_be_visible(timeout=15000)
    expect(report.get_by_text("Questions left out until you reveal them", exact=False)).to_contain_text(": 0.")
    expect(report.locator(".js-plotly-plot text", has_text="67%").first).to_be_visible()  # round 2's share right
    report.screenshot(path=SCREENSHOTS / "peer_class_report.png")
    with teacher.expect_download() as info:
        teacher.get_by_role("button", name="Download the report (CSV)").click()
    assert info.value.suggested_filename == f"class-{code}-report.csv"
    rows = list(csv.DictReader(io.StringIO(Path(info.value.path()).read_text(encoding="utf-8"))))
    stop1 = next(r for r in rows if r["table"] == "questions" and r["stop"] == "1")
    assert (stop1["round1_right"], stop1["round2_right"], stop1["wrong_right"]) == (str(1 / 3), str(2 / 3), "1")
    with teacher.expect_download() as info:
        teacher.get_by_role("button", name="Download the report (HTML, opens offline)").click()
    saved = Path(tempfile.mkdtemp()) / info.value.suggested_filename  # .html: the browser opens it as a page
    info.value.save_as(saved)
    offline = browser.new_context()
    try:
        offline.set_offline(True)
        page = offline.new_page()
        page.goto(saved.as_uri())
        expect(page.locator(".js-plotly-plot .main-svg").first).to_be_visible()  # drawn with no network at all
        expect(page.get_by_text("Share right per question: round 1 and round 2")).to_be_visible()
    finally:
        offline.close()


def test_korean_projected_teacher_keeps_round_one_hidden(browser, peer_url, peer_data):
    """The teacher in Korean, presenter mode at 1280×720 (what the room sees): round 1's answers are a count only
    until she shows them; a Korean student gets the round-1 message and no answer. Then both rounds to the end in
    Korean: the discussion's countdown on the student's screen, round 2, Reveal, the shares before and after."""
    teacher_context = browser.new_context(viewport={"width": 1280, "height": 720})
    student_context = browser.new_context(viewport={"width": 1000, "height": 900})
    try:
        teacher = teacher_context.new_page()
        teacher.goto(f"{peer_url}/teacher?lang=ko&presenter=true")
        wait_idle(teacher)
        teacher.locator(".st-key-class_start_password input").fill(_password(peer_data))  # the start form's field
        teacher.get_by_role("button", name=translate("ko", "class_teacher.start")).click()
        wait_idle(teacher)
        code = _metric(teacher, translate("ko", "class_teacher.code")).inner_text()
        teacher.get_by_test_id("stButtonGroup").get_by_text(translate("ko", "peer.mode_peer")).click()
        wait_idle(teacher)
        student = student_context.new_page()
        student.goto(f"{peer_url}/?class={code}&lang=ko")
        wait_idle(student)
        main = student.get_by_test_id("stMain")
        main.get_by_text("트랜스포머", exact=True).first.click()
        main.get_by_role("button", name=translate("ko", "lessons.submit")).first.click()
        wait_idle(student)
        done = translate("ko", "peer.first_round_done", answer="트랜스포머")
        expect(student.get_by_text(done)).to_be_visible()
        hidden = translate("ko", "peer.round_one_hidden", answered=1)
        expect(teacher.get_by_text(hidden)).to_be_visible(timeout=15000)
        expect(teacher.get_by_test_id("stVegaLiteChart")).to_have_count(0)
        expect(teacher.get_by_text(re.compile(r"\d+%"))).to_have_count(0)  # no share on the projector either
        teacher.screenshot(path=SCREENSHOTS / "peer_round1_hidden_ko_presenter.png")
        teacher.get_by_text(translate("ko", "peer.show_round_one")).click()
        expect(teacher.get_by_test_id("stVegaLiteChart")).to_have_count(1, timeout=15000)
        wait_idle(teacher)
        chart = teacher.get_by_test_id("stVegaLiteChart").first.bounding_box()  # issue 38 item 4: on screen one
        assert chart is not None and chart["y"] + min(100, chart["height"]) <= 720, chart
        left = re.compile(re.escape(translate("ko", "peer.time_left", time="@")).replace("@", r"\d:\d\d"))
        _click_once(teacher, translate("ko", "peer.start_discussion"), teacher.get_by_text(left).first)
        expect(student.get_by_text(translate("ko", "peer.discussion"))).to_be_visible(timeout=30000)
        expect(student.get_by_text(left).first).to_be_visible()
        expect(student.get_by_role("timer")).to_have_text(left)  # her browser's countdown, in Korean
        student.screenshot(path=SCREENSHOTS / "peer_student_discussion_ko.png")
        _click_once(teacher, translate("ko", "peer.open_round_two"), teacher.get_by_text(
            re.compile(re.escape(translate("ko", "peer.round_two")))).first)
        expect(student.get_by_text(translate("ko", "peer.second_round"))).to_be_visible(timeout=30000)
        main.get_by_text("어텐션 없는 GRU (문맥 벡터 하나)", exact=True).first.click()  # she changed her mind
        main.get_by_role("button", name=translate("ko", "lessons.submit")).first.click()
        wait_idle(student)
        expect(student.get_by_text(translate("ko", "peer.second_round_done",
                                             answer="어텐션 없는 GRU (문맥 벡터 하나)"))).to_be_visible()
        teacher.get_by_role("button", name=translate("ko", "class_teacher.reveal")).click()
        wait_idle(teacher)
        expect(_metric(teacher, translate("ko", "peer.before"))).to_have_text("0%", timeout=15000)
        expect(_metric(teacher, translate("ko", "peer.after"))).to_have_text("100%")
        teacher.screenshot(path=SCREENSHOTS / "peer_after_reveal_ko_presenter.png", full_page=True)
        # the class report, opened: the answers stored now, with no button to build it (issue 38, item 1)
        teacher.get_by_text(translate("ko", "report.open")).click()
        wait_idle(teacher)
        report = teacher.get_by_test_id("stExpanderDetails").filter(
            has_text=translate("ko", "report.retention", days="7"))
        expect(report.locator(".js-plotly-plot text", has_text="100%").first).to_be_visible(timeout=15000)
        expect(report.get_by_role("button", name=translate("ko", "report.csv"))).to_be_visible()
        report.screenshot(path=SCREENSHOTS / "peer_class_report_ko.png")
        # projected: the charts' axis labels, titles and legend readable from the back row (viz/classroom.readable)
        sizes = teacher.evaluate("""() => Array.from(document.querySelectorAll(
            '[data-testid="stVegaLiteChart"] svg text')).filter(t => t.textContent.trim())
            .map(t => parseFloat(getComputedStyle(t).fontSize))""")
        assert sizes and min(sizes) >= 14, sizes
        no_exception(teacher)
        no_exception(student)
    finally:
        teacher_context.close()
        student_context.close()


def test_the_teacher_projects_a_students_view_without_a_name_and_takes_it_down(browser, peer_url, peer_data):
    """Issue 55, part 4, as the room sees it: at intro stop 6 ("explain with a view") a student on a phone sets the
    page and sends her view; in her private view the teacher projects it; the projector (1280×720) and the student's
    screen show it without a name or seat label, as its page and values with a button that opens the view (a link of
    this app); one click on the projector takes it down everywhere."""
    from classroom.store import DB_NAME, ClassStore

    contexts = [browser.new_context(viewport={"width": 1280, "height": 720}),
                browser.new_context(viewport={"width": 390, "height": 844})]  # the teacher, a student's phone
    try:
        teacher = contexts[0].new_page()
        code = _start_class(teacher, peer_url, peer_data)
        store = ClassStore(str(peer_data / DB_NAME))
        store.take_back(code).move(6)  # her other device moves the class: the projector follows it
        student = contexts[1].new_page()
        student.goto(f"{peer_url}/?class={code}")
        wait_idle(student)
        send = student.get_by_role("button", name=translate("en", "showcase.send_view"))
        expect(send).to_be_visible(timeout=30000)
        expect(student.locator(".st-key-section_row .js-plotly-plot").first).to_be_visible()  # the page, before
        send.click()
        wait_idle(student)
        expect(student.get_by_text("Your view is sent: Softmax scaling", exact=False)).to_be_visible()
        private = contexts[0].new_page()  # her second window: the class taken back by her seat
        private.goto(f"{peer_url}/teacher?private=true")
        wait_idle(private)
        picker = private.get_by_test_id("stExpander").filter(has_text="Project a student's answer")
        picker.get_by_role("button", name="Project").first.click()
        wait_idle(private)
        expect(picker.get_by_role("button", name="On now")).to_be_visible(timeout=15000)
        private.screenshot(path=SCREENSHOTS / "showcase_private_pick.png", full_page=True)
        shown = teacher.locator(".st-key-projected_item")  # the projector follows within its 2 s read-out
        expect(shown).to_contain_text("From the class (anonymous)", timeout=15000)
        expect(shown).to_contain_text("dk = 512")
        link = shown.get_by_role("link", name="Open this view")
        href = link.get_attribute("href")
        assert href.startswith("softmax_scaling?") and "presenter" not in href and "//" not in href, href
        with store.connect() as db:
            seats = [label for (label,) in db.execute("SELECT label FROM seats WHERE code = ?", (code,))]
        assert seats and not any(re.search(rf"\b{label}\b", shown.inner_text()) for label in seats)
        teacher.screenshot(path=SCREENSHOTS / "showcase_projector.png")
        assert not axe_violations(teacher)
        on_phone = student.locator(".st-key-projected_item")  # her class watch brings it to her phone
        expect(on_phone).to_contain_text("a student's view", timeout=15000)
        student.screenshot(path=SCREENSHOTS / "showcase_phone.png", full_page=True)
        shown.get_by_role("button", name="Take it down").click()
        wait_idle(teacher)
        expect(shown).to_have_count(0, timeout=15000)
        expect(on_phone).to_have_count(0, timeout=15000)
        assert store.projected(code) is None
        for page in (teacher, private, student):
            no_exception(page)
    finally:
        for context in contexts:
            context.close()

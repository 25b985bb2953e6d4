"""Every stop of the shipped lessons projected (Chromium, 1280×720, presenter mode), in English and in Korean, reached
as the teacher's screen reaches it (stop 1 by its link, then Next): once its prediction is made (a question hides the page until then),
the element that makes the stop's point starts on the first screen with at least 300 px of it visible (all of it
when it is shorter), and no text on that screen that carries meaning is under 14 CSS px (chart SVG text included:
tick labels, colour bars, legends, thumbnail titles, pattern labels; the step tables), no chart title sticks out of its
chart or covers another of its texts and no two texts of a chart cover each other (tests/chart_text.py, the charts
the stop draws, its folded sections left folded). On the same walk axe-core
finds no WCAG 2.1 AA violation, nor text under AAA's 7:1 contrast (the projector's rule), on each stop's page and on
the lesson bar's question of each kind before it is answered (tests/test_browser_pages_walk.py checks every page
outside a lesson, in English at the desk and Korean projected; a stop draws its page's widgets).

The focus element: the stop's section when it names one (ui/page_sections.py), and then its first chart or table
too, at least CHART_SEEN px of it (issue 51 found a section on the first screen with only its chart's title);
otherwise the page's first chart, table or form outside the lesson bar (the page puts it first under a projected
stop: ui/presenter.chart_first).
Measured, not assumed: element boxes and computed font sizes as the browser lays them out.
"""
from urllib.parse import parse_qsl, urlsplit

import pytest
from playwright.sync_api import Page, expect

from classroom.lessons import load_lessons
from i18n import translate
from tests.browser_steps import axe_violations, no_exception, wait_idle
from tests.chart_text import clipped_titles, text_overlaps
from tests.conftest import SCREENSHOTS
from ui.lessons.catalogue import known_pages

FOLD, WIDTH = 720, 1280
SEEN = 300  # px of the focus element on the first screen (or all of it, when it is shorter)
# px of a section's first chart or table on it: its title and the top of its plot, where the values that answer the
# stop are read (issue 51: answer stop 2 showed the patching map's title and rows L29–L27, about 170 px, and passed)
CHART_SEEN = 200
SMALLEST = 14  # CSS px
ANSWER = {"en": "Answer", "ko": "답하기"}
CHARTS = ".js-plotly-plot, .vega-embed, [data-testid=\"stDataFrame\"]"
FOCUS = ('[data-testid="stMain"] .js-plotly-plot, [data-testid="stMain"] .vega-embed, '
         '[data-testid="stMain"] [data-testid="stDataFrame"], [data-testid="stMain"] [data-testid="stForm"]')
# Text on the first screen under 14 px (a zero-width strut of KaTeX is no text; its MathML copy is for screen readers
# and clipped to nothing), and the focus element's box.
MEASURE = """([selector, charts, fold, width, smallest]) => {
  const onScreen = el => { const r = el.getBoundingClientRect();
    return r.width > 0 && r.height > 0 && r.top < fold && r.bottom > 0 && r.left < width; };
  const main = document.querySelector('[data-testid="stMain"]');
  const small = [];
  const hidden = el => el.closest('.katex-mathml') || el.closest('[class*="st-key-chart_words"]');
  for (const t of main.querySelectorAll('svg text')) {
    if (!t.textContent.trim() || hidden(t) || !onScreen(t)) continue;
    const size = parseFloat(getComputedStyle(t).fontSize);
    if (size < smallest) small.push(`svg ${size}px "${t.textContent.trim().slice(0, 24)}"`);
  }
  const walker = document.createTreeWalker(main, NodeFilter.SHOW_TEXT);
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    const el = n.parentElement;
    if (!el || !n.textContent.replace(/[\\u200b\\s]/g, '') || el.closest('svg') || hidden(el) || !onScreen(el)) continue;
    const style = getComputedStyle(el);
    if (style.visibility === 'hidden') continue;
    const size = parseFloat(style.fontSize);
    if (size < smallest) small.push(`${el.tagName} ${size}px "${n.textContent.trim().slice(0, 24)}"`);
  }
  const focus = [...document.querySelectorAll(selector)].find(el => !el.closest('.st-key-lesson_bar'));
  const chart = focus && focus.querySelector(charts);  // a section's chart: what answers the stop's question
  const seen = el => { if (!el) return null; const box = el.getBoundingClientRect();
    return {top: box.top, height: box.height, seen: Math.min(fold, box.bottom) - Math.max(0, box.top)}; };
  return {small, focus: seen(focus), chart: seen(chart)};
}"""

LESSONS = load_lessons(known_pages())[0]
# Every keyed picker's value as the browser shows it on the page (the lesson bar's question left out; the sidebar's
# model, language and presenter mode are in the address): a combobox's text, a slider's value text, a segmented
# control's or radio's choice, a switch's state.
PICKERS = """() => { const out = {};
  const main = document.querySelector('[data-testid="stMain"]');
  for (const box of main.querySelectorAll('[data-testid="stElementContainer"][class*="st-key-"]')) {
    if (box.closest('.st-key-lesson_bar')) continue;
    const key = [...box.classList].find(c => c.startsWith('st-key-')).slice(7);
    const combo = box.querySelector('input[role=combobox]'); if (combo) { out[key] = combo.value; continue; }
    const slider = box.querySelector('[role=slider]');
    if (slider) { out[key] = slider.getAttribute('aria-valuetext'); continue; }
    if (box.querySelector('button[role=radio]')) { out[key] = Array.from(
      box.querySelectorAll('button[aria-checked=true]')).map(b => b.innerText.trim()).join(','); continue; }
    const radio = box.querySelector('input[type=radio]:checked');
    if (radio) { out[key] = radio.closest('label').innerText.trim(); continue; }
    const number = box.querySelector('input[type=number]'); if (number) { out[key] = number.value; continue; }
    const check = box.querySelector('input[type=checkbox]'); if (check) out[key] = String(check.checked);
  }
  return out; }"""
ALERTS = "() => Array.from(document.querySelectorAll('[data-testid=\"stAlert\"]')).map(e => e.innerText)"
# Presenter mode's text size (1.25rem) on the page's paragraphs: its CSS has been applied.
PRESENTER_STYLED = """() => { const p = document.querySelector('[data-testid="stMain"] p');
  return !p || parseFloat(getComputedStyle(p).fontSize) >= 19.5; }"""


def predict(page: Page, stop, language: str) -> None:
    """Make the stop's prediction (any answer will do): the page the question hides is then drawn."""
    bar = page.locator(".st-key-lesson_bar")
    kind = stop.question.kind
    if kind == "head":
        bar.locator('[class*="_L0_H0"] button').first.click()  # layer 1, head 1 of the grid (its key)
    elif kind == "view":  # explain with a view: the page shows already; the view it shows, sent
        bar.get_by_role("button", name=translate(language, "showcase.send_view")).click()
    else:
        if kind == "choice":
            bar.get_by_role("radio").first.check(force=True)
        elif kind == "token":
            bar.locator('[data-testid="stButtonGroup"] button').first.click()
        elif kind == "text":
            bar.get_by_role("textbox").first.fill("keys")
        elif kind == "cell":  # its token lists (the map's keyboard twin) and Answer: one form
            groups = bar.locator('[data-testid="stButtonGroup"]')
            for index in range(groups.count()):
                groups.nth(index).locator("button").first.click()
        else:
            bar.locator('input[type="number"]').first.fill("1")
        bar.get_by_role("button", name=ANSWER[language]).click()
    # The pointer leaves the page's content: where the button was, the redrawn page may put a help icon, whose tooltip
    # then fades in under the pointer and axe read its half-faded text (#a5a5a5 on white: a full run, ko-llm stop 2)
    page.mouse.move(1, FOLD // 2)
    wait_idle(page)


# The lessons walked here; every other shipped lesson is walked by tests/test_browser_projected_stops_llm.py (the
# walks of all lessons in one file took over 4 minutes, one worker's share, issue 52).
HERE = ("intro",)


@pytest.mark.parametrize("lesson_id", HERE)
@pytest.mark.parametrize("language", ["en", "ko"])
def test_every_projected_stop_opens_on_its_point_in_text_a_room_can_read(page: Page, app_url, language, lesson_id):
    walk_projected_lesson(page, app_url, language, lesson_id)


def walk_projected_lesson(page: Page, app_url: str, language: str, lesson_id: str) -> None:
    """The lesson as the teacher gives it: stop 1 by its link, then each stop by Next (issue 52: one walk, every check
    at each stop it opens; a stop by its link cost a new session and front end each, about 3 s more than a Next). The
    address names the stop, and no notice says a value did not fit (issue 37). That Next shows what the stop's link
    shows (its pickers' values and its address) is held in AppTest, stop by stop (tests/test_lesson_paths.py, with the
    pickers as the browser shows them) and by the resolver (tests/test_view_resolution.py)."""
    page.set_viewport_size({"width": WIDTH, "height": FOLD})
    lesson = LESSONS[lesson_id]
    failures, unreadable, asked = [], {}, set()
    page.goto(f"{app_url}/?lesson={lesson_id}&stop=1&lang={language}&presenter=true")
    for stop in lesson.stops:
        if stop.number > 1:
            page.locator(".st-key-lesson_next button").click()
            where = translate(language, "projected_lesson.bar_title", stop=stop.number, stops=len(lesson.stops), title="")
            expect(page.locator(".st-key-lesson_bar p").first).to_contain_text(where.replace("*", "").strip())
        address = dict(_open_stop(page, stop, language, unreadable, asked)[0])
        if (address.get("lesson"), address.get("stop")) != (lesson_id, str(stop.number)):
            failures.append(f"stop {stop.number} by Next: the address names {address}")
        selector = f".st-key-section_{stop.section}" if stop.section else FOCUS
        expect(page.locator('[data-stale="true"]')).to_have_count(0)  # the run's own elements, none left faded
        page.screenshot(path=SCREENSHOTS / f"projected_{lesson_id}_stop_{stop.number:02d}_{language}_answered.png")
        seen = page.evaluate(MEASURE, [selector, CHARTS, FOLD, WIDTH, SMALLEST])
        focus = seen["focus"]
        if focus is None or focus["top"] >= FOLD or focus["seen"] < min(SEEN, focus["height"]) - 1:
            failures.append(f"stop {stop.number} ({stop.page}): focus {focus}")
        if (chart := seen["chart"]) is not None and chart["seen"] < min(CHART_SEEN, chart["height"]) - 1:
            failures.append(f"stop {stop.number} ({stop.page}): its section's chart {chart}")
        if seen["small"]:
            failures.append(f"stop {stop.number} ({stop.page}): text under {SMALLEST} px: {seen['small'][:5]}")
        if layout := clipped_titles(page) + text_overlaps(page):  # issue 52: every check at each stop
            failures.append(f"stop {stop.number} ({stop.page}): {layout[:5]}")
        # issue 38 item 2: the lesson bar's Next is the only button called Next (a page's stepper says what it steps)
        nexts = page.get_by_role("button", name=translate(language, "lessons.next"), exact=True)
        if nexts.count() != 1 or page.locator(".st-key-lesson_bar").get_by_role(
                "button", name=translate(language, "lessons.next"), exact=True).count() != 1:
            failures.append(f"stop {stop.number} ({stop.page}): {nexts.count()} buttons called Next")
        if (lesson_id, stop.number) == ("intro", 1):  # issue 38 item 4: which line is which model, on screen one
            legend = page.locator(".st-key-section_length .js-plotly-plot .legend").first.bounding_box()
            if legend is None or legend["y"] + legend["height"] > FOLD:
                failures.append(f"intro stop 1: the legend at {legend}, below the first screen")
    failures += [f"{view}: {line}" for view, lines in unreadable.items() for line in lines]
    assert not failures, "\n".join(failures)
    if lesson_id == "intro":
        _all_labels_of_a_sixteen_token_head_view(page, app_url, language)


def _all_labels_of_a_sixteen_token_head_view(page: Page, app_url: str, language: str) -> None:
    """Issue 38 item 8: projected, the real encoder's head view of the issue's sentence (16 word pieces) beside its
    lines view labels every token on both axes, none overlapping (labels are thinned by measured width only where
    they would overlap)."""
    sentence = "The animal didn't cross the street because it was too tired."
    page.goto(f"{app_url}/attention?model=all-MiniLM-L6-v2&layer=2&head=4&lang={language}&presenter=true"
              f"&sentence={sentence.replace(' ', '+')}")
    chart = page.locator(".st-key-head_heatmap .js-plotly-plot")
    expect(chart.locator(".xtick text").first).to_be_visible(timeout=60000)
    wait_idle(page)
    chart.screenshot(path=SCREENSHOTS / f"projected_head_view_16_tokens_{language}.png")
    boxes = {axis: chart.locator(f".{axis}tick text").evaluate_all(
        "els => els.map(e => { const r = e.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; })")
        for axis in ("x", "y")}
    assert len(boxes["x"]) == len(boxes["y"]) == 16, {axis: len(b) for axis, b in boxes.items()}
    for axis, along in (("x", 0), ("y", 1)):  # neighbours apart along their axis: no two labels overlap
        spans = sorted((b[along], b[along + 2]) for b in boxes[axis])
        assert all(end <= start + 1 for (_, end), (start, _) in zip(spans, spans[1:])), (axis, spans)


def _open_stop(page: Page, stop, language: str, unreadable: dict | None = None, asked: set | None = None) -> tuple:
    """The stop opened (its prediction made): -> its address (lesson, stop and view, as a set of pairs) and every
    picker's value shown; a notice that a value did not fit fails the test at once. With `unreadable`, axe-core's
    violations (presenter mode's enhanced contrast) of the stop's page and, once per kind of question (`asked`),
    of the unanswered question, by view."""
    expect(page.locator(".st-key-lesson_bar")).to_be_visible()
    wait_idle(page)
    # The projected styling (ui/sidebar.py's presenter CSS, drawn in the page's run after the lesson bar) is on the
    # page before axe reads its contrast: under the full suite's load the bar's question was read before it (16 px
    # text, the theme's alert colours).
    page.wait_for_function(PRESENTER_STYLED, timeout=60000)
    if stop.question is not None:
        if unreadable is not None and stop.question.kind not in asked:
            asked.add(stop.question.kind)
            if found := axe_violations(page, enhanced_contrast=True):
                unreadable[f"stop {stop.number}, its {stop.question.kind} question"] = found
        predict(page, stop, language)
    selector = f".st-key-section_{stop.section}" if stop.section else FOCUS
    expect(page.locator(selector).first).to_be_visible()
    wait_idle(page)
    no_exception(page)
    if unreadable is not None:
        expect(page.locator('[data-stale="true"]')).to_have_count(0, timeout=90000)  # axe would read faded text
        if found := axe_violations(page, enhanced_contrast=True):
            unreadable[f"stop {stop.number} ({stop.page})"] = found
    unfit = [translate(language, key, names="").strip()[:24] for key in ("share.bad_link", "lessons.stale_state")]
    alerts = page.evaluate(ALERTS)
    assert not [text for text in alerts if any(part in text for part in unfit)], (stop.number, alerts)
    address = frozenset(parse_qsl(urlsplit(page.url).query))
    return address, page.evaluate(PICKERS)

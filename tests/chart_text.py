"""Where the text of a page's Plotly charts lies once drawn, as a teacher sees it (Chromium, getBoundingClientRect):
a title outside its chart or over another text of it (clipped_titles), any two texts of a chart covering each other
(overlapping_texts, text_overlaps). The page's folded sections are opened first (open_folded_sections): a chart in a
closed one is not drawn, so it has no layout to check."""
from playwright.sync_api import Page

from tests.browser_steps import wait_drawn

# Per chart: its svg's box, and the boxes of its title and of the other titles it could run into (subplot titles,
# axis titles, colour-bar titles, a legend's entries). A box: [kind, text, left, top, right, bottom].
TITLE_BOXES = """() => [...document.querySelectorAll('.js-plotly-plot')].map(plot => {
  const box = el => { const r = el.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; };
  const svg = box(plot.querySelector('svg.main-svg'));
  const texts = kind => [...plot.querySelectorAll(kind)].filter(el => el.getBoundingClientRect().width > 0)
    .map(el => [kind, (el.textContent || '').slice(0, 60), ...box(el)]);
  return {svg, titles: texts('.gtitle'), others: [...texts('.annotation-text-g'), ...texts('.xtitle'),
          ...texts('.ytitle'), ...texts('.cbtitle'), ...texts('.legendtext')]}; })"""

# Text boxes of every Plotly chart: titles, subplot titles, axis titles, colour-bar titles and numbers, cell texts,
# legend entries. A box: [kind, text, left, top, right, bottom]. A heatmap cell's one line of text is boxed by its ink
# (the glyphs' own top and bottom, canvas measureText in the same font), every other text by its lines (the font's
# ascent and descent): a map of 31 layer rows writes a token in each 20 px row at 18 px projected, whose 24 px lines
# overlap the rows above and below while no glyph comes near another (the logit lens map, issue 52).
TEXT_BOXES = """() => { const ink = document.createElement('canvas').getContext('2d');
  const inkBox = (el, r) => {
    const style = getComputedStyle(el);
    ink.font = `${style.fontStyle} ${style.fontWeight} ${style.fontSize} ${style.fontFamily}`;
    const m = ink.measureText(el.textContent || ''), line = m.fontBoundingBoxAscent + m.fontBoundingBoxDescent;
    if (r.height > 1.5 * line) return [r.left, r.top, r.right, r.bottom];  // lines of text: measured as lines
    const baseline = r.bottom - m.fontBoundingBoxDescent;
    return [r.left, baseline - m.actualBoundingBoxAscent, r.right, baseline + m.actualBoundingBoxDescent]; };
  return [...document.querySelectorAll('.js-plotly-plot')].map(plot => {
  const kinds = ['.gtitle', '.annotation-text-g', 'g[class^="g-x"]', 'g[class^="g-y"]', '.cbtitle',
                 '.colorbar .cbaxis text', '.heatmaplayer text', '.textpoint', 'g.xtick text', 'g.ytick text',
                 '.legendtext'];
  const boxes = [];
  for (const kind of kinds) for (const el of plot.querySelectorAll(kind)) {
    const r = el.getBoundingClientRect();
    const where = kind === '.heatmaplayer text' ? inkBox(el, r) : [r.left, r.top, r.right, r.bottom];
    if (r.width && r.height) boxes.push([kind, (el.textContent || '').slice(0, 40), ...where]);
  }
  return boxes; }); }"""


# Click every folded section of the main part at once (a section unfolds in an animation of about half a second that
# moves everything under it: one at a time, each click would wait for the last to end) -> how many were clicked.
_UNFOLD = """() => {
  window.__unfolding = [...document.querySelectorAll('[data-testid="stMain"] [data-testid="stExpander"] details')]
    .filter(section => !section.open);
  window.__unfolding.forEach(section => section.querySelector('summary').click());
  return window.__unfolding.length; }"""
_UNFOLDED = "() => window.__unfolding.every(section => section.open && section.getAnimations().length === 0)"


def _cover(a: list, b: list) -> bool:
    """Two boxes cover each other by more than a pixel each way."""
    return min(a[4], b[4]) - max(a[2], b[2]) > 1 and min(a[5], b[5]) - max(a[3], b[3]) > 1


def open_folded_sections(page: Page) -> None:
    """Open every folded section (st.expander) of the page's main part, as a teacher does, and wait until each has
    finished unfolding and what it holds is drawn; then the sections that held (a projected explanation inside a
    section), the same way. A section open already is left open (a click would fold it)."""
    for _ in range(4):
        wait_drawn(page)
        if not page.evaluate(_UNFOLD):
            return
        page.wait_for_function(_UNFOLDED)
    raise AssertionError("a folded section still folded after four rounds of opening")


def clipped_titles(page: Page) -> list[str]:
    """Titles of the page's charts (as now drawn: open_folded_sections first) that stick out of their chart or
    overlap another text of it."""
    found = []
    for chart in page.evaluate(TITLE_BOXES):
        left, top, right, bottom = chart["svg"]
        for title in chart["titles"]:
            if title[2] < left - 1 or title[3] < top - 1 or title[4] > right + 1 or title[5] > bottom + 1:
                found.append(f"outside its chart: {title[1]!r}")
            found += [f"{title[1]!r} overlaps {other[0]} {other[1]!r}" for other in chart["titles"] + chart["others"]
                      if other is not title and _cover(title, other)]
    return found


def text_overlaps(page: Page) -> list[str]:
    """Every chart of the page (as now drawn) has text, and no two texts of a chart cover each other."""
    found = []
    for number, boxes in enumerate(page.evaluate(TEXT_BOXES)):
        if not boxes:
            found.append(f"chart {number} has no text")
        found += [f"chart {number}: {a} covers {b}" for a, b in overlapping_texts(boxes)]
    return found


def overlapping_texts(boxes: list) -> list[tuple[str, str]]:
    """Pairs of one chart's text boxes (TEXT_BOXES) that cover each other by more than a pixel each way (ticks of one
    axis are not compared: plotly spaces them itself)."""
    found = []
    for i, a in enumerate(boxes):
        for b in boxes[i + 1:]:
            if a[0] == b[0] and a[0] in ("g.xtick text", "g.ytick text"):
                continue
            if _cover(a, b):
                found.append((f"{a[0]} {a[1]!r}", f"{b[0]} {b[1]!r}"))
    return found

"""A cell question's answers once they may be shown (issue 55; ui.lessons.questions.answer_shown: after the teacher's
Reveal, or on her private screen), since the real map is the answer. On the teacher's screen: the class's taps as a
density over the real map, the right cells framed, and the share right; before it the room sees the answer bars only,
in one neutral colour, as for every question. On a student's, under her verdict: the real map with its right cells,
one figure for the whole class (at a Reveal a replica's 150 students draw it within a second)."""
from __future__ import annotations

from collections.abc import Sequence

from classroom.lessons import Stop
from classroom.measures import Expected, cell_of
from classroom.records import Results
from i18n import tr
from ui.charts import shared_figure, show_chart
from ui.language import words_for
from viz.cells import answer_map, tap_density


def class_taps(stop: Stop, rounds: Sequence[Results], expected: Expected | None, shown: bool) -> None:
    """The taps of the latest round that has answers (a peer question's round 2 once it has them) over the stop's
    map, when `shown`; nothing for another kind of question or before the answer may be shown."""
    if stop.question is None or stop.question.kind != "cell" or not shown or expected is None or expected.cells is None:
        return
    results = next((r for r in reversed(rounds) if r.answered), None)
    if results is None:
        return
    cells = expected.cells
    taps = {cell: count for answer, count in results.counts.items() if (cell := cell_of(answer)) is not None
            and cell[0] < len(cells.rows) and cell[1] < len(cells.columns)}
    right = [cell_of(answer) for answer in expected.accepted]
    share = "–" if results.correct is None else f"{results.correct / results.answered:.0%}"
    title = tr("class_teacher.taps_title", share=share, answered=results.answered)
    fig = tap_density(cells.weights, list(cells.rows), list(cells.columns), taps, [c for c in right if c], title,
                      words=words_for("attention"))
    show_chart(fig, "class_taps", key="class_taps")


def revealed_map(expected: Expected) -> None:
    """The real map of a revealed cell question with its right cells framed, as a student sees it under her verdict:
    built once per map and language for every session (ui.charts.shared_figure), never per student."""
    cells = expected.cells
    right = tuple(sorted(cell for cell in map(cell_of, expected.accepted) if cell is not None))
    key = ("cell_answer_map", cells.weights.tobytes(), cells.weights.shape, cells.rows, cells.columns, right)
    fig = shared_figure(key, lambda: answer_map(cells.weights, list(cells.rows), list(cells.columns), right,
                                                tr("cell_reveal.map_title"), words=words_for("attention")))
    show_chart(fig, "cell_answer_map", key="cell_answer_map")

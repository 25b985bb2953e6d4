"""A cell question's answers on the teacher's screen (issue 55): the class's taps as a density over the real map, the
right cells framed, and the share right; only once the answer may be shown (ui.lessons.questions.answer_shown: after
her Reveal, or on her private screen), since the real map is the answer. Before it the room sees the answer bars only,
in one neutral colour, as for every question."""
from __future__ import annotations

from collections.abc import Sequence

from classroom.lessons import Stop
from classroom.measures import Expected, cell_of
from classroom.records import Results
from i18n import tr
from ui.charts import show_chart
from ui.language import words_for
from viz.cells import tap_density


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

"""A cell question's map (issue 55): the attention map a student taps, and its right cells.

A cell measure returns a CellMap: one map of the model the stop shows, (T_q, T_k), with the tokens on both axes as
its page draws them. The question may name a query row (`row`: the query token's text, its first occurrence, or its
1-based position); then a tap names a key of that row. The answer is canonical text, the same in every language: the
1-based "query,key" positions ("9,3"). Right: the measured argmax (of the row, or of the whole map), or one of the top
`top` cells where the lesson allows that many; or the lesson's fixed cell. The store takes only a cell of the map (the
row's, when one is named): `answers()` is the set the server hands it (classroom/store.ClassStore.answer).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, replace

import numpy as np

from classroom.measures.registry import Asked, Expected, MeasureError, Phrase

_CELL = re.compile(r"([1-9][0-9]{0,4}),([1-9][0-9]{0,4})")


def cell_answer(query: int, key: int) -> str:
    """A cell (0-based row and column) as its canonical answer: 1-based "query,key"."""
    return f"{query + 1},{key + 1}"


def cell_of(answer: str) -> tuple[int, int] | None:
    """A canonical answer -> its (row, column), 0-based; None when it is no cell's text."""
    match = _CELL.fullmatch(answer)
    return None if match is None else (int(match.group(1)) - 1, int(match.group(2)) - 1)


@dataclass(frozen=True, eq=False)
class CellMap:
    """weights (T_q, T_k): the map a cell question asks about; rows and columns: its query and key tokens as the
    page's heatmap writes them (plain text, escaped where drawn); row: the named query row (0-based), or None."""
    weights: np.ndarray
    rows: tuple[str, ...]
    columns: tuple[str, ...]
    row: int | None = None

    def named(self, row: int | str | None) -> CellMap:
        """The map with the question's row resolved: a token's text (its first occurrence) or a 1-based position;
        MeasureError naming the map's rows when it has none such."""
        if row is None:
            return self
        if isinstance(row, str):
            if row not in self.rows:
                raise MeasureError(Phrase.of("lessons.word_missing", word=row, tokens=" ".join(self.rows)))
            return replace(self, row=self.rows.index(row))
        if not 1 <= row <= len(self.rows):
            raise MeasureError(Phrase.of("lessons.cell_no_row", row=row, rows=len(self.rows)))
        return replace(self, row=row - 1)

    def answers(self) -> frozenset[str]:
        """Every answer a tap may give: each cell of the map, or of the named row."""
        rows = range(len(self.rows)) if self.row is None else (self.row,)
        return frozenset(cell_answer(q, k) for q in rows for k in range(len(self.columns)))

    def label(self, answer: str) -> str | None:
        """A canonical answer as tokens, "it → animal"; None when it is not a cell of this map."""
        cell = cell_of(answer)
        if cell is None or cell[0] >= len(self.rows) or cell[1] >= len(self.columns):
            return None
        return f"{self.rows[cell[0]]} → {self.columns[cell[1]]}"

    def expected(self, asked: Asked) -> Expected:
        """The right cells: the lesson's fixed one, else the `asked.top` largest of the row (or of the map); the gap
        is the last accepted cell's weight over the best rejected one's."""
        named = self.named(asked.row)
        values = np.nan_to_num(np.asarray(named.weights, dtype=np.float64), nan=-np.inf)  # a masked cell is never right
        if named.row is not None:
            values = np.where(np.arange(values.shape[0])[:, None] == named.row, values, -np.inf)
        if asked.fixed is not None:
            if asked.fixed not in named.answers():
                raise MeasureError(Phrase.of("lessons.cell_outside", answer=asked.fixed, rows=len(named.rows),
                                             columns=len(named.columns)))
            query, key = cell_of(asked.fixed)
            return Expected(asked.fixed, frozenset({asked.fixed}), cells=named, measured=Phrase.of(
                "lessons.measured_weight", value=f"{values[query, key]:.2f}"))
        flat = np.argsort(-values, axis=None, kind="stable")
        top = max(1, asked.top)
        cells = [divmod(int(index), values.shape[1]) for index in flat[:top]]
        accepted = frozenset(cell_answer(q, k) for q, k in cells)
        ordered = values.ravel()[flat]
        rejected = ordered[top] if ordered.size > top and np.isfinite(ordered[top]) else None
        separation = None if rejected is None else float(ordered[top - 1] - rejected)
        best = cells[0]
        return Expected(cell_answer(*best), accepted, cells=named, separation=separation,
                        measured=Phrase.of("lessons.measured_weight", value=f"{values[best]:.2f}"))

"""The logit lens's parts computed alone (model/explain/logit_lens.py): what the lens section opens with, the last
position across every row (its prediction, commitment and the followed token's rank by layer), and one cell's top
tokens, picked under the map or by a click on it. Each is a small fraction of the whole grid's price (one forward and
L+1 unembeddings; one unembedding: bench/llm.py), so the section answers its first question before the grid is drawn.
"""
from __future__ import annotations

from dataclasses import dataclass

import pandas as pd
import torch
from streamlit.delta_generator import DeltaGenerator

from i18n import tr
from model.explain.logit_lens import LensColumn, lens_cell, lens_column
from model.families import ResidualModel
from runtime.result_cache import memoized
from ui.charts import shared_figure, show_chart
from ui.language import words_for
from ui.screen import page_width
from ui.session import WidgetKey
from ui.specs.llm_answer import LENS_POSITION, LENS_ROW
from ui.text import escape_markdown
from ui.widget_spec import prepare
from viz.attention import html_escaped
from viz.llm_answer import lens_cell_of, lens_row_labels, rank_by_layer

MAP_KEY = "llm_lens_map"  # the lens map's chart key: its selection is a click on a cell
MAP_SELECTION = WidgetKey(MAP_KEY)


@dataclass(frozen=True)
class LensOpening:
    """The lens at the text's last position, every row, and the stream it was read from (for a picked cell)."""

    ids: list[int]  # (T,) the text's token ids
    tokens: list[str]  # (T,) … as text
    hidden: torch.Tensor  # (L+1, T, d) the residual stream, read-only: the grid and a picked cell read it again
    column: LensColumn  # the last position, with the followed token's ranks and probabilities
    top_tokens: list[list[str]]  # (L+1, k) the column's top ids as text
    token: str  # the followed token as text
    predicted: bool  # whether it is the model's own prediction (no token was typed)

    @property
    def layers(self) -> int:
        return self.hidden.shape[0] - 1


@memoized
def lens_opening(model_id: str, text: str, token: str, _lab: ResidualModel) -> LensOpening:
    """One forward and L+1 unembeddings: the last position's column of the lens; "" follows the model's prediction."""
    stream = _lab.residual_stream(text)
    token_id = _lab.encode(token)[0] if token else int(_lab.unembed(stream.hidden[-1, -1]).argmax())
    column = lens_column(_lab, stream.hidden, -1, token_id)
    texts = _lab.token_texts(column.top_ids.ravel().tolist())
    k = column.top_ids.shape[1]
    top_tokens = [texts[row * k:(row + 1) * k] for row in range(column.top_ids.shape[0])]
    return LensOpening(list(stream.ids), list(stream.tokens), stream.hidden, column, top_tokens,
                       _lab.token_texts([token_id])[0], not token)


def show_last_position(where: DeltaGenerator, opening: LensOpening, key: tuple) -> None:
    """The prediction, its commitment and the followed token's rank at the last layer; then its rank by layer."""
    column, words = opening.column, words_for("llm_answer")
    metrics = where.columns(3)
    metrics[0].metric(tr("llm_answer.prediction"), repr(opening.top_tokens[-1][0]), f"{column.top_probs[-1, 0]:.1%}",
                      delta_color="off", delta_arrow="off")
    metrics[1].metric(tr("llm_answer.commitment"), tr("llm_answer.commitment_value", row=column.commitment,
                                                      layers=opening.layers), help=tr("llm_answer.commitment_help"))
    metrics[2].metric(tr("llm_answer.token_rank", token=escape_markdown(repr(opening.token))),
                      f"{column.token_ranks[-1]:,}", f"{column.token_probs[-1]:.1%}", delta_color="off",
                      delta_arrow="off")
    where.caption(tr("llm_answer.lens_caption"))
    title = "llm_answer.chart.rank_title_predicted" if opening.predicted else "llm_answer.chart.rank_title"
    show_chart(shared_figure(key + ("rank",), lambda: rank_by_layer(
                   column.token_ranks, column.token_probs, opening.token,
                   tr(title, token=html_escaped(repr(opening.token))), words=words)),
               "llm_lens_rank", key="llm_lens_rank", where=where, width=page_width())


def cell_clicked() -> None:
    """A click on the lens map picks that cell (the map's click targets, viz.llm_answer.lens_map)."""
    selection = MAP_SELECTION.get()
    points = [] if selection is None else selection.selection.points
    cells = [cell for cell in map(lens_cell_of, points) if cell is not None]
    if cells:
        LENS_ROW.set(cells[0][0])
        LENS_POSITION.set(cells[0][1])


def show_cell(where: DeltaGenerator, lab: ResidualModel, opening: LensOpening) -> None:
    """The cell picker (row and position: the map's click twin for a keyboard) and the picked cell's top tokens,
    computed alone: one residual vector through the final norm and the output matrix."""
    length, words = len(opening.tokens), words_for("llm_answer")
    rows = lens_row_labels(opening.layers, words=words)
    row = prepare(LENS_ROW)
    LENS_POSITION.set(min(prepare(LENS_POSITION), length - 1))  # past the text's end (the default): its last
    left, right = where.columns(2)
    left.selectbox(tr("llm_answer.cell_row"), LENS_ROW.choices(), key=LENS_ROW.key, format_func=rows.__getitem__)
    position = right.selectbox(tr("llm_answer.cell_position"), range(length), key=LENS_POSITION.key,
                               format_func=lambda at: f"{at}: {opening.tokens[at]!r}")
    ids, probs = lens_cell(lab, opening.hidden, row, position)
    where.markdown(tr("llm_answer.cell_title", row=rows[row], position=position,
                      token=escape_markdown(repr(opening.tokens[position]))))
    where.dataframe(pd.DataFrame({tr("llm_answer.cell_token"): [repr(text) for text in lab.token_texts(ids)],
                                  tr("llm_answer.cell_probability"): [f"{p:.1%}" for p in probs]},
                                 index=pd.RangeIndex(1, len(ids) + 1, name=tr("llm_answer.cell_rank"))),
                    width="content")

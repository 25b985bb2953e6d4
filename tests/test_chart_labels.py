"""Chart labels say what they show, once, and a projected chart its point first (issue 38, items 8 and 4): a masked matrix writes each cell's number once (the grey
trace of the masked cells used to write every number a second time, dark on dark cells), and the decoding page's
cross-attention chart, whose rows are heads, says "heads" on that axis, in English and Korean."""
import numpy as np
import pytest

from i18n import translate
from tests.app_links import chart_figures, open_from_link
from viz.matrices import matrix_figure
from ui.language import words_for
from ui.session import LabSession, LessonState


def test_a_masked_matrix_labels_each_cell_once():
    scores = np.arange(16, dtype=float).reshape(4, 4) / 10
    hidden = np.triu(np.ones((4, 4), bool), 1)  # the causal mask: keys after the query
    fig = matrix_figure(np.where(hidden, -np.inf, scores), ["q1", "q2", "q3", "q4"], ["k1", "k2", "k3", "k4"], "mask",
                        hidden=hidden, words=words_for("attention_steps"))
    labels = np.stack([np.asarray(trace.text, dtype=object) for trace in fig.data])  # (traces, 4, 4)
    written = labels != ""
    assert (written.sum(0) == 1).all()  # one label a cell, from one trace
    numbers, grey = labels
    assert (grey[hidden] == "−∞").all() and (grey[~hidden] == "").all()
    assert numbers[2, 1] == "0.90" and (numbers[hidden] == "").all()
    assert list(fig.data[0].customdata[0]) == ["0.00", "−∞", "−∞", "−∞"]  # hover still names every cell


@pytest.mark.parametrize("language", ["en", "ko"])
def test_the_decoding_cross_chart_calls_its_rows_heads(language):
    # the stop's cell question answered (until then the page is its map of hidden weights: issue 55)
    answered = LabSession(lesson=LessonState(answers={"intro:12": "6,5"}))
    at, _ = open_from_link(None, {"lesson": "intro", "stop": "12", "lang": language}, lab=answered)
    titles = [fig.layout.yaxis.title.text for fig in chart_figures(at) if fig.data[0].type == "heatmap"]
    # the cross-attention chart (one row per head of layer 2), then the decoder's self-attention so far (queries)
    assert titles == [translate(language, "decoding.heads_axis"), translate(language, "attention.chart.queries_axis")]


def test_the_point_of_a_projected_chart_is_at_its_top():
    """Issue 38, item 4: at 1280×720 a projected stop shows the top of its chart. The accuracy-by-length chart says
    which line is which model above the plot (its legend was under it, at y ≈ 900), and the copy head's bars put the
    key it reads most first ("5:mat" 0.54 was below the sink on "0:The")."""
    from viz.llm_heads import attention_row_bars
    from viz.training import accuracy_by_length_chart

    rows = [{"min_words": 1, "max_words": 5, "exact_match": 0.9, "bleu": 0.8, "sentences": 10}]
    legend = accuracy_by_length_chart({"GRU": rows, "Transformer": rows},
                                      words=words_for("train", "compare")).layout.legend
    assert legend.orientation == "h" and legend.y >= 1 and legend.yanchor == "bottom"
    bars = attention_row_bars(["0:The", "1: cat", "5: mat"], np.array([0.39, 0.0, 0.54]), "copy", largest_first=True,
                              words=words_for("llm_heads"))
    assert list(bars.data[0].y) == ["5: mat", "0:The", "1: cat"] and list(bars.data[0].x) == [0.54, 0.39, 0.0]
    in_order = attention_row_bars(["0:The", "1: cat", "5: mat"], np.array([0.39, 0.0, 0.54]), "copy",
                                  words=words_for("llm_heads"))
    assert list(in_order.data[0].y) == ["0:The", "1: cat", "5: mat"]

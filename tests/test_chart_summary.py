"""Every teaching chart carries its words (issue 31, WCAG 1.1.1): viz/summary.chart_summary reads the data the chart
draws (viz/chart_data.py), and the numbers it says are the chart's numbers (row maxima, means, bars) in both
languages; the app shows it as a caption under each chart."""
import html
import re

import numpy as np

from i18n import using_language
from tests.app_links import chart_figures, open_page, trace_array
from ui.text import escape_markdown
from viz.analysis import survival_bars
from viz.attention import attention_heatmap, head_grid, probability_bars
from viz.chart_data import chart_data
from viz.export import chart_csv
from viz.summary import chart_summary, plain
from viz.training import training_curves
from ui.language import words_for

TOKENS_Q, TOKENS_K = ["je", "suis", "étudiant"], ["i", "am", "a", "student"]


def _numbers(text: str) -> list[float]:
    return [float(n) for n in re.findall(r"-?\d+\.\d+", text)]


def figure_summary(fig, title: str | None = None) -> str:
    """The words of a figure a viz/ builder made, in the current language."""
    return chart_summary(chart_data(fig), title, words=words_for("display"))


def test_a_heatmaps_words_name_each_rows_strongest_column_and_the_mean_of_the_row_maxima():
    weights = np.random.default_rng(0).dirichlet(np.ones(4) * 0.3, size=3)  # (T_q 3, T_k 4), rows sum to 1
    fig = attention_heatmap(weights, TOKENS_Q, TOKENS_K, "Layer 2 · head 1", words=words_for("attention"))
    drawn = trace_array(fig.data[0].z)  # what the chart draws
    summary = figure_summary(fig)
    assert summary.startswith("Layer 2 · head 1: 3 rows")
    for row, query in enumerate(TOKENS_Q):
        column = int(drawn[row].argmax())
        assert f"{query} → {TOKENS_K[column]} {drawn[row, column]:.2f}" in summary
    assert f"Mean of the row maxima {drawn.max(axis=1).mean():.2f}" in summary
    with using_language("ko"):
        assert f"행 최댓값의 평균 {drawn.max(axis=1).mean():.2f}" in figure_summary(fig)


def test_masked_cells_are_not_counted():
    weights = np.array([[0.2, 0.8], [0.6, 0.4]])
    masked = np.array([[False, True], [False, False]])  # row 0 may not see column 1
    summary = figure_summary(attention_heatmap(weights, ["a", "b"], ["x", "y"], masked=masked,
                                               words=words_for("attention")))
    assert "a → x 0.20" in summary and "b → x 0.60" in summary and "0.80" not in summary
    assert "Mean of the row maxima 0.40" in summary


def test_a_grid_of_heads_names_its_sharpest_and_broadest_head():
    weights = np.full((2, 2, 3, 4), 0.25)
    weights[1, 0] = np.eye(3, 4)  # L2 H1: one key per row (row maxima 1.0)
    weights[0, 1] = [[0.5, 0.5, 0, 0]] * 3  # L1 H2: 0.5
    summary = figure_summary(head_grid(weights, TOKENS_Q, TOKENS_K, "All heads", words=words_for("attention")))
    assert "4 maps" in summary and "highest 1.00 in L2 H1" in summary and "lowest 0.25 in L" in summary


def test_bars_and_lines_say_their_values():
    bars = figure_summary(probability_bars(["le", "la", "un"], [0.6, 0.3, 0.1], "Next word",
                                           words=words_for("attention")))
    assert _numbers(bars) == [0.6, 0.3, 0.1] and "le 0.60" in bars
    history = [{"step": s, "epoch": 1, "loss": 3.0 - s / 10, "val_loss": 3.1 - s / 20} for s in range(1, 11)]
    curves = figure_summary(training_curves(history, "Training", words=words_for("train", "compare")))
    assert "2.90 at 1" in curves and "2.00 at 10" in curves  # the loss line's first and last points


def test_the_survival_bars_name_the_special_tokens_as_themselves():
    """Their legend names hold <bos>/<eos>: escaped for plotly, they read as the tokens in the words, the CSV and the
    legend, not as markup ("weight α on /")."""
    shares = np.array([[0.5, 0.25]])
    fig = survival_bars(shares, shares, "Survival", words=words_for("explain"))
    assert "weight α on <bos>/<eos>: L1 H1 0.50" in figure_summary(fig)
    assert "weight α on <bos>/<eos>" in chart_csv(chart_data(fig)).decode("utf-8-sig")
    assert fig.data[0].name == "weight α on &lt;bos&gt;/&lt;eos&gt;"  # plotly shows the entities as < and >
    named = survival_bars(shares, shares, words=words_for("explain"), series_names=("α on <eos>", "N on <eos>"))
    assert "α on <eos>: L1 H1 0.50" in figure_summary(named)


def test_the_attention_page_shows_each_charts_words_under_it():
    at = open_page("attention")
    captions = [c.value for c in at.caption]
    heatmap, lines = chart_figures(at)  # the Head view: the head's map, and the same weights as lines
    # each chart's words start with its title (a title wrapped to its column reads as one line)
    (map_words,) = [c for c in captions if c.startswith(escape_markdown(plain(heatmap.layout.title.text) + ":"))]
    lines_title = escape_markdown(plain(lines.layout.title.text))
    # the lines are drawing aids: their words are the map's (the same weights), under the lines' own title
    assert lines_title + map_words[len(escape_markdown(plain(heatmap.layout.title.text))):] in captions
    # with the numbers the browser draws: each row's strongest key, the mean of the row maxima
    drawn = trace_array(heatmap.data[0].z)
    shown = re.sub(r"\\(.)", r"\1", map_words).replace("\u034f", "")  # as read: markdown's escapes and breaks undone
    queries, keys = heatmap.layout.yaxis.ticktext, heatmap.layout.xaxis.ticktext
    best = int(np.nanargmax(drawn[0]))
    assert f"{html.unescape(queries[0])} → {html.unescape(keys[best])} {drawn[0, best]:.2f}" in shown
    assert f"Mean of the row maxima {np.nanmax(drawn, axis=1).mean():.2f}" in shown

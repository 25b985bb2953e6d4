"""viz/llm.py: the LLM page's charts draw the arrays they are given, label what they show, and escape token text."""
import html
import io

import numpy as np
import pandas as pd

from viz.llm import (CHOSEN, COMPUTED, REUSED, attention_row_chart, cache_layers_chart, kv_groups_chart,
                     next_token_chart, work_per_step_chart)
from ui.language import words_for
from viz.chart_data import chart_data
from viz.export import chart_csv


def test_next_token_bars_mark_the_chosen_candidate_and_show_spaces_and_markup_as_text():
    fig = next_token_chart([" can", "<b>x</b>", "\n"], [0.5, 0.3, 0.1], 1, "Step 1",
                           words=words_for("llm", "llm_explain"))
    bar = fig.data[0]
    assert list(bar.x) == [0.5, 0.3, 0.1] and [c == CHOSEN for c in bar.marker.color] == [False, True, False]
    assert [html.unescape(label) for label in bar.y] == ["1. ' can'", "2. '<b>x</b>'", "3. '\\n'"]  # as shown
    assert "<b>" not in bar.y[1] and "&lt;b&gt;" in bar.y[1]  # plotly would render the markup
    assert all(c != CHOSEN for c in next_token_chart(["a"], [0.9], None, "t",
                                                     words=words_for("llm", "llm_explain")).data[0].marker.color)


def test_the_attention_row_has_one_row_per_head_named_with_its_key_value_head():
    weights = np.random.default_rng(0).dirichlet(np.ones(5), size=9)  # (h, T_k)
    fig = attention_row_chart(weights, ["The", " cat", " <sat>", " on", " the"], [h // 3 for h in range(9)], "L1",
                              words=words_for("llm", "llm_explain"))
    heat = fig.data[0]
    np.testing.assert_allclose(np.asarray(heat.z), weights)
    assert list(heat.y)[:4] == ["head 1 (K/V 1)", "head 2 (K/V 1)", "head 3 (K/V 1)", "head 4 (K/V 2)"]
    assert " &lt;sat&gt;" in fig.layout.xaxis.ticktext


def test_a_long_text_labels_every_kth_key_but_hovers_every_one():
    tokens = [f"t{i}" for i in range(300)]
    fig = attention_row_chart(np.full((9, 300), 1 / 300), tokens, [0] * 9, "long",
                              words=words_for("llm", "llm_explain"))
    assert 10 < len(fig.layout.xaxis.tickvals) < 100 and fig.data[0].customdata.shape == (9, 300)


def test_the_cache_chart_colours_this_steps_positions_apart_from_the_cached_ones():
    fig = cache_layers_chart(30, ["a", "b", "c", "d", "e"], 4, "cache", words=words_for("llm", "llm_explain"))
    z = np.asarray(fig.data[0].z)
    assert z.shape == (30, 5) and (z[:, 4] == 1).all() and (z[:, :4] == 0).all()
    assert [t.marker.color for t in fig.data[1:]] == [REUSED, COMPUTED]  # the legend of the two colours
    assert fig.data[0].customdata[0, 4, 1] == "computed this step"


def test_work_per_step_and_the_shared_heads_draw_their_counts():
    fig = work_per_step_chart([360, 90, 90], [360, 450, 540], "work", words=words_for("llm", "llm_explain"))
    assert [list(t.y) for t in fig.data] == [[360, 90, 90], [360, 450, 540]]
    groups = kv_groups_chart([[0, 1, 2], [3, 4, 5], [6, 7, 8]], 9, "gqa", words=words_for("llm", "llm_explain"))
    z = np.asarray(groups.data[0].z)
    assert z.shape == (9, 3) and (z.sum(1) == 1).all() and z[4, 1] == 1 and z[4, 0] == 0


def test_the_cache_and_the_shared_heads_export_the_cells_they_draw():
    words = words_for("llm", "llm_explain")
    for fig in (cache_layers_chart(3, ["a", "<b>", "c"], 2, "cache", words=words),
                kv_groups_chart([[0, 1], [2]], 3, "gqa", words=words)):
        table = pd.read_csv(io.BytesIO(chart_csv(chart_data(fig))), index_col=0, encoding="utf-8-sig")
        assert (table.to_numpy() == np.asarray(fig.data[0].z)).all(), fig.layout.title.text
    assert list(table.index) == ["query head 1", "query head 2", "query head 3"] and table.columns[1] == "K/V head 2"
    cache = pd.read_csv(io.BytesIO(chart_csv(chart_data(cache_layers_chart(2, ["a", "<b>"], 1, "c", words=words)))),
                        index_col=0, encoding="utf-8-sig")
    assert list(cache.columns) == ["0: a", "1: <b>"] and cache.to_numpy().tolist() == [[0, 1], [0, 1]]

"""The head finder's charts (viz/head_finder.py) and how its links name tokens (ui/attention/finder_specs.py): no
model, no Streamlit run."""
import numpy as np
import pytest

import i18n
from i18n import translate
from model.sources import KindMaps
from ui.attention.finder_specs import contrast, default_pair, named_token, token_names
from ui.language import words_for
from viz.attention import attention_heatmap
from viz.words import Words
from viz.head_finder import highlight_row, qk_scatter, ranked_head, ranking_bars, ranking_table, rotary_share_bars

WORDS = words_for("head_finder")


def _order(values: np.ndarray) -> list[tuple[int, int]]:
    return [divmod(int(i), values.shape[1]) for i in np.argsort(-values.reshape(-1), kind="stable")]


def test_the_bars_are_the_top_heads_largest_on_top_and_a_click_reads_back_the_head():
    values = np.random.default_rng(0).random((6, 12)).astype(np.float32)
    order = _order(values)
    fig = ranking_bars(values, order, "title", "weight", top=15, selected=order[3], words=WORDS)
    bar = fig.data[0]
    assert list(bar.y) == [f"L{l + 1} H{h + 1}" for l, h in order[:15]]
    np.testing.assert_allclose(bar.x, [values[cell] for cell in order[:15]])
    assert list(bar.x) == sorted(bar.x, reverse=True) and fig.layout.yaxis.autorange == "reversed"
    assert len(set(bar.marker.color)) == 2 and bar.marker.color[3] != bar.marker.color[0]  # the open head darker
    assert [ranked_head({"customdata": list(c)}) for c in bar.customdata] == order[:15]
    assert ranked_head({"x": 1.0}) is None and ranked_head({"customdata": ["a", "b"]}) is None


def test_the_table_lists_every_head_with_its_rank_weight_and_norm():
    weight = np.array([[0.1, 0.7], [0.4, 0.2]], dtype=np.float32)
    norm = np.array([[3.0, 1.0], [0.5, 2.0]], dtype=np.float32)
    table = ranking_table(weight, norm, _order(weight), words=WORDS)
    assert list(table.index) == [1, 2, 3, 4]
    assert list(table.iloc[:, 0]) == ["L1 H2", "L2 H1", "L2 H2", "L1 H1"]
    assert list(table.iloc[:, 2]) == [1.0, 0.5, 2.0, 3.0]
    assert ranking_table(weight, None, _order(weight), words=WORDS).shape == (4, 2)  # no norms: no column


def test_the_scatter_draws_queries_and_keys_coloured_by_position_or_kind_and_escapes_the_hover():
    points = np.arange(12, dtype=np.float32).reshape(6, 2)
    is_query = np.array([True, True, True, False, False, False])
    position = np.array([0, 1, 2, 0, 1, 2])
    context = ["[<b>]", "x", "y"] * 2
    by_position = qk_scatter(points, is_query, position, context, "t", "position", np.array([0.5, 0.2]),
                             words=WORDS)
    queries, keys = by_position.data
    np.testing.assert_allclose(queries.x, [0, 2, 4]) and np.testing.assert_allclose(keys.y, [7, 9, 11])
    assert list(queries.marker.color) == [0, 1, 2] and queries.marker.showscale and not keys.marker.showscale
    assert "<b>" not in queries.customdata[0][0] and "&lt;b&gt;" in queries.customdata[0][0]
    assert by_position.layout.xaxis.title.text.endswith("(50%)")
    by_kind = qk_scatter(points, is_query, position, context, "t", "kind", words=WORDS)
    assert by_kind.data[0].marker.color != by_kind.data[1].marker.color


def test_the_rope_bars_are_each_pairs_share_with_its_frequency_on_hover():
    shares = np.array([0.5, 0.3, 0.2])
    theta = np.array([1.0, 0.1, 0.01])
    bar = rotary_share_bars(shares, theta, "t", words=WORDS).data[0]
    np.testing.assert_allclose(bar.y, shares)
    np.testing.assert_allclose(np.asarray(bar.customdata)[:, 1], 2 * np.pi / theta)


def test_highlight_row_frames_the_whole_row():
    fig = highlight_row(attention_heatmap(np.eye(3), list("abc"), list("abcd")[:3], words=words_for("attention")), 1)
    (shape,) = fig.layout.shapes
    assert (shape.y0, shape.y1, shape.x0, shape.x1) == (0.5, 1.5, -0.5, 2.5)
    assert not highlight_row(attention_heatmap(np.eye(2), list("ab"), list("ab"), words=words_for("attention")),
                             None).layout.shapes


def test_the_charts_speak_the_words_they_are_given():
    korean = Words("ko", ("head_finder",), i18n.strings("ko"))
    values = np.ones((2, 2), dtype=np.float32)
    fig = ranking_bars(values, _order(values), "t", "w", words=korean)
    assert fig.layout.yaxis.title.text == translate("ko", "head_finder.chart.head_axis") == "헤드"
    scatter = qk_scatter(np.zeros((2, 2)), np.array([True, False]), np.array([0, 0]), ["a", "b"], "t", words=korean)
    assert [trace.name for trace in scatter.data] == ["쿼리", "키"]


def test_a_token_is_named_by_its_spelling_and_a_repeated_one_by_its_position():
    tokens = ["[CLS]", "the", "animal", "didn", "'", "t", "cross", "the", "street", "because", "it", "was", "too",
              "tired", ".", "[SEP]"]
    names = token_names(tokens)
    assert names[1] == "the" and names[7] == "the#8" and names[10] == "it"
    assert [named_token(tokens, name) for name in names] == list(range(len(tokens)))
    assert named_token(tokens, "IT") == 10  # any spelling token_index accepts
    with pytest.raises(ValueError, match="'animal'"):
        named_token(tokens, "dog")
    bpe = ["<|im_start|>", "The", "Ġanimal", "Ġit", "Ġit", "Ġwas"]
    assert token_names(bpe)[3:5] == ["it", "it#5"] and named_token(bpe, "it#5") == 4
    pieces = ["[CLS]", "un", "##der", "##stood", "[SEP]"]
    assert token_names(pieces)[2] == "##der" and named_token(pieces, "##der") == 2


def test_the_default_pair_is_the_strongest_link_between_two_words_apart():
    tokens = ["[CLS]", "a", "b", "c", "d", "."]
    weights = np.full((1, 2, 6, 6), 0.01, dtype=np.float32)
    weights[:, :, 4, 1] = 0.5  # d → a: the pair
    weights[:, :, 4, 3] = 0.9  # d → c: neighbours, passed over
    weights[:, :, 4, 0] = 0.95  # [CLS]: special, passed over
    weights[:, :, 5, 1] = 0.99  # "." is punctuation
    maps = KindMaps("encoder_self", weights, None, tokens, tokens, None)
    assert default_pair(maps) == (4, 1)


def test_the_second_text_of_the_coreference_sentence_is_its_winograd_partner():
    first = "The animal didn't cross the street because it was too tired."
    assert contrast(first).endswith("too wide.") and contrast("anything else") == "anything else"
    assert contrast(None) == ""

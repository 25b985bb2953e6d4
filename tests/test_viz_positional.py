"""Positional-encoding charts: every chart has a title and labelled axes, and shows the arrays it was given."""
import math

import numpy as np
import plotly.graph_objects as go
import pytest

from model.foundations.positional import CURVE_SAMPLES, analyse_sinusoidal
from viz.positional import (curves_table, dials_and_counter, dials_table, dimension_curves, dimension_name,
                            encoding_heatmap, rotation_check, rotation_matrix_heatmap, similarity_by_offset, similarity_heatmap)
from ui.language import words_for


@pytest.fixture(scope="module")
def pe():
    return analyse_sinusoidal(48, 40, 6)  # T = 48, d_model = 40 (20 dials, two rows of 16), k = 6


def axis_titles(fig: go.Figure) -> list[str]:
    layout = fig.to_plotly_json()["layout"]
    return [layout[name]["title"]["text"] for name in sorted(layout) if name.startswith(("xaxis", "yaxis"))]


def assert_titled(fig: go.Figure) -> None:
    assert fig.layout.title.text
    titles = axis_titles(fig)
    assert titles and all(titles), titles


def test_encoding_heatmap_is_position_by_dimension_on_a_fixed_diverging_scale(pe):
    fig = encoding_heatmap(pe.table, "PE", words=words_for("positional"))
    assert_titled(fig)
    heat = fig.data[0]
    assert np.asarray(heat.z).shape == (48, 40)
    np.testing.assert_allclose(np.asarray(heat.z), pe.table)
    assert (heat.zmin, heat.zmax, heat.zmid) == (-1, 1, 0)
    assert "position" in fig.layout.yaxis.title.text and "dimension" in fig.layout.xaxis.title.text
    learned = encoding_heatmap(3 * pe.table, "wider", bound=None, words=words_for("positional"))
    assert learned.data[0].zmax == pytest.approx(3 * np.abs(pe.table).max())


def test_dimension_curves_one_line_per_dimension(pe):
    fig = dimension_curves(pe.table, [0, 1, 9], words=words_for("positional"))
    assert_titled(fig)
    assert [t.name for t in fig.data] == [dimension_name(0,
                                                         words=words_for("positional")), dimension_name(1, words=words_for("positional")), dimension_name(9, words=words_for("positional"))]
    assert dimension_name(9, words=words_for("positional")) == "dim 9 (cos, i=4)"
    np.testing.assert_allclose(np.asarray(fig.data[2].y), pe.table[:, 9])
    assert len(fig.data[0].x) == 48
    assert len({t.line.dash for t in fig.data}) == 3  # told apart without colour too


def test_dimension_curves_are_smooth_between_positions_with_the_integers_marked(pe):
    analysis = analyse_sinusoidal(48, 16, 3)
    fig = dimension_curves(analysis.table, [0], fine=analysis.fine_table, fine_positions=analysis.fine_positions,
                           words=words_for("positional"))
    x, y = np.asarray(fig.data[0].x), np.asarray(fig.data[0].y)
    assert len(x) == 47 * CURVE_SAMPLES + 1 and np.allclose(y, np.sin(x))  # dimension 0 is sin(p), between integers too
    sizes = np.asarray(fig.data[0].marker.size)
    assert (sizes > 0).sum() == 48 and np.allclose(x[sizes > 0], np.arange(48))  # a dot on every integer position
    assert list(curves_table(analysis.table, [0], words=words_for("positional")).index) == list(range(48))


def test_dials_point_at_the_encoding_and_bits_spell_the_position(pe):
    position = 13
    fig = dials_and_counter(pe.angles[position], pe.bits[position], pe.wavelengths, position,
                            words=words_for("positional"))
    assert_titled(fig)
    faces = fig.data[0]  # every dial's circle in one polyline, NaN between dials
    circles_x = np.asarray(faces.x, dtype=float).reshape(-1, 42)[:, :40]  # 41 points (closed) + the NaN gap
    circles_y = np.asarray(faces.y, dtype=float).reshape(-1, 42)[:, :40]
    assert len(circles_x) == 20  # one dial per (sin, cos) pair
    np.testing.assert_allclose(np.hypot(circles_x - circles_x.mean(1, keepdims=True),
                                        circles_y - circles_y.mean(1, keepdims=True)), 1.0, atol=1e-9)  # unit dials
    tips = fig.data[2]
    centres_x, centres_y = circles_x.mean(1), circles_y.mean(1)
    np.testing.assert_allclose(np.asarray(tips.x) - centres_x, pe.table[position, 0::2], atol=1e-6)
    np.testing.assert_allclose(np.asarray(tips.y) - centres_y, pe.table[position, 1::2], atol=1e-6)
    assert len(set(np.round(centres_y, 6))) == 2  # 20 dials at 16 per row: two rows
    bits = next(t for t in fig.data if t.type == "heatmap")
    assert np.asarray(bits.z).ravel().tolist() == [1, 0, 1, 1, 0, 0]  # 13 = 1 + 4 + 8, least significant first
    assert sum(b * 2 ** j for j, b in enumerate(np.asarray(bits.z).ravel())) == position
    assert "13" in fig.layout.title.text
    other = dials_and_counter(pe.angles[14], pe.bits[14], pe.wavelengths, 14, words=words_for("positional"))
    assert not np.allclose(np.asarray(other.data[2].x), np.asarray(tips.x))  # another position moves the hands


def test_similarity_charts(pe):
    fig = similarity_heatmap(pe.similarity, words=words_for("positional"))
    assert_titled(fig)
    assert np.asarray(fig.data[0].z).shape == (48, 48)
    assert fig.data[0].zmax == pytest.approx(20.0)  # |PE(p)|² = d_model / 2
    lines = similarity_by_offset(pe.similarity, [0, 20, 47], words=words_for("positional"))
    assert_titled(lines)
    assert [t.name for t in lines.data] == ["p = 0", "p = 20", "p = 47"]
    by_offset = [dict(zip(np.asarray(t.x).tolist(), np.asarray(t.y))) for t in lines.data]
    for offset in (-20, -5, 0, 3, 27):  # where two references share an offset, their values agree
        shared = [row[offset] for row in by_offset if offset in row]
        assert len(shared) >= 2 and max(shared) - min(shared) < 1e-6


def test_rotation_charts(pe):
    fig = rotation_check(pe.shifted, pe.rotated, 10, 6, words=words_for("positional"))
    assert_titled(fig)
    formula, rotated, error = fig.data
    np.testing.assert_allclose(np.asarray(formula.y), pe.shifted[10])
    np.testing.assert_allclose(np.asarray(rotated.y), pe.rotated[10])
    assert len(error.y) == 42 and max(error.y) < 1e-5
    assert "k = 6" in fig.layout.title.text
    matrix = rotation_matrix_heatmap(pe.rotation, 6, words=words_for("positional"))
    assert_titled(matrix)
    z = np.asarray(matrix.data[0].z)
    assert z.shape == (40, 40)
    assert math.isclose(z[0, 0], math.cos(6), abs_tol=1e-6) and math.isclose(z[0, 1], math.sin(6), abs_tol=1e-6)
    assert z[0, 2] == 0


def test_dials_table_is_the_numbers_behind_the_dials(pe):
    """The dials chart's CSV: one row per pair, with the hand tip (sin, cos) equal to the encoding at that position."""
    table = dials_table(pe.angles[13], pe.wavelengths, words=words_for("positional"))
    assert len(table) == 20 and list(table.columns)[0] == "pair i"
    np.testing.assert_allclose(table.iloc[:, 3], pe.table[13, 0::2], atol=1e-6)
    np.testing.assert_allclose(table.iloc[:, 4], pe.table[13, 1::2], atol=1e-6)
    np.testing.assert_allclose(table.iloc[:, 2], pe.wavelengths)

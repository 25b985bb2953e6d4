"""AppTest for the positional-encoding page, opened through app.py so that it reads the sidebar's model."""
import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from i18n import translate
from tests.app_links import chart_specs, open_page, trace_array


def matrix_shown(at: AppTest) -> np.ndarray:
    """The values of the PE matrix heatmap, the page's first chart."""
    return trace_array(chart_specs(at)[0]["data"][0]["z"])


OPEN_SECTIONS = {"pe_open_dials": True, "pe_open_similarity": True, "pe_open_rotation": True,
                 "pe_open_rope": True, "pe_open_trained": True}


def test_the_page_opens_on_two_charts_and_builds_a_section_when_it_is_opened():
    at = open_page("positional", model_id="transformer_en-fr")
    assert len(at.get("plotly_chart")) == 2  # the matrix and the curves; the four folded sections are not built
    assert [e.label for e in at.main.expander] == ["Dials and a binary counter", "Similarity between positions",
                                              "A shift by k is a rotation", "RoPE: today's LLMs turn queries and keys",
                                              "What a trained model uses"]
    at.session_state["pe_open_rotation"] = True  # what a click on the section's header does (on_change="rerun")
    at.run()
    assert len(at.get("plotly_chart")) == 4
    assert any(m.label.startswith("Largest |PE(p + 5) − M_5·PE(p)|") for m in at.metric)


def test_sliders_change_the_matrix_and_the_rotation_holds():
    at = open_page("positional", model_id="transformer_en-fr", **OPEN_SECTIONS)
    assert at.title[0].value == "Positional encoding"
    assert "The formula" in [s.value for s in at.subheader]
    before = matrix_shown(at)
    assert before.shape == (64, 64)
    at.slider(key="pe_d_model").set_value(16).run()
    assert not at.exception
    after = matrix_shown(at)
    assert after.shape == (64, 16)
    # dimension 2 (i = 1) turns at 1/10000^(2/16) radians per position, no longer 1/10000^(2/64)
    np.testing.assert_allclose(after[:, 2], np.sin(np.arange(64) / 10000 ** (2 / 16)), atol=1e-6)
    assert not np.allclose(after[:, 2], before[:, 2])
    assert all(d < 16 for d in at.multiselect(key="pe_dims").value)
    at.slider(key="pe_length").set_value(8).run()  # the position and offset sliders shrink with the length
    assert not at.exception
    assert matrix_shown(at).shape == (8, 16)
    assert at.slider(key="pe_position").value <= 7 and at.slider(key="pe_k").value <= 7
    rotation_error = next(m for m in at.metric if m.label.startswith("Largest |PE(p + "))
    assert float(rotation_error.value) < 1e-5


def test_trained_transformer_table_is_compared_with_the_formula():
    at = open_page("positional", model_id="transformer_en-fr", pe_open_trained=True)
    text = " ".join(m.value for m in at.markdown)
    assert "**sinusoidal** position table of 128 positions" in text
    difference = next(m for m in at.metric if m.label.startswith("Max |table − sinusoidal_encoding|"))
    assert float(difference.value) < 1e-6


def test_rnn_model_has_no_position_table():
    at = open_page("positional", model_id="bahdanau_en-fr", pe_open_trained=True)
    assert any("no position table" in i.value for i in at.info)
    assert not any(m.label.startswith("Max |table") for m in at.metric)


@pytest.mark.parametrize("language", ["en", "ko"])
def test_rope_section_shows_the_turned_pairs_and_a_score_that_depends_on_the_distance_only(language):
    """The RoPE section (Su et al. 2021) with the page's sliders: d_model read as the head width, k as the distance."""
    at = open_page("positional", model_id="transformer_en-fr", lang=language, pe_open_rope=True)
    assert [e.label for e in at.main.expander][3] == translate(language, "rope.title")
    metric = next(m for m in at.metric if m.label == translate(language, "rope.metric", positions=64, d_k=64))
    assert float(metric.value) < 1e-3  # float32 rounding of scores near 15, never a real dependence on position
    assert len(chart_specs(at)) == 5  # the matrix, the curves, and the section's three
    pairs = next(spec for spec in chart_specs(at) if len(spec["data"]) == 3 and spec["data"][0]["mode"] ==
                 "lines+markers")
    # pair 0 turns 1 radian per position: its points stay on one circle
    x, y = trace_array(pairs["data"][0]["x"]), trace_array(pairs["data"][0]["y"])
    radius = np.hypot(x, y)
    np.testing.assert_allclose(radius, radius[0], rtol=1e-5)
    np.testing.assert_allclose(np.angle((x[1] + 1j * y[1]) / (x[0] + 1j * y[0])), 1.0, atol=1e-5)
    flat = chart_specs(at)[-1]["data"][0]
    assert np.ptp(trace_array(flat["y"])) < 1e-3 and len(trace_array(flat["y"])) == 64 - 5
    if language == "en":  # (in Korean, AppTest hands the dimension multiselect's labels back on a rerun)
        at.slider(key="pe_k").set_value(9).run()
        assert not at.exception
        assert len(trace_array(chart_specs(at)[-1]["data"][0]["y"])) == 64 - 9

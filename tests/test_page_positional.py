"""AppTest for the positional-encoding page, opened through app.py so that it reads the sidebar's model."""
import json
from pathlib import Path

from streamlit.testing.v1 import AppTest

APP = str(Path(__file__).resolve().parents[1] / "app.py")
TIMEOUT = 120


def open_positional(**state) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    for key, value in state.items():
        at.session_state[key] = value
    at.run()
    at.switch_page("app_pages/positional.py").run()
    assert not at.exception
    return at


def matrix_shape(at: AppTest) -> tuple[int, int]:
    """(rows, columns) of the PE matrix heatmap, the page's first chart."""
    z = json.loads(at.get("plotly_chart")[0].proto.spec)["data"][0]["z"]
    return len(z), len(z[0])


def test_sliders_change_the_matrix_and_the_rotation_holds():
    at = open_positional(model_id="transformer_en-fr")
    assert at.title[0].value == "Positional encoding"
    assert "The formula" in [s.value for s in at.subheader]
    assert matrix_shape(at) == (64, 64)
    at.slider(key="pe_d_model").set_value(16).run()
    assert not at.exception
    assert matrix_shape(at) == (64, 16)
    assert all(d < 16 for d in at.multiselect(key="pe_dims").value)
    at.slider(key="pe_length").set_value(8).run()  # the position and offset sliders shrink with the length
    assert not at.exception
    assert matrix_shape(at) == (8, 16)
    assert at.slider(key="pe_position").value <= 7 and at.slider(key="pe_k").value <= 7
    rotation_error = next(m for m in at.metric if m.label.startswith("Largest |PE(p + "))
    assert float(rotation_error.value) < 1e-5


def test_trained_transformer_table_is_compared_with_the_formula():
    at = open_positional(model_id="transformer_en-fr")
    text = " ".join(m.value for m in at.markdown)
    assert "**sinusoidal** position table of 128 positions" in text
    difference = next(m for m in at.metric if m.label.startswith("Max |table − sinusoidal_encoding|"))
    assert float(difference.value) < 1e-6


def test_rnn_model_has_no_position_table():
    at = open_positional(model_id="bahdanau_en-fr")
    assert any("no position table" in i.value for i in at.info)
    assert not any(m.label.startswith("Max |table") for m in at.metric)

"""AppTest for the normalization and residual pages: they render, and their sliders change what is shown."""
from tests.app_links import open_page


def test_normalization_page_batch_size_one_shows_batch_norm_failing():
    at = open_page("normalization")
    assert at.title[0].value == "Layer normalization vs batch normalization"
    assert not at.error
    table = at.dataframe[0].value.set_index("normalise over")
    assert table.loc["BatchNorm", "torch.nn"].startswith("agrees")
    at.slider(key="norm_batch").set_value(1).run()
    assert not at.exception and "One sentence" in at.info[0].value and not at.error
    at.slider(key="norm_len").set_value(1).run()
    assert not at.exception
    assert "BatchNorm fails" in at.error[0].value and "Expected more than 1 value per channel" in at.error[0].value
    assert "LayerNorm works" in at.success[0].value
    table = at.dataframe[0].value.set_index("normalise over")
    assert table.loc["BatchNorm", "outputs forced to 0"] == "100%"
    assert table.loc["LayerNorm", "outputs forced to 0"] == "0%"


def test_normalization_page_axis_choice_changes_the_charts():
    at = open_page("normalization")
    before = [chart.proto.spec for chart in at.get("plotly_chart")]
    at.radio(key="norm_kind").set_value("batch").run()
    assert not at.exception
    after = [chart.proto.spec for chart in at.get("plotly_chart")]
    assert len(after) == 3 and all(a != b for a, b in zip(after, before))
    at.radio(key="norm_kind").set_value("batch_per_step").run()
    assert not at.exception
    at.slider(key="norm_batch").set_value(1).run()
    assert not at.exception and "pooled a single value" in at.warning[0].value


def test_residual_page_depth_changes_the_ratio():
    at = open_page("residual")
    assert at.title[0].value.startswith("Residual connections")
    plain, residual = (float(m.value) for m in at.metric)
    assert plain < 1e-6 and 1 <= residual < 10  # default depth 32, tanh
    at.slider(key="res_depth").set_value(4).run()
    assert not at.exception
    shallow_plain, shallow_residual = (float(m.value) for m in at.metric)
    assert shallow_plain > 1e3 * plain and shallow_residual < residual
    at.toggle(key="res_ln").set_value(True).run()
    assert not at.exception and len(at.metric) == 3
    at.radio(key="res_activation").set_value("relu").run()
    assert not at.exception and float(at.metric[0].value) != shallow_plain
